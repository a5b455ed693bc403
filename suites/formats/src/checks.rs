//! What every reader's input and output go through, whatever the format, so that no reader has
//! to do it on its own: one leading UTF-8 byte order mark is dropped before reading (and before
//! detection), and afterwards every benchmark is checked (finite samples after unit conversion,
//! no negative times, metadata parallel to the samples), and entries of the same benchmark are
//! merged into one, by the same rule for one tool output and for a command suite's `runs = N`.

use std::collections::{BTreeMap, HashMap};

use super::parsed::{FormatError, ParsedBenchmark, TIME_UNITS};
use pitwall_schema::schema::{ResultStatus, benchmark_key, display_name};

/// `text` without one leading UTF-8 byte order mark (Windows tools and editors write one). Only
/// one is dropped: a second would be text.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Checks what every reader must guarantee: each sample is finite (a conversion such as
/// seconds → ns can overflow to infinity), a time is not negative, and `sample_meta` is empty or
/// parallel to the samples. Errors name the benchmark as `benchmark N (NAME[params]): `.
pub(super) fn validate(
    format: &'static str,
    benchmarks: &[ParsedBenchmark],
) -> Result<(), FormatError> {
    for (n, b) in benchmarks.iter().enumerate() {
        let at = || format!("benchmark {n} ({}): ", display_name(&b.name, &b.params));
        let unit = b.unit.as_str();
        // The rule imports are held to (`Run::validate`), so a fresh run stores no name an
        // import could not.
        if let Some(why) = pitwall_schema::consistency::names_problem(None, &b.name) {
            return Err(FormatError::new(format, format!("benchmark {n}: "), why));
        }
        if let Some(i) = b.samples.iter().position(|v| !v.is_finite()) {
            return Err(FormatError::new(
                format,
                at(),
                format!("sample {i} is not a finite number after conversion to {unit}"),
            ));
        }
        if TIME_UNITS.contains(&unit) {
            if let Some(i) = b.samples.iter().position(|v| *v < 0.0) {
                return Err(FormatError::new(
                    format,
                    at(),
                    format!("sample {i} is a negative time ({} {unit})", b.samples[i]),
                ));
            }
        }
        if !b.sample_meta.is_empty() && b.sample_meta.len() != b.samples.len() {
            return Err(FormatError::new(
                format,
                at(),
                format!(
                    "{} sample_meta entries for {} samples",
                    b.sample_meta.len(),
                    b.samples.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Merges entries of the same benchmark (name, params, measure) into the first one, in order:
/// samples and `sample_meta` are appended (the metadata is kept only when every entry supplied
/// it, so that it stays parallel to the samples), and the status is combined with
/// [`ResultStatus::combine`] (failed if any entry failed, else ok if any gave samples, else
/// skipped), with the error or skip reason of the last entry that has the combined status.
/// Entries that disagree on unit or direction are an error naming the benchmark.
///
/// Used for one tool output (`pitwall import`, `pitwall compare`, a command suite) and for the
/// outputs of a command suite's `runs = N`, so that both give the same results.
pub fn merge_duplicates(benchmarks: Vec<ParsedBenchmark>) -> Result<Vec<ParsedBenchmark>, String> {
    type Key = (String, BTreeMap<String, String>, String);
    let mut out: Vec<ParsedBenchmark> = Vec::with_capacity(benchmarks.len());
    // Whether every entry merged into out[i] had metadata for each of its samples.
    let mut whole_meta: Vec<bool> = Vec::with_capacity(benchmarks.len());
    let mut seen: HashMap<Key, usize> = HashMap::new();
    for b in benchmarks {
        let whole = b.sample_meta.len() == b.samples.len();
        let key = (b.name.clone(), b.params.clone(), b.measure.clone());
        let Some(&i) = seen.get(&key) else {
            seen.insert(key, out.len());
            out.push(b);
            whole_meta.push(whole);
            continue;
        };
        let first = &mut out[i];
        let differ = |what: &str, a: &str, b: &str| {
            format!(
                "benchmark `{}` is given more than once with different {what} (`{a}`, then `{b}`)",
                benchmark_key("", &first.name, &first.params, &first.measure)
            )
        };
        if first.unit != b.unit {
            return Err(differ("units", first.unit.as_str(), b.unit.as_str()));
        }
        if first.direction != b.direction {
            return Err(differ(
                "directions",
                first.direction.as_str(),
                b.direction.as_str(),
            ));
        }
        let (before, now) = (first.status(), b.status());
        let status = before.combine(now);
        let reason = match status {
            ResultStatus::Ok => None,
            _ if now == status => b.reason().or_else(|| first.reason()),
            _ => first.reason(),
        };
        (first.error, first.skipped) = match status {
            ResultStatus::Ok => (None, None),
            // A tool's output never says implausible (pitwall's guard does); kept as an error.
            ResultStatus::Failed | ResultStatus::Implausible => (reason, None),
            ResultStatus::Skipped => (None, reason),
        };
        first.samples.extend(b.samples);
        first.sample_meta.extend(b.sample_meta);
        whole_meta[i] &= whole;
    }
    for (b, whole) in out.iter_mut().zip(whole_meta) {
        if !whole {
            b.sample_meta.clear();
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::schema::{Direction, SampleMeta, Unit};

    fn b(name: &str, samples: Vec<f64>) -> ParsedBenchmark {
        ParsedBenchmark {
            name: name.into(),
            params: BTreeMap::from([("a".to_string(), "1".to_string())]),
            measure: "time".into(),
            unit: Unit::new("ns"),
            direction: Direction::LowerIsBetter,
            samples,
            sample_meta: Vec::new(),
            error: None,
            skipped: None,
        }
    }

    #[test]
    fn a_bom_is_stripped_once_before_any_reader_and_detection() {
        use crate::{Input, InputFormat, detect, parse};
        assert_eq!(strip_bom("\u{feff}\u{feff}x"), "\u{feff}x");
        assert_eq!(strip_bom("x"), "x");
        for (format, text) in [
            (
                InputFormat::Hyperfine,
                include_str!("../../../tests/fixtures/hyperfine/sleeps.json"),
            ),
            (
                InputFormat::Bmf,
                include_str!("../../../tests/fixtures/bmf/multi.json"),
            ),
            (
                InputFormat::NcclTests,
                include_str!("../../../tests/fixtures/nccl-tests/all_reduce_perf.txt"),
            ),
            (
                InputFormat::PitwallJson,
                r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","samples":[1]}]}"#,
            ),
        ] {
            let with = format!("\u{feff}{text}");
            assert_eq!(detect(&with), Some(format));
            let (a, b) = (
                parse(format, Input::Text(&with)).unwrap(),
                parse(format, Input::Text(text)).unwrap(),
            );
            assert_eq!(a, b, "{format:?}");
        }
    }

    #[test]
    fn validation_rejects_non_finite_negative_and_unparallel() {
        let e = validate(
            "hyperfine",
            &[b("ok", vec![1.0]), b("x", vec![1.0, f64::INFINITY])],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "hyperfine: benchmark 1 (x[a=1]): sample 1 is not a finite number after conversion to ns"
        );
        let e = validate("bmf", &[b("x", vec![-1.0])]).unwrap_err();
        assert!(
            e.message.contains("sample 0 is a negative time (-1 ns)"),
            "{e}"
        );
        let mut rate = b("x", vec![-1.0]);
        rate.unit = Unit::new("B/s");
        assert!(validate("bmf", &[rate]).is_ok(), "only times must be ≥ 0");
        let mut meta = b("x", vec![1.0, 2.0]);
        meta.sample_meta = vec![SampleMeta::default()];
        assert!(
            validate("bmf", &[meta])
                .unwrap_err()
                .message
                .contains("1 sample_meta entries for 2")
        );
    }

    /// A time that overflows to infinity when a reader converts it to ns is rejected, whichever
    /// reader converted it.
    #[test]
    fn every_converting_reader_rejects_an_overflow() {
        use crate::{Input, InputFormat, parse};
        let nccl = include_str!("../../../tests/fixtures/nccl-tests/all_reduce_perf.txt");
        let nccl_row = "        2048           512     float     sum      -1    19.51";
        assert!(nccl.contains(nccl_row));
        let nvbench_time = |v: &str| {
            format!(
                r#"{{"devices":[],"benchmarks":[{{"name":"k","axes":[],"states":[{{"name":"Device=0","device":0,"axis_values":null,"summaries":[{{"tag":"nv/cold/time/gpu/mean","data":[{{"name":"value","type":"float64","value":"{v}"}}]}}],"is_skipped":false}}]}}]}}"#
            )
        };
        for (format, text, position) in [
            (
                InputFormat::Hyperfine,
                r#"{"results":[{"command":"a","mean":1,"times":[1,1e300]}]}"#.to_string(),
                "benchmark 0 (a): sample 1",
            ),
            (
                InputFormat::GoogleBenchmark,
                r#"{"context":{},"benchmarks":[{"name":"BM_a/8","run_type":"iteration","iterations":1,"real_time":1e300,"cpu_time":1,"time_unit":"s"}]}"#.to_string(),
                "benchmark 0 (BM_a[arg0=8]): sample 0",
            ),
            (
                InputFormat::PytestBenchmark,
                r#"{"machine_info":{},"benchmarks":[{"name":"t","fullname":"t.py::t","stats":{"data":[1e-6,1e300]}}]}"#.to_string(),
                "benchmark 0 (t.py::t): sample 1",
            ),
            (
                InputFormat::Nvbench,
                nvbench_time("1e300"),
                "benchmark 0 (k[device=0]): sample 0",
            ),
            (
                InputFormat::NcclTests,
                nccl.replace(nccl_row, "        2048           512     float     sum      -1    1e306"),
                "(all_reduce_perf[",
            ),
        ] {
            let e = parse(format, Input::Text(&text)).unwrap_err();
            assert_eq!(e.format, format.name(), "{e}");
            assert!(e.to_string().contains(position), "{format:?}: {e}");
            assert!(
                e.message.ends_with("is not a finite number after conversion to ns"),
                "{format:?}: {e}"
            );
        }
    }

    #[test]
    fn duplicates_merge_in_order_with_combined_status() {
        let mut failed = b("x", vec![3.0]);
        failed.error = Some("oom".into());
        let mut skipped = b("y", vec![]);
        skipped.skipped = Some("no GPU".into());
        let merged = merge_duplicates(vec![
            b("x", vec![1.0, 2.0]),
            skipped.clone(),
            failed,
            b("x", vec![4.0]),
            b("y", vec![7.0]),
            skipped.clone(),
        ])
        .unwrap();
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].samples, vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            (merged[0].status(), merged[0].error.as_deref()),
            (ResultStatus::Failed, Some("oom"))
        );
        assert_eq!(
            (merged[1].status(), merged[1].reason()),
            (ResultStatus::Ok, None)
        );
        let both = merge_duplicates(vec![skipped.clone(), skipped]).unwrap();
        assert_eq!(
            (both[0].status(), both[0].reason().as_deref()),
            (ResultStatus::Skipped, Some("no GPU"))
        );
    }

    #[test]
    fn metadata_is_kept_only_when_every_entry_has_it() {
        let mut with = b("x", vec![1.0]);
        with.sample_meta = vec![SampleMeta {
            throttled: true,
            ..SampleMeta::default()
        }];
        let merged = merge_duplicates(vec![with.clone(), with.clone()]).unwrap();
        assert_eq!(merged[0].sample_meta.len(), 2);
        let merged = merge_duplicates(vec![with, b("x", vec![2.0])]).unwrap();
        assert!(merged[0].sample_meta.is_empty());
    }

    #[test]
    fn duplicates_that_disagree_are_an_error() {
        let mut ms = b("x", vec![1.0]);
        ms.unit = Unit::new("ms");
        assert_eq!(
            merge_duplicates(vec![b("x", vec![1.0]), ms]).unwrap_err(),
            "benchmark `x[a=1]/time` is given more than once with different units (`ns`, then `ms`)"
        );
        let mut up = b("x", vec![1.0]);
        up.direction = Direction::HigherIsBetter;
        assert!(
            merge_duplicates(vec![b("x", vec![1.0]), up])
                .unwrap_err()
                .contains("different directions (`lower_is_better`, then `higher_is_better`)")
        );
    }

    #[test]
    fn one_output_with_duplicates_gives_one_result_per_benchmark() {
        use crate::{Input, InputFormat, parse};
        // `{"n":1}` and `{"n":"1"}` are the same params once stored as text.
        let doc = r#"{"schema":"pitwall/v1","benchmarks":[
            {"name":"a","params":{"n":1},"samples":[1]},
            {"name":"b","samples":[5]},
            {"name":"a","params":{"n":"1"},"samples":[2],"error":"late"}]}"#;
        let run = parse(InputFormat::PitwallJson, Input::Text(doc)).unwrap();
        assert_eq!(run.benchmarks.len(), 2);
        assert_eq!(run.benchmarks[0].samples, vec![1.0, 2.0]);
        assert_eq!(run.benchmarks[0].status(), ResultStatus::Failed);
        let doc = r#"{"schema":"pitwall/v1","benchmarks":[
            {"name":"a","samples":[1]},{"name":"a","unit":"ms","samples":[2]}]}"#;
        let e = parse(InputFormat::PitwallJson, Input::Text(doc)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pitwall-json: benchmark `a/time` is given more than once with different units (`ns`, then `ms`)"
        );
    }
}
