//! What a measurement is asked for and gives back: the suites to run (`RunRequest`), the
//! checkout and commit measured (`Target`), the finished run (`RunReport`), and how a fresh
//! run is put together from its results. Below `run.rs` and `rounds.rs`, which both use it.

use std::path::{Path, PathBuf};

use pitwall_engine::config::Config;
use pitwall_schema::sections::SamplingTargets;
use pitwall_schema::time::now_rfc3339;
use pitwall_schema::{
    BenchmarkResult, CommitInfo, Fingerprint, ResultStatus, Run, RunStatus, WORKING_TREE,
};

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Suite names to run; all configured suites when empty.
    pub suites: Vec<String>,
    /// Keep only benchmarks whose `name[params]` contains this text.
    pub filter: Option<String>,
}

/// What is measured: a directory and the commit it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub checkout: PathBuf,
    /// Full sha, or `working tree`.
    pub commit: String,
    pub branch: Option<String>,
    pub commit_info: Option<CommitInfo>,
}

impl Target {
    /// The working directory as it is (not a commit).
    pub fn working_tree(dir: &Path) -> Target {
        Target {
            checkout: dir.to_path_buf(),
            commit: WORKING_TREE.to_string(),
            branch: None,
            commit_info: None,
        }
    }

    /// `commit 0123456789ab` or `the working tree`, for messages.
    pub fn describe(&self) -> String {
        if self.commit == WORKING_TREE {
            "the working tree".to_string()
        } else {
            format!("commit {}", pitwall_engine::short_sha(&self.commit))
        }
    }
}

/// A finished run and the suites that were skipped (one line each).
#[derive(Debug, Clone)]
pub struct RunReport {
    pub run: Run,
    pub skipped: Vec<String>,
}

/// A run of `target` with these results, finished now.
pub(crate) fn new_run(
    config: &Config,
    target: &Target,
    mut fingerprint: Fingerprint,
    started_at: &str,
    results: Vec<BenchmarkResult>,
) -> Run {
    let results: Vec<BenchmarkResult> = results.into_iter().map(fail_unsummarisable).collect();
    fingerprint.set_section(&SamplingTargets(
        config
            .suites
            .iter()
            .map(|s| (s.name.clone(), 100.0 * s.sampling.target_rel_ci))
            .collect(),
    ));
    Run {
        exclusion: None,
        contention: None,
        id: uuid::Uuid::now_v7().to_string(),
        project: config.project.name.clone(),
        commit: target.commit.clone(),
        branch: target.branch.clone(),
        testbed: None,
        role: None,
        started_at: started_at.to_string(),
        finished_at: now_rfc3339(),
        config_hash: config.hash(),
        fingerprint,
        status: RunStatus::from_results(&results),
        commit_info: target.commit_info.clone(),
        error: None,
        pair: None,
        results,
    }
}

/// A fresh result (measured here, or another tool's read by `import`) whose samples cannot be
/// summarised (`BenchmarkResult::unsummarisable`: `-1.7e308` beside `1.7e308`) is failed with
/// the reason, its samples kept, so the run is partial and is stored like any other.
pub(crate) fn fail_unsummarisable(mut r: BenchmarkResult) -> BenchmarkResult {
    if r.status == ResultStatus::Ok {
        if let Some(why) = r.unsummarisable() {
            r.status = ResultStatus::Failed;
            r.error = Some(why);
        }
    }
    r
}
