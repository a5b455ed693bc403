//! cargo-criterion reader (`format = "cargo-criterion"`): the JSON lines that
//! `cargo criterion --message-format=json` prints, one message per line, told apart by `reason`
//! (cargo-criterion's `src/message_formats/json.rs`; the criterion.rs book, "External Tools").
//!
//! Each `benchmark-complete` message becomes a `time` benchmark whose samples are the per-
//! iteration values `measured_values[i] / iteration_count[i]` (one per criterion sample), in
//! nanoseconds when the message's `unit` is a time unit; a custom measurement's unit is kept as
//! is. When the message has a `throughput` (bytes or elements per iteration), a second,
//! higher-is-better `throughput` benchmark is added in `B/s` or `elements/s`, one value per
//! sample. The benchmark name is the whole `id` (`group/function/value`): its parts cannot be
//! told apart in a title, since each may contain `/`; the `criterion` directory reader keeps them
//! separate. `group-complete` messages and reasons added later are skipped.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json_util::{finite_numbers, json_error, per_iteration, value_kind};
use super::parsed::{FormatError, ParsedBenchmark, ParsedRun};
use pitwall_schema::schema::{Direction, Unit};

const FORMAT: &str = "cargo-criterion";
const COMPLETE: &str = "benchmark-complete";

/// Reads cargo-criterion JSON messages.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    if text.trim().is_empty() {
        return Err(err(
            String::new(),
            "empty output (expected JSON messages, one per line)".into(),
        ));
    }
    let mut out = Vec::new();
    let mut index = 0;
    let last = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .last()
        .map_or(0, |(n, _)| n);
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let msg: Value = serde_json::from_str(line).map_err(|e| line_error(&e, n, last))?;
        let reason = msg.get("reason").and_then(Value::as_str).ok_or_else(|| {
            err(
                format!("line {}: ", n + 1),
                "not a cargo-criterion message (no `reason`; is this another format?)".into(),
            )
        })?;
        if reason == COMPLETE {
            convert(index, &msg, &mut out)?;
            index += 1;
        }
    }
    if out.is_empty() {
        return Err(err(
            String::new(),
            format!("no `{COMPLETE}` messages in output"),
        ));
    }
    Ok(ParsedRun::new(out))
}

/// The error for line `n` (from 0) that is not one JSON message; `last` is the last non-blank
/// line. A line that ends inside a value is a cut-off last message, or, when more lines follow,
/// JSON that is not one message per line (pretty-printed).
fn line_error(e: &serde_json::Error, n: usize, last: usize) -> FormatError {
    if e.classify() == serde_json::error::Category::Eof && n < last {
        return err(
            format!("line {}: ", n + 1),
            "not one JSON message per line (this line ends inside a JSON value; pretty-printed \
             JSON is not read; hint: give the output of `cargo criterion --message-format=json` \
             as it is)"
                .into(),
        );
    }
    // A message is one line: the line number is the file's, the column serde's.
    let mut e = json_error(FORMAT, e, String::new());
    e.position = e
        .position
        .replacen("line 1,", &format!("line {},", n + 1), 1);
    e
}

fn convert(index: usize, msg: &Value, out: &mut Vec<ParsedBenchmark>) -> Result<(), FormatError> {
    let id = msg.get("id").and_then(Value::as_str).unwrap_or("");
    let at = format!("benchmark {index} ({id}): ");
    if id.trim().is_empty() {
        return Err(err(
            format!("benchmark {index}: "),
            "missing or empty `id`".into(),
        ));
    }
    let fail = |m: String| err(at.clone(), m);
    let numbers = |key: &str| finite_numbers(msg, key, "", &fail);
    let values = numbers("measured_values")?;
    let iters = numbers("iteration_count")?;
    if values.is_empty() {
        return Err(err(at, "no samples (`measured_values` is empty)".into()));
    }
    if values.len() != iters.len() {
        return Err(err(
            at,
            format!(
                "{} measured_values for {} iteration counts",
                values.len(),
                iters.len()
            ),
        ));
    }
    let unit = msg
        .get("unit")
        .and_then(Value::as_str)
        .ok_or_else(|| err(at.clone(), "missing `unit`".into()))?;
    let scale = time_scale(unit);
    let samples = per_iteration(
        &values,
        &iters,
        scale.unwrap_or(1.0),
        scale.is_some(),
        ("", "iteration_count"),
        &fail,
    )?;
    let base = ParsedBenchmark {
        name: id.to_string(),
        params: BTreeMap::new(),
        measure: "time".into(),
        unit: Unit::new(if scale.is_some() {
            Unit::NANOSECONDS
        } else {
            unit
        }),
        direction: Direction::LowerIsBetter,
        samples,
        sample_meta: Vec::new(),
        error: None,
        skipped: None,
    };
    let throughput = match msg.get("throughput") {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) => list.first(),
        Some(other) => {
            return Err(err(
                at,
                format!("`throughput` must be a list, got {}", value_kind(other)),
            ));
        }
    };
    if let (Some(t), Some(_)) = (throughput, scale) {
        let per_iter = t.get("per_iteration").and_then(Value::as_f64);
        let (Some(per_iter), Some(tunit)) = (per_iter, t.get("unit").and_then(Value::as_str))
        else {
            return Err(err(
                at,
                "`throughput` entries need `per_iteration` and `unit`".into(),
            ));
        };
        let unit = if tunit == "bytes" {
            "B/s"
        } else {
            "elements/s"
        };
        let samples = base
            .samples
            .iter()
            .map(|ns| {
                if *ns > 0.0 {
                    per_iter / (ns * 1e-9)
                } else {
                    0.0
                }
            })
            .collect();
        out.push(base.clone());
        out.push(ParsedBenchmark {
            measure: "throughput".into(),
            unit: Unit::new(unit),
            direction: Direction::HigherIsBetter,
            samples,
            ..base
        });
    } else {
        out.push(base);
    }
    Ok(())
}

/// Nanoseconds per `unit` when it is a time unit.
pub(super) fn time_scale(unit: &str) -> Option<f64> {
    match unit {
        "ps" => Some(1e-3),
        "ns" => Some(1.0),
        "us" | "µs" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => None,
    }
}

/// Whether `text` is cargo-criterion output: every non-blank line a JSON object with a
/// `reason`, at least one of them `benchmark-complete` with `measured_values`.
pub fn looks_like(text: &str) -> bool {
    let mut complete = false;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(Value::Object(msg)) = serde_json::from_str::<Value>(line) else {
            return false;
        };
        match msg.get("reason").and_then(Value::as_str) {
            Some(COMPLETE) => complete |= msg.contains_key("measured_values"),
            Some(_) => {}
            None => return false,
        }
    }
    complete
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGES: &str = include_str!("../../../tests/fixtures/cargo-criterion/messages.jsonl");

    #[test]
    fn reads_real_cargo_criterion_output() {
        let run = parse(MESSAGES).unwrap();
        let names: Vec<_> = run
            .benchmarks
            .iter()
            .map(|b| format!("{} {}", b.name, b.measure))
            .collect();
        assert_eq!(
            names,
            [
                "sum/fold/100 time",
                "sum/iter_sum/100 time",
                "sum/fold/1000 time",
                "sum/iter_sum/1000 time",
                "bytes/checksum time",
                "bytes/checksum throughput"
            ]
        );
        let fold = &run.benchmarks[0];
        assert_eq!(fold.unit.as_str(), "ns");
        assert_eq!(fold.direction, Direction::LowerIsBetter);
        assert_eq!(fold.samples.len(), 100);
        assert!(fold.params.is_empty());
        // First sample: 122162 ns over 3641 iterations.
        assert!((fold.samples[0] - 122162.0 / 3641.0).abs() < 1e-9);
        let thr = &run.benchmarks[5];
        assert_eq!(thr.unit.as_str(), "B/s");
        assert_eq!(thr.direction, Direction::HigherIsBetter);
        assert_eq!(thr.samples.len(), 100);
        // First sample: 4096 bytes per iteration, 178046 ns over 320 iterations.
        let expected = 4096.0 / (178046.0 / 320.0 * 1e-9);
        assert!((thr.samples[0] - expected).abs() / expected < 1e-12);
        assert!(run.notes.is_empty());
    }

    #[test]
    fn converts_other_time_units_and_keeps_custom_ones() {
        let us = r#"{"reason":"benchmark-complete","id":"a","iteration_count":[2,4],"measured_values":[3.0,8.0],"unit":"us","throughput":[]}"#;
        let run = parse(us).unwrap();
        assert_eq!(run.benchmarks[0].samples, vec![1500.0, 2000.0]);
        let cycles = r#"{"reason":"benchmark-complete","id":"a","iteration_count":[2],"measured_values":[30.0],"unit":"cycles","throughput":[{"per_iteration":8,"unit":"bytes"}]}"#;
        let run = parse(cycles).unwrap();
        assert_eq!(run.benchmarks.len(), 1);
        assert_eq!(run.benchmarks[0].unit.as_str(), "cycles");
        assert_eq!(run.benchmarks[0].samples, vec![15.0]);
    }

    #[test]
    fn looks_like_only_cargo_criterion() {
        assert!(looks_like(MESSAGES));
        for other in [
            include_str!("../../../tests/fixtures/bmf/bencher-docs-example.json"),
            include_str!("../../../tests/fixtures/nvbench/reduce.json"),
            include_str!("../../../tests/fixtures/nccl-tests/all_reduce_perf.json"),
            include_str!("../../../tests/fixtures/nccl-tests/all_reduce_perf.txt"),
            include_str!("../../../tests/fixtures/mlperf-loadgen/server_invalid.txt"),
            r#"{"reason":"group-complete","group_name":"g","benchmarks":[]}"#,
        ] {
            assert!(!looks_like(other), "{}", &other[..other.len().min(60)]);
        }
    }

    #[test]
    fn bad_input_is_an_error_with_position() {
        // Truncated in the middle of the third message.
        let cut = MESSAGES.lines().take(2).collect::<Vec<_>>().join("\n")
            + "\n"
            + &MESSAGES.lines().nth(2).unwrap()[..200];
        let e = parse(&cut).unwrap_err();
        assert!(e.position.starts_with("line 3, column 200: "), "{e}");
        assert!(e.message.contains("EOF while parsing"), "{e}");
        let e = parse(&format!(
            "{}\n{{\"reason\": 1,,}}\n",
            MESSAGES.lines().next().unwrap()
        ))
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "cargo-criterion: line 2, column 14: key must be a string"
        );
        // Pretty-printed messages: say so instead of `line 1: column 1: EOF while parsing`.
        let first: Value = serde_json::from_str(MESSAGES.lines().next().unwrap()).unwrap();
        let pretty = serde_json::to_string_pretty(&first).unwrap();
        let e = parse(&pretty).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cargo-criterion: line 1: not one JSON message per line"),
            "{e}"
        );
        let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[1],"measured_values":["x"],"unit":"ns"}"#).unwrap_err();
        assert_eq!(e.position, "benchmark 0 (a): ");
        assert!(
            e.message
                .contains("measured_values`[0] must be a finite number")
        );
        let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[1],"measured_values":[-5],"unit":"ns"}"#).unwrap_err();
        assert!(e.message.contains("negative time"), "{e}");
        let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[1,2],"measured_values":[5],"unit":"ns"}"#).unwrap_err();
        assert!(e.message.contains("1 measured_values for 2"), "{e}");
        let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[0],"measured_values":[5],"unit":"ns"}"#).unwrap_err();
        assert!(e.message.contains("iteration_count[0] is 0"), "{e}");
        let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[],"measured_values":[],"unit":"ns"}"#).unwrap_err();
        assert!(e.message.contains("no samples"), "{e}");
        let e =
            parse(r#"{"reason":"group-complete","group_name":"g","benchmarks":[]}"#).unwrap_err();
        assert!(e.message.contains("no `benchmark-complete`"), "{e}");
        let e = parse(include_str!("../../../tests/fixtures/bmf/multi.json")).unwrap_err();
        assert!(e.position.starts_with("line 1: "), "{e}");
        let e = parse(r#"{"sum":{"latency":{"value":1}}}"#).unwrap_err();
        assert!(e.message.contains("another format"), "{e}");
        assert!(parse("\n\n").unwrap_err().message.contains("empty output"));
    }
}
