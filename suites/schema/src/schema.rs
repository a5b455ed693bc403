//! The result schema: every benchmark result with all its raw samples, its status and units,
//! and the export tags. A run holding them is in `run`; this is what the store keeps and what
//! `pitwall export` writes.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Tag of pitwall JSON benchmark output, of `pitwall run/show --format json`, and of export
/// documents written before replicates were recorded (still read by `pitwall import`).
pub const SCHEMA_V1: &str = "pitwall/v1";

/// Tag of export documents with replicates, written before runs recorded their testbed and role
/// (still read): `pitwall/v1` plus the optional `replicates` array of each result.
pub const SCHEMA_V2: &str = "pitwall/v2";

/// Tag of the export document `pitwall export` writes when no result was pruned: `pitwall/v2`
/// plus the optional `testbed` and `role` of each run.
pub const SCHEMA_V3: &str = "pitwall/v3";

/// Tag of export documents holding a pruned result: `pitwall/v3` plus the optional `summary`
/// of each result, which stands in for raw samples `pitwall prune --keep-summaries` dropped.
pub const SCHEMA_V4: &str = "pitwall/v4";

/// Tag of export documents holding an `implausible` result or a sample's `cycles`:
/// `pitwall/v4` plus that status and that field of a sample's metadata.
pub const SCHEMA_V5: &str = "pitwall/v5";

/// Tag of export documents holding a pair whose rounds alternated their order (issue 25):
/// `pitwall/v5` plus the optional `round_orders` of a run's `pair`.
pub const SCHEMA_V6: &str = "pitwall/v6";

/// Tag of export documents of issue 26: `pitwall/v6` plus the optional `identical`,
/// `measured_ms` and `saved_ms_estimate` of a run's `pair` (a pair that left identical code
/// unmeasured, and its time) and the run role `calibration` (`pitwall calibrate`).
pub const SCHEMA_V7: &str = "pitwall/v7";

/// Tag of export documents of issue 27: `pitwall/v7` plus the run role `local` (a working
/// tree's run), a run's `exclusion` (taken out of history by a person), its `contention`
/// (other load measured during the run) and a commit's `first_parent_position` (the order
/// git gives a branch's history).
pub const SCHEMA_V8: &str = "pitwall/v8";

/// Whether smaller or larger values of a measure are better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Times, latencies: smaller is better.
    LowerIsBetter,
    /// Throughputs, bandwidths: larger is better.
    HigherIsBetter,
}

impl Direction {
    /// The stable text form used in JSON and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "lower_is_better",
            Direction::HigherIsBetter => "higher_is_better",
        }
    }

    /// Parses the text form; also accepts the short forms `lower` and `higher`.
    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "lower_is_better" | "lower" => Some(Direction::LowerIsBetter),
            "higher_is_better" | "higher" => Some(Direction::HigherIsBetter),
            _ => None,
        }
    }
}

/// Unit of a measure, as text (`ns`, `GFLOP/s`, `GB/s`, `items/s`, or a tool's own unit).
///
/// Units come from foreign tools too, so this is an open set; the constants name the ones the
/// built-in suites use.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Unit(pub String);

impl Unit {
    pub const NANOSECONDS: &'static str = "ns";
    pub const GFLOP_PER_S: &'static str = "GFLOP/s";
    pub const TFLOP_PER_S: &'static str = "TFLOP/s";
    pub const GB_PER_S: &'static str = "GB/s";
    pub const ITEMS_PER_S: &'static str = "items/s";
    /// A percentage of a ceiling (`Ceiling`), 100 = at the ceiling.
    pub const PERCENT: &'static str = "%";

    pub fn new(s: impl Into<String>) -> Unit {
        Unit(s.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// State of one benchmark result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultStatus {
    Ok,
    Failed,
    /// The tool skipped it on purpose (nvbench's `is_skipped`, Google Benchmark's `SkipWithMessage`,
    /// pitwall JSON's `skipped`): no samples, `error` holds the reason, and it does not make the run
    /// partial.
    Skipped,
    /// Measured, but faster than the hardware can be (a GEMM above its dtype's dense peak,
    /// bandwidth above HBM with the operands out of L2: the `plausible` module): the samples are
    /// kept, `error` holds the reason, the run is partial, and no verdict, history point or
    /// alert is made of it.
    Implausible,
}

impl ResultStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultStatus::Ok => "ok",
            ResultStatus::Failed => "failed",
            ResultStatus::Skipped => "skipped",
            ResultStatus::Implausible => "implausible",
        }
    }

    pub fn parse(s: &str) -> Option<ResultStatus> {
        match s {
            "ok" => Some(ResultStatus::Ok),
            "failed" => Some(ResultStatus::Failed),
            "skipped" => Some(ResultStatus::Skipped),
            "implausible" => Some(ResultStatus::Implausible),
            _ => None,
        }
    }

    /// The status of one benchmark measured several times (rounds, repeated commands): failed
    /// if any time failed, else implausible if any time was, else ok if any time gave
    /// samples, else skipped.
    pub fn combine(self, other: ResultStatus) -> ResultStatus {
        use ResultStatus::*;
        match (self, other) {
            (Failed, _) | (_, Failed) => Failed,
            (Implausible, _) | (_, Implausible) => Implausible,
            (Ok, _) | (_, Ok) => Ok,
            (Skipped, Skipped) => Skipped,
        }
    }
}

/// What was known about the machine while one sample was taken (GPU clocks, throttling).
/// Every field is optional: unknown is not zero.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_clock_mhz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_clock_mhz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// NVML throttle-reasons bitmask (`nvmlClocksThrottleReasons`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_reasons: Option<u64>,
    /// Set when the sample was taken while the device was throttled; such samples are kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub throttled: bool,
    /// SM cycles the sample's time is worth: its time per iteration (ns) × the mean SM clock
    /// (MHz) of the NVML readings inside its window ÷ 1000; `None` when no reading fell
    /// inside. A time that moved while its cycles did not was moved by the clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles: Option<f64>,
}

impl SampleMeta {
    pub fn is_empty(&self) -> bool {
        *self == SampleMeta::default()
    }
}

/// One benchmark measure in a run: identity, unit, direction and every raw sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkResult {
    /// Suite name as configured (`kernel`, `toy`…).
    pub suite: String,
    /// Benchmark name within the suite (`gemm_f32`).
    pub name: String,
    /// Parameters as key/value (`n = "512"`); kept sorted by key.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// What the samples measure (`time`, `throughput`, `busbw`…).
    pub measure: String,
    pub unit: Unit,
    pub direction: Direction,
    pub status: ResultStatus,
    /// Why the benchmark failed (with the stderr tail of a command) or was skipped, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Every raw sample, in the order taken.
    pub samples: Vec<f64>,
    /// Per-sample machine state, parallel to `samples`; empty when nothing was known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sample_meta: Vec<SampleMeta>,
    /// The replicate (one benchmark process: one execution of a command, one round of a
    /// built-in suite in its own worker process) each sample came from, parallel to `samples`.
    /// Empty when unknown (runs stored before replicates were recorded, foreign results): all
    /// samples then count as one replicate. Samples of one process share its code layout, heap
    /// placement and frequency state, so the replicate, not the sample, is the unit of
    /// replication in an A/B verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicates: Vec<u32>,
    /// What is left of the samples once `pitwall prune --keep-summaries` dropped them (then
    /// `samples` is empty); `None` while the raw samples are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<SampleSummary>,
}

/// The figures of a result's finite samples that a history point needs, kept when the raw
/// samples are pruned so that old runs stay in their histories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleSummary {
    /// How many finite samples there were.
    pub n: usize,
    pub median: f64,
    /// 95% interval of the median, when there were enough samples for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ci: Option<[f64; 2]>,
    pub min: f64,
    pub max: f64,
    /// Samples taken while the device was throttled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub throttled: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl BenchmarkResult {
    /// Whether `pitwall prune --keep-summaries` replaced the raw samples with a summary.
    pub fn is_pruned(&self) -> bool {
        self.summary.is_some()
    }
}

/// `name[k=v,…]` (just `name` without parameters): how a benchmark is shown and filtered.
pub fn display_name(name: &str, params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return name.to_string();
    }
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{name}[{}]", p.join(","))
}

/// Name and parameters of one benchmark within its suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchmarkId {
    pub name: String,
    pub params: BTreeMap<String, String>,
}

impl BenchmarkId {
    pub fn new(name: &str, params: &[(&str, String)]) -> BenchmarkId {
        BenchmarkId {
            name: name.to_string(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    /// `name[k=v,…]`, as shown in tables and matched by filters.
    pub fn display(&self) -> String {
        display_name(&self.name, &self.params)
    }
}

/// `suite/name[k=v,…]/measure` (the suite left out when empty, as for bare result files): the
/// key a benchmark measure is known by across runs.
pub fn benchmark_key(
    suite: &str,
    name: &str,
    params: &BTreeMap<String, String>,
    measure: &str,
) -> String {
    let shown = display_name(name, params);
    if suite.is_empty() {
        format!("{shown}/{measure}")
    } else {
        format!("{suite}/{shown}/{measure}")
    }
}

impl BenchmarkResult {
    /// `suite/name[k=v,…]/measure`: the key a benchmark is known by across runs.
    pub fn key(&self) -> String {
        benchmark_key(&self.suite, &self.name, &self.params, &self.measure)
    }

    /// A failed result with no samples.
    pub fn failed(
        suite: &str,
        name: &str,
        params: BTreeMap<String, String>,
        error: String,
    ) -> BenchmarkResult {
        BenchmarkResult {
            suite: suite.to_string(),
            name: name.to_string(),
            params,
            measure: "time".to_string(),
            unit: Unit::new(Unit::NANOSECONDS),
            direction: Direction::LowerIsBetter,
            status: ResultStatus::Failed,
            error: Some(error),
            samples: Vec::new(),
            sample_meta: Vec::new(),
            replicates: Vec::new(),
            summary: None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
