//! JSON plumbing shared by the readers of JSON tool outputs (Google Benchmark, hyperfine,
//! pytest-benchmark): lenient parsing of bare NaN/Infinity, positioned syntax errors, the
//! top-level benchmarks array, and small value checks.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::parsed::{FormatError, ParsedBenchmark};
use pitwall_schema::schema::{Direction, Unit};

/// Parses `text` as JSON as these tools write it: Google Benchmark and Python's `json` write bare
/// `NaN`/`Infinity`, which are read as `null` (a later check rejects them where a number is
/// needed). Syntax errors name the line and column (a column after a `NaN` on the same line is
/// one too far).
pub(super) fn read_json(format: &'static str, text: &str) -> Result<Value, FormatError> {
    parse_json(format, &non_finite_to_null(text))
}

fn non_finite_to_null(text: &str) -> Cow<'_, str> {
    if !["NaN", "Infinity"].iter().any(|w| text.contains(w)) {
        return Cow::Borrowed(text);
    }
    let (mut out, mut in_string, mut escaped, mut rest) =
        (String::with_capacity(text.len()), false, false, text);
    while let Some(c) = rest.chars().next() {
        if !in_string {
            if let Some(w) = ["-Infinity", "Infinity", "NaN"]
                .into_iter()
                .find(|w| rest.starts_with(w))
            {
                out.push_str("null");
                out.extend(std::iter::repeat_n(' ', w.len().saturating_sub(4)));
                rest = &rest[w.len()..];
                continue;
            }
        }
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ => {}
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The top-level object and its array `key`, which must not be empty. Output of another tool
/// is not guessed at here: `registry::parse` names it when detection recognises it.
pub(super) fn top_array<'a>(
    format: &'static str,
    doc: &'a Value,
    key: &str,
) -> Result<Top<'a>, FormatError> {
    let fail = |message: String| FormatError {
        format,
        position: String::new(),
        message,
    };
    let obj = doc
        .as_object()
        .ok_or_else(|| fail(format!("expected a JSON object, got {}", kind(doc))))?;
    match obj.get(key) {
        None => Err(fail(format!("no `{key}` in the JSON object"))),
        Some(Value::Array(a)) if !a.is_empty() => Ok((obj, a)),
        Some(_) => Err(fail(format!(
            "no benchmarks in output (`{key}` must be a non-empty array)"
        ))),
    }
}

pub(super) type Top<'a> = (&'a Map<String, Value>, &'a Vec<Value>);

/// A time measure, or other lower-is-better one.
pub(super) fn bench(
    name: &str,
    params: &BTreeMap<String, String>,
    measure: &str,
    unit: &str,
    samples: Vec<f64>,
    error: Option<String>,
) -> ParsedBenchmark {
    let (name, params, measure, unit) = (
        name.to_string(),
        params.clone(),
        measure.to_string(),
        Unit::new(unit),
    );
    let (direction, sample_meta) = (Direction::LowerIsBetter, Vec::new());
    ParsedBenchmark {
        name,
        params,
        measure,
        unit,
        direction,
        samples,
        sample_meta,
        error,
        skipped: None,
    }
}

/// A time in a tool's own unit: a finite, non-negative number.
pub(super) fn time_value(v: &Value, what: &str) -> Result<f64, String> {
    quantity_value(v, what, "time")
}

/// A finite, non-negative amount of `quantity` (`time`, `memory`), named as such when it is
/// negative.
pub(super) fn quantity_value(v: &Value, what: &str, quantity: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(t) if t.is_finite() && t >= 0.0 => Ok(t),
        Some(t) => Err(format!("`{what}` is a negative {quantity} ({t})")),
        None if v.is_null() => Err(format!(
            "`{what}` is not a finite number (NaN, Infinity or null)"
        )),
        None => Err(format!("`{what}` must be a number, got {}", kind(v))),
    }
}

/// A short description of a JSON value for messages.
pub(super) fn kind(v: &Value) -> String {
    match v {
        Value::String(s) if s.len() <= 40 => format!("the string {v}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
        other => other.to_string(),
    }
}

/// `obj[key]` as a list of finite numbers (criterion's `measured_values`/`times` and iteration
/// counts); `err` gets the message, which starts with `file` (e.g. `sample.json: `).
pub(super) fn finite_numbers(
    obj: &Value,
    key: &str,
    file: &str,
    err: &dyn Fn(String) -> FormatError,
) -> Result<Vec<f64>, FormatError> {
    let list = obj
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| err(format!("{file}`{key}` must be a list of numbers")))?;
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                err(format!(
                    "{file}`{key}`[{i}] must be a finite number, got {}",
                    value_kind(v)
                ))
            })
        })
        .collect()
}

/// One sample per criterion sample: `totals[i] / iters[i]` times `scale`, refusing iteration
/// counts ≤ 0 (named `{file}{iters_key}[i]`) and, for times (`time`), negative totals.
pub(super) fn per_iteration(
    totals: &[f64],
    iters: &[f64],
    scale: f64,
    time: bool,
    (file, iters_key): (&str, &str),
    err: &dyn Fn(String) -> FormatError,
) -> Result<Vec<f64>, FormatError> {
    totals
        .iter()
        .zip(iters)
        .enumerate()
        .map(|(i, (t, n))| {
            if *n <= 0.0 {
                Err(err(format!("{file}{iters_key}[{i}] is {n}")))
            } else if *t < 0.0 && time {
                Err(err(format!("sample {i} is a negative time ({t})")))
            } else {
                Ok(t / n * scale)
            }
        })
        .collect()
}

/// Parses JSON text for `format`, naming the line and column of a syntax error.
pub(super) fn parse_json(format: &'static str, text: &str) -> Result<Value, FormatError> {
    if text.trim().is_empty() {
        return Err(FormatError {
            format,
            position: String::new(),
            message: "empty output (expected a JSON document)".into(),
        });
    }
    serde_json::from_str(text).map_err(|e| json_error(format, &e, String::new()))
}

/// A serde_json error as a [`FormatError`] at its line and column, after `prefix`.
pub(super) fn json_error(
    format: &'static str,
    e: &serde_json::Error,
    prefix: String,
) -> FormatError {
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = e.to_string();
    let message = message
        .strip_suffix(&suffix)
        .unwrap_or(&message)
        .to_string();
    FormatError {
        format,
        position: format!("{prefix}line {}, column {}: ", e.line(), e.column()),
        message,
    }
}

/// The kind of a JSON value (`an object`, `a number`…), for messages.
pub(super) fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
