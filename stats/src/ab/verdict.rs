//! The A/B verdict: for each benchmark of a pull request, is the candidate a regression, an
//! improvement, unchanged, or is more data needed? This is the public face of the statistics
//! that the CLI and the reports print.
//!
//! RULES_PLACEHOLDER

use serde::Serialize;

use super::bh::benjamini_hochberg;
use super::bootstrap::{median_in_place, ratio_of_medians_ci};
use super::hodges_lehmann::hodges_lehmann;
use super::mwu::{Alternative, mann_whitney_u};
use super::welch::welch_t_test;

/// Outcome of one benchmark's comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly and relevantly worse.
    Regression,
    /// Significantly and relevantly better.
    Improvement,
    /// The ratio's interval lies inside the threshold band.
    Unchanged,
    /// Neither: too few samples, too much noise, or a change too small to call.
    Inconclusive,
}

impl Verdict {
    /// The snake_case name used in machine-readable output.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Unchanged => "unchanged",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Knobs of [`compare_all`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AbConfig {
    /// Smallest relative change that matters, as a fraction (0.02 = 2%).
    pub threshold: f64,
    /// False discovery rate across the benchmarks of one comparison.
    pub alpha: f64,
    /// Bootstrap resamples for the ratio's interval.
    pub bootstrap_resamples: usize,
    /// Seed of the bootstrap; the same seed gives the same intervals.
    pub seed: u64,
    /// Fewer samples than this on either side gives "inconclusive".
    pub min_samples: usize,
}

impl Default for AbConfig {
    fn default() -> Self {
        AbConfig {
            threshold: 0.02,
            alpha: 0.05,
            bootstrap_resamples: 2000,
            seed: 0x5EED_0F_A11_0F_AB,
            min_samples: 5,
        }
    }
}

/// One benchmark's samples on both sides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairInput<'a> {
    /// Baseline samples (e.g. the merge base).
    pub base: &'a [f64],
    /// Candidate samples (the pull request).
    pub cand: &'a [f64],
    /// True for throughputs, false for times.
    pub higher_is_better: bool,
    /// Per-benchmark override of [`AbConfig::threshold`].
    pub threshold: Option<f64>,
}

/// The verdict of one benchmark with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub verdict: Verdict,
    /// median(cand) / median(base).
    pub ratio: f64,
    /// Bootstrap interval of `ratio` at level 1 − alpha.
    pub ci: (f64, f64),
    /// Mann-Whitney two-sided p-value, raw (NaN when it could not be computed).
    pub p_value: f64,
    /// Benjamini–Hochberg adjusted `p_value` across the whole comparison.
    pub q_value: f64,
    /// Welch t-test two-sided p-value (NaN when it could not be computed).
    pub welch_p: f64,
    /// Hodges–Lehmann shift cand − base, in the samples' unit.
    pub hodges_lehmann: f64,
    pub base_median: f64,
    pub cand_median: f64,
    pub base_n: usize,
    pub cand_n: usize,
    /// Threshold applied (fraction).
    pub threshold: f64,
    /// For inconclusive verdicts: estimated samples per side that would settle it.
    pub more_samples: Option<usize>,
    /// One short human sentence.
    pub reason: String,
}

/// Compares every pair; one [`Comparison`] per pair in the same order, with the
/// Benjamini–Hochberg adjustment taken across all pairs whose test could run.
pub fn compare_all(pairs: &[PairInput<'_>], config: &AbConfig) -> Vec<Comparison> {
    let mut out: Vec<Comparison> = pairs.iter().map(|p| measure(p, config)).collect();
    let tested: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].p_value.is_finite())
        .collect();
    let p: Vec<f64> = tested.iter().map(|&i| out[i].p_value).collect();
    for (&i, q) in tested.iter().zip(benjamini_hochberg(&p)) {
        out[i].q_value = q;
    }
    for (c, pair) in out.iter_mut().zip(pairs) {
        decide(c, pair, config);
    }
    out
}

fn median_of(s: &[f64]) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    median_in_place(&mut s.to_vec())
}

/// Everything but the verdict (which needs the q-values of all pairs).
fn measure(pair: &PairInput<'_>, config: &AbConfig) -> Comparison {
    let (base, cand) = (pair.base, pair.cand);
    let finite = base.iter().chain(cand).all(|v| v.is_finite());
    let base_median = if finite { median_of(base) } else { f64::NAN };
    let cand_median = if finite { median_of(cand) } else { f64::NAN };
    let ratio = cand_median / base_median;
    let p_value = mann_whitney_u(cand, base, Alternative::TwoSided).map_or(f64::NAN, |r| r.p_value);
    let welch_p = welch_t_test(cand, base).map_or(f64::NAN, |r| r.p_value);
    let hl = hodges_lehmann(base, cand).unwrap_or(f64::NAN);
    let level = 1.0 - config.alpha;
    let ci = ratio_of_medians_ci(base, cand, config.bootstrap_resamples, level, config.seed)
        .map_or((f64::NAN, f64::NAN), |r| r.ci);
    Comparison {
        verdict: Verdict::Inconclusive,
        ratio,
        ci,
        p_value,
        q_value: f64::NAN,
        welch_p,
        hodges_lehmann: hl,
        base_median,
        cand_median,
        base_n: base.len(),
        cand_n: cand.len(),
        threshold: pair.threshold.unwrap_or(config.threshold),
        more_samples: None,
        reason: String::new(),
    }
}

fn decide(c: &mut Comparison, pair: &PairInput<'_>, config: &AbConfig) {
    let thr = c.threshold;
    let n_min = c.base_n.min(c.cand_n);
    if !pair.base.iter().chain(pair.cand).all(|v| v.is_finite()) {
        c.reason = "some samples are not finite (failed or timed-out runs); not compared".into();
        return;
    }
    if n_min < config.min_samples {
        c.more_samples = Some(config.min_samples);
        c.reason = format!(
            "too few samples ({} baseline, {} candidate); need at least {} per side",
            c.base_n, c.cand_n, config.min_samples
        );
        return;
    }
    if !(c.ratio.is_finite() && c.ci.0.is_finite() && c.ci.1.is_finite()) {
        c.reason = "baseline median is zero; no ratio to compare".into();
        return;
    }
    let change = c.ratio - 1.0;
    let pct = 100.0 * change;
    let worse = (change > 0.0) != pair.higher_is_better;
    let significant = c.q_value <= config.alpha;
    let relevant = change.abs() >= thr;
    if significant && relevant {
        c.verdict = if worse {
            Verdict::Regression
        } else {
            Verdict::Improvement
        };
        c.reason = format!(
            "median {} by {:.1}% (q = {}), beyond the {:.1}% threshold",
            if change > 0.0 { "up" } else { "down" },
            pct.abs(),
            fmt_q(c.q_value),
            100.0 * thr
        );
        return;
    }
    if c.ci.0 >= 1.0 - thr && c.ci.1 <= 1.0 + thr {
        c.verdict = Verdict::Unchanged;
        c.reason = format!(
            "ratio {:.3} with interval [{:.3}, {:.3}] inside ±{:.1}%",
            c.ratio,
            c.ci.0,
            c.ci.1,
            100.0 * thr
        );
        return;
    }
    c.more_samples = Some(samples_to_settle(c, thr));
    c.reason = if significant {
        format!(
            "significant (q = {}) but the {:.1}% change is within the {:.1}% threshold",
            fmt_q(c.q_value),
            pct.abs(),
            100.0 * thr
        )
    } else {
        format!(
            "{:+.1}% change not significant (q = {}) and interval [{:.3}, {:.3}] too wide",
            pct, fmt_q(c.q_value), c.ci.0, c.ci.1
        )
    };
}

/// Samples per side at which the interval would be narrow enough to decide, assuming its
/// half-width shrinks as 1/√n: to call "unchanged" the half-width must fall below the distance
/// from the ratio to the threshold band's edge; to call a change it must fall below the
/// distance to 1. That distance is floored at a quarter of the threshold so a ratio sitting
/// exactly on a boundary still gets a finite (large) answer.
fn samples_to_settle(c: &Comparison, thr: f64) -> usize {
    let n = c.base_n.max(c.cand_n) as f64;
    let half = (c.ci.1 - c.ci.0) / 2.0;
    let d = (c.ratio - 1.0).abs();
    let target = if d < thr { thr - d } else { d }.max(thr / 4.0);
    let need = n * (half / target).powi(2);
    (need.ceil() as usize).clamp(c.base_n.max(c.cand_n) + 1, 100_000)
}

/// A q-value with two significant digits.
fn fmt_q(q: f64) -> String {
    if q >= 0.001 {
        format!("{q:.3}")
    } else {
        format!("{q:.1e}")
    }
}
