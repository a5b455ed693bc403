//! The bisection driver: resolves the endpoints and the first-parent commits between them,
//! confirms and sizes the regression by measuring both endpoints interleaved, then probes
//! commits (checked out in cached worktrees and built like `run --commit`) until the first bad
//! one is found. Measurements are not stored: probes of old commits would read as new points
//! in the history; the report carries every probe's ratio and interval instead.

use std::path::Path;

use pitwall_analysis::bisect::{BisectReport, BisectStep, CommitRef};
use pitwall_schema::{Backend, ResultStatus};
use pitwall_stats::ab::{AbConfig, Replicate, ReplicatedPair, interval_at};

use super::endpoints::{Regression, measure_endpoints, worst_regression};
use super::request::{BisectError, BisectRequest, Measure};
use super::search::{Class, Range, classify, classify_by_estimate, max_steps};
use crate::compare::{replicates_of, round_orders};
use crate::git::{Repo, ResolvedCommit};
use crate::request::{RunRequest, Target};
use crate::rounds::Rounds;
use crate::run::{RunError, build};
use crate::setup::RunEnvironment;
use pitwall_engine::config::Config;
use pitwall_engine::{RunObserver, Step};

fn commit_ref(c: &ResolvedCommit) -> CommitRef {
    CommitRef {
        sha: c.sha.clone(),
        subject: c.info.subject.clone(),
        author: c.info.author.clone(),
        date: c.info.date.clone(),
    }
}

/// Checks a commit out in the worktree cache and builds it (cached per commit, as `run
/// --commit` does). An endpoint's checkout is told to the observer under `label` (a probe's
/// commit was told with the probe).
fn prepare(
    repo: &Repo,
    commit: &ResolvedCommit,
    config: &Config,
    rebuild: bool,
    observer: &dyn RunObserver,
    label: Option<&str>,
) -> Result<Target, RunError> {
    if let Some(label) = label {
        observer.step(&Step::Checkout {
            label,
            sha: &commit.sha,
            subject: &commit.info.subject,
        });
    }
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
    build(config, &target, Some(&marker), rebuild, observer)?;
    Ok(target)
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
    let (good_target, bad_target) = prepare_endpoints(&repo, &good, &bad, request, &m)?;
    let (endpoints, stop, rounds) = measure_endpoints(&m, request, &good_target, &bad_target, ab)?;
    let regression = worst_regression(endpoints, stop, rounds, request)?;
    let search = Search {
        repo: &repo,
        m: &m,
        request,
        ab,
        good: &good_target,
        regression: &regression,
    };
    let (range, steps) = search.run(&after);
    let at = |i: usize| if i == 0 { &good } else { &after[i - 1] };
    Ok(BisectReport {
        uncertain: steps.iter().any(|s| s.uncertain),
        key: regression.key,
        unit: regression.unit,
        higher_is_better: regression.higher_is_better,
        good: commit_ref(&good),
        bad: commit_ref(&bad),
        commits: after.len(),
        ratio: regression.ratio,
        ci: regression.ci,
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

/// Checks out and builds both endpoints; either failing is an error naming it.
fn prepare_endpoints(
    repo: &Repo,
    good: &ResolvedCommit,
    bad: &ResolvedCommit,
    request: &BisectRequest,
    m: &Measure<'_>,
) -> Result<(Target, Target), BisectError> {
    let (config, observer) = (m.config, m.observer);
    let good_target = prepare(repo, good, config, request.rebuild, observer, Some("good"))
        .map_err(|source| BisectError::GoodUnusable {
            good: request.good.clone(),
            good_sha: good.sha[..12].to_string(),
            source: Box::new(source),
        })?;
    let bad_target =
        prepare(repo, bad, config, request.rebuild, observer, Some("bad")).map_err(|source| {
            BisectError::BadUnusable {
                bad: request.bad.clone(),
                bad_sha: bad.sha[..12].to_string(),
                source: Box::new(source),
            }
        })?;
    Ok((good_target, bad_target))
}

/// The search between the endpoints: what every probe needs.
struct Search<'a> {
    repo: &'a Repo,
    m: &'a Measure<'a>,
    request: &'a BisectRequest,
    ab: &'a AbConfig,
    good: &'a Target,
    regression: &'a Regression,
}

impl Search<'_> {
    /// Probes the commits `after` good until the first bad one is found: the range left and
    /// every probe.
    fn run(&self, after: &[ResolvedCommit]) -> (Range, Vec<BisectStep>) {
        let mut range = Range::new(after.len());
        let mut steps = Vec::new();
        let bound = max_steps(after.len());
        while let Some(index) = range.next() {
            // Terminating: no more probes; the use case returns the cancellation.
            if crate::cancel::requested() {
                break;
            }
            let commit = &after[index - 1];
            let probe_no = steps.len() + 1;
            self.m.observer.step(&Step::Probe {
                probe: probe_no,
                bound,
                sha: &commit.sha,
                subject: &commit.info.subject,
            });
            let (step, class) = self.probe_commit(index, commit);
            self.m.observer.step(&Step::ProbeFinished {
                probe: probe_no,
                class: &step.class,
                ratio: step.ratio,
                rounds: step.rounds,
            });
            range.record(index, class);
            steps.push(step);
        }
        (range, steps)
    }

    /// Checks out, builds and measures one commit against good: its step and class (a
    /// commit that does not build or measure is untestable, with the first line of why).
    fn probe_commit(&self, index: usize, commit: &ResolvedCommit) -> (BisectStep, Class) {
        let (m, request, regression) = (self.m, self.request, self.regression);
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
        let verdict = match prepare(
            self.repo,
            commit,
            m.config,
            request.rebuild,
            m.observer,
            None,
        ) {
            Err(e) => Err(e.to_string()),
            Ok(target) => probe(
                m,
                &regression.focus,
                self.good,
                &target,
                &regression.key,
                regression.ratio,
                regression.higher_is_better,
                request,
                self.ab,
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
        (step, class)
    }
}

/// Measures one probe against the good commit, one interleaved round at a time after the
/// first batch, until its repeated interval is clear of the midpoint or the rounds run out.
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
    let targets = [good.clone(), target.clone()];
    let plan = request
        .until_decided()
        .plan(request.rounds, ab.replicate_alpha);
    let max_rounds = plan.max_looks;
    let mut acc = Rounds::new(2).announced(max_rounds, &["good", "probe"]);
    loop {
        acc.round(
            m.config, focus, None, m.backend, &targets, m.env, m.observer,
        );
        let round = acc.count();
        *rounds_done = round;
        // Terminating: no more rounds; the use case returns the cancellation.
        if crate::cancel::requested() {
            return Err(format!("{key}: interrupted"));
        }
        if round < request.rounds {
            continue;
        }
        let reports = acc.reports(m.config, &targets, m.env, Some(&plan));
        let side = |i: usize| -> Result<Vec<Replicate>, String> {
            let results = &reports[i].run.results;
            let r = results
                .iter()
                .find(|x| x.key() == key && x.status == ResultStatus::Ok && !x.samples.is_empty())
                .ok_or_else(|| {
                    let why = results
                        .iter()
                        .find(|x| x.key() == key)
                        .and_then(|x| x.error.clone())
                        .unwrap_or_else(|| format!("{key} not measured"));
                    if i == 0 { format!("good: {why}") } else { why }
                })?;
            Ok(replicates_of(r, reports[i].run.pair.as_ref(), false))
        };
        let pair = ReplicatedPair {
            base: side(0)?,
            cand: side(1)?,
            higher_is_better,
            threshold: None,
            round_orders: round_orders(reports[0].run.pair.as_ref(), round),
            record: None,
        };
        match interval_at(&pair, &plan, round, ab) {
            Some(c) => {
                if let Some(v) = classify(&c, bad_ratio) {
                    return Ok(v);
                }
                if round >= max_rounds {
                    return Ok(classify_by_estimate(&c, bad_ratio));
                }
            }
            None if round >= max_rounds => {
                return Err(format!(
                    "{key}: no interval after {round} rounds (fewer than two processes a side with positive values)"
                ));
            }
            None => {}
        }
    }
}
