//! pytest-benchmark's JSON (`--benchmark-json`, and the files `--benchmark-save` writes).
//!
//! One benchmark per test: the name is `fullname` (else `name`) without its trailing `[param-id]`
//! when that id is the one in `param` (the values are in params, from `params`, as text), so
//! `test_x.py::test_fib[10]` becomes `test_x.py::test_fib` with `n=10`. `group` is display only
//! and is not part of the identity. Measure `time` (ns per iteration, lower is better): each
//! round in `stats.data` (seconds per iteration) is one sample; without `data` (files saved
//! without `--benchmark-save-data`) `stats.median` is one summary sample and a note says so.
//! `machine_info`, `commit_info`, `datetime` and `version` go into the context under
//! `pytest_benchmark`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::json_util::{bench, kind, read_json, time_value, top_array};
use super::parsed::{FormatError, ParsedRun};
use pitwall_schema::schema::Unit;

const FORMAT: &str = "pytest-benchmark";

/// Reads pytest-benchmark JSON.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    let doc = read_json(FORMAT, text)?;
    let (obj, entries) = top_array(FORMAT, &doc, "benchmarks")?;
    let mut run = ParsedRun::default();
    let context: Map<String, Value> = ["machine_info", "commit_info", "datetime", "version"]
        .into_iter()
        .filter_map(|k| Some((k.to_string(), obj.get(k)?.clone())))
        .collect();
    run.context.extend(context);
    let mut summary_only = Vec::new();
    for (i, b) in entries.iter().enumerate() {
        let name = ["fullname", "name"].iter().find_map(|k| b.get(k)?.as_str());
        let name = name.ok_or_else(|| {
            err(
                format!("benchmark {i}: "),
                "`fullname` or `name` must be a string".into(),
            )
        })?;
        let fail = |m: String| err(format!("benchmark {i} ({name}): "), m);
        let mut params = BTreeMap::new();
        match b.get("params") {
            None | Some(Value::Null) => {}
            Some(Value::Object(p)) => {
                for (k, v) in p {
                    params.insert(
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    );
                }
            }
            Some(v) => return Err(fail(format!("`params` must be an object, got {}", kind(v)))),
        }
        let id = b
            .get("param")
            .and_then(Value::as_str)
            .map(|p| format!("[{p}]"));
        let short = match id {
            Some(id) if !params.is_empty() => name.strip_suffix(&id).unwrap_or(name),
            _ => name,
        };
        let stats = match b.get("stats") {
            Some(Value::Object(s)) => s,
            None | Some(Value::Null) => {
                return Err(fail("no `stats` (did the benchmark run?)".into()));
            }
            Some(v) => return Err(fail(format!("`stats` must be an object, got {}", kind(v)))),
        };
        let samples: Vec<f64> = match stats.get("data") {
            Some(Value::Array(data)) if !data.is_empty() => data
                .iter()
                .enumerate()
                .map(|(k, t)| time_value(t, &format!("stats.data[{k}]")).map(|s| s * 1e9))
                .collect::<Result<_, _>>()
                .map_err(fail)?,
            None | Some(Value::Null) | Some(Value::Array(_)) => {
                let median = stats
                    .get("median")
                    .ok_or_else(|| fail("neither `stats.data` nor `stats.median`".into()))?;
                summary_only.push(name.to_string());
                vec![time_value(median, "stats.median").map_err(fail)? * 1e9]
            }
            Some(v) => {
                return Err(fail(format!(
                    "`stats.data` must be an array, got {}",
                    kind(v)
                )));
            }
        };
        run.benchmarks.push(bench(
            short,
            &params,
            "time",
            Unit::NANOSECONDS,
            samples,
            None,
        ));
    }
    if !summary_only.is_empty() {
        run.notes.push(format!(
            "no per-round data (`stats.data`; saved without --benchmark-save-data?) for {}: the median is used as a single summary sample, so comparisons for them are summary-based",
            summary_only.join(", ")
        ));
    }
    Ok(run)
}

/// Whether `text` is pytest-benchmark JSON: a `machine_info` object and `benchmarks` entries
/// with `stats`.
pub fn looks_like(text: &str) -> bool {
    let Ok(Value::Object(doc)) = read_json(FORMAT, text) else {
        return false;
    };
    doc.get("machine_info").is_some_and(Value::is_object)
        && !doc.contains_key("context")
        && doc
            .get("benchmarks")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().all(|b| b.get("stats").is_some()))
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InputFormat, detect};
    use pitwall_schema::schema::Direction;

    const DATA: &str = include_str!("../../../tests/fixtures/pytest-benchmark/with-data.json");
    const STATS: &str = include_str!("../../../tests/fixtures/pytest-benchmark/stats-only.json");
    const GBENCH: &str = include_str!("../../../tests/fixtures/google-benchmark/single.json");
    const HYPERFINE: &str = include_str!("../../../tests/fixtures/hyperfine/parameter-scan.json");

    fn ids(r: &ParsedRun) -> Vec<String> {
        r.benchmarks
            .iter()
            .map(|b| format!("{} {:?} {}", b.name, b.params, b.samples.len()))
            .collect()
    }

    #[test]
    fn rounds_are_samples_in_ns() {
        let r = parse(DATA).unwrap();
        assert_eq!(
            ids(&r),
            [
                r#"test_pw_bench.py::test_fib {"n": "10"} 7"#,
                r#"test_pw_bench.py::test_fib {"n": "15"} 7"#,
                "test_pw_bench.py::test_sort {} 7",
            ]
        );
        for b in &r.benchmarks {
            assert_eq!(
                (b.measure.as_str(), b.unit.as_str(), b.direction),
                ("time", "ns", Direction::LowerIsBetter)
            );
            assert!(b.error.is_none() && b.sample_meta.is_empty());
        }
        // 5.787600002804538e-06 s per iteration (10 iterations a round).
        assert!((r.benchmarks[0].samples[0] - 5787.600002804538).abs() < 1e-6);
        assert!((r.benchmarks[1].samples[0] - 65177.00012409477).abs() < 1e-6);
        let ctx = &r.context;
        assert_eq!(ctx["machine_info"]["node"], "vm");
        assert_eq!(ctx["machine_info"]["cpu"]["count"], 2);
        assert_eq!(ctx["commit_info"]["project"], "pyb");
        assert_eq!(ctx["version"], "5.3.1");
        assert!(r.notes.is_empty(), "{:?}", r.notes);
    }

    #[test]
    fn without_data_the_median_is_a_summary_sample() {
        let r = parse(STATS).unwrap();
        assert_eq!(ids(&r)[2], "test_pw_bench.py::test_sort {} 1");
        assert!((r.benchmarks[0].samples[0] - 5802.699979540193).abs() < 1e-6);
        assert!((r.benchmarks[2].samples[0] - 3994.00000787864).abs() < 1e-6);
        assert_eq!(r.notes.len(), 1);
        assert!(
            r.notes[0].contains("test_pw_bench.py::test_fib[15]")
                && r.notes[0].contains("summary-based")
        );
        // Hand-written: no fullname, non-string params, a param id that is not the suffix.
        let other = r#"{"machine_info":{},"benchmarks":[{"name":"t[x]","params":{"a":[1],"b":true},"param":"y","stats":{"data":[NaN]}}]}"#;
        let e = parse(other).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pytest-benchmark: benchmark 0 (t[x]): `stats.data[0]` is not a finite number (NaN, Infinity or null)"
        );
        let r = parse(&other.replace("NaN", "2")).unwrap();
        assert_eq!(ids(&r), [r#"t[x] {"a": "[1]", "b": "true"} 1"#]);
        assert_eq!(r.benchmarks[0].samples, [2e9]);
    }

    #[test]
    fn detection() {
        for own in [DATA, STATS] {
            assert!(looks_like(own));
            assert_eq!(detect(own), Some(InputFormat::PytestBenchmark));
        }
        let export = include_str!("../../../tests/fixtures/export-v1.json");
        for other in [GBENCH, HYPERFINE, export, "", "{}", &DATA[..300]] {
            assert!(!looks_like(other));
        }
    }

    /// `fields of entry 1 (after an ok entry 0) => message`; then `document => message`.
    const BAD: &str = r#"
        "stats":{"data":["fast"]} => benchmark 1 (b): `stats.data[0]` must be a number, got the string "fast"
        "stats":{"data":[1e-6,Infinity]} => benchmark 1 (b): `stats.data[1]` is not a finite number
        "stats":{"data":[-0.5]} => benchmark 1 (b): `stats.data[0]` is a negative time (-0.5)
        "stats":{"median":NaN} => benchmark 1 (b): `stats.median` is not a finite number
        "stats":{"median":"1"} => benchmark 1 (b): `stats.median` must be a number
        "stats":{"data":{}} => benchmark 1 (b): `stats.data` must be an array, got an object
        "stats":{"mean":1} => benchmark 1 (b): neither `stats.data` nor `stats.median`
        "stats":null => benchmark 1 (b): no `stats`
        "stats":[] => benchmark 1 (b): `stats` must be an object, got an array
        "params":"n=1","stats":{"median":1} => `params` must be an object, got the string "n=1"
        {"machine_info":{},"benchmarks":[]} => no benchmarks in output
        {"machine_info":{},"benchmarks":[{"stats":{}}]} => benchmark 0: `fullname` or `name` must be a string
        {"machine_info":{}} => no `benchmarks` in the JSON object"#;

    #[test]
    fn bad_input_names_the_position() {
        let e = parse(&DATA[..DATA.len() / 3]).unwrap_err();
        assert!(e.to_string().starts_with("pytest-benchmark: line "), "{e}");
        assert!(e.message.contains("EOF while parsing"), "{e}");
        let e = parse("{\"benchmarks\": [\n  {\"name\": 1e}]}").unwrap_err();
        assert_eq!(e.position, "line 2, column 14: ");
        let ok = r#"{"name":"a","stats":{"median":1}}"#;
        let doc = |t: &str| match t.starts_with('{') {
            true => t.to_string(),
            false => format!(r#"{{"machine_info":{{}},"benchmarks":[{ok},{{"name":"b",{t}}}]}}"#),
        };
        let lines = BAD
            .lines()
            .skip(1)
            .map(|l| l.trim().split_once(" => ").unwrap());
        let mut cases: Vec<(String, &str)> = lines.map(|(t, want)| (doc(t), want)).collect();
        // The reader does not guess at other tools' output (registry::parse names it).
        cases.push((HYPERFINE.into(), "no `benchmarks` in the JSON object"));
        cases.push(("".into(), "empty output"));
        for (text, want) in cases {
            let e = parse(&text).unwrap_err();
            assert_eq!(e.format, "pytest-benchmark");
            assert!(e.to_string().contains(want), "{e}\n  wanted: {want}");
        }
    }
}
