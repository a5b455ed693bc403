//! A run: one commit (or the working tree) measured once on one machine, with the fingerprint
//! of that machine, its status, role and pairing. Its results are the schema's
//! `BenchmarkResult`s.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::schema::{BenchmarkResult, ResultStatus};

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

/// What a run is for: history of its branch, or one side of a pull-request comparison (which
/// stays in the store, is shown on comparison pages, and never enters a history).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RunRole {
    #[serde(rename = "history")]
    History,
    #[serde(rename = "pr-base")]
    PrBase,
    #[serde(rename = "pr-head")]
    PrHead,
    /// Both sides of `pitwall calibrate`'s A/A pair of one commit against itself: never
    /// history, read for the testbed's noise record. New in export schema `pitwall/v7`.
    #[serde(rename = "calibration")]
    Calibration,
    /// A run of the working tree (`pitwall run` without `--commit`): listed, comparable, never
    /// in a history, alerts or write-ups unless stored with `--role history`. New in export
    /// schema `pitwall/v8`.
    #[serde(rename = "local")]
    Local,
}

impl RunRole {
    /// The stable text form used in JSON, the store and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            RunRole::History => "history",
            RunRole::PrBase => "pr-base",
            RunRole::PrHead => "pr-head",
            RunRole::Calibration => "calibration",
            RunRole::Local => "local",
        }
    }

    pub fn parse(s: &str) -> Option<RunRole> {
        match s {
            "history" => Some(RunRole::History),
            "pr-base" => Some(RunRole::PrBase),
            "pr-head" => Some(RunRole::PrHead),
            "calibration" => Some(RunRole::Calibration),
            "local" => Some(RunRole::Local),
            _ => None,
        }
    }

    /// The role a run gets when nobody said: a side of an interleaved pair is that side of a
    /// comparison, anything else is history.
    pub fn implied(pair: Option<PairRole>) -> RunRole {
        match pair {
            Some(PairRole::Base) => RunRole::PrBase,
            Some(PairRole::Head) => RunRole::PrHead,
            None => RunRole::History,
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
    /// derived from host and GPU: [`crate::default_testbed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub testbed: Option<String>,
    /// History of its branch, or a side of a pull-request comparison (never in history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<RunRole>,
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
    /// Set when a person took the run out of history (`pitwall runs exclude`): it stays
    /// stored and listed, and no history, alert or write-up reads it. New in `pitwall/v8`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusion: Option<Exclusion>,
    /// The machine's contention while it measured (`None`: not sampled, e.g. an imported or
    /// failed run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<crate::contention::Contention>,
    pub results: Vec<BenchmarkResult>,
}

/// Why and when a run was taken out of history (`pitwall runs exclude ID --note TEXT`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exclusion {
    /// The person's reason.
    pub note: String,
    /// RFC 3339 UTC.
    pub at: String,
}

impl Run {
    /// The status its results make it ([`RunStatus::from_results`]); a side of a pair with no
    /// results because all its code was identical on both sides (nothing to measure) is
    /// complete.
    pub fn implied_status(&self) -> RunStatus {
        let identical = self.pair.as_ref().is_some_and(|p| !p.identical.is_empty());
        if self.results.is_empty() && identical {
            RunStatus::Complete
        } else {
            RunStatus::from_results(&self.results)
        }
    }
}

/// Who made a commit, when, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommitInfo {
    pub author: String,
    /// RFC 3339 author date.
    pub date: String,
    pub subject: String,
    /// The commit's place on its first-parent chain: how many commits `git rev-list
    /// --first-parent SHA` lists (1 for a root commit). Along a branch's first-parent history
    /// it grows by one per commit, so it orders that history as git does, whatever the commit
    /// dates say. Recorded when the run is stored from a full clone; `None` from a shallow
    /// clone, an import without a repository, or a run stored before `pitwall/v8`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_parent_position: Option<u64>,
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
    pub sequential: Option<SequentialPlanRecord>,
    /// Which side ran first in each round (rounds alternate base-head, head-base, starting
    /// base-head). Empty for pairs stored before the order alternated: every round of those
    /// ran base first. New in export schema `pitwall/v6`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_orders: Vec<RoundOrder>,
    /// Code found identical on both sides, and so not measured (the verdict `identical`).
    /// The same list on both runs. New in export schema `pitwall/v7`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identical: Vec<crate::identical::IdenticalCode>,
    /// Milliseconds the pair spent measuring (both sides, every round). New in `pitwall/v7`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_ms: Option<u64>,
    /// Milliseconds not spent on the identical code, estimated from the last pair on this
    /// testbed that measured it; `None` when unknown. New in `pitwall/v7`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_ms_estimate: Option<u64>,
}

/// The order of one round of an interleaved pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundOrder {
    BaseHead,
    HeadBase,
}

impl RoundOrder {
    /// The order of round `round` (1-based) of a balanced pair: odd rounds base-head, even
    /// rounds head-base.
    pub fn balanced(round: u32) -> RoundOrder {
        if round % 2 == 0 {
            RoundOrder::HeadBase
        } else {
            RoundOrder::BaseHead
        }
    }
}

/// The record of a pair's sequential plan (`pitwall_stats::ab::SequentialPlan`, made by
/// `SequentialPlan::until_decided`), kept with both runs of a pair measured until decided: the
/// rounds it was looked at. The error rate and its spending are not recorded; the comparison
/// reads them from its configuration. `pitwall_analysis::sequential` turns a plan into its
/// record and back; nothing else builds one. Serialized as `{"first_look", "max_rounds"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequentialPlanRecord {
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

    /// The order of round `round` (1-based); base-head when not recorded (pairs stored before
    /// the order alternated ran base first in every round).
    pub fn order_of(&self, round: u32) -> RoundOrder {
        round
            .checked_sub(1)
            .and_then(|i| self.round_orders.get(i as usize))
            .copied()
            .unwrap_or(RoundOrder::BaseHead)
    }
}

/// Marker for runs not tied to a commit.
pub const WORKING_TREE: &str = "working tree";

#[cfg(test)]
pub(crate) mod tests;
