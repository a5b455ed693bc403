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
mod tests;
