//! The endpoints of a bisection: measured as a pair until every benchmark is decided (never
//! given up: "no regression" is concluded only after `--max-rounds`), the regression the
//! search follows, and the observer that calls the pair's sides good and bad.

use pitwall_analysis::comparison::ComparisonReport;
use pitwall_engine::{RunObserver, Step};
use pitwall_stats::ab::AbConfig;

use super::request::{BisectError, BisectRequest, Measure};
use crate::pair::{PairRounds, PairStop, measure_pair};
use crate::request::{RunRequest, Target};

/// The observer of the endpoints' pair, which calls its sides base and head: here they are
/// good and bad.
pub(super) struct Endpoints<'a>(pub(super) &'a dyn RunObserver);

impl RunObserver for Endpoints<'_> {
    fn suite_started(&self, suite: &str, benchmarks: usize) {
        self.0.suite_started(suite, benchmarks);
    }
    fn benchmark_started(&self, suite: &str, benchmark: &str) {
        self.0.benchmark_started(suite, benchmark);
    }
    fn benchmark_finished(&self, suite: &str, benchmark: &str, error: Option<&str>) {
        self.0.benchmark_finished(suite, benchmark, error);
    }
    fn suite_skipped(&self, suite: &str, reason: &str) {
        self.0.suite_skipped(suite, reason);
    }
    fn warning(&self, suite: &str, line: &str) {
        self.0.warning(suite, line);
    }
    fn suite_finished(&self, suite: &str) {
        self.0.suite_finished(suite);
    }
    fn worker_started(&self, suite: &str, pid: u32) {
        self.0.worker_started(suite, pid);
    }
    fn step(&self, step: &Step<'_>) {
        match step {
            Step::Round {
                round,
                rounds,
                side: Some(side),
                target,
            } => self.0.step(&Step::Round {
                round: *round,
                rounds: *rounds,
                side: Some(match *side {
                    "base" => "good",
                    "head" => "bad",
                    other => other,
                }),
                target,
            }),
            // Bisection reads no noise record: a budget from none would only say "none yet".
            Step::Budget(_) => {}
            other => self.0.step(other),
        }
    }
}

/// What stopped the endpoints' measurement without a regression, as the hint of
/// [`BisectError::NoRegression`].
fn no_regression_hint(endpoints: &ComparisonReport, stop: PairStop, rounds: u32) -> String {
    let open = endpoints.counts().inconclusive;
    match stop {
        PairStop::MaxRounds | PairStop::MaxTime | PairStop::Fixed if open > 0 => format!(
            "{open} benchmark(s) still not resolved after {rounds} rounds (--max-rounds); raise --max-rounds, or narrow the search with --bench"
        ),
        _ => format!(
            "every benchmark was decided within {rounds} rounds and none got slower; pick other endpoints"
        ),
    }
}

/// The endpoints: is there a regression, which benchmark, and how big? Measured until every
/// benchmark is decided or the rounds run out, like `run --until-decided` but without giving
/// up on any: "no regression" is concluded only after `--max-rounds`. With why the
/// measurement stopped and after how many rounds.
pub(super) fn measure_endpoints(
    m: &Measure<'_>,
    request: &BisectRequest,
    good_target: &Target,
    bad_target: &Target,
    ab: &AbConfig,
) -> Result<(ComparisonReport, PairStop, u32), BisectError> {
    let asked = PairRounds {
        rounds: request.rounds,
        until_decided: Some(request.until_decided()),
    };
    let endpoints = measure_pair(
        m.config,
        &request.select,
        m.backend,
        good_target,
        bad_target,
        &asked,
        (
            &AbConfig {
                futility: false,
                ..*ab
            },
            // Bisection reads no store: its endpoints are compared without a noise record.
            &pitwall_analysis::NoiseBook::empty(),
        ),
        m.env,
        &Endpoints(m.observer),
    )?;
    for (what, report) in [("good", &endpoints.base), ("bad", &endpoints.head)] {
        if report.run.results.is_empty() {
            return Err(BisectError::NothingMeasured {
                what: what.to_string(),
            });
        }
    }
    Ok((endpoints.comparison, endpoints.stop, endpoints.rounds))
}

/// The regression the endpoints show, which the search follows.
pub(super) struct Regression {
    /// The benchmark (`suite/name[params]/measure`).
    pub key: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Median ratio bad / good and its interval.
    pub ratio: f64,
    pub ci: (f64, f64),
    /// Only that benchmark is measured from here on.
    pub focus: RunRequest,
}

/// The worst regression between the endpoints, or an error when there is none.
pub(super) fn worst_regression(
    endpoints: ComparisonReport,
    stop: PairStop,
    rounds: u32,
    request: &BisectRequest,
) -> Result<Regression, BisectError> {
    let Some(worst) = endpoints.worst_regression() else {
        return Err(BisectError::NoRegression {
            selection: request
                .select
                .filter
                .as_ref()
                .map(|f| format!(" for --bench {f}"))
                .unwrap_or_default(),
            summary: endpoints.summary_line(),
            hint: no_regression_hint(&endpoints, stop, rounds),
            endpoints: Box::new(endpoints),
        });
    };
    Ok(Regression {
        key: worst.key(),
        unit: worst.unit.clone(),
        higher_is_better: worst.higher_is_better,
        ratio: worst.comparison.ratio,
        ci: worst.comparison.ci,
        focus: RunRequest {
            suites: vec![worst.suite.clone()],
            filter: Some(pitwall_schema::schema::display_name(
                &worst.name,
                &worst.params,
            )),
        },
    })
}
