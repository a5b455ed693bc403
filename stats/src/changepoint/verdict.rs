//! The verdict on one candidate change point: the level-step test (and, when enabled, the
//! kink test) between its neighbours, with the effect-size floors, and the ranking of failing
//! points that the merge step of `detect` drops from the worst. Split from `detect.rs` to keep
//! that file to the algorithm's steps.
//!
//! The tests are `steptest`'s (a winsorised level step over a common trend, Chow 1960; Huber
//! 1981); the floors and the order of failures are pitwall's (docs/STATISTICS.md, "Algorithm").

use super::config::DetectConfig;
use super::scan::scan_p_value;
use super::steptest::{Noise, StepTest, kink_test, step_test};
use crate::summary::median;

/// Relative change b/a − 1, defined for a = 0.
pub(super) fn rel(a: f64, b: f64) -> f64 {
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
pub(super) struct Verdict {
    test: Option<StepTest>,
    /// |after/before − 1| of the test windows' medians.
    rel_change: f64,
    /// Change-of-slope test at `tau` over the same window, when enabled.
    kink: Option<StepTest>,
    /// Deviation the slope change builds up over the shorter side, relative to the median
    /// before, and the length of that side.
    kink_rel_change: f64,
    kink_arm: f64,
}

/// Which alternatives `evaluate` tests.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Tests {
    /// The level-step test only.
    Step,
    /// The kink test only (the step fields of the verdict are left empty).
    Kink,
    /// The step test, and the kink test where the step test does not already pass.
    Both,
}

pub(super) fn evaluate(
    x: &[f64],
    prev: usize,
    tau: usize,
    next: usize,
    cfg: &DetectConfig,
    tests: Tests,
) -> Verdict {
    let w = cfg.test_window.max(cfg.min_segment).max(2);
    let lo = prev.max(tau.saturating_sub(w));
    let hi = next.min(tau + w);
    let left = &x[lo..tau];
    let right = &x[tau..hi];
    let kink_arm = left.len().min(right.len()) as f64;
    // The kink test at `tau` and its change over the shorter arm, relative to the left median.
    let kink_here = |before: Option<f64>| {
        let k = kink_test(
            &x[lo..hi],
            tau - lo,
            cfg.clip,
            cfg.max_autocorrelation,
            cfg.robust_start,
        );
        let r = match (k, before) {
            (Some(k), Some(a)) if a != 0.0 => (k.step * kink_arm / a).abs(),
            (Some(_), Some(_)) => f64::INFINITY,
            _ => 0.0,
        };
        (k, r)
    };
    if tests == Tests::Kink {
        let (k, r) = kink_here(median(left));
        return Verdict {
            test: None,
            rel_change: 0.0,
            kink: k,
            kink_rel_change: r,
            kink_arm,
        };
    }
    // Short histories: the plain level-step test (`DetectConfig::short_history`).
    let long = x.len() >= cfg.short_history;
    let test = step_test(
        left,
        right,
        cfg.detrend && long,
        cfg.clip,
        cfg.robust_start,
        if long {
            Noise::Long {
                max_rho: cfg.max_autocorrelation,
            }
        } else {
            Noise::Short {
                known: cfg.known_noise,
            }
        },
    )
    .map(|t| multiplicity(t, prev, next, x.len(), cfg));
    let before = median(left);
    let rel_change = match (before, median(right)) {
        (Some(a), Some(b)) => rel(a, b).abs(),
        _ => 0.0,
    };
    // The kink test only matters where the step test does not already pass at the strict
    // level (which implies the weak one).
    let step_passes = failure(
        test,
        |t| t.step.abs() / t.scale,
        rel_change,
        cfg.max_p_value.max(cfg.weak_p_value),
        cfg.min_effect,
        cfg.min_rel_change,
        1.0,
    )
    .is_none()
        && failure(
            test,
            |t| t.step.abs() / t.scale,
            rel_change,
            cfg.max_p_value.min(cfg.weak_p_value),
            cfg.min_effect,
            cfg.min_rel_change,
            1.0,
        )
        .is_none();
    let (kink, kink_rel_change) =
        if tests == Tests::Both && cfg.kink_min_effect.is_finite() && !step_passes {
            kink_here(before)
        } else {
            (None, 0.0)
        };
    Verdict {
        test,
        rel_change,
        kink,
        kink_rel_change,
        kink_arm,
    }
}

/// Histories under `DetectConfig::scan_below` points: the step test's p-value corrected for
/// the scan over the places the step could have been put between `prev` and `next`
/// (`scan.rs`; `DetectConfig::short_multiplicity`).
fn multiplicity(t: StepTest, prev: usize, next: usize, n: usize, cfg: &DetectConfig) -> StepTest {
    if n >= cfg.scan_below.max(cfg.short_history) || !cfg.short_multiplicity {
        return t;
    }
    let m = cfg.min_segment.max(2);
    let len = next - prev;
    if len < 2 * m {
        return t;
    }
    StepTest {
        p_value: scan_p_value(t.p_value, len, m, len - m),
        ..t
    }
}

/// `None` when a test result passes at level `p` with effect `effect(t)` ≥ `min_effect` and
/// relative change ≥ `min_rel`; otherwise a key, larger for worse points: failing the test
/// ranks by p-value above failing only the effect-size floors, then by the smaller of the
/// effect times `unit` and the relative change in multiples of `min_rel`.
fn failure(
    t: Option<StepTest>,
    effect: impl Fn(&StepTest) -> f64,
    rel_change: f64,
    p: f64,
    min_effect: f64,
    min_rel: f64,
    unit: f64,
) -> Option<(u8, f64)> {
    let Some(t) = t else {
        return Some((3, 0.0));
    };
    if t.p_value.is_nan() || t.p_value > p {
        return Some((2, t.p_value));
    }
    let effect = if t.scale > 0.0 {
        effect(&t)
    } else {
        f64::INFINITY
    };
    if effect < min_effect || rel_change < min_rel {
        return Some((1, -(effect * unit).min(rel_change / min_rel.max(1e-300))));
    }
    None
}

impl Verdict {
    /// Passes at level `p`, with the effect-size floors.
    pub(super) fn passes(&self, p: f64, cfg: &DetectConfig) -> bool {
        self.badness(p, cfg).is_none()
    }

    /// Passes as a kink (not only as a step) at level `p`.
    pub(super) fn kink_passes(&self, p: f64, cfg: &DetectConfig) -> bool {
        cfg.kink_min_effect.is_finite()
            && failure(
                self.kink,
                |t| t.step.abs() * self.kink_arm / t.scale,
                self.kink_rel_change,
                p * cfg.kink_p_factor,
                cfg.kink_min_effect,
                cfg.min_rel_change,
                1.0,
            )
            .is_none()
    }

    /// `None` when the change point passes as a level step or as a kink; otherwise the
    /// smaller of the two failure keys (see `failure`).
    pub(super) fn badness(&self, p: f64, cfg: &DetectConfig) -> Option<(u8, f64)> {
        let step = failure(
            self.test,
            |t| t.step.abs() / t.scale,
            self.rel_change,
            p,
            cfg.min_effect,
            cfg.min_rel_change,
            1.0,
        )?;
        if !cfg.kink_min_effect.is_finite() {
            return Some(step);
        }
        let kink = failure(
            self.kink,
            |t| t.step.abs() * self.kink_arm / t.scale,
            self.kink_rel_change,
            p * cfg.kink_p_factor,
            cfg.kink_min_effect,
            cfg.min_rel_change,
            cfg.min_effect / cfg.kink_min_effect,
        )?;
        Some(if (kink.0, kink.1) < (step.0, step.1) {
            kink
        } else {
            step
        })
    }

    /// p-value of the test that accepts the point (the step test unless only the kink passes).
    pub(super) fn p_value(&self, p: f64, cfg: &DetectConfig) -> f64 {
        let step_p = self.test.map_or(1.0, |t| t.p_value);
        let step_ok = failure(
            self.test,
            |t| t.step.abs() / t.scale,
            self.rel_change,
            p,
            cfg.min_effect,
            cfg.min_rel_change,
            1.0,
        )
        .is_none();
        match self.kink {
            Some(k) if !step_ok => k.p_value.min(step_p),
            _ => step_p,
        }
    }
}
