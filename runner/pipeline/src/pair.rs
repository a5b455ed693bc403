//! `pitwall run --base A --head B`: both commits measured in interleaved rounds on this host,
//! either a fixed number of rounds or, with `--until-decided`, round after round until every
//! benchmark is decided, given up as hopeless, or the budget is spent. Each round is one more
//! replicate (process) per side; the comparison after each round uses a sequential plan so
//! that looking after every round does not inflate the error rate (docs/STATISTICS.md).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use pitwall_analysis::NoiseBook;
use pitwall_analysis::comparison::ComparisonReport;
use pitwall_schema::Backend;
use pitwall_stats::ab::{AbConfig, Method, SequentialPlan, Verdict};

use crate::compare::{CompareOptions, compare};
use crate::request::{RunReport, RunRequest, Target};
use crate::rounds::Rounds;
use crate::run::{RunError, check_suites};
use crate::setup::RunEnvironment;
use crate::source::Side;
pub use pitwall_engine::LookProgress;
use pitwall_engine::config::Config;
use pitwall_engine::{BudgetNote, RunObserver, Step};

pub use pitwall_engine::defaults::{MAX_ROUNDS as DEFAULT_MAX_ROUNDS, ROUNDS as DEFAULT_ROUNDS};

/// How many rounds a pair is asked for: a fixed number, or with `--until-decided` a first batch
/// and then one round at a time under a [`SequentialPlan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairRounds {
    /// All rounds, or the first batch with `until_decided`.
    pub rounds: u32,
    pub until_decided: Option<UntilDecided>,
}

impl PairRounds {
    /// The plan the pair is looked at with when measured until decided.
    pub fn sequential_plan(&self, alpha: f64) -> Option<SequentialPlan> {
        self.until_decided.map(|u| u.plan(self.rounds, alpha))
    }
}

impl Default for PairRounds {
    fn default() -> Self {
        PairRounds {
            rounds: DEFAULT_ROUNDS,
            until_decided: None,
        }
    }
}

/// The budget of `--until-decided` (and of every bisection measurement).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UntilDecided {
    pub max_rounds: u32,
    /// Wall-clock budget for the whole pair; a round that would likely end past it is not
    /// started.
    pub max_time: Option<Duration>,
}

impl UntilDecided {
    /// The sequential plan of this budget after a first batch of `first_batch` rounds, at the
    /// two-sided error rate `alpha`: looks from the first batch (at least one round) up to
    /// `max_rounds` (at least the first batch). Both a pair and a bisection probe make their
    /// plan here, and a pair's runs record exactly this plan
    /// (`pitwall_analysis::sequential::record`), so measuring and comparing agree.
    pub fn plan(&self, first_batch: u32, alpha: f64) -> SequentialPlan {
        SequentialPlan::until_decided(first_batch, self.max_rounds, alpha)
    }
}

impl Default for UntilDecided {
    fn default() -> Self {
        UntilDecided {
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_time: None,
        }
    }
}

/// Why measuring stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairStop {
    /// The fixed number of rounds was measured.
    Fixed,
    /// Every benchmark was decided or given up.
    AllDecided,
    MaxRounds,
    MaxTime,
}

/// A measured pair: the two runs (base, head), the rounds, why it stopped, and the comparison
/// as of the last round.
#[derive(Debug, Clone)]
pub struct PairOutcome {
    pub base: RunReport,
    pub head: RunReport,
    pub rounds: u32,
    pub stop: PairStop,
    pub comparison: ComparisonReport,
}

/// The two sides of a measured pair, as `compare --pair` reads them.
pub fn sides(base: &RunReport, head: &RunReport) -> (Side, Side) {
    let side = |r: &RunReport, role: &str| Side {
        label: format!(
            "{role} {} (run {})",
            &r.run.commit[..r.run.commit.len().min(12)],
            r.run.id
        ),
        results: r.run.results.clone(),
        run: Some(r.run.clone()),
    };
    (side(base, "base"), side(head, "head"))
}

/// Benchmarks that another round could still decide.
fn undecided(report: &ComparisonReport) -> BTreeSet<String> {
    report
        .benchmarks
        .iter()
        .filter(|b| {
            let c = &b.comparison;
            c.verdict == Verdict::Inconclusive
                && (c.more_rounds.is_some()
                    || (c.method == Method::WithinProcess
                        && c.base_replicates.min(c.cand_replicates) < 2))
        })
        .map(|b| b.key())
        .collect()
}

/// What the testbed's noise record says of the selected benchmarks under `plan`.
fn budget_note(
    config: &Config,
    request: &RunRequest,
    noise: &NoiseBook,
    plan: &SequentialPlan,
) -> BudgetNote {
    let wanted = |key: &str| {
        let mut parts = key.splitn(2, '/');
        let suite = parts.next().unwrap_or_default();
        let rest = parts.next().unwrap_or_default();
        (request.suites.is_empty() || request.suites.iter().any(|s| s == suite))
            && request
                .filter
                .as_ref()
                .is_none_or(|f| rest.contains(f.as_str()))
    };
    let b = pitwall_analysis::noise::budget(
        noise,
        &wanted,
        &|suite| crate::compare::threshold_rule(config, None, suite),
        plan,
    );
    BudgetNote {
        max_rounds: plan.max_looks,
        record_pairs: noise.pairs,
        benchmarks: b.benchmarks,
        resolvable: b.resolvable,
        rounds: b.rounds,
        threshold_pct: b.threshold_pct,
    }
}

/// Measures `base` and `head` for the rounds `asked`; the comparison uses `ab`, the testbed's
/// noise book and the configured thresholds. The observer is told each round and, until decided, each look.
#[allow(clippy::too_many_arguments)]
pub fn measure_pair(
    config: &Config,
    request: &RunRequest,
    backend: &dyn Backend,
    base: &Target,
    head: &Target,
    asked: &PairRounds,
    (ab, noise): (&AbConfig, &NoiseBook),
    env: &RunEnvironment,
    observer: &dyn RunObserver,
) -> Result<PairOutcome, RunError> {
    check_suites(config, request)?;
    let targets = [base.clone(), head.clone()];
    let first = asked.rounds.max(1);
    let sequential = asked.sequential_plan(ab.replicate_alpha);
    let started = Instant::now();
    let planned = sequential.map_or(first, |s| s.max_looks);
    if let Some(seq) = &sequential {
        observer.step(&Step::Budget(budget_note(config, request, noise, seq)));
    }
    let mut acc = Rounds::new(2).announced(planned, &["base", "head"]);
    let mut only: Option<BTreeSet<String>> = None;
    let stop = loop {
        let t0 = Instant::now();
        acc.round(
            config,
            request,
            only.as_ref(),
            backend,
            &targets,
            env,
            observer,
        );
        // Terminating: no more rounds or looks; the use case returns the cancellation.
        if crate::cancel::requested() {
            break PairStop::Fixed;
        }
        let last_round = t0.elapsed();
        let round = acc.count();
        let (Some(u), Some(seq)) = (asked.until_decided, sequential) else {
            if round >= first {
                break PairStop::Fixed;
            }
            continue;
        };
        if round < first {
            continue;
        }
        let reports = acc.reports(config, &targets, env, Some(&seq));
        let (b, h) = sides(&reports[0], &reports[1]);
        let report = compare(&b, &h, config, None, ab, CompareOptions::default(), noise);
        let open = undecided(&report);
        let given_up = report
            .benchmarks
            .iter()
            .filter(|b| b.comparison.verdict == Verdict::Inconclusive && !open.contains(&b.key()))
            .count();
        let time_left = u.max_time.map(|m| m.saturating_sub(started.elapsed()));
        observer.step(&Step::Look(LookProgress {
            round,
            max_rounds: seq.max_looks,
            decided: report.benchmarks.len() - open.len() - given_up,
            given_up,
            undecided: open.len(),
            time_left,
        }));
        if open.is_empty() {
            break PairStop::AllDecided;
        }
        if round >= seq.max_looks {
            break PairStop::MaxRounds;
        }
        if time_left.is_some_and(|left| left < last_round) {
            break PairStop::MaxTime;
        }
        only = Some(open);
    };
    let mut reports = acc.reports(config, &targets, env, sequential.as_ref());
    let head_report = reports.pop().expect("two targets");
    let base_report = reports.pop().expect("two targets");
    let (b, h) = sides(&base_report, &head_report);
    let comparison = compare(&b, &h, config, None, ab, CompareOptions::default(), noise);
    Ok(PairOutcome {
        rounds: acc.count(),
        base: base_report,
        head: head_report,
        stop,
        comparison,
    })
}
