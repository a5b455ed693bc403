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

use super::config::{ChangePoint, DetectConfig};
use super::edivisive::{best_split, window_starts};
use super::refine::{Reach, refine};
use super::steptest::best_kink;
use super::verdict::{Tests, Verdict, evaluate, rel};
use crate::summary::median;

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
