//! Suspected steps at the tip of a series: a level change in the last few points, too few
//! after it for `detect` to confirm (it needs a minimum segment on each side), reported apart
//! with how many more points would confirm or clear it (issue 27). Without this, a slowdown
//! measured on two or three commits says nothing until the fifth.
//!
//! The candidate is tested as every change point is (`verdict::evaluate`: the level-step test
//! over the stretch since the last change point, with the effect-size floors), at the strict
//! level `max_p_value`, and only with at least [`MIN_TIP_POINTS`] points after it: one point
//! at the tip cannot be told from a spike. A suspected step is not a change point: it is not
//! in `detect`'s output, nothing downstream treats it as confirmed, and appending points either
//! confirms it (`detect` then reports it, at the same or a nearby index) or clears it.

use serde::Serialize;

use super::config::{ChangePoint, DetectConfig};
use super::refine::lad_split;
use super::verdict::{Tests, evaluate, rel};
use crate::summary::median;

/// Fewest points after a suspected step: a single point at the tip is a spike as often as a
/// step.
pub const MIN_TIP_POINTS: usize = 2;

/// A candidate step at the tip of a series, with fewer points after it than a change point
/// needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuspectedChange {
    /// 0-based index of the first point of the suspected new level.
    pub index: usize,
    /// Median of the points from the last change point (or the start) up to `index`.
    pub before: f64,
    /// Median of the points from `index` to the end.
    pub after: f64,
    /// after / before − 1.
    pub rel_change: f64,
    /// Two-sided p-value of its step test.
    pub p_value: f64,
    /// Points after the candidate (from `index` to the end).
    pub points_after: usize,
    /// More points that would make the stretch after it a minimum segment, so that `detect`
    /// confirms the step or clears it.
    pub more_points: usize,
}

/// Whether the last of `found` (sorted change point indices of `series`) is a step that truly
/// starts later, with fewer than `min_seg` points after it: the best single split of the
/// stretch after the previous change point (least absolute deviations, as `refine` places
/// change points), allowed up to [`MIN_TIP_POINTS`] from the end, lies beyond `n − min_seg`.
/// Such a change point was only reported because a split `min_seg` from the end still passes
/// with one old-level point on the new side: it names the wrong commit, so `detect` leaves it
/// to [`suspect_tip`] until enough points follow.
pub(crate) fn unsettled_tip(
    series: &[f64],
    found: &[usize],
    min_seg: usize,
    cfg: &DetectConfig,
) -> bool {
    let n = series.len();
    let Some(&last) = found.last() else {
        return false;
    };
    let prev = found.len().checked_sub(2).map_or(0, |i| found[i]);
    let lo = prev.max(last.saturating_sub(cfg.window.max(2 * min_seg)));
    let first = lo + min_seg;
    let end = n.saturating_sub(MIN_TIP_POINTS);
    if last + min_seg != n || first > end || series[lo..].iter().any(|v| !v.is_finite()) {
        return false;
    }
    lad_split(&series[lo..], first - lo..=end - lo, last - lo, cfg.clip)
        .is_some_and(|t| t + lo > n - min_seg)
}

/// The strongest suspected step at the tip of `series`, given its confirmed change points
/// `changes` (as `detect` returned them): a split leaving between [`MIN_TIP_POINTS`] and
/// `min_segment − 1` points after it, at least `min_segment` points after the last change
/// point, that passes the step test at `max_p_value` with the effect floors. `None` when there
/// is none.
pub fn suspect_tip(
    series: &[f64],
    changes: &[ChangePoint],
    config: &DetectConfig,
) -> Option<SuspectedChange> {
    let n = series.len();
    let min_seg = config.min_segment.max(2);
    let start = changes.last().map_or(0, |c| c.index);
    let mut best: Option<SuspectedChange> = None;
    for after in MIN_TIP_POINTS..min_seg {
        let Some(tau) = n.checked_sub(after) else {
            continue;
        };
        if tau < start + min_seg || series[start..].iter().any(|v| !v.is_finite()) {
            continue;
        }
        let v = evaluate(series, start, tau, n, config, Tests::Step);
        if !v.passes(config.max_p_value, config) {
            continue;
        }
        let p_value = v.p_value(config.max_p_value, config);
        if best.as_ref().is_some_and(|b| b.p_value <= p_value) {
            continue;
        }
        let lo = start.max(tau.saturating_sub(config.test_window.max(min_seg)));
        let before = median(&series[lo..tau]).unwrap_or(0.0);
        let after_median = median(&series[tau..]).unwrap_or(0.0);
        best = Some(SuspectedChange {
            index: tau,
            before,
            after: after_median,
            rel_change: rel(before, after_median),
            p_value,
            points_after: after,
            more_points: min_seg - after,
        });
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changepoint::detect;

    fn level(values: &[f64]) -> Vec<f64> {
        values.to_vec()
    }

    #[test]
    fn two_slow_points_after_five_are_suspected_not_detected() {
        let x = level(&[10.21, 10.19, 10.15, 10.21, 9.84, 11.35, 11.68]);
        let cfg = DetectConfig::default();
        let changes = detect(&x, &cfg);
        assert!(changes.is_empty());
        let s = suspect_tip(&x, &changes, &cfg).expect("suspected");
        assert_eq!((s.index, s.points_after, s.more_points), (5, 2, 3));
        assert!(s.rel_change > 0.1, "{s:?}");
    }

    #[test]
    fn one_slow_point_or_noise_is_not_suspected() {
        let cfg = DetectConfig::default();
        let spike = [10.21, 10.19, 10.15, 10.21, 9.84, 10.1, 10.0, 12.5];
        assert_eq!(suspect_tip(&spike, &[], &cfg), None);
        let quiet = [10.21, 10.19, 10.15, 10.21, 9.84, 10.1, 10.0, 10.2];
        assert_eq!(suspect_tip(&quiet, &[], &cfg), None);
    }

    #[test]
    fn a_step_four_points_from_the_end_is_suspected_not_reported_one_early() {
        // Eight points at 100, the eighth a little high, then four at 110: the step starts at
        // 8, but a change point needs five points after it; 7 would name the wrong commit.
        let mut x = vec![99.9, 100.1, 100.0, 99.6, 100.2, 99.4, 100.0, 100.2];
        x.extend([110.1, 110.0, 110.3, 110.2]);
        let cfg = DetectConfig::default();
        let changes = detect(&x, &cfg);
        assert!(changes.is_empty(), "{changes:?}");
        let s = suspect_tip(&x, &changes, &cfg).expect("suspected");
        assert_eq!((s.index, s.points_after, s.more_points), (8, 4, 1));
        x.push(110.1);
        let changes = detect(&x, &cfg);
        assert_eq!(changes.iter().map(|c| c.index).collect::<Vec<_>>(), [8]);
    }

    #[test]
    fn a_confirmed_step_is_not_suspected_again() {
        // Five points after the step: detect confirms it and nothing is left at the tip.
        let x = level(&[
            10.21, 10.19, 10.15, 10.21, 9.84, 11.35, 11.68, 11.18, 11.14, 12.03,
        ]);
        let cfg = DetectConfig::default();
        let changes = detect(&x, &cfg);
        assert_eq!(changes.iter().map(|c| c.index).collect::<Vec<_>>(), [5]);
        assert_eq!(suspect_tip(&x, &changes, &cfg), None);
    }

    #[test]
    fn after_a_confirmed_step_a_new_one_at_the_tip_is_suspected() {
        let mut x: Vec<f64> = (0..8).map(|i| 10.0 + 0.05 * (i % 3) as f64).collect();
        x.extend((0..8).map(|i| 12.0 + 0.05 * (i % 3) as f64));
        x.extend([14.0, 14.1, 13.95]);
        let cfg = DetectConfig::default();
        let changes = detect(&x, &cfg);
        assert_eq!(changes.iter().map(|c| c.index).collect::<Vec<_>>(), [8]);
        let s = suspect_tip(&x, &changes, &cfg).expect("suspected");
        assert_eq!((s.index, s.more_points), (16, 2));
        assert!((s.before - 12.05).abs() < 0.06, "{s:?}");
    }
}
