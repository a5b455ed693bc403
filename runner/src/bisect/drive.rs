//! The bisection driver: resolves the endpoints and the first-parent commits between them,
//! confirms and sizes the regression by measuring both endpoints interleaved, then probes
//! commits (checked out in cached worktrees and built like `run --commit`) until the first bad
//! one is found. Measurements are not stored: probes of old commits would read as new points
//! in the history; the report carries every probe's ratio and interval instead.

use std::path::Path;

use pitwall_reports::bisect::{BisectReport, BisectStep, CommitRef};
use pitwall_stats::ab::AbConfig;
use pitwall_suites::{BenchmarkResult, ResultStatus};

use super::search::{Class, Range, classify, classify_by_estimate, max_steps};
use crate::compare::{CompareOptions, compare};
use crate::config::Config;
use crate::engine::RunObserver;
use crate::git::{GitError, Repo, ResolvedCommit};
use crate::run::{RunError, RunRequest, Target, build, execute_interleaved};
use crate::setup::RunEnvironment;
use crate::source::Side;
use pitwall_suites::Backend;

/// What to bisect.
#[derive(Debug, Clone)]
pub struct BisectRequest {
    pub good: String,
    pub bad: String,
    /// Suites and benchmark filter for the endpoint measurement (as `run --suite/--bench`).
    pub select: RunRequest,
    /// Rounds per measurement, and the most rounds one probe may take to decide.
    pub rounds: u32,
    pub max_rounds: u32,
    pub rebuild: bool,
}

/// Why a bisection could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Run(Box<RunError>),
    #[error("good `{good}` ({good_sha}): {source}")]
    GoodUnusable {
        good: String,
        good_sha: String,
        #[source]
        source: Box<RunError>,
    },
    #[error("bad `{bad}` ({bad_sha}): {source}")]
    BadUnusable {
        bad: String,
        bad_sha: String,
        #[source]
        source: Box<RunError>,
    },
    #[error("{what} measured no results (hint: check --suite and --bench)")]
    NothingMeasured { what: String },
    #[error(
        "no regression between good and bad{selection}: {summary} (hint: measure with more --rounds, or pick other endpoints)"
    )]
    NoRegression { selection: String, summary: String },
}

impl From<RunError> for BisectError {
    fn from(e: RunError) -> BisectError {
        BisectError::Run(Box::new(e))
    }
}

fn commit_ref(c: &ResolvedCommit) -> CommitRef {
    CommitRef {
        sha: c.sha.clone(),
        subject: c.info.subject.clone(),
        author: c.info.author.clone(),
        date: c.info.date.clone(),
    }
}

/// Checks a commit out in the worktree cache and builds it (cached per commit, as `run
/// --commit` does).
fn prepare(
    repo: &Repo,
    commit: &ResolvedCommit,
    config: &Config,
    rebuild: bool,
) -> Result<Target, RunError> {
    let cache = repo.root().join(".pitwall").join("worktrees");
    let checkout = repo
        .checkout(commit, &cache, rebuild)
        .map_err(|e| RunError::Build {
            target: format!("commit {}", &commit.sha[..12]),
            command: "git checkout".into(),
            detail: e.to_string(),
            log_tail: Vec::new(),
        })?;
    let target = Target {
        checkout: checkout.path,
        commit: commit.sha.clone(),
        branch: commit.branch.clone(),
        commit_info: Some(commit.info.clone()),
    };
    let marker = cache.join(format!("{}.build", commit.sha));
    build(config, &target, Some(&marker), rebuild)?;
    Ok(target)
}

/// The measurement context shared by every step.
struct Measure<'a> {
    config: &'a Config,
    backend: &'a dyn Backend,
    env: &'a RunEnvironment,
    observer: &'a dyn RunObserver,
}

impl Measure<'_> {
    /// `rounds` interleaved rounds of `a` and `b`; their results.
    fn pair(
        &self,
        request: &RunRequest,
        a: &Target,
        b: &Target,
        rounds: u32,
    ) -> Result<(Vec<BenchmarkResult>, Vec<BenchmarkResult>), RunError> {
        let targets = [a.clone(), b.clone()];
        let mut reports = execute_interleaved(
            self.config,
            request,
            self.backend,
            &targets,
            rounds,
            self.env,
            self.observer,
        )?;
        let b = reports.pop().map(|r| r.run.results).unwrap_or_default();
        let a = reports.pop().map(|r| r.run.results).unwrap_or_default();
        Ok((a, b))
    }
}

fn samples_of(results: &[BenchmarkResult], key: &str) -> Option<Vec<f64>> {
    results
        .iter()
        .find(|r| r.key() == key && r.status == ResultStatus::Ok && !r.samples.is_empty())
        .map(|r| r.samples.clone())
}

/// Runs a bisection in `repo` and reports the first bad commit.
pub fn bisect(
    repo_dir: &Path,
    config: &Config,
    request: &BisectRequest,
    backend: &dyn Backend,
    env: &RunEnvironment,
    observer: &dyn RunObserver,
    ab: &AbConfig,
) -> Result<BisectReport, BisectError> {
    let repo = Repo::discover(repo_dir)?;
    let good = repo.resolve(&request.good)?;
    let bad = repo.resolve(&request.bad)?;
    let after = repo.first_parent_range(&good, &bad)?;
    let m = Measure {
        config,
        backend,
        env,
        observer,
    };
    let good_target = prepare(&repo, &good, config, request.rebuild).map_err(|source| {
        BisectError::GoodUnusable {
            good: request.good.clone(),
            good_sha: good.sha[..12].to_string(),
            source: Box::new(source),
        }
    })?;
    let bad_target = prepare(&repo, &bad, config, request.rebuild).map_err(|source| {
        BisectError::BadUnusable {
            bad: request.bad.clone(),
            bad_sha: bad.sha[..12].to_string(),
            source: Box::new(source),
        }
    })?;

    // The endpoints: is there a regression, which benchmark, and how big?
    let (g, b) = m.pair(&request.select, &good_target, &bad_target, request.rounds)?;
    for (what, results) in [("good", &g), ("bad", &b)] {
        if results.is_empty() {
            return Err(BisectError::NothingMeasured {
                what: what.to_string(),
            });
        }
    }
    let side = |label: &str, results: Vec<BenchmarkResult>| Side {
        label: label.to_string(),
        results,
        run: None,
    };
    let endpoints = compare(
        &side("good", g.clone()),
        &side("bad", b.clone()),
        config,
        None,
        ab,
        CompareOptions::default(),
    );
    let Some(worst) = endpoints.worst_regression() else {
        return Err(BisectError::NoRegression {
            selection: request
                .select
                .filter
                .as_ref()
                .map(|f| format!(" for --bench {f}"))
                .unwrap_or_default(),
            summary: endpoints.summary_line(),
        });
    };
    let key = worst.key();
    let higher_is_better = worst.higher_is_better;
    let bad_ratio = worst.comparison.ratio;
    let unit = worst.unit.clone();
    let endpoint_ci = worst.comparison.ci;
    let suite = worst.suite.clone();
    let shown = pitwall_suites::schema::display_name(&worst.name, &worst.params);
    // From here on, only that benchmark is measured.
    let focus = RunRequest {
        suites: vec![suite],
        filter: Some(shown),
    };

    let mut range = Range::new(after.len());
    let mut steps = Vec::new();
    while let Some(index) = range.next() {
        let commit = &after[index - 1];
        let mut step = BisectStep {
            position: index,
            commit: commit_ref(commit),
            class: String::new(),
            ratio: None,
            ci: None,
            uncertain: false,
            rounds: 0,
            note: None,
        };
        let verdict = match prepare(&repo, commit, config, request.rebuild) {
            Err(e) => Err(e.to_string()),
            Ok(target) => probe(
                &m,
                &focus,
                &good_target,
                &target,
                &key,
                bad_ratio,
                higher_is_better,
                request,
                ab,
                &mut step.rounds,
            ),
        };
        let class = match verdict {
            Ok(v) => {
                step.ratio = Some(v.ratio);
                step.ci = v.ci.0.is_finite().then_some(v.ci);
                step.uncertain = v.uncertain;
                v.class
            }
            Err(note) => {
                step.note = Some(note.lines().next().unwrap_or_default().to_string());
                Class::Untestable
            }
        };
        step.class = match class {
            Class::Good => "good",
            Class::Bad => "bad",
            Class::Untestable => "untestable",
        }
        .to_string();
        range.record(index, class);
        steps.push(step);
    }
    let at = |i: usize| if i == 0 { &good } else { &after[i - 1] };
    Ok(BisectReport {
        key,
        unit,
        higher_is_better,
        good: commit_ref(&good),
        bad: commit_ref(&bad),
        commits: after.len(),
        ratio: bad_ratio,
        ci: endpoint_ci,
        steps,
        max_steps: max_steps(after.len()),
        first_bad: commit_ref(at(range.bad)),
        also_possible: range
            .unresolved()
            .into_iter()
            .map(|i| commit_ref(at(i)))
            .collect(),
    })
}

/// Measures one probe against the good commit until it is classified (or the rounds run out).
#[allow(clippy::too_many_arguments)]
fn probe(
    m: &Measure<'_>,
    focus: &RunRequest,
    good: &Target,
    target: &Target,
    key: &str,
    bad_ratio: f64,
    higher_is_better: bool,
    request: &BisectRequest,
    ab: &AbConfig,
    rounds_done: &mut u32,
) -> Result<super::search::Verdict, String> {
    let (mut good_samples, mut probe_samples) = (Vec::new(), Vec::new());
    loop {
        let (g, p) = m
            .pair(focus, good, target, request.rounds)
            .map_err(|e| e.to_string())?;
        *rounds_done += request.rounds;
        let failed = |r: &[BenchmarkResult]| {
            r.iter()
                .find(|x| x.key() == key)
                .and_then(|x| x.error.clone())
                .unwrap_or_else(|| format!("{key} not measured"))
        };
        good_samples.extend(samples_of(&g, key).ok_or_else(|| format!("good: {}", failed(&g)))?);
        probe_samples.extend(samples_of(&p, key).ok_or_else(|| failed(&p))?);
        if let Some(v) = classify(
            &good_samples,
            &probe_samples,
            bad_ratio,
            higher_is_better,
            ab,
        ) {
            return Ok(v);
        }
        if *rounds_done >= request.max_rounds {
            return Ok(classify_by_estimate(
                &good_samples,
                &probe_samples,
                bad_ratio,
            ));
        }
    }
}
