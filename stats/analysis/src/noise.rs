//! The testbed's noise book: one [`NoiseRecord`] per benchmark, pooled from the earlier pairs
//! measured on one testbed (`pitwall_stats::ab::noise` says how), and what a comparison takes
//! from it: a second variance prior, and `threshold_pct = "auto"`, the threshold a benchmark
//! can resolve within its round budget. The pipeline reads the pairs from the store;
//! `crate::compare` pairs their sides into the book (`NoiseBook::from_pairs`); this module
//! only computes.

use std::collections::BTreeMap;

use pitwall_stats::ab::NoiseObs;
use pitwall_stats::ab::noise::{detectable_log, pool};
use pitwall_stats::ab::replicated::REPLICATE_MARGIN;
use pitwall_stats::ab::{NoiseRecord, SequentialPlan};

/// What one earlier pair says of each benchmark's noise, by key.
pub type PairNoise = Vec<(String, NoiseObs)>;

/// A benchmark's threshold as configured: a fixed percentage, or `"auto"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThresholdRule {
    /// This many percent.
    Fixed(f64),
    /// The larger of `floor_pct` and the smallest threshold at which a change of that size is
    /// called with 80% power by `max_rounds` rounds, from the benchmark's noise record.
    Auto { floor_pct: f64, max_rounds: u32 },
}

/// The threshold a rule gives a benchmark, in percent, and the configured one when noise
/// raised it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResolvedThreshold {
    pub pct: f64,
    pub raised_from_pct: Option<f64>,
}

/// Noise records per benchmark key (`suite/name[params]/measure`) of one testbed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoiseBook {
    records: BTreeMap<String, NoiseRecord>,
    /// Earlier pairs read.
    pub pairs: usize,
}

impl NoiseBook {
    /// No record: every comparison starts from nothing.
    pub fn empty() -> NoiseBook {
        NoiseBook::default()
    }

    /// The book of earlier pairs' estimates (`crate::compare::pair_noise`), newest first: every
    /// benchmark's estimates pooled (`pitwall_stats::ab::noise::pool`). From the pairs' sides:
    /// `NoiseBook::from_pairs`, in `crate::compare`.
    pub fn from_observations(newest_first: &[PairNoise]) -> NoiseBook {
        let mut obs: BTreeMap<&str, Vec<NoiseObs>> = BTreeMap::new();
        for pair in newest_first {
            for (key, o) in pair {
                obs.entry(key).or_default().push(*o);
            }
        }
        NoiseBook {
            records: obs
                .into_iter()
                .filter_map(|(k, o)| pool(&o).map(|r| (k.to_string(), r)))
                .collect(),
            pairs: newest_first.len(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&NoiseRecord> {
        self.records.get(key)
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Every benchmark's record, by key.
    pub fn records(&self) -> impl Iterator<Item = (&String, &NoiseRecord)> {
        self.records.iter()
    }
}

/// The plan `threshold_pct = "auto"` and the budget are stated against: looks after every
/// round from `first_look` to `max_rounds` at the comparison's error rate.
pub fn budget_plan(first_look: u32, max_rounds: u32, alpha: f64) -> SequentialPlan {
    SequentialPlan::until_decided(first_look.max(2), max_rounds.max(first_look.max(2)), alpha)
}

/// The smallest change, as a fraction, that a benchmark with `record` resolves at the look
/// after `round` of `plan` with 80% power.
pub fn detectable(record: &NoiseRecord, plan: &SequentialPlan, round: u32) -> f64 {
    detectable_log(record, plan, round).exp() - 1.0
}

/// The threshold `rule` gives a benchmark with `record` (first look `first_look`, error rate
/// `alpha`). Without a record `"auto"` is its floor.
pub fn resolve(
    rule: ThresholdRule,
    record: Option<&NoiseRecord>,
    first_look: u32,
    alpha: f64,
) -> ResolvedThreshold {
    match (rule, record) {
        (ThresholdRule::Fixed(pct), _) | (ThresholdRule::Auto { floor_pct: pct, .. }, None) => {
            ResolvedThreshold {
                pct,
                raised_from_pct: None,
            }
        }
        (
            ThresholdRule::Auto {
                floor_pct,
                max_rounds,
            },
            Some(rec),
        ) => {
            let plan = budget_plan(first_look, max_rounds, alpha);
            // A change of size thr is called with 80% power when thr − margin·thr ≥ the
            // detectable change (the call must exclude the margin).
            let need = 100.0 * detectable(rec, &plan, plan.max_looks) / (1.0 - REPLICATE_MARGIN);
            if need > floor_pct {
                ResolvedThreshold {
                    pct: need,
                    raised_from_pct: Some(floor_pct),
                }
            } else {
                ResolvedThreshold {
                    pct: floor_pct,
                    raised_from_pct: None,
                }
            }
        }
    }
}

/// What the record says of a pair about to be measured until decided: of the benchmarks it
/// knows that `wanted` keeps (by key), how many resolve the threshold their suite's `rule`
/// gives within the plan's last round, and by which round all of those do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub benchmarks: usize,
    pub resolvable: usize,
    pub rounds: Option<u32>,
    pub threshold_pct: (f64, f64),
}

/// [`Budget`] of the book's records under `plan`; a key's suite is its text before the first
/// `/`.
pub fn budget(
    book: &NoiseBook,
    wanted: &dyn Fn(&str) -> bool,
    rule: &dyn Fn(&str) -> ThresholdRule,
    plan: &SequentialPlan,
) -> Budget {
    let mut out = Budget {
        benchmarks: 0,
        resolvable: 0,
        rounds: None,
        threshold_pct: (f64::INFINITY, 0.0),
    };
    for (key, rec) in book.records().filter(|(k, _)| wanted(k)) {
        let suite = key.split('/').next().unwrap_or_default();
        let thr = resolve(rule(suite), Some(rec), plan.first_look, plan.alpha).pct;
        out.benchmarks += 1;
        out.threshold_pct = (out.threshold_pct.0.min(thr), out.threshold_pct.1.max(thr));
        if let Some(r) = pitwall_stats::ab::noise::rounds_for(rec, plan, thr / 100.0) {
            out.resolvable += 1;
            out.rounds = Some(out.rounds.map_or(r, |x: u32| x.max(r)));
        }
    }
    if out.benchmarks == 0 {
        out.threshold_pct = (0.0, 0.0);
    }
    out
}

#[cfg(test)]
mod tests;
