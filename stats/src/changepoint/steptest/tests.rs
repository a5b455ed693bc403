//! Tests of the step and kink tests: clear steps and kinks found, trends, spikes and degenerate
//! input not taken for them, and the short-history test holding its level.

use super::*;

const NONE: Noise = Noise::Long { max_rho: 0.0 };

fn noise(i: usize) -> f64 {
    // Deterministic pseudo-noise in [-0.5, 0.5).
    ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

#[test]
fn finds_a_clear_step() {
    let left: Vec<f64> = (0..30).map(|i| 10.0 + 0.1 * noise(i)).collect();
    let right: Vec<f64> = (30..60).map(|i| 12.0 + 0.1 * noise(i)).collect();
    for detrend in [false, true] {
        let t = step_test(&left, &right, detrend, 2.5, true, NONE).unwrap();
        assert!(t.p_value < 1e-10, "{t:?}");
        assert!((t.step - 2.0).abs() < 0.1);
    }
}

#[test]
fn a_pure_trend_is_not_a_step_when_detrending() {
    let y: Vec<f64> = (0..60).map(|i| 100.0 + i as f64 + 0.5 * noise(i)).collect();
    let t = step_test(&y[..30], &y[30..], true, 2.5, true, NONE).unwrap();
    assert!(t.p_value > 0.01, "{t:?}");
    let t = step_test(&y[..30], &y[30..], false, 2.5, true, NONE).unwrap();
    assert!(t.p_value < 1e-6);
}

#[test]
fn one_spike_does_not_make_a_step() {
    let mut y: Vec<f64> = (0..40).map(|i| 10.0 + 0.1 * noise(i)).collect();
    y[25] = 30.0;
    y[27] = 25.0;
    let t = step_test(&y[..20], &y[20..], true, 2.5, true, NONE).unwrap();
    assert!(t.p_value > 0.01, "{t:?}");
}

#[test]
fn constant_and_degenerate_input() {
    let t = step_test(&[1.0; 5], &[1.0; 5], true, 2.5, true, NONE).unwrap();
    assert_eq!(t.p_value, 1.0);
    let t = step_test(&[1.0; 5], &[2.0; 5], false, 2.5, true, NONE).unwrap();
    assert_eq!(t.p_value, 0.0);
    assert!(step_test(&[], &[1.0], true, 2.5, true, NONE).is_none());
    assert!(step_test(&[1.0], &[2.0], true, 2.5, true, NONE).is_none());
}

#[test]
fn finds_a_clear_kink() {
    // Flat for 30 points, then rising 0.2 per point: no level step at the kink.
    let y: Vec<f64> = (0..60)
        .map(|i| 10.0 + 0.2 * (i as f64 - 30.0).max(0.0) + 0.3 * noise(i))
        .collect();
    let t = kink_test(&y, 30, 2.5, 0.5, true).unwrap();
    assert!(t.p_value < 1e-10, "{t:?}");
    assert!((t.step - 0.2).abs() < 0.02, "{t:?}");
    // A kink far from the true one fits worse than the true one.
    let off = kink_test(&y, 10, 2.5, 0.5, true).unwrap();
    assert!(off.p_value > t.p_value);
    assert_eq!(best_kink(&y, 5, 55), Some(30));
}

#[test]
fn a_straight_noisy_trend_has_no_kink() {
    for seed in 0..20u64 {
        let y: Vec<f64> = (0..80)
            .map(|i| 50.0 + 0.5 * i as f64 + 2.0 * noise(i + 1000 * seed as usize))
            .collect();
        for tau in [10, 40, 70] {
            let t = kink_test(&y, tau, 2.5, 0.5, true).unwrap();
            assert!(t.p_value > 1e-3, "seed {seed} tau {tau}: {t:?}");
        }
    }
}

#[test]
fn degenerate_kink_input() {
    assert!(kink_test(&[1.0, 2.0, 3.0], 1, 2.5, 0.5, true).is_none());
    assert!(best_kink(&[1.0, 2.0], 0, 1).is_none());
}

#[test]
fn theil_line_is_not_bent_by_spikes() {
    let mut y: Vec<f64> = (0..40)
        .map(|i| 5.0 + 0.3 * i as f64 + 0.1 * noise(i))
        .collect();
    // Eight spikes (20%), two of them at the end where least squares has most leverage.
    for i in [3, 9, 17, 22, 30, 35, 38, 39] {
        y[i] += 100.0;
    }
    let (a, b) = theil_line(&y, &mut Vec::new());
    assert!((b - 0.3).abs() < 0.02, "slope {b}");
    assert!((a - 5.0).abs() < 0.2, "intercept {a}");
    assert_eq!(theil_line(&[2.0], &mut Vec::new()), (2.0, 0.0));
}

#[test]
fn robust_start_keeps_spikes_out_of_the_kink_fit() {
    // Flat, with two large spikes among the last ten points: the plain start bends the
    // hinge fit towards them; the robust start clips them first.
    let mut y: Vec<f64> = (0..110).map(|i| 100.0 + noise(i)).collect();
    y[104] = 171.0;
    y[106] = 206.0;
    let robust = kink_test(&y, 100, 2.5, 0.5, true).unwrap();
    let plain = kink_test(&y, 100, 2.5, 0.5, false).unwrap();
    let effect = |t: StepTest| t.step.abs() * 10.0 / t.scale;
    assert!(effect(robust) < 3.0, "{robust:?}");
    assert!(effect(plain) > effect(robust), "{plain:?} vs {robust:?}");
    // A real kink is kept: the start fits two free lines, so it does not clip the bend.
    let k: Vec<f64> = (0..110)
        .map(|i| 100.0 + noise(i) + 2.0 * (i as f64 - 100.0).max(0.0))
        .collect();
    let t = kink_test(&k, 100, 2.5, 0.5, true).unwrap();
    assert!((t.step - 2.0).abs() < 0.2 && t.p_value < 1e-6, "{t:?}");
}

/// Standard normal draws (SplitMix64 and Box–Muller), for the size test.
fn gaussian(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    let mut unif = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    move || {
        let u = unif().max(1e-300);
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * unif()).cos()
    }
}

/// How often the short-history test rejects at `level` on 5 + 5 Gaussian points with no step.
fn short_test_size(level: f64, trials: usize) -> f64 {
    let mut normal = gaussian(27);
    let short = Noise::Short { known: None };
    let rejected = (0..trials)
        .filter(|_| {
            let y: Vec<f64> = (0..10).map(|_| 10.0 + normal()).collect();
            let t = step_test(&y[..5], &y[5..], false, 2.5, false, short).unwrap();
            t.p_value < level
        })
        .count();
    rejected as f64 / trials as f64
}

/// The short-history test keeps its level on ten points: the winsorised variance is corrected
/// for the clipping (`huber_correction`). Without the correction the robust scale of ten
/// residuals, often small, clipped good points and the test rejected at 1.28× its level at 1%
/// (and more at 0.001, the level detection uses).
#[test]
fn the_short_history_test_holds_its_level_on_ten_points() {
    let size = short_test_size(0.01, 40_000);
    assert!(
        (0.008..=0.012).contains(&size),
        "size {size} at the 1% level"
    );
    let size = short_test_size(0.001, 40_000);
    assert!(size <= 0.0013, "size {size} at the 0.1% level");
}

#[test]
fn huber_correction_is_one_without_clipping_and_grows_with_it() {
    let y = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(huber_correction(&y, &y, 2), 1.0);
    // One point of four clipped: m = 3/4, κ = 1 + (2/4)·(1/4)/(3/4) = 7/6.
    let w = [1.0, 2.0, 3.0, 3.5];
    let k: f64 = 7.0 / 6.0;
    assert!((huber_correction(&y, &w, 2) - k * k / 0.5625).abs() < 1e-12);
}
