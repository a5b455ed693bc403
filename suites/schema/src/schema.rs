//! The result schema: a run of one commit on one machine, holding every benchmark result with
//! all its raw samples. This is what the store keeps and what `pitwall export` writes.

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

/// State of a whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every benchmark produced results.
    Complete,
    /// Some benchmarks failed; the others' results are kept.
    Partial,
    /// No benchmark produced results.
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        match s {
            "complete" => Some(RunStatus::Complete),
            "partial" => Some(RunStatus::Partial),
            "failed" => Some(RunStatus::Failed),
            _ => None,
        }
    }

    /// The status a run gets from its results' statuses: an implausible result makes it
    /// partial, as a failed one does.
    pub fn from_results(results: &[BenchmarkResult]) -> RunStatus {
        let failed = results
            .iter()
            .filter(|r| r.status == ResultStatus::Failed)
            .count();
        let implausible = results
            .iter()
            .any(|r| r.status == ResultStatus::Implausible);
        if failed == 0 && !implausible && !results.is_empty() {
            RunStatus::Complete
        } else if failed < results.len() {
            RunStatus::Partial
        } else {
            RunStatus::Failed
        }
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
    /// bandwidth above HBM with the operands out of L2: `crate::plausible`): the samples are
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

/// One GPU as the fingerprint records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// What else NVML said about it; typed as [`crate::sections::GpuDetails`] (read with
    /// [`GpuInfo::details`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// Environment fingerprint: what the results depend on besides the code.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub cpu_model: String,
    #[serde(default)]
    pub logical_cpus: u32,
    #[serde(default)]
    pub memory_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_governor: Option<String>,
    #[serde(default)]
    pub gpus: Vec<GpuInfo>,
    /// pitwall's version and build profile.
    #[serde(default)]
    pub pitwall_version: String,
    /// Selected environment variables (CUDA_*, NCCL_*, OMP_*…).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Anything else a backend or adapter knows (kept as structured data).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A run: one commit (or the working tree) measured once on one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// Time-ordered unique id (UUID v7 text).
    pub id: String,
    pub project: String,
    /// Full commit sha, or `working tree` when not measuring a commit.
    pub commit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The named machine identity it was measured on (`[testbed] name`, `--testbed`, or
    /// derived from host and GPU: [`crate::labels::default_testbed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub testbed: Option<String>,
    /// History of its branch, or a side of a pull-request comparison (never in history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<crate::labels::RunRole>,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC.
    pub finished_at: String,
    /// SHA-256 of the effective configuration.
    pub config_hash: String,
    pub fingerprint: Fingerprint,
    pub status: RunStatus,
    /// Author, date and subject of `commit`, when it is a commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_info: Option<CommitInfo>,
    /// Why the run produced no results (e.g. the tail of a failed build's log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Set when the run is one side of an interleaved base/head measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<PairInfo>,
    pub results: Vec<BenchmarkResult>,
}

/// Who made a commit, when, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommitInfo {
    pub author: String,
    /// RFC 3339 author date.
    pub date: String,
    pub subject: String,
}

/// Which side of an interleaved comparison a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairRole {
    Base,
    Head,
}

/// Links the two runs of `pitwall run --base REV --head REV`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairInfo {
    /// Shared by both runs of the pair.
    pub id: String,
    pub role: PairRole,
    /// Number of interleaved rounds (base, head, base, head, …).
    pub rounds: u32,
    /// The first replicate index of each round on this side (`replicates` of the results
    /// number this run's benchmark processes in the order they ran), so a sample's round is
    /// known. Empty for pairs stored before replicates were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_starts: Vec<u32>,
    /// Set when the pair was measured until decided (`--until-decided`): the comparison was
    /// looked at after every round from `first_look` on, up to `max_rounds`, and its verdicts
    /// must be read with the same sequential plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<SequentialPlanInfo>,
}

/// The looks of a pair measured until decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequentialPlanInfo {
    /// Round of the first look (the first batch of rounds).
    pub first_look: u32,
    /// The most rounds the plan allowed.
    pub max_rounds: u32,
}

impl PairInfo {
    /// The round (1-based) of replicate `index` on this side; 1 when rounds are not known.
    pub fn round_of(&self, index: u32) -> u32 {
        (self.round_starts.partition_point(|&s| s <= index) as u32).max(1)
    }
}

/// Marker for runs not tied to a commit.
pub const WORKING_TREE: &str = "working tree";

pub use crate::export::{ExportDoc, SchemaError, is_utc_rfc3339};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn result(samples: Vec<f64>) -> BenchmarkResult {
        BenchmarkResult {
            suite: "kernel".into(),
            name: "gemm_f32".into(),
            params: BTreeMap::from([("n".to_string(), "64".to_string())]),
            measure: "throughput".into(),
            unit: Unit::new(Unit::GFLOP_PER_S),
            direction: Direction::HigherIsBetter,
            status: ResultStatus::Ok,
            error: None,
            samples,
            sample_meta: Vec::new(),
            replicates: Vec::new(),
            summary: None,
        }
    }

    pub(crate) fn run(results: Vec<BenchmarkResult>) -> Run {
        Run {
            id: "0190f0c0-0000-7000-8000-000000000000".into(),
            project: "toy".into(),
            commit: WORKING_TREE.into(),
            branch: None,
            testbed: None,
            role: None,
            started_at: "2026-12-02T10:00:00Z".into(),
            finished_at: "2026-12-02T10:01:00Z".into(),
            config_hash: "abc".into(),
            fingerprint: Fingerprint::default(),
            status: RunStatus::from_results(&results),
            commit_info: None,
            error: None,
            pair: None,
            results,
        }
    }

    #[test]
    fn key_names_suite_params_and_measure() {
        assert_eq!(result(vec![1.0]).key(), "kernel/gemm_f32[n=64]/throughput");
    }

    #[test]
    fn status_follows_results() {
        let mut failed = result(vec![]);
        failed.status = ResultStatus::Failed;
        assert_eq!(
            RunStatus::from_results(&[result(vec![1.0])]),
            RunStatus::Complete
        );
        assert_eq!(
            RunStatus::from_results(&[result(vec![1.0]), failed.clone()]),
            RunStatus::Partial
        );
        assert_eq!(
            RunStatus::from_results(&[failed.clone()]),
            RunStatus::Failed
        );
        assert_eq!(RunStatus::from_results(&[]), RunStatus::Failed);
        // A skip is the tool's decision, not a failure.
        let mut skipped = result(vec![]);
        skipped.status = ResultStatus::Skipped;
        assert_eq!(
            RunStatus::from_results(&[result(vec![1.0]), skipped.clone()]),
            RunStatus::Complete
        );
        assert_eq!(
            RunStatus::from_results(&[skipped.clone(), failed]),
            RunStatus::Partial
        );
        assert_eq!(ResultStatus::parse("skipped"), Some(ResultStatus::Skipped));
        assert_eq!(ResultStatus::Skipped.as_str(), "skipped");
    }

    #[test]
    fn combined_status_of_repeated_measurements() {
        use ResultStatus::*;
        for (a, b, want) in [
            (Ok, Ok, Ok),
            (Ok, Skipped, Ok),
            (Skipped, Ok, Ok),
            (Skipped, Skipped, Skipped),
            (Failed, Ok, Failed),
            (Skipped, Failed, Failed),
            (Ok, Failed, Failed),
        ] {
            assert_eq!(a.combine(b), want, "{a:?} + {b:?}");
        }
    }
}
