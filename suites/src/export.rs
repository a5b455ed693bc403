//! The versioned export document (`pitwall export`/`import`, schema `pitwall/v1`) and the checks
//! a run must pass before it is stored or imported: what the type system cannot say.

use serde::{Deserialize, Serialize};

use crate::schema::{ResultStatus, Run, RunStatus, SCHEMA_V1};

/// The versioned export document (`pitwall export` / `pitwall import`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportDoc {
    pub schema: String,
    pub runs: Vec<Run>,
}

/// Why a document could not be read as schema v1.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// `message` is serde_json's, without the position it ends with (given once, here).
    #[error("not valid JSON for schema {SCHEMA_V1} at line {line}, column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("unsupported schema `{0}` (this pitwall reads `{SCHEMA_V1}`)")]
    Version(String),
    /// `run` names the run: `run ID`, or in a document `run N (ID)` (`run N` without an id).
    #[error("{run}: {what}")]
    Invalid { run: String, what: String },
}

impl ExportDoc {
    pub fn new(runs: Vec<Run>) -> ExportDoc {
        ExportDoc {
            schema: SCHEMA_V1.to_string(),
            runs,
        }
    }

    /// Deterministic pretty JSON with a trailing newline: the same runs give the same bytes.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("schema types always serialize");
        s.push('\n');
        s
    }

    /// Reads and validates an export document.
    pub fn from_json(text: &str) -> Result<ExportDoc, SchemaError> {
        let doc: ExportDoc = serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            SchemaError::Json {
                line: e.line(),
                column: e.column(),
                message: message
                    .strip_suffix(&suffix)
                    .unwrap_or(&message)
                    .to_string(),
            }
        })?;
        if doc.schema != SCHEMA_V1 {
            return Err(SchemaError::Version(doc.schema));
        }
        for (i, run) in doc.runs.iter().enumerate() {
            // In a document, the index finds the run even when its id is empty.
            run.validate().map_err(|e| match e {
                SchemaError::Invalid { what, .. } if run.id.trim().is_empty() => {
                    SchemaError::Invalid {
                        run: format!("run {i}"),
                        what,
                    }
                }
                SchemaError::Invalid { what, .. } => SchemaError::Invalid {
                    run: format!("run {i} ({})", run.id),
                    what,
                },
                other => other,
            })?;
        }
        Ok(doc)
    }
}

impl Run {
    /// Checks what the type system cannot: finite samples, parallel metadata, known ids.
    pub fn validate(&self) -> Result<(), SchemaError> {
        let bad = |what: String| SchemaError::Invalid {
            run: format!("run {}", self.id),
            what,
        };
        if self.id.trim().is_empty() {
            return Err(SchemaError::Invalid {
                run: "run".into(),
                what: "empty id".into(),
            });
        }
        for (field, value) in [
            ("started_at", &self.started_at),
            ("finished_at", &self.finished_at),
        ] {
            if !is_utc_rfc3339(value) {
                return Err(bad(format!(
                    "{field} `{value}` is not an RFC 3339 UTC time like 2026-12-02T10:00:00Z"
                )));
            }
        }
        let implied = RunStatus::from_results(&self.results);
        if self.status != implied {
            return Err(bad(format!(
                "status `{}` does not match its results, which make it `{}`",
                self.status.as_str(),
                implied.as_str()
            )));
        }
        for r in &self.results {
            if let Some(i) = r.samples.iter().position(|v| !v.is_finite()) {
                return Err(bad(format!(
                    "{}: sample {i} is not a finite number",
                    r.key()
                )));
            }
            if !r.sample_meta.is_empty() && r.sample_meta.len() != r.samples.len() {
                return Err(bad(format!(
                    "{}: {} sample_meta entries for {} samples",
                    r.key(),
                    r.sample_meta.len(),
                    r.samples.len()
                )));
            }
            if r.status == ResultStatus::Ok && r.samples.is_empty() {
                return Err(bad(format!("{}: status ok but no samples", r.key())));
            }
        }
        Ok(())
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`: the form pitwall writes. Stores order runs by this text,
/// which is time order only in UTC with this layout, so other forms are refused on import.
pub fn is_utc_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        (!part.is_empty() && part.bytes().all(|c| c.is_ascii_digit()))
            .then(|| part.parse().ok())
            .flatten()
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return false;
    }
    if b[16] != b':' || *b.last().unwrap_or(&0) != b'Z' {
        return false;
    }
    let fields = (
        digits(0..4),
        digits(5..7),
        digits(8..10),
        digits(11..13),
        digits(14..16),
        digits(17..19),
    );
    let (Some(_), Some(mo), Some(d), Some(h), Some(mi), Some(sec)) = fields else {
        return false;
    };
    let frac = &s[19..s.len() - 1];
    let frac_ok = frac.is_empty()
        || (frac.len() > 1
            && frac.starts_with('.')
            && frac[1..].bytes().all(|c| c.is_ascii_digit()));
    (1..=12).contains(&mo) && (1..=31).contains(&d) && h < 24 && mi < 60 && sec <= 60 && frac_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SampleMeta;
    use crate::schema::tests::{result, run};

    #[test]
    fn utc_timestamps() {
        for ok in [
            "2026-12-02T10:00:00Z",
            "2026-12-02T10:00:00.123456Z",
            "1999-01-31T23:59:60Z",
        ] {
            assert!(is_utc_rfc3339(ok), "{ok}");
        }
        for bad in [
            "yesterday",
            "2026-12-02",
            "2026-12-02T10:00:00",
            "2026-12-02T10:00:00+01:00",
            "2026-13-02T10:00:00Z",
            "2026-12-02T24:00:00Z",
            "2026-12-02T10:00:00.Z",
            "2026-12-02 10:00:00Z",
            "2026-12-0xT10:00:00Z",
            "２０２６-12-02T10:00:00Z",
        ] {
            assert!(!is_utc_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn export_round_trips_exactly() {
        let samples = vec![0.1 + 0.2, 1e-300, 123_456_789.123_456_79, 5e-324, f64::MAX];
        let doc = ExportDoc::new(vec![run(vec![result(samples)])]);
        let text = doc.to_json();
        let back = ExportDoc::from_json(&text).unwrap();
        assert_eq!(back, doc);
        assert_eq!(back.to_json(), text);
    }

    #[test]
    fn rejects_other_schema_and_bad_samples() {
        let text = ExportDoc::new(vec![])
            .to_json()
            .replace("pitwall/v1", "pitwall/v9");
        assert!(
            matches!(ExportDoc::from_json(&text), Err(SchemaError::Version(v)) if v == "pitwall/v9")
        );
        let mut bad_id = run(vec![result(vec![1.0])]);
        bad_id.id = String::new();
        let text = ExportDoc::new(vec![bad_id.clone()]).to_json();
        let e = ExportDoc::from_json(&text).unwrap_err();
        assert_eq!(e.to_string(), "run 0: empty id");
        assert_eq!(bad_id.validate().unwrap_err().to_string(), "run: empty id");
        let text = ExportDoc::new(vec![run(vec![result(vec![1.0])])])
            .to_json()
            .replace("\"higher_is_better\"", "\"upwards\"");
        let e = ExportDoc::from_json(&text).unwrap_err().to_string();
        assert!(
            e.starts_with("not valid JSON for schema pitwall/v1 at line ")
                && e.contains(": unknown variant `upwards`"),
            "{e}"
        );
        assert_eq!(e.matches("line").count(), 1, "the position once: {e}");
        let mut r = run(vec![result(vec![1.0])]);
        r.results[0].sample_meta = vec![SampleMeta::default(); 2];
        assert!(
            r.validate()
                .unwrap_err()
                .to_string()
                .contains("2 sample_meta entries for 1 samples")
        );
    }
}
