//! The testbed's noise record: what earlier pairs on the same machine say about each
//! benchmark's variance between processes, used as a second variance prior so that a pair
//! does not start from nothing, and what it implies before measuring (the smallest change a
//! benchmark can resolve, the rounds a threshold needs).
//!
//! # Method
//! Each earlier pair (a pull request's or `pitwall calibrate`'s A/A) gives, per benchmark, the
//! residual variance of its cross-over analysis ([`super::crossover`]) on its degrees of
//! freedom, divided by the variance of one round's difference per unit of one replicate's
//! variance (`1/m_base + 1/m_head`): an estimate `σ²ᵢ` of one process's variance between
//! processes on `dᵢ` degrees of freedom. The record pools them with exponential weights
//! (half-life [`RECORD_HALF_LIFE_PAIRS`] pairs, newest first): `σ²ᵣ = Σ wᵢdᵢσ²ᵢ / Σ wᵢdᵢ` on
//! `Σ wᵢdᵢ` degrees of freedom, the weighted pooled variance.
//!
//! In a comparison the record is an informative prior of the scaled inverse-χ² family, the
//! same conjugate update as the cross-benchmark prior of [`super::moderated`] (Smyth 2004):
//! the posterior variance is `(d̃·s̃² + dᵣ·σ²ᵣ·k) / (d̃ + dᵣ)` on `d̃ + dᵣ` degrees of
//! freedom, `s̃²` and `d̃` being the benchmark's variance after the cross-benchmark prior and
//! `k` the look's variance per unit of replicate variance. Its weight `dᵣ` is capped at
//! [`RECORD_DF_CAP`] × the comparison's own degrees of freedom, so the current data are never
//! outweighed by more than that; a machine that changed cannot hide behind its history.
//!
//! Before it is used the record is checked against the current data with the two-sided F test
//! of the current variance against `σ²ᵣ·k` (`F = s²/(σ²ᵣ·k)` on `(d, Σwᵢdᵢ)` degrees of
//! freedom, level [`RECORD_F_ALPHA`]; Snedecor & Cochran, *Statistical Methods*, 8th ed. §6.12).
//! A record that disagrees is ignored for that comparison, and the verdict's reason says so.
//!
//! The smallest detectable effect at a look is `(q + z₀.₈)·se`, with `q` the repeated
//! interval's quantile there and `se` the standard error the record predicts (Cohen 1988,
//! the usual power formula).

use statrs::distribution::{ContinuousCDF, FisherSnedecor, Normal};

pub use super::record::{NoiseRecord, RecordUse};

use super::crossover::{Look, look};
use super::replicate_summary::ReplicatedPair;
use super::sequential::SequentialPlan;
use super::welch::{t_quantile, t_sf};
use statrs::function::gamma::digamma;

/// Pairs after which an earlier pair counts half in the record.
pub const RECORD_HALF_LIFE_PAIRS: f64 = 10.0;

/// The record's degrees of freedom in a comparison are at most this × the comparison's own.
pub const RECORD_DF_CAP: f64 = 3.0;

/// Level of the two-sided F test that sets a disagreeing record aside.
pub const RECORD_F_ALPHA: f64 = 0.05;

/// Power at which the smallest detectable change is stated.
pub const DETECTION_POWER: f64 = 0.8;

/// One earlier pair's estimate of a benchmark's variance between processes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseObs {
    /// Variance of one replicate's log summary between processes.
    pub var: f64,
    pub dof: f64,
}

/// The estimate one pair gives after `rounds` rounds; `None` when it cannot give one (fewer
/// than two replicates a side, a variance of zero).
pub fn observe(pair: &ReplicatedPair, rounds: u32) -> Option<NoiseObs> {
    if !pair.replicable() {
        return None;
    }
    let l = look(pair, rounds)?;
    let var = l.pooled_var / l.per_replicate;
    (var.is_finite() && var > 0.0 && l.dof >= 1.0).then_some(NoiseObs { var, dof: l.dof })
}

/// The record of a benchmark from its earlier pairs' estimates, newest first; `None` without
/// any.
pub fn pool(newest_first: &[NoiseObs]) -> Option<NoiseRecord> {
    let mut num = 0.0;
    let mut den = 0.0;
    for (age, o) in newest_first.iter().enumerate() {
        let w = 0.5f64.powf(age as f64 / RECORD_HALF_LIFE_PAIRS);
        num += w * o.dof * o.var;
        den += w * o.dof;
    }
    (den > 0.0).then(|| NoiseRecord {
        var: num / den,
        dof: den,
        pairs: newest_first.len(),
    })
}

/// The comparison-wide check of the records against the current data. Per benchmark
/// `eᵢ = log(s²ᵢ / σ²ᵣᵢkᵢ) − (ψ(dᵢ/2) − log(dᵢ/2))`, the log variance ratio less its mean
/// under agreement (Smyth 2004, §6.2, as in [`super::moderated`]). Their mean is tested with a
/// one-sample t test over the benchmarks, its spread estimated from them (so heavy-tailed
/// benchmark noise does not pass for disagreement, as it would in a pooled F test), and as a
/// minimum-effect test (Murphy & Myors 1999): rejected only when the records are shown to be
/// off by more than [`JOINT_VARIANCE_MARGIN`] in variance. Without a margin, the many looks
/// of a sequential pair and the benchmarks that report one process twice (`time` and
/// `cpu_time`) rejected correct records at a third of the looks in the simulation.
/// `Some((ratio, p))` (ratio = `exp(mean e)`) when it rejects at [`RECORD_F_ALPHA`]; `None`
/// with fewer than [`MIN_BENCHMARKS_FOR_JOINT`] benchmarks. One benchmark's own test has a
/// few degrees of freedom at the first looks; together they see a record that is off for the
/// whole testbed (a record wrong by 2× in standard deviation is 4× in variance).
pub(super) fn joint_disagreement<'a>(
    looks: impl Iterator<Item = (&'a NoiseRecord, &'a Look)>,
) -> Option<(f64, f64)> {
    let e: Vec<f64> = looks
        .filter(|(_, l)| l.dof > 0.0)
        .map(|(rec, l)| {
            let half = l.dof / 2.0;
            (l.pooled_var / (rec.var * l.per_replicate)).ln() - (digamma(half) - half.ln())
        })
        .filter(|v| v.is_finite())
        .collect();
    if e.len() < MIN_BENCHMARKS_FOR_JOINT {
        return None;
    }
    let n = e.len() as f64;
    let mean = e.iter().sum::<f64>() / n;
    let var = e.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let beyond = mean.abs() - JOINT_VARIANCE_MARGIN.ln();
    let p = if beyond <= 0.0 {
        1.0
    } else if var > 0.0 {
        t_sf(beyond / (var / n).sqrt(), n - 1.0)
    } else {
        0.0
    };
    (p < RECORD_F_ALPHA).then_some((mean.exp(), p))
}

/// The comparison-wide check rejects records only when shown off by more than this factor in
/// variance (either way). In the simulation (`ab_sequential_sim --record 20 --record-scale
/// F`), 1.5 let a record 0.8× in standard deviation through and false positives rose to
/// 0.57%; 1.25 set it aside (0.44%) and still used every correct record (0.24%).
pub const JOINT_VARIANCE_MARGIN: f64 = 1.25;

/// Fewest benchmarks with a record for the comparison-wide check.
pub const MIN_BENCHMARKS_FOR_JOINT: usize = 3;

/// The variance and degrees of freedom of a look after the record (see the module docs), from
/// `(var, dof)` after the cross-benchmark prior; the record's use, when there is one. `joint`
/// is [`joint_disagreement`] of the comparison: when it rejected, no record is used.
pub(super) fn apply(
    record: Option<&NoiseRecord>,
    l: &Look,
    (var, dof): (f64, f64),
    joint: Option<(f64, f64)>,
) -> (f64, f64, Option<RecordUse>) {
    let Some(rec) = record else {
        return (var, dof, None);
    };
    if let Some((ratio, p)) = joint {
        return (var, dof, Some(RecordUse::IgnoredAll { ratio, p }));
    }
    let expected = rec.var * l.per_replicate;
    let ratio = l.pooled_var / expected;
    let p = f_two_sided(ratio, l.dof, rec.dof);
    if p.is_nan() || p < RECORD_F_ALPHA {
        return (var, dof, Some(RecordUse::Ignored { ratio, p }));
    }
    let d = rec.dof.min(RECORD_DF_CAP * l.dof);
    let used = Some(RecordUse::Used {
        dof: d,
        pairs: rec.pairs,
    });
    if dof.is_infinite() {
        // The cross-benchmark prior already holds one common variance exactly.
        return (var, dof, used);
    }
    ((dof * var + d * expected) / (dof + d), dof + d, used)
}

/// The two-sided p-value of a variance ratio on `(d1, d2)` degrees of freedom; 0 for a ratio
/// of 0 or one that is not finite.
fn f_two_sided(ratio: f64, d1: f64, d2: f64) -> f64 {
    if !(ratio.is_finite() && ratio > 0.0) {
        return 0.0;
    }
    match FisherSnedecor::new(d1, d2) {
        Ok(f) => (2.0 * f.cdf(ratio).min(f.sf(ratio))).min(1.0),
        Err(_) => 1.0,
    }
}

/// The smallest change (as a log ratio) a benchmark with this record detects with
/// [`DETECTION_POWER`] at the look after `round` of `plan`, measured with one process a side
/// per round; the look's degrees of freedom are its own (those of the cross-over analysis:
/// `round − 2` from four rounds, `round − 1` below) plus the record's, capped as in a
/// comparison.
pub fn detectable_log(record: &NoiseRecord, plan: &SequentialPlan, round: u32) -> f64 {
    let normal = Normal::new(0.0, 1.0).expect("unit normal");
    let n = f64::from(round.max(2));
    let own = if n >= 4.0 { n - 2.0 } else { n - 1.0 };
    let dof = own + record.dof.min(RECORD_DF_CAP * own);
    let se = (2.0 * record.var / n).sqrt();
    let boundaries = plan.boundaries();
    let c = plan.boundary_at(&boundaries, round.max(plan.first_look));
    let q = t_quantile(normal.cdf(c), dof);
    (q + normal.inverse_cdf(DETECTION_POWER)) * se
}

/// The fewest rounds of `plan` by which a benchmark with this record detects a change of
/// `threshold` (fraction) with [`DETECTION_POWER`], or settles that there is none; `None` when
/// `max_looks` rounds are not enough.
pub fn rounds_for(record: &NoiseRecord, plan: &SequentialPlan, threshold: f64) -> Option<u32> {
    let target = threshold.ln_1p();
    (plan.first_look..=plan.max_looks).find(|&r| detectable_log(record, plan, r) <= target)
}

#[cfg(test)]
mod tests;
