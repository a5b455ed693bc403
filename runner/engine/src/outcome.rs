//! What running a suite takes and gives, below the engine's modules that run it in this
//! process (`suite.rs`), in a worker (`worker.rs`, `worker_parent.rs`) or again after a lost
//! device (`device_lost.rs`).

use std::collections::{BTreeMap, BTreeSet};

use pitwall_schema::BenchmarkResult;

/// What a suite produced (a suite worker sends it to pitwall as JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SuiteOutcome {
    pub results: Vec<BenchmarkResult>,
    /// Set when the suite could not run here at all (e.g. no GPU): one line saying why.
    pub skipped: Option<String>,
    /// What a tool's output said about the machine, by format name (for the fingerprint).
    pub context: BTreeMap<String, serde_json::Value>,
    /// What a format cannot tell (e.g. summary values only), one line each.
    pub notes: Vec<String>,
    /// Benchmarks not run because an earlier one left the device unusable in this process
    /// (`device_lost`), by display name; each also has a failed result saying so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<String>,
}

/// Which benchmarks of a suite to run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    /// Keep benchmarks whose display name (`name[k=v,…]`) contains this text.
    pub filter: Option<&'a str>,
    /// Only these display names (the later rounds of `--until-decided`); all when `None`.
    pub only: Option<&'a BTreeSet<String>>,
}
