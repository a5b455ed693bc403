//! The A/B verdict: for each benchmark of a pull request, is the candidate a regression, an
//! improvement, unchanged, or is more data needed? This is the public face of the statistics
//! that the CLI and the reports print.
//!
//! # Rules, in order
//! 1. **Inconclusive, not compared** when a sample is NaN or infinite (a failed or timed-out
//!    run must not read as a performance change), or when either side has fewer than
//!    `min_samples` values (default 5: below that a two-sided rank test cannot reach
//!    p < 0.016, so any call would be a guess); `more_samples` is then `min_samples`.
//! 2. **Screening of slow outliers.** On each side separately, values more than 5 robust
//!    standard deviations (5 × 1.4826 × MAD) beyond the median *on the slow side* (above for
//!    times, below for throughputs) are set aside; nothing is set aside when the MAD is zero.
//!    GPU and CPU timings have one-sided slow outliers (preemption, clock dips, page faults);
//!    fast outliers are physically implausible, so they are kept. MAD screening follows
//!    Hampel's identifier (Hampel 1974; Rousseeuw & Croux 1993, *JASA* 88, §1) with a wide
//!    cut so clean log-normal noise is practically never trimmed. Every statistic of the
//!    [`Comparison`] except `base_n`/`cand_n` is computed on the screened samples. This was
//!    the largest single gain in the evaluation below: on the same data it raised detection
//!    from 0.86 to 0.92 at an unchanged false-positive rate, because a single outlier in a
//!    sample of 5–20 shifts every rank of the test.
//! 3. **Regression / improvement** when all of
//!    - *significant*: the Mann-Whitney two-sided p-value, Benjamini–Hochberg adjusted across
//!      all pairs of the call, is ≤ `alpha` (FDR control across the pull request);
//!    - *beyond the threshold*: |median ratio − 1| ≥ threshold;
//!    - *interval agrees*: the bootstrap interval of the ratio (level 1 − alpha) excludes
//!      every change smaller than half the threshold, i.e. lies above 1 + thr/2 (or below
//!      1 − thr/2). This is a minimum-effect test in the sense of Murphy & Myors (1999,
//!      *Psychological Methods* 4): FDR control bounds the share of false calls among calls,
//!      not the per-benchmark false-positive rate, which grows with the number of true changes
//!      in the same pull request; demanding that the interval also rule out negligible changes
//!      brought the false-positive rate on unshifted benchmarks from 0.8% to 0.3% while
//!      detection stayed near 0.88. Half the threshold (rather than the full threshold) keeps
//!      a change sitting just past the threshold detectable.
//!
//!    The direction is read from the metric: for lower-is-better a ratio above 1 is a
//!    regression, for higher-is-better an improvement.
//! 4. **Unchanged** when the ratio's interval lies inside [1 − thr, 1 + thr].
//! 5. **Inconclusive** otherwise, with `more_samples` from the interval's half-width scaled as
//!    1/√n (see `samples_to_settle`).
//!
//! # Calibration
//! `cargo run --release -p pitwall-stats --example ab_eval` simulates 3 × 500 pull requests of
//! 40 Google-Benchmark-style benchmarks (5–20 repetitions, 1–3% noise, 5% slow outliers of
//! +10–60%, a third shifted by 3–10%) and `stats/eval/ab_reference.py` scores the reference
//! method (MWU + BH at 0.05 + 2% floor) on the same data. The constants below were chosen on
//! seeds 1–3 and checked on seeds 11–13; the numbers are in the crate's report.

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
    /// Two-sided error rate of the replicate verdicts over all looks of a sequential plan
    /// (the `replicated` module): the bound on the chance that an unchanged benchmark is ever
    /// called changed. 0.04 kept false positives under 0.5% of unchanged benchmarks in the
    /// synthetic evaluation (0.05: 0.54%) at a detection of 80% (docs/STATISTICS.md).
    pub replicate_alpha: f64,
    /// Whether a hopeless benchmark may be given up before the last round (the futility rule
    /// of `super::replicated`). Off where "no change" must not be concluded early: bisect's
    /// endpoints are measured up to `--max-rounds` before it says there is no regression.
    pub futility: bool,
}

impl Default for AbConfig {
    fn default() -> Self {
        AbConfig {
            threshold: 0.02,
            alpha: 0.05,
            bootstrap_resamples: 2000,
            seed: 0x0005_EED0_FA11_0FAB,
            min_samples: 5,
            replicate_alpha: 0.04,
            futility: true,
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
    /// What the verdict was computed from.
    pub method: Method,
    /// Independent replicates (benchmark processes) per side behind the verdict.
    pub base_replicates: usize,
    pub cand_replicates: usize,
    /// The round after which the verdict was reached (replicate method); `None` while
    /// undecided or for within-process verdicts.
    pub decided_at_round: Option<u32>,
    /// For inconclusive replicate verdicts: estimated rounds in all that would settle it.
    pub more_rounds: Option<u32>,
    /// The largest change, in percent, that `ci` still allows: no change beyond it is
    /// compatible with the data (`None` when the interval is not finite).
    pub resolution_pct: Option<f64>,
    /// What the testbed's noise record did for this verdict (replicate method with a record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_record: Option<super::record::RecordUse>,
}

/// What a [`Comparison`] was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Per-replicate summaries: each benchmark process is one observation, so noise between
    /// processes (code layout, heap placement, frequency) is part of the interval.
    Replicates,
    /// All samples pooled as if independent: each side is one process (or unknown), so noise
    /// between processes is not captured and the verdict can claim more certainty than the
    /// data give.
    WithinProcess,
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

/// Fraction of the threshold that a change's interval must rule out (see the module docs).
pub(super) const CI_MARGIN: f64 = 0.5;

/// Scale factor of the median absolute deviation of standard normal data (1/Φ⁻¹(¾)).
const MAD_TO_SIGMA: f64 = 1.482_602_218_505_602;

/// How many robust standard deviations on the slow side a sample may sit before it is set
/// aside as an outlier (see the module documentation).
const SLOW_OUTLIER_SIGMAS: f64 = 5.0;

/// The samples without one-sided slow outliers: values more than
/// [`SLOW_OUTLIER_SIGMAS`]·1.4826·MAD beyond the median on the slow side (above for times,
/// below for throughputs). Nothing is removed when the MAD is zero.
pub(super) fn screen(samples: &[f64], higher_is_better: bool) -> Vec<f64> {
    let mut buf = samples.to_vec();
    let m = median_in_place(&mut buf);
    for (b, s) in buf.iter_mut().zip(samples) {
        *b = (s - m).abs();
    }
    let mad = median_in_place(&mut buf);
    if mad.is_nan() || mad <= 0.0 {
        return samples.to_vec();
    }
    let limit = SLOW_OUTLIER_SIGMAS * MAD_TO_SIGMA * mad;
    samples
        .iter()
        .copied()
        .filter(|&v| {
            if higher_is_better {
                m - v <= limit
            } else {
                v - m <= limit
            }
        })
        .collect()
}

/// Everything but the verdict (which needs the q-values of all pairs).
pub(super) fn measure(pair: &PairInput<'_>, config: &AbConfig) -> Comparison {
    let finite = pair.base.iter().chain(pair.cand).all(|v| v.is_finite());
    let (base, cand) = if finite && !pair.base.is_empty() && !pair.cand.is_empty() {
        (
            screen(pair.base, pair.higher_is_better),
            screen(pair.cand, pair.higher_is_better),
        )
    } else {
        (pair.base.to_vec(), pair.cand.to_vec())
    };
    let (base, cand) = (base.as_slice(), cand.as_slice());
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
        base_n: pair.base.len(),
        cand_n: pair.cand.len(),
        threshold: pair.threshold.unwrap_or(config.threshold),
        more_samples: None,
        reason: String::new(),
        method: Method::WithinProcess,
        base_replicates: 1,
        cand_replicates: 1,
        decided_at_round: None,
        more_rounds: None,
        noise_record: None,
        resolution_pct: resolution_pct(ci),
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
    if pair.base.iter().chain(pair.cand).all(|v| *v == 0.0) {
        // A count that stays at zero (errors, retries…): no ratio exists, and none is needed.
        c.verdict = Verdict::Unchanged;
        c.reason = "every sample is zero on both sides".into();
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
    let beyond_threshold = change.abs() >= thr;
    let margin = CI_MARGIN * thr;
    let interval_agrees = if change > 0.0 {
        c.ci.0 > 1.0 + margin
    } else {
        c.ci.1 < 1.0 - margin
    };
    let set_aside = (pair.base.len() - screen(pair.base, pair.higher_is_better).len())
        + (pair.cand.len() - screen(pair.cand, pair.higher_is_better).len());
    let outliers = match set_aside {
        0 => String::new(),
        1 => "; 1 slow outlier set aside".to_string(),
        k => format!("; {k} slow outliers set aside"),
    };
    if significant && beyond_threshold && interval_agrees {
        c.verdict = if worse {
            Verdict::Regression
        } else {
            Verdict::Improvement
        };
        c.reason = format!(
            "median {} {:.1}% (q = {}), beyond the {:.1}% threshold{outliers}",
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
            "ratio {:.3} with interval [{:.3}, {:.3}] inside ±{:.1}%{outliers}",
            c.ratio,
            c.ci.0,
            c.ci.1,
            100.0 * thr
        );
        return;
    }
    c.more_samples = Some(samples_to_settle(c, thr));
    c.reason = if significant && beyond_threshold {
        format!(
            "median {pct:+.1}% (q = {}) but interval [{:.3}, {:.3}] does not rule out a change under {:.1}%{outliers}",
            fmt_q(c.q_value),
            c.ci.0,
            c.ci.1,
            100.0 * margin
        )
    } else if significant {
        format!(
            "significant (q = {}) but the {:.1}% change is within the {:.1}% threshold{outliers}",
            fmt_q(c.q_value),
            pct.abs(),
            100.0 * thr
        )
    } else {
        format!(
            "{pct:+.1}% not significant (q = {}) and interval [{:.3}, {:.3}] wider than ±{:.1}%{outliers}",
            fmt_q(c.q_value),
            c.ci.0,
            c.ci.1,
            100.0 * thr
        )
    };
}

/// Samples per side at which the interval would be narrow enough to decide, assuming its
/// half-width shrinks as 1/√n: to call "unchanged" the half-width must fall below the distance
/// from the ratio to the threshold band's edge; to call a change it must fall below the
/// distance to 1 ± thr/2 (the interval rule of the module docs). That distance is floored at a quarter of the threshold so a ratio sitting
/// exactly on a boundary still gets a finite (large) answer.
fn samples_to_settle(c: &Comparison, thr: f64) -> usize {
    let n = c.base_n.max(c.cand_n) as f64;
    let half = (c.ci.1 - c.ci.0) / 2.0;
    let d = (c.ratio - 1.0).abs();
    let target = if d < thr {
        thr - d
    } else {
        d - CI_MARGIN * thr
    }
    .max(thr / 4.0);
    let need = n * (half / target).powi(2);
    (need.ceil() as usize).clamp(c.base_n.max(c.cand_n) + 1, 100_000)
}

/// A q-value with two significant digits.
pub(super) fn fmt_q(q: f64) -> String {
    if q >= 0.001 {
        format!("{q:.3}")
    } else {
        format!("{q:.1e}")
    }
}

/// The largest change, in percent, that an interval of the ratio still allows: no change
/// beyond it is compatible with the data. `None` for an interval that is not finite.
pub fn resolution_pct(ci: (f64, f64)) -> Option<f64> {
    let r = 100.0 * (ci.0 - 1.0).abs().max((ci.1 - 1.0).abs());
    r.is_finite().then_some(r)
}

#[cfg(test)]
mod tests;
