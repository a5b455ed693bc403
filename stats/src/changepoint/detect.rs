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
//!   `min_rel_change` relative to the level before it;
//! - on smooth series (positively autocorrelated first differences, `slope_change_z`) the
//!   same detection also runs on the first differences, so a change of slope (a peak, a
//!   levelling-off) is found where no level step is;
//! - each change point that survives is re-placed at the least-absolute-deviation single split
//!   between its neighbours (`refine`), so its index is the first point of the new level.

use serde::Serialize;

use super::edivisive::{best_split, window_starts};
use super::refine::{Reach, refine};
use super::steptest::best_kink;
use super::verdict::{Tests, Verdict, evaluate, rel};
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
    /// Histories shorter than this many points are tested for level steps alone: no common
    /// trend and no autocorrelation correction. On a short history the trend and step columns
    /// of the regression are strongly correlated (at 5 + 5 points r ≈ 0.87, so the step's
    /// standard error is about twice that without the trend), and a lag-1 autocorrelation
    /// estimated from a dozen residuals is mostly noise (standard deviation about 1/√n) that,
    /// clamped at 0, can only inflate the variance: together they found a 5σ step with 5 runs
    /// either side in 23% of trials, 98.5% without (issue 27; `stats/examples/short_steps.rs`,
    /// docs/STATISTICS.md "Short histories"). The rule looks at the whole series, not the
    /// tested stretch, so long series (TCPD, the generated sets) are tested as before; the
    /// price is that a series crossing the length can lose a change point that rested on the
    /// plain test. 0 fits both everywhere (the behaviour before). Default 24.
    pub short_history: usize,
    /// Winsorising constant: residuals are clipped at this many robust standard deviations
    /// before the test. Default 2.5.
    pub clip: f64,
    /// Largest lag-1 autocorrelation of the residuals that the test corrects for (variance
    /// inflated by (1 + ρ)/(1 − ρ), degrees of freedom shrunk to the effective sample size;
    /// Bayley & Hammersley, "The effective number of independent observations in an
    /// autocorrelated time series", JRSS Suppl. 8(2), 1946). 0 treats the noise as independent.
    /// Default 0.5.
    pub max_autocorrelation: f64,
    /// Smallest change of slope that counts as a change on its own (a "kink", tested by
    /// `kink_test` against the same straight-line null as the step test), as the deviation
    /// it builds up over the shorter side of the test window, in robust standard deviations of
    /// the residuals. `f64::INFINITY` turns the kink test off. Default off (`f64::INFINITY`):
    /// at 16 (with `kink_p_factor` 0.03) every stats test passes and TCPD F1 is 0.753, but only
    /// at that one grid point, and detection is about 2× slower (0.036–0.039 s for the whole
    /// evaluation against a 0.035 s budget); see `stats/eval/README.md`.
    pub kink_min_effect: f64,
    /// The kink test's significance level, as a multiple of the step test's (both in the
    /// split and in the merge step): the hinge is placed where it fits best, so its p-value
    /// needs a stricter bar. Default 0.01.
    pub kink_p_factor: f64,
    /// Start the winsorising of the step and kink tests from a robust fit (a Theil line on
    /// each side of the candidate, `steptest::robust_start`) instead of plain least squares,
    /// so outliers cannot bend the first fit. Default false: it scored lower on TCPD
    /// (`stats/eval/README.md`).
    pub robust_start: bool,
    /// Also detect changes of slope on smooth series: when the lag-1 autocorrelation r₁ of the
    /// first differences exceeds `slope_change_z`/√(n − 1) (a one-sided large-sample test of
    /// positively autocorrelated increments; under independent increments r₁ is approximately
    /// normal with standard deviation 1/√(n − 1), Bartlett 1946), the split/merge detection is
    /// run again on the first differences and its change points (the first point after the
    /// slope changed) are added wherever no level change point lies within `min_segment`.
    /// Measurement noise around a level gives r₁ ≈ −0.5 and a random walk r₁ ≈ 0, so the pass
    /// is only taken on series whose local slope persists (macro-economic series, slow
    /// warm-ups). The decision is made once for the whole series, so for a series near the
    /// threshold appending data can switch the pass on or off. `f64::INFINITY` turns it off.
    /// Default 1.645 (one-sided 5%); see `stats/eval/README.md`.
    pub slope_change_z: f64,
    /// Most points the refinement step may move a change point: after the merge step each one
    /// is re-placed at the least-absolute-deviation single split of the stretch between its
    /// neighbours (at most `window` points to either side), if it still passes there
    /// (`refine.rs`; Bai 1997's "repartition"). The E-divisive split alone is off by one for
    /// about one step in ten; with this, 98.2% of the found 4–12 σ steps of the generated set
    /// are placed on their first point, against 89.6% without (`stats/examples/
    /// cp_localization.rs`, docs/STATISTICS.md). 0 turns it off. Default 5 (the minimum
    /// segment; not tuned).
    pub refine_radius: usize,
}

impl DetectConfig {
    /// Sets the numeric field `key` from text (`window=30`), for the evaluation examples'
    /// `--set key=value`; an unknown key or a value that does not parse is an error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let f = || value.parse::<f64>().map_err(|e| format!("{key}: {e}"));
        let u = || value.parse::<usize>().map_err(|e| format!("{key}: {e}"));
        match key {
            "window" => self.window = u()?,
            "min_segment" => self.min_segment = u()?,
            "test_window" => self.test_window = u()?,
            "short_history" => self.short_history = u()?,
            "refine_radius" => self.refine_radius = u()?,
            "max_p_value" => self.max_p_value = f()?,
            "weak_p_value" => self.weak_p_value = f()?,
            "min_effect" => self.min_effect = f()?,
            "min_rel_change" => self.min_rel_change = f()?,
            "clip" => self.clip = f()?,
            "max_autocorrelation" => self.max_autocorrelation = f()?,
            "kink_min_effect" => self.kink_min_effect = f()?,
            "kink_p_factor" => self.kink_p_factor = f()?,
            "slope_change_z" => self.slope_change_z = f()?,
            _ => return Err(format!("unknown or unsupported DetectConfig field {key}")),
        }
        Ok(())
    }
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
            short_history: 24,
            clip: 2.5,
            max_autocorrelation: 0.5,
            kink_min_effect: f64::INFINITY,
            kink_p_factor: 0.01,
            robust_start: false,
            slope_change_z: 1.645,
            refine_radius: 5,
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
            // The E-divisive split is offered to the step test only, the least-squares hinge
            // (`best_kink`) to the kink test only: a hinge that passes merely as a level step
            // is not kept (a short run holding two throttling spikes did, between hinges the
            // kink search placed around it).
            let mut taus = vec![s + rel_tau];
            if cfg.kink_min_effect.is_finite()
                && e - s >= 2 * min_seg
                && let Some(k) = best_kink(&x[s..e], min_seg, e - s - min_seg)
                && k != rel_tau
            {
                taus.push(s + k);
            }
            let mut split = None;
            for (j, tau) in taus.into_iter().enumerate() {
                let tests = if j == 0 { Tests::Step } else { Tests::Kink };
                let v = evaluate(x, s, tau, e, cfg, tests);
                let ok = if j == 1 {
                    v.kink_passes(cfg.weak_p_value, cfg)
                } else {
                    v.passes(cfg.weak_p_value, cfg)
                };
                if ok {
                    found.push((tau, v.p_value(cfg.weak_p_value, cfg)));
                    split.get_or_insert(tau);
                }
            }
            if let Some(tau) = split {
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
    // The tests are scale-free, but their arithmetic (differences, squares, variances) is not:
    // values near ±1.8e308 overflow to infinity and values near 1e-308 lose all precision.
    // Detect on the series divided by its largest magnitude when that is extreme; the medians
    // reported below come from the original values.
    let largest = series
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, |m, v| m.max(v.abs()));
    let scaled: Vec<f64>;
    let work: &[f64] =
        if largest > 0.0 && !(MIN_PLAIN_MAGNITUDE..=MAX_PLAIN_MAGNITUDE).contains(&largest) {
            scaled = series.iter().map(|v| v / largest).collect();
            &scaled
        } else {
            series
        };
    let mut found = detect_indices(work, config, min_seg);
    let indices: Vec<usize> = found.iter().map(|&(k, _)| k).collect();
    if super::tip::unsettled_tip(work, &indices, min_seg, config) {
        found.pop();
    }
    summarize(series, &found)
}

/// Largest magnitude detection works on directly; above it the series is rescaled first.
const MAX_PLAIN_MAGNITUDE: f64 = 1e150;
/// Smallest largest-magnitude detection works on directly; below it the series is rescaled.
const MIN_PLAIN_MAGNITUDE: f64 = 1e-150;

/// Indices and p-values of the change points of `series` (already in a safe range).
fn detect_indices(series: &[f64], config: &DetectConfig, min_seg: usize) -> Vec<(usize, f64)> {
    let n = series.len();
    let mut found = level_changes(series, config);
    if n > 2 * min_seg
        && config.slope_change_z.is_finite()
        && increment_autocorrelation(series) > config.slope_change_z / ((n - 1) as f64).sqrt()
    {
        let diffs: Vec<f64> = series.windows(2).map(|w| w[1] - w[0]).collect();
        let mut added = Vec::new();
        for (i, p) in level_changes(&diffs, config) {
            // diffs[i] = series[i + 1] − series[i]: the new slope starts at point i + 1.
            let tau = i + 1;
            if tau >= min_seg
                && n - tau >= min_seg
                && found.iter().all(|&(k, _)| k.abs_diff(tau) >= min_seg)
            {
                added.push((tau, p));
            }
        }
        found.extend(added);
        found.sort_by_key(|&(k, _)| k);
    }
    found
}

/// Change points with the medians of the segments around them, from the original values.
fn summarize(series: &[f64], found: &[(usize, f64)]) -> Vec<ChangePoint> {
    let n = series.len();
    let mut prev = 0;
    found
        .iter()
        .enumerate()
        .map(|(i, &(index, p_value))| {
            let next = found.get(i + 1).map_or(n, |&(k, _)| k);
            let before = median(&series[prev..index]).unwrap_or(0.0);
            let after = median(&series[index..next]).unwrap_or(0.0);
            prev = index;
            ChangePoint {
                index,
                before,
                after,
                rel_change: rel(before, after),
                p_value,
            }
        })
        .collect()
}

/// Lag-1 autocorrelation of the first differences of `x` (about their mean); 0 when there
/// are fewer than three points or the differences are constant. About −0.5 for independent
/// noise around a level, 0 for a random walk, near 1 for a smooth curve.
pub(crate) fn increment_autocorrelation(x: &[f64]) -> f64 {
    if x.len() < 3 {
        return 0.0;
    }
    let d = |i: usize| x[i + 1] - x[i];
    let m = (x[x.len() - 1] - x[0]) / (x.len() - 1) as f64;
    let mut num = 0.0;
    let mut den = 0.0;
    for i in 0..x.len() - 1 {
        let a = d(i) - m;
        den += a * a;
        if i + 2 < x.len() {
            num += a * (d(i + 1) - m);
        }
    }
    if den > 0.0 && den.is_finite() {
        num / den
    } else {
        0.0
    }
}

/// Level change points of `series` by split and merge: (index, p-value), sorted by index.
fn level_changes(series: &[f64], config: &DetectConfig) -> Vec<(usize, f64)> {
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
            evaluate(series, p, cps[i], q, config, Tests::Both)
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
                verdicts[j] = evaluate(series, p, cps[j], q, config, Tests::Both);
            }
        }
    }
    // Refinement: each change point re-placed at the best single split near it (`refine`).
    let reach = Reach {
        min_seg,
        reach: config.window.max(2 * min_seg),
        radius: config.refine_radius,
        outlier: config.clip,
    };
    if reach.radius > 0 {
        let refined = refine(series, &cps, reach, |p, t, q| {
            evaluate(series, p, t, q, config, Tests::Both).passes(config.max_p_value, config)
        });
        // Re-test (for the reported p-value) where the point or a neighbour moved.
        let moved = |i: usize| i < cps.len() && refined[i] != cps[i];
        let stale: Vec<usize> = (0..cps.len())
            .filter(|&i| moved(i) || moved(i.wrapping_sub(1)) || moved(i + 1))
            .collect();
        cps = refined;
        for i in stale {
            let (p, q) = bounds(&cps, i);
            verdicts[i] = evaluate(series, p, cps[i], q, config, Tests::Both);
        }
    }
    cps.iter()
        .zip(&verdicts)
        .map(|(&i, v)| (i, v.p_value(config.max_p_value, config)))
        .collect()
}
