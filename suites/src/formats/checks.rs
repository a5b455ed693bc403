//! What every reader's output goes through, whatever its format, so that no reader can let bad
//! values through on its own: every benchmark is checked (finite samples after unit conversion,
//! no negative times, metadata parallel to the samples).

use super::pitwall_json::{FormatError, ParsedBenchmark, TIME_UNITS};
use crate::schema::display_name;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Direction, SampleMeta, Unit};
    use std::collections::BTreeMap;

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
        use crate::formats::{Input, InputFormat, parse};
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
}
