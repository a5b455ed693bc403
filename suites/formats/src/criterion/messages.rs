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
//! told apart in a title, since each may contain `/`; the tree reader (`super::tree`) keeps
//! them separate. `group-complete` messages and reasons added later are skipped.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{push_with_throughput, time_benchmark};
use crate::json_util::{finite_numbers, json_error, per_iteration, value_kind};
use crate::parsed::{FormatError, ParsedBenchmark, ParsedRun};
use pitwall_schema::schema::Unit;

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
    let unit = Unit::new(if scale.is_some() {
        Unit::NANOSECONDS
    } else {
        unit
    });
    let base = time_benchmark(id.to_string(), BTreeMap::new(), unit, samples);
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
    let rate = match (throughput, scale) {
        (Some(t), Some(_)) => {
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
            Some((per_iter, unit))
        }
        _ => None,
    };
    push_with_throughput(base, rate, out);
    Ok(())
}

/// Nanoseconds per `unit` when it is a time unit.
fn time_scale(unit: &str) -> Option<f64> {
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
mod tests;
