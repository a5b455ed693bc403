//! pitwall's own benchmark output format (`format = "pitwall-json"`, see docs/FORMATS.md): what
//! a `command` suite prints so that pitwall keeps every raw sample it took.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::parsed::{FormatError, ParsedBenchmark, TIME_UNITS};
use pitwall_schema::schema::{Direction, SCHEMA_V1, SampleMeta, Unit};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    schema: String,
    benchmarks: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    #[serde(default)]
    params: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    measure: Option<String>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    direction: Option<String>,
    #[serde(default)]
    samples: Vec<f64>,
    #[serde(default)]
    sample_meta: Vec<SampleMeta>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    skipped: Option<String>,
}

const FORMAT: &str = "pitwall-json";

/// Parses pitwall JSON benchmark output.
pub fn parse_pitwall_json(text: &str) -> Result<Vec<ParsedBenchmark>, FormatError> {
    if text.trim().is_empty() {
        return Err(err(
            String::new(),
            "empty output (expected a JSON document)".into(),
        ));
    }
    let doc: Doc = serde_json::from_str(text).map_err(|e| {
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = e.to_string();
        let message = message
            .strip_suffix(&suffix)
            .unwrap_or(&message)
            .to_string();
        err(
            format!("line {}, column {}: ", e.line(), e.column()),
            message,
        )
    })?;
    if doc.schema != SCHEMA_V1 {
        return Err(err(
            String::new(),
            format!(
                "unsupported schema `{}` (expected `{SCHEMA_V1}`)",
                doc.schema
            ),
        ));
    }
    if doc.benchmarks.is_empty() {
        return Err(err(String::new(), "no benchmarks in output".into()));
    }
    doc.benchmarks
        .into_iter()
        .enumerate()
        .map(|(i, e)| convert(i, e))
        .collect()
}

fn convert(index: usize, e: Entry) -> Result<ParsedBenchmark, FormatError> {
    let at = format!("benchmark {index} ({}): ", e.name);
    if e.name.trim().is_empty() {
        return Err(err(format!("benchmark {index}: "), "empty name".into()));
    }
    let mut params = BTreeMap::new();
    for (k, v) in e.params {
        let text = match v {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Bool(b) => b.to_string(),
            other => {
                return Err(err(
                    at,
                    format!("parameter `{k}` must be a string, number or boolean, got {other}"),
                ));
            }
        };
        params.insert(k, text);
    }
    let unit = e.unit.unwrap_or_else(|| Unit::NANOSECONDS.to_string());
    let direction = match e.direction.as_deref() {
        None => Direction::LowerIsBetter,
        Some(d) => Direction::parse(d).ok_or_else(|| {
            err(
                at.clone(),
                format!("direction `{d}` is not one of lower_is_better, higher_is_better"),
            )
        })?,
    };
    if e.error.is_none() && e.skipped.is_none() && e.samples.is_empty() {
        return Err(err(at, "no samples (and no `error` or `skipped`)".into()));
    }
    if e.error.is_some() && e.skipped.is_some() {
        return Err(err(at, "`error` and `skipped` together (hint: a benchmark either failed or was skipped; keep one)".into()));
    }
    if e.skipped.is_some() && !e.samples.is_empty() {
        return Err(err(at, "`skipped` with samples".into()));
    }
    if let Some(i) = e.samples.iter().position(|v| !v.is_finite()) {
        return Err(err(at, format!("sample {i} is not a finite number")));
    }
    if TIME_UNITS.contains(&unit.as_str()) {
        if let Some(i) = e.samples.iter().position(|v| *v < 0.0) {
            return Err(err(
                at,
                format!("sample {i} is a negative time ({})", e.samples[i]),
            ));
        }
    }
    if !e.sample_meta.is_empty() && e.sample_meta.len() != e.samples.len() {
        return Err(err(
            at,
            format!(
                "{} sample_meta entries for {} samples",
                e.sample_meta.len(),
                e.samples.len()
            ),
        ));
    }
    Ok(ParsedBenchmark {
        name: e.name,
        params,
        measure: e.measure.unwrap_or_else(|| "time".to_string()),
        unit: Unit::new(unit),
        direction,
        samples: e.samples,
        sample_meta: e.sample_meta,
        error: e.error,
        skipped: e.skipped,
    })
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::schema::ResultStatus;

    #[test]
    fn reads_samples_params_and_defaults() {
        let text = r#"{"schema":"pitwall/v1","benchmarks":[
            {"name":"parse","params":{"size":1024,"fast":true,"mode":"x"},"samples":[3.0,2.5]},
            {"name":"rate","measure":"throughput","unit":"items/s","direction":"higher","samples":[10]}]}"#;
        let b = parse_pitwall_json(text).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].params["size"], "1024");
        assert_eq!(b[0].params["fast"], "true");
        assert_eq!(b[0].unit.as_str(), "ns");
        assert_eq!(b[0].measure, "time");
        assert_eq!(b[0].samples, vec![3.0, 2.5]);
        assert_eq!(b[1].direction, Direction::HigherIsBetter);
        assert_eq!(b[1].unit.as_str(), "items/s");
    }

    #[test]
    fn garbage_names_the_position() {
        let e = parse_pitwall_json("{\"schema\": \"pitwall/v1\",\n \"benchmarks\": [oops]}")
            .unwrap_err();
        assert_eq!(e.format, "pitwall-json");
        assert!(
            e.to_string().starts_with("pitwall-json: line 2, column"),
            "{e}"
        );
        let e = parse_pitwall_json("hello").unwrap_err();
        assert!(e.to_string().contains("line 1, column 1"), "{e}");
    }

    #[test]
    fn skipped_needs_no_samples_and_allows_none() {
        let doc = r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","samples":[1]},{"name":"gpu","skipped":"no GPU"}]}"#;
        let b = parse_pitwall_json(doc).unwrap();
        assert_eq!(b[0].status(), ResultStatus::Ok);
        assert_eq!(b[1].status(), ResultStatus::Skipped);
        assert_eq!(b[1].reason().as_deref(), Some("no GPU"));
        assert_eq!(b[1].error, None);
        let both =
            r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","skipped":"x","samples":[1]}]}"#;
        let e = parse_pitwall_json(both).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pitwall-json: benchmark 0 (a): `skipped` with samples"
        );
        let both =
            r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","skipped":"x","error":"oom"}]}"#;
        let e = parse_pitwall_json(both).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("pitwall-json: benchmark 0 (a): `error` and `skipped` together"),
            "{e}"
        );
        let failed = r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","error":"oom"}]}"#;
        let b = parse_pitwall_json(failed).unwrap();
        assert_eq!(
            (b[0].status(), b[0].reason().as_deref()),
            (ResultStatus::Failed, Some("oom"))
        );
    }

    #[test]
    fn an_error_wins_over_a_skip() {
        let b = ParsedBenchmark {
            name: "a".into(),
            params: BTreeMap::new(),
            measure: "time".into(),
            unit: Unit::new("ns"),
            direction: Direction::LowerIsBetter,
            samples: Vec::new(),
            sample_meta: Vec::new(),
            error: Some("oom".into()),
            skipped: Some("no GPU".into()),
        };
        assert_eq!(
            (b.status(), b.reason().as_deref()),
            (ResultStatus::Failed, Some("oom"))
        );
    }

    #[test]
    fn rejects_empty_negative_and_unknown() {
        let empty = r#"{"schema":"pitwall/v1","benchmarks":[]}"#;
        assert!(
            parse_pitwall_json(empty)
                .unwrap_err()
                .message
                .contains("no benchmarks")
        );
        let neg = r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","samples":[1,-2]}]}"#;
        let e = parse_pitwall_json(neg).unwrap_err();
        assert!(
            e.to_string()
                .contains("benchmark 0 (a): sample 1 is a negative time"),
            "{e}"
        );
        let unknown =
            r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","samples":[1],"colour":1}]}"#;
        assert!(
            parse_pitwall_json(unknown)
                .unwrap_err()
                .message
                .contains("unknown field `colour`")
        );
        let nosamples = r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a"}]}"#;
        assert!(
            parse_pitwall_json(nosamples)
                .unwrap_err()
                .message
                .contains("no samples")
        );
        assert!(
            parse_pitwall_json("  \n")
                .unwrap_err()
                .message
                .contains("empty output")
        );
    }
}
