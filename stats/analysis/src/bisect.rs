//! What a bisection found, as a value: the regression between the endpoints, every probe with
//! its ratio to the good commit, and the first bad commit. `pitwall-pipeline` measures and
//! builds it; `pitwall-reports` renders it.

use serde::Serialize;

/// A commit as the bisection names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommitRef {
    pub sha: String,
    pub subject: String,
    pub author: String,
    pub date: String,
}

impl CommitRef {
    /// The first 12 characters of the sha.
    pub fn short(&self) -> &str {
        &self.sha[..self.sha.len().min(12)]
    }
}

/// One measured (or skipped) commit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BisectStep {
    /// 1-based position after the good commit (the bad commit is `commits`).
    pub position: usize,
    pub commit: CommitRef,
    /// `good`, `bad` or `untestable`.
    pub class: String,
    /// Median ratio probe / good and its bootstrap interval (none when untestable or decided
    /// by the point estimate).
    pub ratio: Option<f64>,
    pub ci: Option<(f64, f64)>,
    /// The interval still straddled the midpoint after the most rounds allowed.
    pub uncertain: bool,
    pub rounds: u32,
    /// Why it is untestable (a failed build, a failed benchmark).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The whole bisection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BisectReport {
    /// Some step could not be decided within the most rounds allowed and was decided by its
    /// point estimate: `first_bad` is then a best guess, not a finding.
    pub uncertain: bool,
    /// The benchmark followed (`suite/name[params]/measure`).
    pub key: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub good: CommitRef,
    pub bad: CommitRef,
    /// First-parent commits after good, up to and including bad.
    pub commits: usize,
    /// Median ratio bad / good and its interval: the regression being bisected.
    pub ratio: f64,
    pub ci: (f64, f64),
    pub steps: Vec<BisectStep>,
    /// The most probes a clean binary search needs for `commits`.
    pub max_steps: usize,
    pub first_bad: CommitRef,
    /// Untestable commits just before `first_bad` that may be the culprit instead.
    pub also_possible: Vec<CommitRef>,
}
