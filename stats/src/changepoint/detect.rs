//! `detect`: change points of a benchmark history, by windowed E-divisive candidates and a
//! robust merge step, with the knobs a user can set and their defaults.
//!
//! The scheme is Hunter/Otava's (Fleming et al., "Hunter: Using Change Point Detection to Hunt
//! for Performance Regressions", ICPE 2023, §4): split fixed windows recursively at the
//! E-divisive maximum (Matteson & James, JASA 2014), keep "weak" change points that pass a
//! relaxed test, then repeatedly drop the weakest change point and re-test its neighbours until
//! all pass the strict test. pitwall changes what the users of those tools complain about:
//! - the test is a winsorised level-step test with a local trend (`steptest`), so throttling
//!   spikes, two clock states and slow drifts do not raise alarms;
//! - every test looks at no more than `test_window` points on each side, and windows are
//!   anchored at index 0, so appending data does not move change points far from the end;
//! - segments shorter than `min_segment` are never produced, and candidates closer than that
//!   are merged (the stronger one survives);
//! - a change must also be large: at least `min_effect` robust standard deviations and
//!   `min_rel_change` relative to the level before it.

use serde::Serialize;

use super::edivisive::{best_split, window_starts};
use super::steptest::{StepTest, step_test};
use crate::summary::median;

/// Settings of [`detect`]. The defaults are the values used for every series in pitwall's
/// evaluation (`stats/eval/README.md`): one setting for all series, chosen by a small grid
/// (window, test window, effect floors, autocorrelation cap) scored on the TCPD series and the
/// synthetic benchmark histories together, not per series.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectConfig {
    /// Length of the E-divisive windows; consecutive windows overlap by half. Default 30.
    pub window: usize,
    /// Fewest points a segment may have; change points closer than this are merged.
    /// Default 5.
    pub min_segment: usize,
    /// Most points on each side of a change point that its test uses. Bounds the cost and
    /// makes change points independent of data far away. Default 100.
    pub test_window: usize,
    /// Significance level of the final (merge) step. Default 0.001 (Otava's default).
    pub max_p_value: f64,
    /// Relaxed level at which the split step keeps weak change points. Default 0.01 (10× the
    /// final level, as Otava does).
    pub weak_p_value: f64,
    /// Smallest step, in robust standard deviations of the residuals (1.4826·MAD), that counts
    /// as a change. Default 2.0.
    pub min_effect: f64,
    /// Smallest |after/before − 1| of the medians of the test windows that counts as a change.
    /// Default 0.01 (1%).
    pub min_rel_change: f64,
    /// Fit a common linear trend across each tested pair of segments, so drifts are not read
    /// as steps. Default true.
    pub detrend: bool,
    /// Winsorising constant: residuals are clipped at this many robust standard deviations
    /// before the test. Default 2.5.
    pub clip: f64,
    /// Largest lag-1 autocorrelation of the residuals that the test corrects for (variance
    /// inflated by (1 + ρ)/(1 − ρ), degrees of freedom shrunk to the effective sample size;
    /// Bayley & Hammersley, "The effective number of independent observations in an
    /// autocorrelated time series", JRSS Suppl. 8(2), 1946). 0 treats the noise as independent.
    /// Default 0.5.
    pub max_autocorrelation: f64,
}

impl Default for DetectConfig {
    fn default() -> Self {
        DetectConfig {
            window: 30,
            min_segment: 5,
            test_window: 100,
            max_p_value: 0.001,
            weak_p_value: 0.01,
            min_effect: 2.0,
            min_rel_change: 0.01,
            detrend: true,
            clip: 2.5,
            max_autocorrelation: 0.5,
        }
    }
}

/// One detected change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangePoint {
    /// 0-based index of the first point of the new regime.
    pub index: usize,
    /// Median of the segment before (from the previous change point or the start).
    pub before: f64,
    /// Median of the segment after (up to the next change point or the end).
    pub after: f64,
    /// after / before − 1 (±∞ when `before` is 0 and `after` is not, 0 when both are).
    pub rel_change: f64,
    /// Two-sided p-value of the step test that accepted this change point.
    pub p_value: f64,
}

/// Relative change b/a − 1, defined for a = 0.
fn rel(a: f64, b: f64) -> f64 {
    if a == 0.0 {
        if b == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(b)
        }
    } else {
        b / a - 1.0
    }
}

/// Evaluation of one change point at `tau` between neighbours `prev` and `next`.
struct Verdict {
    test: Option<StepTest>,
    /// |after/before − 1| of the test windows' medians.
    rel_change: f64,
}

fn evaluate(x: &[f64], prev: usize, tau: usize, next: usize, cfg: &DetectConfig) -> Verdict {
    let w = cfg.test_window.max(cfg.min_segment).max(2);
    let left = &x[prev.max(tau.saturating_sub(w))..tau];
    let right = &x[tau..next.min(tau + w)];
    let test = step_test(left, right, cfg.detrend, cfg.clip, cfg.max_autocorrelation);
    let rel_change = match (median(left), median(right)) {
        (Some(a), Some(b)) => rel(a, b).abs(),
        _ => 0.0,
    };
    Verdict { test, rel_change }
}

impl Verdict {
    /// Passes at level `p`, with the effect-size floors.
    fn passes(&self, p: f64, cfg: &DetectConfig) -> bool {
        self.badness(p, cfg).is_none()
    }

    /// `None` when the change point passes; otherwise a key, larger for worse points:
    /// failing the test ranks by p-value above failing only the effect-size floors.
    fn badness(&self, p: f64, cfg: &DetectConfig) -> Option<(u8, f64)> {
        let Some(t) = self.test else {
            return Some((3, 0.0));
        };
        if t.p_value.is_nan() || t.p_value > p {
            return Some((2, t.p_value));
        }
        let effect = if t.scale > 0.0 {
            t.step.abs() / t.scale
        } else {
            f64::INFINITY
        };
        if effect < cfg.min_effect || self.rel_change < cfg.min_rel_change {
            return Some((
                1,
                -effect.min(self.rel_change / cfg.min_rel_change.max(1e-300)),
            ));
        }
        None
    }
}

/// Split step: weak change points of every window, by recursive E-divisive splitting.
/// Returns (index, weak p-value) pairs.
fn weak_points(x: &[f64], cfg: &DetectConfig) -> Vec<(usize, f64)> {
    let n = x.len();
    let min_seg = cfg.min_segment.max(2);
    let mut found = Vec::new();
    for start in window_starts(n, cfg.window.max(2 * min_seg), min_seg) {
        let end = (start + cfg.window.max(2 * min_seg)).min(n);
        let mut stack = vec![(start, end)];
        while let Some((s, e)) = stack.pop() {
            let Some((rel_tau, _)) = best_split(&x[s..e], min_seg) else {
                continue;
            };
            let tau = s + rel_tau;
            let v = evaluate(x, s, tau, e, cfg);
            if v.passes(cfg.weak_p_value, cfg) {
                found.push((tau, v.test.map_or(1.0, |t| t.p_value)));
                stack.push((s, tau));
                stack.push((tau, e));
            }
        }
    }
    found
}

/// Keep the strongest of candidates closer than `min_seg` to each other or to either end.
fn thin(mut cands: Vec<(usize, f64)>, n: usize, min_seg: usize) -> Vec<usize> {
    cands.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let mut kept: Vec<usize> = Vec::new();
    for (tau, _) in cands {
        if tau < min_seg || n - tau < min_seg {
            continue;
        }
        if kept.iter().all(|&k| k.abs_diff(tau) >= min_seg) {
            kept.push(tau);
        }
    }
    kept.sort_unstable();
    kept
}

/// Change points of `series`, sorted by index. Never panics; returns nothing for series
/// shorter than two minimum segments. Non-finite values are not expected (they are ordered by
/// IEEE total order and may produce meaningless results, but no panic).
pub fn detect(series: &[f64], config: &DetectConfig) -> Vec<ChangePoint> {
    let n = series.len();
    let min_seg = config.min_segment.max(2);
    if n < 2 * min_seg {
        return Vec::new();
    }
    let mut cps = thin(weak_points(series, config), n, min_seg);
    // Merge step: drop the worst failing change point, re-test its neighbours, repeat.
    let bounds = |cps: &[usize], i: usize| {
        let prev = if i == 0 { 0 } else { cps[i - 1] };
        let next = cps.get(i + 1).copied().unwrap_or(n);
        (prev, next)
    };
    let mut verdicts: Vec<Verdict> = (0..cps.len())
        .map(|i| {
            let (p, q) = bounds(&cps, i);
            evaluate(series, p, cps[i], q, config)
        })
        .collect();
    loop {
        let worst = verdicts
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.badness(config.max_p_value, config).map(|b| (i, b)))
            .max_by(|a, b| {
                a.1.0
                    .cmp(&b.1.0)
                    .then(a.1.1.total_cmp(&b.1.1))
                    .then(b.0.cmp(&a.0))
            });
        let Some((i, _)) = worst else { break };
        cps.remove(i);
        verdicts.remove(i);
        for j in [i.wrapping_sub(1), i] {
            if j < cps.len() {
                let (p, q) = bounds(&cps, j);
                verdicts[j] = evaluate(series, p, cps[j], q, config);
            }
        }
    }
    (0..cps.len())
        .map(|i| {
            let (prev, next) = bounds(&cps, i);
            let before = median(&series[prev..cps[i]]).unwrap_or(0.0);
            let after = median(&series[cps[i]..next]).unwrap_or(0.0);
            ChangePoint {
                index: cps[i],
                before,
                after,
                rel_change: rel(before, after),
                p_value: verdicts[i].test.map_or(1.0, |t| t.p_value),
            }
        })
        .collect()
}
