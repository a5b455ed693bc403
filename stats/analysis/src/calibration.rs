//! What `pitwall calibrate` reports: per benchmark, the noise between processes its A/A pair
//! measured, the smallest change the testbed's noise record lets it resolve at the first look
//! and at the last round, and how many false calls the calibration pairs on this testbed have
//! made so far. Values only; `pitwall_reports::calibration` renders them.

use pitwall_stats::ab::SequentialPlan;
use pitwall_stats::ab::noise::observe;
use serde::Serialize;

use crate::compare::{Side, paired_inputs};
use crate::comparison::ComparisonReport;
use crate::noise::{NoiseBook, detectable};
use pitwall_stats::ab::Verdict;

/// One benchmark's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchmarkNoise {
    /// `suite/name[params]/measure`.
    pub key: String,
    /// The coefficient of variation between processes this pair measured, in percent (the
    /// standard deviation of one process's log summary); `None` when it could not be.
    pub between_cv_pct: Option<f64>,
    /// Pairs in the testbed's record of this benchmark, this one included.
    pub record_pairs: usize,
    /// The smallest change resolved with 80% power at the first look, in percent.
    pub detectable_first_pct: Option<f64>,
    /// The same at `max_rounds`.
    pub detectable_last_pct: Option<f64>,
}

/// The false calls of the calibration pairs on one testbed: each A/A pair compared as a pull
/// request's would be, with the record of the pairs before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct FalseCalls {
    pub pairs: usize,
    /// Regressions and improvements called.
    pub calls: usize,
    /// Benchmarks compared.
    pub benchmarks: usize,
}

impl FalseCalls {
    /// Adds one calibration pair's comparison.
    pub fn add(&mut self, report: &ComparisonReport) {
        self.pairs += 1;
        self.benchmarks += report.benchmarks.len();
        self.calls += report
            .benchmarks
            .iter()
            .filter(|b| {
                matches!(
                    b.comparison.verdict,
                    Verdict::Regression | Verdict::Improvement
                )
            })
            .count();
    }

    /// The share of benchmark comparisons called, in percent; `None` without any.
    pub fn rate_pct(&self) -> Option<f64> {
        (self.benchmarks > 0).then(|| 100.0 * self.calls as f64 / self.benchmarks as f64)
    }
}

/// The whole report of one calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    pub testbed: String,
    pub commit: String,
    pub pair_id: String,
    pub rounds: u32,
    pub first_look: u32,
    pub max_rounds: u32,
    pub benchmarks: Vec<BenchmarkNoise>,
    pub false_calls: FalseCalls,
}

/// The benchmark lines of the A/A pair `(base, head)`, against the testbed's `book` (which
/// holds this pair) and the plan of `--until-decided`.
pub fn benchmark_noise(
    (base, head): (&Side, &Side),
    book: &NoiseBook,
    plan: &SequentialPlan,
) -> Vec<BenchmarkNoise> {
    paired_inputs(base, head)
        .into_iter()
        .map(|(key, pair, rounds)| {
            let record = book.get(&key);
            BenchmarkNoise {
                between_cv_pct: observe(&pair, rounds).map(|o| 100.0 * o.var.sqrt()),
                record_pairs: record.map_or(0, |r| r.pairs),
                detectable_first_pct: record.map(|r| 100.0 * detectable(r, plan, plan.first_look)),
                detectable_last_pct: record.map(|r| 100.0 * detectable(r, plan, plan.max_looks)),
                key,
            }
        })
        .collect()
}
