//! One `pitwall run`: the build step (cached per commit), then every selected suite, gathered
//! into a `Run` with its fingerprint and config hash; for `--base/--head`, both sides measured
//! in interleaved rounds so drift on the host cancels. Storing is the caller's job.

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::collections::{BTreeMap, BTreeSet};

use pitwall_suites::{
    Backend, BenchmarkResult, CommitInfo, Fingerprint, PairInfo, PairRole, ResultStatus, Run,
    RunStatus, SampleMeta, SequentialPlanInfo, WORKING_TREE,
};

use crate::config::Config;
use crate::engine::{CommandOutcome, RunObserver, Selection, run_command, run_suite};
use crate::fingerprint;
use crate::setup::RunEnvironment;

/// Limit on the build command.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);
/// Lines of a failed build's output kept in the error and the stored run.
const BUILD_LOG_LINES: usize = 20;

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
            format!("commit {}", &self.commit[..self.commit.len().min(12)])
        }
    }
}

/// A finished run and the suites that were skipped (one line each).
#[derive(Debug, Clone)]
pub struct RunReport {
    pub run: Run,
    pub skipped: Vec<String>,
}

/// Why a run could not start or produced nothing to store.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("unknown suite `{name}` (hint: configured suites are {known})")]
    UnknownSuite { name: String, known: String },
    /// One line; the last lines of the build's output are in `log_tail`, for printing after
    /// it and for the stored run.
    #[error("{target}: build command `{command}` failed: {detail}")]
    Build {
        target: String,
        command: String,
        detail: String,
        log_tail: Vec<String>,
    },
}

/// Whether the build ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildOutcome {
    NotConfigured,
    Built,
    /// A build of this commit with the same command already succeeded.
    Cached,
}

/// Runs `[project] build` in the target. With a `marker` file (per commit), a successful build
/// is remembered and skipped next time unless `rebuild`.
pub fn build(
    config: &Config,
    target: &Target,
    marker: Option<&Path>,
    rebuild: bool,
) -> Result<BuildOutcome, RunError> {
    let Some(command) = &config.project.build else {
        return Ok(BuildOutcome::NotConfigured);
    };
    if let Some(m) = marker {
        if !rebuild && std::fs::read_to_string(m).is_ok_and(|c| c == *command) {
            return Ok(BuildOutcome::Cached);
        }
        let _ = std::fs::remove_file(m);
    }
    let fail = |detail: String, log_tail: Vec<String>| RunError::Build {
        target: target.describe(),
        command: command.clone(),
        detail,
        log_tail,
    };
    let outcome = run_command(
        command,
        &target.checkout,
        &Default::default(),
        BUILD_TIMEOUT,
    )
    .map_err(|e| fail(format!("cannot start: {e}"), Vec::new()))?;
    if !outcome.success() {
        let out = String::from_utf8_lossy(&outcome.stdout);
        let log: Vec<&str> = out.lines().chain(outcome.stderr_tail.lines()).collect();
        let tail = log[log.len().saturating_sub(BUILD_LOG_LINES)..]
            .iter()
            .map(|l| l.to_string())
            .collect();
        // The outcome without its stderr tail: the log tail (stdout too) is kept apart.
        let quiet = CommandOutcome {
            stderr_tail: String::new(),
            ..outcome
        };
        let status = quiet.failure_message(command, BUILD_TIMEOUT.as_secs_f64());
        return Err(fail(status, tail));
    }
    if let Some(m) = marker {
        let _ = std::fs::write(m, command);
    }
    Ok(BuildOutcome::Built)
}

/// Fails on a `--suite` name that is not configured.
pub fn check_suites(config: &Config, request: &RunRequest) -> Result<(), RunError> {
    let known: Vec<&str> = config.suites.iter().map(|s| s.name.as_str()).collect();
    for name in &request.suites {
        if !known.contains(&name.as_str()) {
            return Err(RunError::UnknownSuite {
                name: name.clone(),
                known: known.join(", "),
            });
        }
    }
    Ok(())
}

/// Runs the selected suites once in `target` (build it first with [`build`]).
pub fn execute(
    config: &Config,
    request: &RunRequest,
    backend: &dyn Backend,
    target: &Target,
    env: &RunEnvironment,
    observer: &dyn RunObserver,
) -> Result<RunReport, RunError> {
    let mut reports = execute_interleaved(
        config,
        request,
        backend,
        std::slice::from_ref(target),
        1,
        env,
        observer,
    )?;
    Ok(reports.remove(0))
}

/// Measures every target in `rounds` interleaved rounds (t0, t1, t0, t1, …), merging each
/// benchmark's samples over the rounds and keeping the replicate (process) each came from; one
/// run per target, in the order given.
pub fn execute_interleaved(
    config: &Config,
    request: &RunRequest,
    backend: &dyn Backend,
    targets: &[Target],
    rounds: u32,
    env: &RunEnvironment,
    observer: &dyn RunObserver,
) -> Result<Vec<RunReport>, RunError> {
    check_suites(config, request)?;
    let mut acc = Rounds::new(targets.len());
    for _ in 0..rounds.max(1) {
        acc.round(config, request, None, backend, targets, env, observer);
    }
    Ok(acc.reports(config, targets, env, None))
}

/// The rounds measured so far for a set of targets: merged results, replicate numbering and
/// where each round began. [`execute_interleaved`] and the until-decided loop of
/// [`crate::pair`] both measure through it.
#[derive(Debug)]
pub(crate) struct Rounds {
    started_at: String,
    results: Vec<Vec<BenchmarkResult>>,
    skipped: Vec<Vec<String>>,
    extras: Vec<(BTreeMap<String, serde_json::Value>, Vec<String>)>,
    /// Per target: the next replicate index (processes launched so far on that side).
    next_replicate: Vec<u32>,
    /// Per target: the first replicate index of each round.
    round_starts: Vec<Vec<u32>>,
    pair_id: String,
}

impl Rounds {
    pub(crate) fn new(targets: usize) -> Rounds {
        Rounds {
            started_at: now_rfc3339(),
            results: vec![Vec::new(); targets],
            skipped: vec![Vec::new(); targets],
            extras: vec![Default::default(); targets],
            next_replicate: vec![0; targets],
            round_starts: vec![Vec::new(); targets],
            pair_id: uuid::Uuid::now_v7().to_string(),
        }
    }

    /// Rounds measured so far.
    pub(crate) fn count(&self) -> u32 {
        self.round_starts.first().map_or(0, |r| r.len() as u32)
    }

    /// One more round of every target. `only`: benchmark keys (`suite/name[params]/measure`)
    /// still wanted; suites with none of them are left out, built-in suites run just those
    /// benchmarks, and command suites run whole.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn round(
        &mut self,
        config: &Config,
        request: &RunRequest,
        only: Option<&BTreeSet<String>>,
        backend: &dyn Backend,
        targets: &[Target],
        env: &RunEnvironment,
        observer: &dyn RunObserver,
    ) {
        let first = self.count() == 0;
        for (t, target) in targets.iter().enumerate() {
            self.round_starts[t].push(self.next_replicate[t]);
            for suite in &config.suites {
                if !request.suites.is_empty() && !request.suites.contains(&suite.name) {
                    continue;
                }
                let wanted: Option<BTreeSet<String>> = only.map(|keys| {
                    let prefix = format!("{}/", suite.name);
                    keys.iter()
                        .filter_map(|k| k.strip_prefix(&prefix))
                        .filter_map(|rest| rest.rsplit_once('/').map(|(shown, _)| shown))
                        .map(str::to_string)
                        .collect()
                });
                if wanted.as_ref().is_some_and(BTreeSet::is_empty) {
                    continue;
                }
                let outcome = run_suite(
                    suite,
                    backend,
                    &target.checkout,
                    Selection {
                        filter: request.filter.as_deref(),
                        only: wanted.as_ref(),
                    },
                    observer,
                    env.meta_source(),
                    env.isolation(),
                );
                let base = self.next_replicate[t];
                self.next_replicate[t] += merge(&mut self.results[t], outcome.results, base);
                if first {
                    self.skipped[t].extend(outcome.skipped);
                    self.extras[t].0.extend(outcome.context);
                    self.extras[t].1.extend(outcome.notes);
                }
            }
        }
    }

    /// One run per target with everything measured so far; a pair (two targets) is linked and
    /// records its rounds, replicate numbering and, when measured until decided, its plan.
    pub(crate) fn reports(
        &self,
        config: &Config,
        targets: &[Target],
        env: &RunEnvironment,
        sequential: Option<SequentialPlanInfo>,
    ) -> Vec<RunReport> {
        let monitor = env
            .monitor_health()
            .map(|h| serde_json::to_value(h).unwrap_or_default());
        let rounds = self.count().max(1);
        targets
            .iter()
            .enumerate()
            .map(|(i, target)| {
                let pair = (targets.len() == 2).then(|| PairInfo {
                    id: self.pair_id.clone(),
                    role: if i == 0 {
                        PairRole::Base
                    } else {
                        PairRole::Head
                    },
                    rounds,
                    round_starts: self.round_starts[i].clone(),
                    sequential,
                });
                let mut fp = env.fingerprint.clone();
                if let Some(m) = &monitor {
                    fp.extra.insert("gpu_monitor".into(), m.clone());
                }
                let (context, notes) = &self.extras[i];
                if !context.is_empty() {
                    fp.extra.insert(
                        "tool_context".into(),
                        serde_json::to_value(context).unwrap_or_default(),
                    );
                }
                if !notes.is_empty() {
                    fp.extra
                        .insert("format_notes".into(), serde_json::json!(notes));
                }
                let mut run = new_run(
                    config,
                    target,
                    fp,
                    &self.started_at,
                    self.results[i].clone(),
                );
                run.pair = pair;
                RunReport {
                    run,
                    skipped: self.skipped[i].clone(),
                }
            })
            .collect()
    }
}

/// A run of `target` with these results, finished now.
fn new_run(
    config: &Config,
    target: &Target,
    fingerprint: Fingerprint,
    started_at: &str,
    results: Vec<BenchmarkResult>,
) -> Run {
    Run {
        id: uuid::Uuid::now_v7().to_string(),
        project: config.project.name.clone(),
        commit: target.commit.clone(),
        branch: target.branch.clone(),
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

/// The stored record of a target whose build failed: status failed, no results, the log tail.
pub fn failed_build_run(config: &Config, target: &Target, error: &RunError) -> Run {
    let now = now_rfc3339();
    let mut run = new_run(config, target, fingerprint::current(), &now, Vec::new());
    run.error = Some(match error {
        RunError::Build { log_tail, .. } if !log_tail.is_empty() => {
            format!("{error}; log tail:\n{}", log_tail.join("\n"))
        }
        _ => error.to_string(),
    });
    run
}

/// Adds one suite execution's results: same benchmark measure → samples appended; a failure
/// in any round marks the result failed. Replicate indices local to the execution (0 when a
/// result has none: the suite ran in one process) are shifted by `first_replicate`; returns
/// how many replicate indices the execution used.
fn merge(
    into: &mut Vec<BenchmarkResult>,
    round: Vec<BenchmarkResult>,
    first_replicate: u32,
) -> u32 {
    let mut used = 0;
    for mut r in round {
        if !r.samples.is_empty() {
            if r.replicates.len() != r.samples.len() {
                r.replicates = vec![0; r.samples.len()];
            }
            used = used.max(r.replicates.iter().max().map_or(0, |m| m + 1));
            for i in &mut r.replicates {
                *i += first_replicate;
            }
        }
        let Some(existing) = into.iter_mut().find(|e| {
            e.suite == r.suite && e.name == r.name && e.params == r.params && e.measure == r.measure
        }) else {
            into.push(r);
            continue;
        };
        if !r.sample_meta.is_empty() || !existing.sample_meta.is_empty() {
            // Keep the metadata parallel to the samples when only some rounds had it.
            existing
                .sample_meta
                .resize(existing.samples.len(), SampleMeta::default());
            let mut meta = r.sample_meta;
            meta.resize(r.samples.len(), SampleMeta::default());
            existing.sample_meta.extend(meta);
        }
        existing.samples.extend(r.samples);
        existing.replicates.extend(r.replicates);
        let combined = existing.status.combine(r.status);
        if combined == ResultStatus::Ok {
            existing.error = None;
        } else if combined != existing.status {
            existing.error = r.error.or(existing.error.take());
        }
        existing.status = combined;
    }
    used
}

/// Current UTC time, RFC 3339 with microseconds.
pub fn now_rfc3339() -> String {
    let ts = jiff::Timestamp::now();
    format!("{:.6}", ts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_suites::{Direction, Unit};

    fn result(name: &str, samples: Vec<f64>, status: ResultStatus) -> BenchmarkResult {
        BenchmarkResult {
            suite: "s".into(),
            name: name.into(),
            params: Default::default(),
            measure: "time".into(),
            unit: Unit::new("ns"),
            direction: Direction::LowerIsBetter,
            status,
            error: (status == ResultStatus::Failed).then(|| "boom".to_string()),
            samples,
            sample_meta: vec![],
            replicates: Vec::new(),
        }
    }

    #[test]
    fn merge_appends_rounds_and_keeps_failures() {
        let mut acc = Vec::new();
        let used = merge(
            &mut acc,
            vec![
                result("a", vec![1.0, 2.0], ResultStatus::Ok),
                result("b", vec![5.0], ResultStatus::Ok),
            ],
            0,
        );
        assert_eq!(used, 1, "a suite without replicates ran in one process");
        let mut with_meta = result("a", vec![3.0], ResultStatus::Ok);
        with_meta.sample_meta = vec![SampleMeta {
            throttled: true,
            ..Default::default()
        }];
        merge(
            &mut acc,
            vec![with_meta, result("b", vec![], ResultStatus::Failed)],
            used,
        );
        assert_eq!(acc[0].samples, vec![1.0, 2.0, 3.0]);
        assert_eq!(acc[0].replicates, vec![0, 0, 1]);
        assert_eq!(acc[0].sample_meta.len(), 3);
        assert!(acc[0].sample_meta[2].throttled && !acc[0].sample_meta[0].throttled);
        assert_eq!(acc[1].status, ResultStatus::Failed);
        assert_eq!(acc[1].error.as_deref(), Some("boom"));
        assert_eq!(acc[1].replicates, vec![0]);
    }

    #[test]
    fn merge_numbers_the_processes_of_each_execution_after_earlier_ones() {
        // Two executions of a command suite (replicates 0, 1), then another round of it.
        let mut acc = Vec::new();
        let mut a = result("a", vec![1.0, 2.0, 3.0, 4.0], ResultStatus::Ok);
        a.replicates = vec![0, 0, 1, 1];
        let used = merge(&mut acc, vec![a.clone()], 5);
        assert_eq!(used, 2);
        merge(&mut acc, vec![a], 5 + used);
        assert_eq!(acc[0].replicates, vec![5, 5, 6, 6, 7, 7, 8, 8]);
    }
}
