//! The versioned export document (`pitwall export`/`import`: schema `pitwall/v3` written,
//! `pitwall/v4` when a result was pruned, `pitwall/v5` when a result is implausible or a sample
//! has cycles, `pitwall/v6` when a pair recorded its round orders, `pitwall/v7` when a run is
//! a calibration's or a pair left identical code unmeasured or recorded its time; `pitwall/v1`
//! and `pitwall/v2` still read) and the checks a run must pass before it is stored or imported:
//! what the type system cannot say.

use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};

use crate::consistency::{
    TIME_UNITS, label_problem, names_problem, summary_problem, testbed_problem,
};
use crate::run::Run;
use crate::schema::{
    ResultStatus, SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5, SCHEMA_V6, SCHEMA_V7,
    SCHEMA_V8,
};
use crate::time::UnixTime;

/// The versioned export document (`pitwall export` / `pitwall import`).
///
/// `pitwall/v2` is `pitwall/v1` plus the optional `replicates` array of each result, and
/// `pitwall/v3` is `pitwall/v2` plus the optional `testbed` and `role` of each run, and
/// `pitwall/v4` is `pitwall/v3` plus the optional `summary` of each result (a pruned result),
/// and `pitwall/v5` is `pitwall/v4` plus the `implausible` status and a sample's `cycles`,
/// and `pitwall/v6` is `pitwall/v5` plus the optional `round_orders` of a run's pair,
/// and `pitwall/v7` is `pitwall/v6` plus the optional `identical`, `measured_ms` and
/// `saved_ms_estimate` of a run's pair and the run role `calibration`;
/// a document read as an older version keeps its tag, so writing it again gives it back
/// unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportDoc {
    pub schema: String,
    pub runs: Vec<Run>,
}

/// What a JSON error names as the schema when the document's own tag could not be read.
const ANY_SCHEMA: &str = "pitwall/v1, pitwall/v2, pitwall/v3, pitwall/v4, pitwall/v5, pitwall/v6, pitwall/v7 or pitwall/v8";

/// Why a document could not be read as an export document.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// `schema` is the document's tag (or both versions when it could not be read); `message` is
    /// serde_json's, without the position it ends with (given once, here).
    #[error("not valid JSON for schema {schema} at line {line}, column {column}: {message}")]
    Json {
        schema: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "unsupported schema `{0}` (this pitwall reads `{SCHEMA_V1}`, `{SCHEMA_V2}`, `{SCHEMA_V3}`, `{SCHEMA_V4}`, `{SCHEMA_V5}`, `{SCHEMA_V6}`, `{SCHEMA_V7}` and `{SCHEMA_V8}`)"
    )]
    Version(String),
    /// `run` names the run: `run ID`, or in a document `run N (ID)` (`run N` without an id).
    #[error("{run}: {what}")]
    Invalid { run: String, what: String },
}

/// Only the tag, read leniently before the document, so that a newer document is refused for
/// its version rather than for a field this pitwall does not know.
#[derive(Deserialize)]
struct Tag {
    #[serde(default)]
    schema: Option<String>,
}

/// The shape of a v1 document as far as `replicates` goes: any `replicates` key in a result is
/// an error at its position (the full read accepts it, since v2 has it). The fields are never
/// read; reading them is the check.
#[derive(Deserialize)]
struct V1Probe {
    #[serde(rename = "runs")]
    _runs: Vec<V1ProbeRun>,
}

#[derive(Deserialize)]
struct V1ProbeRun {
    #[serde(rename = "results")]
    _results: Vec<V1ProbeResult>,
    #[serde(default, rename = "testbed")]
    _testbed: Option<NotBeforeV3>,
    #[serde(default, rename = "role")]
    _role: Option<NotBeforeV3>,
}

/// The shape of a v2 document as far as the run labels go: a `testbed` or `role` key in a run
/// is an error at its position.
#[derive(Deserialize)]
struct V2Probe {
    #[serde(rename = "runs")]
    _runs: Vec<V2ProbeRun>,
}

#[derive(Deserialize)]
struct V2ProbeRun {
    #[serde(default, rename = "testbed")]
    _testbed: Option<NotBeforeV3>,
    #[serde(default, rename = "role")]
    _role: Option<NotBeforeV3>,
}

/// A value that cannot be read: a run's `testbed` or `role` in a v1 or v2 document.
enum NotBeforeV3 {}

impl<'de> Deserialize<'de> for NotBeforeV3 {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<NotBeforeV3, D::Error> {
        Err(D::Error::custom(format!(
            "a run's `testbed` and `role` are new in {SCHEMA_V3} (hint: declare \"schema\": \"{SCHEMA_V3}\")"
        )))
    }
}

/// The shape of a v1, v2 or v3 document as far as pruning goes: a `summary` key in a result is
/// an error at its position.
#[derive(Deserialize)]
struct V3Probe {
    #[serde(rename = "runs")]
    _runs: Vec<V3ProbeRun>,
}

#[derive(Deserialize)]
struct V3ProbeRun {
    #[serde(rename = "results")]
    _results: Vec<V3ProbeResult>,
}

#[derive(Deserialize)]
struct V3ProbeResult {
    #[serde(default, rename = "summary")]
    _summary: Option<NotBeforeV4>,
}

/// A value that cannot be read: a result's `summary` in a document older than v4.
enum NotBeforeV4 {}

impl<'de> Deserialize<'de> for NotBeforeV4 {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<NotBeforeV4, D::Error> {
        Err(D::Error::custom(format!(
            "a result's `summary` (a pruned result) is new in {SCHEMA_V4} (hint: declare \"schema\": \"{SCHEMA_V4}\")"
        )))
    }
}

#[derive(Deserialize)]
struct V1ProbeResult {
    #[serde(default, rename = "replicates")]
    _replicates: Option<NotInV1>,
}

/// A value that cannot be read (it has none): a `replicates` key in a v1 document.
enum NotInV1 {}

impl<'de> Deserialize<'de> for NotInV1 {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<NotInV1, D::Error> {
        Err(D::Error::custom(format!(
            "unknown field `replicates` in schema {SCHEMA_V1} (hint: replicates are new in \
             {SCHEMA_V2}; declare \"schema\": \"{SCHEMA_V2}\")"
        )))
    }
}

fn json_error(schema: &str, e: &serde_json::Error) -> SchemaError {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    SchemaError::Json {
        schema: schema.to_string(),
        line: e.line(),
        column: e.column(),
        message: message
            .strip_suffix(&suffix)
            .unwrap_or(&message)
            .to_string(),
    }
}

impl ExportDoc {
    /// A document of schema `pitwall/v3`, `pitwall/v4` when a result in it was pruned, or
    /// `pitwall/v5` when one is implausible or a sample has cycles, or `pitwall/v6` when a
    /// pair recorded its round orders, or `pitwall/v7` when a pair left identical code
    /// unmeasured or recorded its time or a run has the role `calibration`, so that stores
    /// without them export exactly as before.
    pub fn new(runs: Vec<Run>) -> ExportDoc {
        let pruned = runs
            .iter()
            .any(|r| r.results.iter().any(|b| b.summary.is_some()));
        let schema = match newer::needed(&runs) {
            Some(schema) => schema,
            None if pruned => SCHEMA_V4,
            None => SCHEMA_V3,
        };
        ExportDoc {
            schema: schema.to_string(),
            runs,
        }
    }

    /// Deterministic pretty JSON with a trailing newline: the same runs give the same bytes.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("schema types always serialize");
        s.push('\n');
        s
    }

    /// Reads and validates an export document of schema `pitwall/v1` to `pitwall/v8`.
    pub fn from_json(text: &str) -> Result<ExportDoc, SchemaError> {
        // A document that is not JSON at all, or has no string tag, fails the full read below.
        let declared = serde_json::from_str::<Tag>(text)
            .ok()
            .and_then(|t| t.schema);
        let named = match declared.as_deref() {
            Some(
                s @ (SCHEMA_V1 | SCHEMA_V2 | SCHEMA_V3 | SCHEMA_V4 | SCHEMA_V5 | SCHEMA_V6
                | SCHEMA_V7 | SCHEMA_V8),
            ) => s,
            Some(other) => return Err(SchemaError::Version(other.to_string())),
            None => ANY_SCHEMA,
        };
        let doc: ExportDoc = serde_json::from_str(text).map_err(|e| json_error(named, &e))?;
        match doc.schema.as_str() {
            SCHEMA_V1 => {
                serde_json::from_str::<V1Probe>(text).map_err(|e| json_error(SCHEMA_V1, &e))?;
            }
            SCHEMA_V2 => {
                serde_json::from_str::<V2Probe>(text).map_err(|e| json_error(SCHEMA_V2, &e))?;
            }
            SCHEMA_V3 | SCHEMA_V4 | SCHEMA_V5 | SCHEMA_V6 | SCHEMA_V7 | SCHEMA_V8 => {}
            other => return Err(SchemaError::Version(other.to_string())),
        }
        if ![SCHEMA_V4, SCHEMA_V5, SCHEMA_V6, SCHEMA_V7, SCHEMA_V8].contains(&doc.schema.as_str()) {
            serde_json::from_str::<V3Probe>(text).map_err(|e| json_error(&doc.schema, &e))?;
        }
        newer::check(&doc)?;
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
    /// Checks what the type system cannot: finite samples, parallel metadata and replicates,
    /// known ids, names and testbeds as pitwall writes them, summaries whose figures agree
    /// (`crate::consistency`). The one check of every run a store keeps, fresh or imported.
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
        if let Some(why) = bad_run_id(&self.id) {
            return Err(SchemaError::Invalid {
                run: "run".into(),
                what: format!("id {:?} {why}", shorten(&self.id, 80)),
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
        if UnixTime::parse(&self.finished_at) < UnixTime::parse(&self.started_at) {
            return Err(bad(format!(
                "finished_at `{}` is before started_at `{}`",
                self.finished_at, self.started_at
            )));
        }
        if let Some(why) = self.testbed.as_deref().and_then(testbed_problem) {
            return Err(bad(why));
        }
        if let Some(why) = self
            .branch
            .as_deref()
            .and_then(|b| label_problem("branch", b))
        {
            return Err(bad(why));
        }
        if let Some(p) = &self.pair {
            if !p.round_orders.is_empty() && p.round_orders.len() != p.rounds as usize {
                return Err(bad(format!(
                    "pair: {} round orders for {} rounds (hint: one `round_orders` entry per round, or none)",
                    p.round_orders.len(),
                    p.rounds
                )));
            }
        }
        let implied = self.implied_status();
        if self.status != implied {
            return Err(bad(format!(
                "status `{}` does not match its results, which make it `{}`",
                self.status.as_str(),
                implied.as_str()
            )));
        }
        for (n, r) in self.results.iter().enumerate() {
            if let Some(why) = result_problem(n, r) {
                return Err(bad(why));
            }
        }
        Ok(())
    }
}

/// What is wrong with result `n` of a run, if anything: its names, non-finite or negative-time
/// samples, metadata or replicates not parallel to its samples, a bad summary, or status ok
/// with nothing to summarise.
fn result_problem(n: usize, r: &crate::schema::BenchmarkResult) -> Option<String> {
    if let Some(why) = names_problem(Some(&r.suite), &r.name) {
        return Some(format!("result {n}: {why}"));
    }
    if let Some(i) = r.samples.iter().position(|v| !v.is_finite()) {
        return Some(format!("{}: sample {i} is not a finite number", r.key()));
    }
    if TIME_UNITS.contains(&r.unit.as_str()) {
        if let Some(i) = r.samples.iter().position(|v| *v < 0.0) {
            return Some(format!(
                "{}: sample {i} is a negative time ({} {})",
                r.key(),
                r.samples[i],
                r.unit
            ));
        }
    }
    if !r.sample_meta.is_empty() && r.sample_meta.len() != r.samples.len() {
        return Some(format!(
            "{}: {} sample_meta entries for {} samples",
            r.key(),
            r.sample_meta.len(),
            r.samples.len()
        ));
    }
    if !r.replicates.is_empty() && r.replicates.len() != r.samples.len() {
        return Some(format!(
            "{}: {} replicates entries for {} samples",
            r.key(),
            r.replicates.len(),
            r.samples.len()
        ));
    }
    if let Some(summary) = &r.summary {
        if let Some(what) = bad_summary(r, summary) {
            return Some(format!("{}: {what}", r.key()));
        }
    } else if r.status == ResultStatus::Ok && r.samples.is_empty() {
        return Some(format!("{}: status ok but no samples", r.key()));
    }
    if r.status == ResultStatus::Ok {
        if let Some(why) = r.unsummarisable() {
            return Some(format!("{}: status ok, but {why}", r.key()));
        }
    }
    None
}

/// What is wrong with a pruned result's summary, if anything: it stands in for samples, so
/// the result keeps none, and its figures are finite and ordered.
fn bad_summary(
    r: &crate::schema::BenchmarkResult,
    s: &crate::schema::SampleSummary,
) -> Option<String> {
    if !r.samples.is_empty() || !r.sample_meta.is_empty() || !r.replicates.is_empty() {
        return Some("a summary (pruned) and raw samples at once".into());
    }
    if r.status != ResultStatus::Ok {
        return Some("a summary (pruned) on a result whose status is not ok".into());
    }
    summary_problem(r.unit.as_str(), s)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z`: the form pitwall writes. Stores order runs by this text,
/// which is time order only in UTC with this layout, so other forms are refused on import.
pub fn is_utc_rfc3339(s: &str) -> bool {
    s.as_bytes().get(10) == Some(&b'T') && s.ends_with('Z') && UnixTime::parse(s).is_some()
}

/// Why `id` cannot be a run id, if it cannot: ids name files, URLs and rows, so only letters,
/// digits, `-`, `_` and `.` (not leading) up to 128 characters.
fn bad_run_id(id: &str) -> Option<&'static str> {
    if id.chars().count() > 128 {
        Some("is longer than 128 characters")
    } else if id.starts_with('.') {
        Some("starts with `.`")
    } else if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        Some("has characters other than letters, digits, `-`, `_` and `.`")
    } else {
        None
    }
}

/// At most `max` characters of `s`, with `…` when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

mod newer;
#[cfg(test)]
mod tests;
