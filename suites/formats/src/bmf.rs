//! Bencher Metric Format (BMF) reader (`format = "bmf"`): the JSON that Bencher's adapters and
//! custom harnesses produce, `{ "<benchmark>": { "<measure>": { "value": f, "lower_value": f?,
//! "upper_value": f? } } }` (bencher.dev/docs/reference/bencher-metric-format).
//!
//! BMF carries one value per benchmark and measure, never raw samples: each becomes a benchmark
//! with a single summary sample, and the run says so in a note. Measures map as follows:
//! `latency` → nanoseconds, lower is better (Bencher's built-in Latency measure); `throughput` →
//! `ops/s`, higher is better (Bencher's built-in Throughput measure); any other measure (a
//! project's own, such as `file-size`) keeps its name, gets the unit `unknown` and is treated as
//! lower is better, since BMF itself does not say. `lower_value`/`upper_value` are checked but
//! not kept.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json_util::{parse_json, value_kind};
use super::parsed::{FormatError, ParsedBenchmark, ParsedRun};
use pitwall_schema::schema::{Direction, Unit};

const FORMAT: &str = "bmf";
const BOUNDS: [&str; 2] = ["lower_value", "upper_value"];

/// The note every BMF run carries.
pub const SUMMARY_NOTE: &str = "bmf: summary values only (one value per benchmark and measure, \
     no raw samples): comparisons are summary-based";

/// Reads BMF JSON.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    let root = parse_json(FORMAT, text)?;
    let Value::Object(benches) = root else {
        return Err(err(
            String::new(),
            format!(
                "expected a JSON object of benchmarks, got {} (is this another format?)",
                value_kind(&root)
            ),
        ));
    };
    if benches.is_empty() {
        return Err(err(String::new(), "no benchmarks in output".into()));
    }
    let mut out = Vec::new();
    for (index, (name, measures)) in benches.iter().enumerate() {
        let at = format!("benchmark {index} ({name}): ");
        if name.trim().is_empty() {
            return Err(err(format!("benchmark {index}: "), "empty name".into()));
        }
        let Value::Object(measures) = measures else {
            return Err(err(
                at,
                format!(
                    "expected an object of measures, got {}",
                    value_kind(measures)
                ),
            ));
        };
        if measures.is_empty() {
            return Err(err(at, "no measures".into()));
        }
        for (measure, metric) in measures {
            out.push(convert(&at, name, measure, metric)?);
        }
    }
    let mut run = ParsedRun::new(out);
    run.notes.push(SUMMARY_NOTE.into());
    Ok(run)
}

fn convert(
    at: &str,
    name: &str,
    measure: &str,
    metric: &Value,
) -> Result<ParsedBenchmark, FormatError> {
    let at = format!("{at}measure `{measure}`: ");
    let Value::Object(fields) = metric else {
        return Err(err(
            at,
            format!(
                "expected an object with `value`, got {}",
                value_kind(metric)
            ),
        ));
    };
    if let Some(extra) = fields
        .keys()
        .find(|k| k.as_str() != "value" && !BOUNDS.contains(&k.as_str()))
    {
        return Err(err(at, format!("unknown field `{extra}`")));
    }
    let number = |key: &str| -> Result<Option<f64>, FormatError> {
        match fields.get(key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() => Ok(Some(x)),
                _ => Err(err(
                    at.clone(),
                    format!("`{key}` must be a finite number, got {v}"),
                )),
            },
        }
    };
    let value = number("value")?.ok_or_else(|| err(at.clone(), "missing `value`".into()))?;
    for key in BOUNDS {
        number(key)?;
    }
    let (unit, direction) = match measure {
        "latency" => (Unit::NANOSECONDS, Direction::LowerIsBetter),
        "throughput" => ("ops/s", Direction::HigherIsBetter),
        _ => ("unknown", Direction::LowerIsBetter),
    };
    if measure == "latency" && value < 0.0 {
        return Err(err(at, format!("negative latency ({value})")));
    }
    Ok(ParsedBenchmark {
        name: name.to_string(),
        params: BTreeMap::new(),
        measure: measure.to_string(),
        unit: Unit::new(unit),
        direction,
        samples: vec![value],
        sample_meta: Vec::new(),
        error: None,
        skipped: None,
    })
}

/// Whether `text` is BMF: a non-empty JSON object whose every member is an object of measures,
/// each an object with a numeric `value` and at most `lower_value`/`upper_value` besides.
pub fn looks_like(text: &str) -> bool {
    let Ok(Value::Object(benches)) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    !benches.is_empty()
        && benches.values().all(|m| {
            m.as_object().is_some_and(|m| {
                !m.is_empty()
                    && m.values().all(|metric| {
                        metric.as_object().is_some_and(|f| {
                            f.get("value").is_some_and(Value::is_number)
                                && f.keys()
                                    .all(|k| k == "value" || BOUNDS.contains(&k.as_str()))
                        })
                    })
            })
        })
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCS: &str = include_str!("../../../tests/fixtures/bmf/bencher-docs-example.json");
    const MULTI: &str = include_str!("../../../tests/fixtures/bmf/multi.json");

    #[test]
    fn reads_the_docs_example() {
        let run = parse(DOCS).unwrap();
        assert_eq!(run.benchmarks.len(), 4);
        let find = |n: &str, m: &str| {
            run.benchmarks
                .iter()
                .find(|b| b.name == n && b.measure == m)
                .unwrap()
        };
        let lat = find("benchmark_name", "latency");
        assert_eq!(lat.unit.as_str(), "ns");
        assert_eq!(lat.direction, Direction::LowerIsBetter);
        assert_eq!(lat.samples, vec![88.0]);
        let thr = find("benchmark_name", "throughput");
        assert_eq!(thr.unit.as_str(), "ops/s");
        assert_eq!(thr.direction, Direction::HigherIsBetter);
        assert_eq!(thr.samples, vec![5.55]);
        let size = find("my_binary", "file-size");
        assert_eq!(size.unit.as_str(), "unknown");
        assert_eq!(size.direction, Direction::LowerIsBetter);
        assert!(
            find("/bin/sh -c ./my_build_script.sh", "build-time")
                .params
                .is_empty()
        );
        assert_eq!(run.notes, vec![SUMMARY_NOTE.to_string()]);
        assert!(run.notes[0].contains("summary-based"));
    }

    #[test]
    fn reads_many_benchmarks_one_sample_each() {
        let run = parse(MULTI).unwrap();
        assert_eq!(run.benchmarks.len(), 6);
        assert!(run.benchmarks.iter().all(|b| b.samples.len() == 1));
        assert!(run.benchmarks.iter().all(|b| b.error.is_none()));
    }

    #[test]
    fn looks_like_only_bmf() {
        assert!(looks_like(DOCS));
        assert!(looks_like(MULTI));
        for other in [
            include_str!("../../../tests/fixtures/nvbench/reduce.json"),
            include_str!("../../../tests/fixtures/nccl-tests/all_reduce_perf.json"),
            include_str!("../../../tests/fixtures/nccl-tests/all_reduce_perf.txt"),
            include_str!("../../../tests/fixtures/cargo-criterion/messages.jsonl"),
            include_str!("../../../tests/fixtures/mlperf-loadgen/offline_valid.txt"),
            r#"{"schema":"pitwall/v1","benchmarks":[]}"#,
            "{}",
        ] {
            assert!(!looks_like(other), "{}", &other[..other.len().min(60)]);
        }
    }

    #[test]
    fn bad_input_is_an_error_with_position() {
        let e = parse(&DOCS[..DOCS.len() / 2]).unwrap_err();
        assert!(e.position.starts_with("line "), "{e}");
        assert!(e.position.contains("column"), "{e}");
        let e = parse("{}").unwrap_err();
        assert!(e.message.contains("no benchmarks"), "{e}");
        let e = parse(r#"{"a":{"latency":{"value":"fast"}}}"#).unwrap_err();
        assert_eq!(e.position, "benchmark 0 (a): measure `latency`: ");
        assert!(e.message.contains("finite number"), "{e}");
        let e = parse(r#"{"a":{"latency":{"value":1}},"b":{"latency":{"value":-3}}}"#).unwrap_err();
        assert!(
            e.to_string()
                .contains("benchmark 1 (b): measure `latency`: negative latency"),
            "{e}"
        );
        let e = parse(r#"{"a":{"latency":{"lower_value":1}}}"#).unwrap_err();
        assert!(e.message.contains("missing `value`"), "{e}");
        let e = parse(r#"{"a":{"latency":{"value":NaN}}}"#).unwrap_err();
        assert!(e.position.starts_with("line 1, column"), "{e}");
        let e = parse(r#"{"a":[1,2]}"#).unwrap_err();
        assert!(e.message.contains("object of measures"), "{e}");
        let e = parse(r#"{"a":{}}"#).unwrap_err();
        assert!(e.message.contains("no measures"), "{e}");
        let e = parse(include_str!("../../../tests/fixtures/nvbench/reduce.json")).unwrap_err();
        assert!(e.position.starts_with("benchmark 0 ("), "{e}");
        let e = parse("[1]").unwrap_err();
        assert!(e.message.contains("another format"), "{e}");
        assert!(parse("  ").unwrap_err().message.contains("empty output"));
    }
}
