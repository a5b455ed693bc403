//! The measuring use cases behind `pitwall run`, `pitwall ci` and `pitwall bisect`: measure the
//! working tree or exact commits, and measure a base/head pair interleaved, storing every run. Each takes a
//! request and a `&mut dyn Store` and returns what it measured (`ci` publishes exactly the pair
//! returned, never the store's latest); progress and the machine setup go through
//! [`MeasureHooks`], so nothing here prints.

use std::path::{Path, PathBuf};

use pitwall_schema::{Backend, Redactor, Run, RunStatus};
use pitwall_stats::ab::AbConfig;

use crate::alerts::AlertSettings;
use crate::bisect::{BisectError, BisectReport, BisectRequest};
use crate::cancel::{self, Cancelled};
use crate::git::{GitError, Repo};
use crate::labels::{Labels, first_parent_rule};
use crate::pair::{self, PairOutcome, PairRounds, sides};
use crate::request::{RunReport, RunRequest, Target};
use crate::run::{RunError, build, check_suites, execute};
use crate::setup::RunEnvironment;
use crate::source::Side;
use pitwall_engine::config::Config;
use pitwall_engine::{RunObserver, process_redactor, redact_run};
use pitwall_schema::time::now_rfc3339;
use pitwall_store::{Store, StoreError};

/// What the caller provides around a measurement: progress, the machine setup (pinning,
/// clocks, GPU monitoring, signal handlers), and what happened along the way.
pub trait MeasureHooks {
    /// Receives progress: checkouts, builds, rounds, looks, bisect probes (as
    /// [`pitwall_engine::Step`]s), suites and benchmarks.
    fn observer(&self) -> &dyn RunObserver;
    /// Sets up the machine just before the first measurement; keep it alive while measuring.
    fn prepare(&self, config: &Config) -> Result<RunEnvironment, EnvironmentError>;
    /// Measuring with `env` is over (e.g. to say how the GPU monitor fared).
    fn measured(&self, _env: &RunEnvironment) {}
    /// A commit's build failed; `run` (its failure, with the log tail) is stored in `store`.
    fn build_failed(&self, _target: &Target, _run: &Run, _error: &RunError, _store: &str) {}
    /// One run of [`measure_commits`] was stored in `store` (the next one is not measured yet).
    fn run_stored(&self, _report: &RunReport, _store: &mut dyn Store) {}
}

/// Why the machine could not be set up (the caller's error, kept with its chain).
pub type EnvironmentError = Box<dyn std::error::Error + Send + Sync>;

/// Why a measurement failed; `pitwall`'s exit mapping classifies each variant.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// A suite named in the selection is not configured.
    #[error(transparent)]
    Selection(RunError),
    /// The repository or a revision could not be found.
    #[error(transparent)]
    Repo(GitError),
    /// `pitwall ci` outside a git repository.
    #[error(
        "{} is not inside a git repository (hint: run pitwall ci in a checkout of the repository; --repo names the GitHub repository, OWNER/NAME)",
        .0.display()
    )]
    NotARepository(PathBuf),
    /// A commit could not be checked out.
    #[error(transparent)]
    Checkout(GitError),
    /// The working tree could not be built (nothing is stored).
    #[error(transparent)]
    Build(RunError),
    #[error(transparent)]
    Environment(EnvironmentError),
    /// A bisection failed.
    #[error(transparent)]
    Bisect(BisectError),
    #[error(transparent)]
    Measure(RunError),
    /// The testbed's noise record (earlier pairs) could not be read.
    #[error("cannot read the testbed's noise record")]
    NoiseRecord(#[source] StoreError),
    #[error("cannot store run {id}")]
    Store {
        id: String,
        #[source]
        source: StoreError,
    },
    /// A command suite's `artifacts` could not be hashed (a pattern matching nothing, a path
    /// that is no regular file inside the checkout, an unreadable file).
    #[error(transparent)]
    Artifacts(pitwall_engine::artifacts::ArtifactError),
    /// The run was stored, but re-detecting the alerts of its series failed.
    #[error("run {id} is stored, but its series' alerts cannot be updated")]
    Alerts {
        id: String,
        #[source]
        source: StoreError,
    },
    /// Nothing to store: no benchmark matched, or (`selection` false) every suite was skipped.
    #[error("{}", if *.selection {
        "no benchmark matched the selection (hint: check --suite and --bench)"
    } else {
        "no benchmark ran (every suite was skipped)"
    })]
    NothingRan {
        selection: bool,
        /// The suites skipped, one line each.
        skipped: Vec<String>,
    },
    /// SIGINT/SIGTERM: nothing of the interrupted run is stored; the process is ending by the
    /// signal (the binary waits for that, `pitwall_host::gpu::await_termination`).
    #[error(transparent)]
    Cancelled(#[from] Cancelled),
}

/// What every measuring use case needs besides its request and the store.
pub struct Measurer<'a> {
    pub config: &'a Config,
    pub backend: &'a dyn Backend,
    pub hooks: &'a dyn MeasureHooks,
    /// The branch, testbed and role every stored run gets (`--branch`, `--testbed`, `--role`,
    /// `[testbed] name`, the CI variables).
    pub labels: Labels,
    /// Compiles a `cuda-kernels` suite's kernels to tell identical ones apart (NVRTC, in the
    /// binary); `None`: every kernel is measured.
    pub kernels: Option<&'a dyn crate::identical::KernelDigests>,
}

/// What [`measure_commits`] measures.
#[derive(Debug, Clone)]
pub enum Revisions {
    /// The working tree in this directory, as it is (always built).
    WorkingTree(PathBuf),
    /// Exact commits of the repository at `repo`, in cached worktrees.
    Commits {
        repo: PathBuf,
        revs: Vec<String>,
        rebuild: bool,
    },
}

/// `pitwall run` without `--base/--head`.
#[derive(Debug, Clone)]
pub struct CommitsRequest {
    pub select: RunRequest,
    pub revisions: Revisions,
}

/// The runs measured and stored, in order; `build_failed` when a commit's build failed (its
/// failure is stored as a failed run and not among `runs`).
#[derive(Debug, Clone, Default)]
pub struct CommitsOutcome {
    pub runs: Vec<RunReport>,
    pub build_failed: bool,
    /// The alerts storing these runs raised (`crate::alerts::refresh`), for the caller to
    /// announce and deliver (the publish use case); stored already.
    pub new_alerts: Vec<pitwall_schema::Alert>,
}

/// Measures the working tree or each commit in turn and stores each run.
pub fn measure_commits(
    m: &Measurer,
    store: &mut dyn Store,
    req: &CommitsRequest,
) -> Result<CommitsOutcome, MeasureError> {
    check_suites(m.config, &req.select).map_err(MeasureError::Selection)?;
    let (targets, build_failed) = match &req.revisions {
        Revisions::WorkingTree(dir) => {
            let mut target = Target::working_tree(dir);
            if let Ok(repo) = Repo::discover(dir) {
                if let Some((_, branch, _)) = repo.head_state() {
                    target.branch = branch;
                }
            }
            let built = build(m.config, &target, None, true, m.hooks.observer());
            cancel::check()?;
            built.map_err(MeasureError::Build)?;
            (vec![target], false)
        }
        Revisions::Commits {
            repo,
            revs,
            rebuild,
        } => {
            let revs = expand_revisions(m, repo, revs)?;
            let labels: Vec<String> = (1..=revs.len())
                .map(|k| format!("commit {k}/{}", revs.len()))
                .collect();
            checkout_and_build(m, store, repo, &revs, &labels, *rebuild)?
        }
    };
    let env = m
        .hooks
        .prepare(m.config)
        .map_err(MeasureError::Environment)?;
    let mut runs = Vec::new();
    let mut new_alerts = Vec::new();
    let redactor = process_redactor(&m.config.token_vars());
    // The repository of measured commits, whose first-parent chains say which history a
    // commit's run can enter (the working tree's run is `local` anyway).
    let repo = match &req.revisions {
        Revisions::Commits { repo, .. } => Repo::discover(repo).ok(),
        Revisions::WorkingTree(_) => None,
    };
    for target in &targets {
        let report = execute(
            m.config,
            &req.select,
            m.backend,
            target,
            &env,
            m.hooks.observer(),
        );
        // Interrupted: its results (benchmarks killed mid-way) are not stored, nor reported.
        cancel::check()?;
        let mut report = report.map_err(MeasureError::Measure)?;
        if report.run.commit == pitwall_schema::WORKING_TREE {
            // The working tree is not a commit of any history: `local` unless `--role` says.
            report.run.role = Some(pitwall_schema::RunRole::Local);
        }
        m.hooks.measured(&env);
        if report.run.results.is_empty() {
            return Err(MeasureError::NothingRan {
                selection: req.select.filter.is_some() || !req.select.suites.is_empty(),
                skipped: report.skipped,
            });
        }
        let raised = insert(m, store, &mut report.run, &redactor, repo.as_ref())?;
        m.hooks.run_stored(&report, store);
        new_alerts.extend(raised);
        runs.push(report);
    }
    Ok(CommitsOutcome {
        runs,
        build_failed,
        new_alerts,
    })
}

/// `pitwall run --base A --head B`.
#[derive(Debug, Clone)]
pub struct PairRequest {
    pub select: RunRequest,
    /// The repository holding both commits.
    pub repo: PathBuf,
    pub base: String,
    pub head: String,
    pub rounds: PairRounds,
    pub rebuild: bool,
}

/// A pair measured and stored: both runs with the rounds and the comparison, and the two
/// sides as `compare --pair` reads them.
#[derive(Debug, Clone)]
pub struct MeasuredPair {
    /// The rounds, the stop and `comparison`, the one comparison of the pair (of the sides as
    /// stored) that printing and publishing both show.
    pub outcome: PairOutcome,
    pub base: Side,
    pub head: Side,
    /// The alerts storing the two runs raised (with `--role history`), stored already.
    pub new_alerts: Vec<pitwall_schema::Alert>,
}

impl MeasuredPair {
    /// Some benchmark of either side failed or hung.
    pub fn partial(&self) -> bool {
        [&self.outcome.base, &self.outcome.head]
            .iter()
            .any(|r| r.run.status != RunStatus::Complete)
    }
}

/// A pair use case's result: measured, or not because a build failed (stored as a failed run).
#[derive(Debug, Clone)]
pub enum PairResult {
    NotBuilt,
    Measured(Box<MeasuredPair>),
}

/// Builds both commits, measures them interleaved under the request's plan and stores both
/// runs; returns exactly the pair it measured.
pub fn measure_pair(
    m: &Measurer,
    store: &mut dyn Store,
    req: &PairRequest,
) -> Result<PairResult, MeasureError> {
    check_suites(m.config, &req.select).map_err(MeasureError::Selection)?;
    let revs = [req.base.clone(), req.head.clone()];
    let labels = ["base".to_string(), "head".to_string()];
    let (targets, _) = checkout_and_build(m, store, &req.repo, &revs, &labels, req.rebuild)?;
    let [base, head] = targets.as_slice() else {
        return Ok(PairResult::NotBuilt);
    };
    let noise = crate::noise::book(store, &m.labels.testbed_here(), None, None)
        .map_err(MeasureError::NoiseRecord)?;
    let identical = crate::identical::find(
        m.config,
        &req.select,
        base,
        head,
        m.kernels,
        m.hooks.observer(),
    )
    .map_err(MeasureError::Artifacts)?;
    let env = m
        .hooks
        .prepare(m.config)
        .map_err(MeasureError::Environment)?;
    let started = std::time::Instant::now();
    let left = crate::identical::reduced(m.config, &req.select, &identical);
    let all_identical = left.is_none();
    let outcome = match left {
        Some((config, select)) => pair::measure_pair(
            &config,
            &select,
            m.backend,
            base,
            head,
            &req.rounds,
            (&AbConfig::default(), &noise),
            &env,
            m.hooks.observer(),
        ),
        None => Ok(crate::identical::unmeasured(m.config, base, head, &env)),
    };
    cancel::check()?;
    let mut outcome = outcome.map_err(MeasureError::Measure)?;
    m.hooks.measured(&env);
    let measured_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let context = (&*store, &m.labels);
    crate::identical::record(&mut outcome, m.config, &identical, measured_ms, context);
    // A pair whose code is all identical has nothing to measure; anything else must have run.
    if !all_identical
        && [&outcome.base, &outcome.head]
            .iter()
            .any(|r| r.run.results.is_empty())
    {
        return Err(MeasureError::NothingRan {
            selection: true,
            skipped: Vec::new(),
        });
    }
    let redactor = process_redactor(&m.config.token_vars());
    let mut new_alerts = Vec::new();
    let repo = Repo::discover(&req.repo).ok();
    for report in [&mut outcome.base, &mut outcome.head] {
        // Sides of a pair are pull-request runs unless `--role history` says otherwise.
        new_alerts.extend(insert(m, store, &mut report.run, &redactor, repo.as_ref())?);
    }
    let (base, head) = sides(&outcome.base, &outcome.head);
    // The one comparison of this pair that every output shows (the table, the comment, the
    // check run, the status): made again from the sides as stored, every secret redacted, so
    // what is published is what was printed and carries no secret.
    let noise =
        crate::noise::book_for_sides(store, &base, &head).map_err(MeasureError::NoiseRecord)?;
    outcome.comparison = crate::compare::compare(
        &base,
        &head,
        m.config,
        None,
        &AbConfig::default(),
        crate::compare::CompareOptions::default(),
        &noise,
    );
    Ok(PairResult::Measured(Box::new(MeasuredPair {
        outcome,
        base,
        head,
        new_alerts,
    })))
}

/// `pitwall bisect` in the repository at `repo`: the machine set up through the hooks, then
/// the bisection (its measurements are not stored, see `bisect::bisect`).
pub fn bisect(
    m: &Measurer,
    repo: &Path,
    req: &BisectRequest,
) -> Result<BisectReport, MeasureError> {
    check_suites(m.config, &req.select).map_err(MeasureError::Selection)?;
    let env = m
        .hooks
        .prepare(m.config)
        .map_err(MeasureError::Environment)?;
    let report = crate::bisect::bisect(
        repo,
        m.config,
        req,
        m.backend,
        &env,
        m.hooks.observer(),
        &AbConfig::default(),
    );
    // Interrupted, a probe's failure is the signal's doing, not the bisection's.
    cancel::check()?;
    let report = report.map_err(MeasureError::Bisect)?;
    m.hooks.measured(&env);
    Ok(report)
}

/// Stores `run`, labelled and every known secret redacted from it first (what the caller shows
/// next is the stored run). A history run of a commit off its branch's first-parent chain in
/// `repo` is stored as `local`, with a warning (`labels::first_parent_rule`).
fn insert(
    m: &Measurer,
    store: &mut dyn Store,
    run: &mut Run,
    redactor: &Redactor,
    repo: Option<&Repo>,
) -> Result<Vec<pitwall_schema::Alert>, MeasureError> {
    m.labels.apply(run);
    if let Some(repo) = repo {
        if let Some(warning) = first_parent_rule(run, repo, &m.config.history_branch) {
            m.hooks.observer().warning("history", &warning);
        }
    }
    let alerts = &AlertSettings::of(m.config);
    redact_run(run, redactor);
    let failed = |source| MeasureError::Store {
        id: run.id.clone(),
        source,
    };
    store.insert_run(run).map_err(failed)?;
    // A history run re-detects the series it touched (a pull request's runs never alert).
    crate::alerts::refresh(store, std::slice::from_ref(run), alerts, &now_rfc3339())
        .map(|r| r.new)
        .map_err(|source| MeasureError::Alerts {
            id: run.id.clone(),
            source,
        })
}

mod checkout;
use checkout::{checkout_and_build, expand_revisions};
mod pull_request;
pub use pull_request::{CiRequest, ci};

#[cfg(test)]
mod tests;
