//! What a replicate contributes to a verdict: one benchmark process's samples reduced to one
//! number (the mean of their logarithms, slow outliers set aside), and the two-sample numbers
//! of a look built from those summaries. The rules that turn them into verdicts are in
//! the `replicated` module.

use super::verdict::screen;

/// Slow outliers within one replicate: robust standard deviations beyond its median.
const WITHIN_REPLICATE_SIGMAS: f64 = 3.0;

/// Replicates per side from which whole slow replicates may be set aside.
const MIN_REPLICATES_TO_SCREEN: usize = 5;

/// Scale factor of the MAD of standard normal data.
const MAD_TO_SIGMA: f64 = 1.482_602_218_505_602;

/// One benchmark process's samples and the round it was measured in (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Replicate {
    pub round: u32,
    pub samples: Vec<f64>,
}

/// Which side ran first in a round of an interleaved pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundOrder {
    BaseHead,
    HeadBase,
}

/// One benchmark's replicates on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicatedPair {
    pub base: Vec<Replicate>,
    pub cand: Vec<Replicate>,
    pub higher_is_better: bool,
    /// Per-benchmark override of [`super::AbConfig::threshold`].
    pub threshold: Option<f64>,
    /// The order of each round (index `round − 1`); rounds not listed ran base first (pairs
    /// measured before the order alternated).
    pub round_orders: Vec<RoundOrder>,
    /// The testbed's noise record of this benchmark, when there is one (`super::noise`).
    pub record: Option<super::record::NoiseRecord>,
}

impl ReplicatedPair {
    /// The order of round `round` (1-based).
    pub fn order(&self, round: u32) -> RoundOrder {
        round
            .checked_sub(1)
            .and_then(|i| self.round_orders.get(i as usize))
            .copied()
            .unwrap_or(RoundOrder::BaseHead)
    }

    pub(super) fn all_samples(reps: &[Replicate], up_to: u32) -> Vec<f64> {
        reps.iter()
            .filter(|r| r.round <= up_to)
            .flat_map(|r| r.samples.iter().copied())
            .collect()
    }

    /// Whether the replicate method applies: two replicates a side with samples, every
    /// sample finite and positive (logarithms).
    pub(super) fn replicable(&self) -> bool {
        let ok = |reps: &[Replicate]| {
            reps.iter().filter(|r| !r.samples.is_empty()).count() >= 2
                && reps
                    .iter()
                    .flat_map(|r| &r.samples)
                    .all(|v| v.is_finite() && *v > 0.0)
        };
        ok(&self.base) && ok(&self.cand)
    }
}

/// The log summary of one replicate (see the module docs).
pub(super) fn summary(samples: &[f64], higher_is_better: bool) -> f64 {
    summary_and_within(samples, higher_is_better).0
}

/// The log summary of one replicate and the within-process variance of that summary (the
/// variance of the kept logarithms over their count; NaN with fewer than two kept).
fn summary_and_within(samples: &[f64], higher_is_better: bool) -> (f64, f64) {
    let logs: Vec<f64> = samples.iter().map(|v| v.ln()).collect();
    let kept: Vec<f64> = if logs.len() < 3 {
        logs
    } else {
        let m = crate::median(&logs).unwrap_or(f64::NAN);
        let mad = crate::mad(&logs).unwrap_or(0.0) * MAD_TO_SIGMA;
        let limit = WITHIN_REPLICATE_SIGMAS * mad;
        logs.iter()
            .copied()
            .filter(|&l| {
                mad <= 0.0
                    || if higher_is_better {
                        m - l <= limit
                    } else {
                        l - m <= limit
                    }
            })
            .collect()
    };
    let n = kept.len() as f64;
    let mean = kept.iter().sum::<f64>() / n;
    let within = if kept.len() >= 2 {
        kept.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) / n
    } else {
        f64::NAN
    };
    (mean, within)
}

/// The mean within-process variance of the replicate summaries up to a round: how noisy the
/// benchmark is inside one process, a covariate of its noise between processes (see
/// [`super::trend`]). `None` when no replicate has two samples.
pub(super) fn within_variance(pair: &ReplicatedPair, up_to: u32) -> Option<f64> {
    let v: Vec<f64> = pair
        .base
        .iter()
        .chain(&pair.cand)
        .filter(|r| r.round <= up_to && r.samples.len() >= 2)
        .map(|r| summary_and_within(&r.samples, pair.higher_is_better).1)
        .filter(|w| w.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per-side summaries up to a round, screened when there are enough of them.
pub(super) fn summaries(reps: &[Replicate], up_to: u32, higher_is_better: bool) -> Vec<f64> {
    summaries_by_round(reps, up_to, higher_is_better)
        .into_iter()
        .map(|(_, v)| v)
        .collect()
}

/// [`summaries`] with the round of each, in the replicates' order.
pub(super) fn summaries_by_round(
    reps: &[Replicate],
    up_to: u32,
    higher_is_better: bool,
) -> Vec<(u32, f64)> {
    let kept: Vec<&Replicate> = reps
        .iter()
        .filter(|r| r.round <= up_to && !r.samples.is_empty())
        .collect();
    let s: Vec<(u32, f64)> = kept
        .iter()
        .map(|r| (r.round, summary(&r.samples, higher_is_better)))
        .collect();
    // Only single-sample replicates (a wall-time suite: one execution, one sample) carry their
    // slow outliers into the summaries; the offsets of multi-sample processes are the very
    // noise between processes the interval must keep.
    let single = kept.iter().all(|r| r.samples.len() == 1);
    if single && s.len() >= MIN_REPLICATES_TO_SCREEN {
        // `screen` works on the slow side of raw values; logs keep the order.
        let keep = screen(&s.iter().map(|x| x.1).collect::<Vec<_>>(), higher_is_better);
        s.into_iter().filter(|x| keep.contains(&x.1)).collect()
    } else {
        s
    }
}

pub(super) fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, v)
}
