//! nvbench reader (`format = "nvbench"`): the JSON that an nvbench executable writes with
//! `--json <file>` (nvbench's `nvbench/json_printer.cu`, file version 1.x): `benchmarks[]`, each
//! with `states[]` (one per point of its axes), each with `axis_values` and tagged `summaries`.
//!
//! Every state becomes benchmarks named after its nvbench benchmark, with the axis values (and
//! the device index, `device`) as parameters, one per summary it has:
//!
//! | summary tag                            | measure          | unit         | better |
//! |----------------------------------------|------------------|--------------|--------|
//! | `nv/cold/time/gpu/mean`                | `gpu_time`       | ns (from s)  | lower  |
//! | `nv/cold/time/cpu/mean`                | `cpu_time`       | ns (from s)  | lower  |
//! | `nv/batch/time/gpu/mean`               | `batch_gpu_time` | ns (from s)  | lower  |
//! | `nv/cold/bw/global/bytes_per_second`   | `bandwidth`      | B/s          | higher |
//! | `nv/cold/bw/item_rate`                 | `item_rate`      | items/s      | higher |
//!
//! Each is a single summary sample (a mean over the state's samples). nvbench writes the raw
//! sample times only to binary files (`--jsonbin`, summary `nv/json/bin:nv/cold/sample_times`),
//! which a text reader does not open: the run's notes say so. A skipped state becomes a skipped
//! `gpu_time` result carrying the skip reason. The `devices` section goes into the context.

use std::collections::BTreeMap;

use serde_json::Value;

use super::bmf::{kind, parse_json};
use super::pitwall_json::{FormatError, ParsedBenchmark};
use super::registry::ParsedRun;
use crate::schema::{Direction, Unit};

const FORMAT: &str = "nvbench";

/// (summary tag, measure, unit, factor to the unit, direction).
const MEASURES: [(&str, &str, &str, f64, Direction); 5] = [
    (
        "nv/cold/time/gpu/mean",
        "gpu_time",
        Unit::NANOSECONDS,
        1e9,
        Direction::LowerIsBetter,
    ),
    (
        "nv/cold/time/cpu/mean",
        "cpu_time",
        Unit::NANOSECONDS,
        1e9,
        Direction::LowerIsBetter,
    ),
    (
        "nv/batch/time/gpu/mean",
        "batch_gpu_time",
        Unit::NANOSECONDS,
        1e9,
        Direction::LowerIsBetter,
    ),
    (
        "nv/cold/bw/global/bytes_per_second",
        "bandwidth",
        "B/s",
        1.0,
        Direction::HigherIsBetter,
    ),
    (
        "nv/cold/bw/item_rate",
        "item_rate",
        Unit::ITEMS_PER_S,
        1.0,
        Direction::HigherIsBetter,
    ),
];

/// The note every nvbench run carries.
pub const SUMMARY_NOTE: &str = "nvbench: summary values only (one mean per state and measure): \
     comparisons are summary-based";

/// Reads nvbench JSON output.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    let root = parse_json(FORMAT, text)?;
    let Some(benches) = root.get("benchmarks").and_then(Value::as_array) else {
        return Err(err(
            String::new(),
            "not nvbench JSON: no `benchmarks` list (is this another format?)".into(),
        ));
    };
    if benches.is_empty() {
        return Err(err(String::new(), "no benchmarks in output".into()));
    }
    let mut run = ParsedRun::default();
    let mut bin_files = 0;
    for (index, bench) in benches.iter().enumerate() {
        let name = bench.get("name").and_then(Value::as_str).unwrap_or("");
        if name.trim().is_empty() {
            return Err(err(
                format!("benchmark {index}: "),
                "missing or empty `name`".into(),
            ));
        }
        let at = format!("benchmark {index} ({name}): ");
        let states = match bench.get("states") {
            Some(Value::Array(s)) if !s.is_empty() => s,
            Some(Value::Array(_)) | Some(Value::Null) | None => {
                return Err(err(at, "no states".into()));
            }
            Some(other) => {
                return Err(err(
                    at,
                    format!("`states` must be a list, got {}", kind(other)),
                ));
            }
        };
        for state in states {
            bin_files += read_state(&at, name, state, &mut run.benchmarks)?;
        }
    }
    if let Some(devices) = root.get("devices") {
        run.context.insert("devices".into(), devices.clone());
    }
    if let Some(v) = root.pointer("/meta/version") {
        run.context.insert("version".into(), v.clone());
    }
    run.notes.push(SUMMARY_NOTE.into());
    if bin_files > 0 {
        run.notes.push(format!(
            "nvbench: {bin_files} state(s) wrote raw sample times to binary files (--jsonbin); \
             they are not read"
        ));
    }
    Ok(run)
}

/// Adds the benchmarks of one state; returns 1 when it names a binary sample file.
fn read_state(
    at: &str,
    name: &str,
    state: &Value,
    out: &mut Vec<ParsedBenchmark>,
) -> Result<usize, FormatError> {
    let desc = state.get("name").and_then(Value::as_str).unwrap_or("?");
    let at = format!("{at}state `{desc}`: ");
    let mut params = BTreeMap::new();
    if let Some(d) = state.get("device") {
        let d = d
            .as_i64()
            .ok_or_else(|| err(at.clone(), format!("`device` is {d}")))?;
        params.insert("device".to_string(), d.to_string());
    }
    for v in list(state, "axis_values", &at)? {
        let (Some(k), Some(val)) = (v.get("name").and_then(Value::as_str), v.get("value")) else {
            return Err(err(at, "axis values need `name` and `value`".into()));
        };
        let text = match val {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => {
                return Err(err(at, format!("axis `{k}` value is {}", kind(other))));
            }
        };
        params.insert(k.to_string(), text);
    }
    let make = |measure: &str, unit: &str, direction, samples, skipped| ParsedBenchmark {
        name: name.to_string(),
        params: params.clone(),
        measure: measure.to_string(),
        unit: Unit::new(unit),
        direction,
        samples,
        sample_meta: Vec::new(),
        error: None,
        skipped,
    };
    if state.get("is_skipped").and_then(Value::as_bool) == Some(true) {
        let reason = state
            .get("skip_reason")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        out.push(make(
            "gpu_time",
            Unit::NANOSECONDS,
            Direction::LowerIsBetter,
            vec![],
            Some(format!("skipped by nvbench: {reason}")),
        ));
        return Ok(0);
    }
    let summaries = list(state, "summaries", &at)?;
    let mut found = 0;
    let mut bin = 0;
    for summ in summaries {
        let tag = summ.get("tag").and_then(Value::as_str).ok_or_else(|| {
            err(
                at.clone(),
                "summaries need a `tag` (nvbench JSON before 1.0 is not read)".into(),
            )
        })?;
        if tag.starts_with("nv/json/bin:") {
            bin = 1;
        }
        let Some((_, measure, unit, factor, direction)) = MEASURES.iter().find(|(t, ..)| *t == tag)
        else {
            continue;
        };
        let value = summary_value(summ).map_err(|m| err(at.clone(), format!("`{tag}`: {m}")))?;
        if value < 0.0 {
            return Err(err(at, format!("`{tag}` is negative ({value})")));
        }
        out.push(make(measure, unit, *direction, vec![value * factor], None));
        found += 1;
    }
    if found == 0 {
        return Err(err(at, "no time or bandwidth summaries".into()));
    }
    Ok(bin)
}

/// A list member that nvbench may write as `null` when empty.
fn list<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a [Value], FormatError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(err(
            at.to_string(),
            format!("`{key}` must be a list, got {}", kind(other)),
        )),
    }
}

/// The `value` datum of a summary: a number, or a number written as a string (nvbench ≥ 1.0).
fn summary_value(summ: &Value) -> Result<f64, String> {
    let data = summ
        .get("data")
        .and_then(Value::as_array)
        .ok_or("no `data` list")?;
    let v = data
        .iter()
        .find(|d| d.get("name").and_then(Value::as_str) == Some("value"))
        .and_then(|d| d.get("value"))
        .ok_or("no `value` datum")?;
    let x = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    x.filter(|x| x.is_finite())
        .ok_or_else(|| format!("value {v} is not a finite number"))
}

/// Whether `text` is nvbench JSON: an object with `devices` and a `benchmarks` list whose
/// entries have `states` and `axes`.
pub fn looks_like(text: &str) -> bool {
    let Ok(root) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    root.get("devices").is_some_and(Value::is_array)
        && root
            .get("benchmarks")
            .and_then(Value::as_array)
            .is_some_and(|b| {
                !b.is_empty()
                    && b.iter()
                        .all(|b| b.get("states").is_some() && b.get("axes").is_some())
            })
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDUCE: &str = include_str!("../../../tests/fixtures/nvbench/reduce.json");

    #[test]
    fn reads_states_axes_and_summaries() {
        let run = parse(REDUCE).unwrap();
        // reduce: 4 states × 5 measures; copy: 1 state × 4 measures (no item rate) + 1 skipped.
        assert_eq!(run.benchmarks.len(), 25);
        let reduce: Vec<_> = run
            .benchmarks
            .iter()
            .filter(|b| b.name == "reduce")
            .collect();
        assert_eq!(reduce.len(), 20);
        let first = reduce[0];
        assert_eq!(first.params["T"], "F32");
        assert_eq!(first.params["Elements"], "1048576");
        assert_eq!(first.params["device"], "0");
        let gpu = reduce
            .iter()
            .find(|b| {
                b.measure == "gpu_time"
                    && b.params["T"] == "F64"
                    && b.params["Elements"] == "16777216"
            })
            .unwrap();
        assert_eq!(gpu.unit.as_str(), "ns");
        assert_eq!(gpu.direction, Direction::LowerIsBetter);
        assert_eq!(gpu.samples.len(), 1);
        // 8 µs + 2^24 × 8 B / 3.2 TB/s, written in seconds.
        let expected = (8.0e-6 + 16777216.0 * 8.0 / 3.2e12) * 1e9;
        assert!(
            (gpu.samples[0] - expected).abs() / expected < 1e-5,
            "{}",
            gpu.samples[0]
        );
        let bw = reduce.iter().find(|b| b.measure == "bandwidth").unwrap();
        assert_eq!(bw.unit.as_str(), "B/s");
        assert_eq!(bw.direction, Direction::HigherIsBetter);
        for m in ["cpu_time", "batch_gpu_time", "item_rate"] {
            assert_eq!(reduce.iter().filter(|b| b.measure == m).count(), 4, "{m}");
        }
        assert!(run.benchmarks.iter().all(|b| b.error.is_none()));
        let skipped = run.benchmarks.iter().find(|b| b.skipped.is_some()).unwrap();
        assert_eq!(skipped.name, "copy");
        assert_eq!(skipped.params["BlockSize"], "2048");
        assert!(skipped.samples.is_empty());
        assert_eq!(skipped.status(), crate::schema::ResultStatus::Skipped);
        assert!(
            skipped
                .skipped
                .as_deref()
                .unwrap()
                .contains("exceeds the device")
        );
        assert_eq!(run.notes[0], SUMMARY_NOTE);
        assert!(run.notes[1].contains("2 state(s)"), "{:?}", run.notes);
        assert_eq!(run.context["devices"][0]["name"], "NVIDIA H200");
    }

    #[test]
    fn looks_like_only_nvbench() {
        assert!(looks_like(REDUCE));
        for other in [
            include_str!("../../../tests/fixtures/bmf/bencher-docs-example.json"),
            include_str!("../../../tests/fixtures/nccl-tests/all_reduce_perf.json"),
            include_str!("../../../tests/fixtures/cargo-criterion/messages.jsonl"),
            include_str!("../../../tests/fixtures/mlperf-loadgen/offline_valid.txt"),
            r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","samples":[1]}]}"#,
        ] {
            assert!(!looks_like(other), "{}", &other[..other.len().min(60)]);
        }
    }

    #[test]
    fn bad_input_is_an_error_with_position() {
        let e = parse(&REDUCE[..REDUCE.len() / 3]).unwrap_err();
        assert!(e.position.starts_with("line "), "{e}");
        assert!(e.position.contains(", column "), "{e}");
        let e = parse(include_str!("../../../tests/fixtures/bmf/multi.json")).unwrap_err();
        assert!(e.message.contains("another format"), "{e}");
        let e = parse(r#"{"devices":[],"benchmarks":[]}"#).unwrap_err();
        assert!(e.message.contains("no benchmarks"), "{e}");
        let doc = |summ: &str| {
            format!(
                r#"{{"devices":[],"benchmarks":[{{"name":"k","axes":[],"states":[{{"name":"Device=0","device":0,"axis_values":null,"summaries":[{summ}],"is_skipped":false}}]}}]}}"#
            )
        };
        let time = |v: &str| {
            doc(&format!(
                r#"{{"tag":"nv/cold/time/gpu/mean","data":[{{"name":"value","type":"float64","value":{v}}}]}}"#
            ))
        };
        let run = parse(&time("\"2.5e-06\"")).unwrap();
        assert_eq!(run.benchmarks[0].samples, vec![2500.0]);
        for (bad, says) in [
            ("\"nan\"", "not a finite number"),
            ("\"fast\"", "not a finite number"),
            ("true", "not a finite number"),
            ("\"-1e-06\"", "negative"),
        ] {
            let e = parse(&time(bad)).unwrap_err();
            assert_eq!(e.position, "benchmark 0 (k): state `Device=0`: ", "{bad}");
            assert!(e.message.contains(says), "{bad}: {e}");
        }
        let e = parse(&doc("")).unwrap_err();
        assert!(e.message.contains("no time or bandwidth summaries"), "{e}");
        let e = parse(&doc(r#"{"name":"GPU Time"}"#)).unwrap_err();
        assert!(e.message.contains("need a `tag`"), "{e}");
        let e = parse(r#"{"devices":[],"benchmarks":[{"name":"k","axes":[],"states":[]}]}"#)
            .unwrap_err();
        assert_eq!(e.to_string(), "nvbench: benchmark 0 (k): no states");
        let e =
            parse(r#"{"devices":[],"benchmarks":[{"name":"k","states":{"a":1}}]}"#).unwrap_err();
        assert!(e.message.contains("must be a list"), "{e}");
    }
}
