//! Tests of `detect` on the behaviours users asked of change-point tools: obvious steps found
//! at the right place, no alarms from spikes or two clock states, a minimum segment length,
//! stability when data is appended, and agreement with Otava on a real benchmark history.

use super::{DetectConfig, detect};

/// Deterministic pseudo-random stream (SplitMix64) for test data.
struct Rng(u64);

impl Rng {
    fn unif(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Approximately standard normal (Irwin–Hall with 12 terms).
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.unif()).sum::<f64>() - 6.0
    }
}

/// `levels` as (length, level) runs with multiplicative noise of `cv`.
fn steps(seed: u64, levels: &[(usize, f64)], cv: f64) -> Vec<f64> {
    let mut rng = Rng(seed);
    levels
        .iter()
        .flat_map(|&(len, level)| std::iter::repeat_n(level, len))
        .map(|l| l * (1.0 + cv * rng.normal()))
        .collect()
}

fn indices(x: &[f64]) -> Vec<usize> {
    detect(x, &DetectConfig::default())
        .iter()
        .map(|c| c.index)
        .collect()
}

#[test]
fn finds_an_obvious_step_with_its_size() {
    let x = steps(1, &[(100, 10.0), (100, 12.0)], 0.01);
    let cps = detect(&x, &DetectConfig::default());
    assert_eq!(cps.len(), 1, "{cps:?}");
    let c = &cps[0];
    assert_eq!(c.index, 100, "{c:?}");
    assert!(
        (c.before - 10.0).abs() < 0.05 && (c.after - 12.0).abs() < 0.05,
        "{c:?}"
    );
    assert!((c.rel_change - 0.2).abs() < 0.01, "{c:?}");
    assert!(c.p_value < 1e-6);
}

#[test]
fn finds_several_steps_in_order() {
    let x = steps(
        2,
        &[(80, 10.0), (60, 11.0), (90, 9.5), (70, 9.5 * 1.05)],
        0.005,
    );
    let found = indices(&x);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found, vec![80, 140, 230]);
}

#[test]
fn degenerate_series_give_nothing_and_never_panic() {
    let cfg = DetectConfig::default();
    assert!(detect(&[], &cfg).is_empty());
    assert!(detect(&[1.0], &cfg).is_empty());
    assert!(detect(&[1.0, 2.0, 3.0], &cfg).is_empty());
    assert!(detect(&[7.0; 500], &cfg).is_empty());
    assert!(detect(&[0.0; 50], &cfg).is_empty());
    // Odd but finite inputs, and non-finite ones: no panic.
    let mut rng = Rng(3);
    for len in 0..40 {
        let x: Vec<f64> = (0..len).map(|_| (rng.unif() - 0.5) * 1e300).collect();
        let _ = detect(&x, &cfg);
        let y: Vec<f64> = (0..len)
            .map(|i| if i % 2 == 0 { 0.0 } else { -1e-300 })
            .collect();
        let _ = detect(&y, &cfg);
    }
    let _ = detect(
        &[
            1.0,
            f64::NAN,
            f64::INFINITY,
            2.0,
            3.0,
            4.0,
            5.0,
            6.0,
            7.0,
            8.0,
            9.0,
        ],
        &cfg,
    );
    // A step from zero: rel_change is infinite, not NaN.
    let x: Vec<f64> = (0..60).map(|i| if i < 30 { 0.0 } else { 1.0 }).collect();
    let cps = detect(&x, &cfg);
    assert_eq!(cps.len(), 1);
    assert!(cps[0].rel_change.is_infinite());
}

#[test]
fn throttling_spikes_alone_raise_no_alarm() {
    for seed in 0..10 {
        let mut rng = Rng(100 + seed);
        let x: Vec<f64> = (0..1000)
            .map(|_| {
                let v = 100.0 * (1.0 + 0.01 * rng.normal());
                if rng.unif() < 0.05 {
                    v * (1.2 + rng.unif())
                } else {
                    v
                }
            })
            .collect();
        assert!(indices(&x).is_empty(), "seed {seed}: {:?}", indices(&x));
    }
}

#[test]
fn two_clock_states_alone_raise_no_alarm() {
    for seed in 0..10 {
        let mut rng = Rng(200 + seed);
        let x: Vec<f64> = (0..1000)
            .map(|_| {
                let v = 100.0 * (1.0 + 0.005 * rng.normal());
                if rng.unif() < 0.3 { v * 1.06 } else { v }
            })
            .collect();
        assert!(indices(&x).is_empty(), "seed {seed}: {:?}", indices(&x));
    }
}

#[test]
fn segments_are_never_shorter_than_the_minimum() {
    // A 3-point blip at 100..103 and real steps: no segment under min_segment points.
    let mut x = steps(4, &[(100, 10.0), (3, 14.0), (97, 10.0), (100, 12.0)], 0.005);
    x.extend(steps(5, &[(4, 20.0), (100, 12.0)], 0.005));
    for min_segment in [5, 10, 20] {
        let cfg = DetectConfig {
            min_segment,
            ..DetectConfig::default()
        };
        let cps = detect(&x, &cfg);
        let mut bounds = vec![0];
        bounds.extend(cps.iter().map(|c| c.index));
        bounds.push(x.len());
        for w in bounds.windows(2) {
            assert!(
                w[1] - w[0] >= min_segment,
                "min_segment {min_segment}: {bounds:?}"
            );
        }
        assert!(cps.iter().any(|c| c.index == 200), "{cps:?}");
    }
}

#[test]
fn change_points_do_not_move_when_data_is_appended() {
    let x = steps(
        6,
        &[
            (300, 10.0),
            (400, 10.5),
            (300, 9.8),
            (250, 10.3),
            (500, 11.0),
        ],
        0.01,
    );
    let full = indices(&x);
    assert!(full.len() >= 4, "{full:?}");
    let cfg = DetectConfig::default();
    let horizon = cfg.test_window + cfg.window;
    for n in (400..x.len()).step_by(37) {
        let part = indices(&x[..n]);
        let old: Vec<usize> = part.iter().copied().filter(|&i| i + horizon < n).collect();
        let new: Vec<usize> = full.iter().copied().filter(|&i| i + horizon < n).collect();
        assert_eq!(old, new, "prefix {n}: {part:?} vs full {full:?}");
    }
}

#[test]
fn agrees_with_otava_on_the_big_tigerbeetle_shifts() {
    let text = include_str!("../../../tests/data/otava/tigerbeetle.json");
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let x: Vec<f64> = v["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    let found = indices(&x);
    // Otava (window 30, p ≤ 0.01, magnitude ≥ 5%) reports [15, 71]: the ~12% drop after the
    // single-point outlier at 10 and the ~15% rise. pitwall must find both and must not
    // report the isolated outlier at 10 as a change.
    for big in [15, 71] {
        assert!(
            found.iter().any(|&i| i.abs_diff(big) <= 2),
            "{big} not in {found:?}"
        );
    }
    assert!(!found.contains(&10) && !found.contains(&11), "{found:?}");
    // Otava at p ≤ 1e-5 with no magnitude floor also reports 95, 131, 192 and 212: small
    // moves (≤ 3%) in the drifting tail, which pitwall's trend term and 1% / 2-SD effect floors
    // do not flag (it reports exactly [15, 71] today). Nothing else may be reported.
    assert!(found.len() <= 4, "{found:?}");
}

#[test]
fn otava_single_series_case() {
    let text = include_str!("../../../tests/data/otava/otava_single_series.json");
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let x: Vec<f64> = v["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    assert_eq!(indices(&x), vec![10]);
}

#[test]
fn increment_autocorrelation_separates_level_noise_random_walks_and_smooth_curves() {
    use super::detect::increment_autocorrelation;
    let mut rng = Rng(11);
    // Independent noise around a level: increments e_{t+1} − e_t have lag-1 correlation −1/2.
    let iid: Vec<f64> = (0..4000).map(|_| 10.0 + rng.normal()).collect();
    let r = increment_autocorrelation(&iid);
    assert!((r + 0.5).abs() < 0.05, "iid {r}");
    // A random walk: independent increments.
    let mut level = 0.0;
    let walk: Vec<f64> = (0..4000)
        .map(|_| {
            level += rng.normal();
            level
        })
        .collect();
    let r = increment_autocorrelation(&walk);
    assert!(r.abs() < 0.05, "walk {r}");
    // A smooth curve with a little noise: the local slope persists.
    let smooth: Vec<f64> = (0..60)
        .map(|i| (i as f64 / 10.0).sin() * 100.0 + 0.05 * rng.normal())
        .collect();
    let r = increment_autocorrelation(&smooth);
    assert!(r > 0.9, "smooth {r}");
    // Level shifts with benchmark-like noise stay far below the threshold of the slope pass.
    let x = steps(3, &[(100, 10.0), (100, 12.0)], 0.01);
    assert!(increment_autocorrelation(&x) < 0.0);
    assert_eq!(increment_autocorrelation(&[1.0, 2.0]), 0.0);
    assert_eq!(increment_autocorrelation(&[1.0, 2.0, 3.0, 4.0]), 0.0);
    assert_eq!(increment_autocorrelation(&[5.0; 10]), 0.0);
}

#[test]
fn finds_a_peak_on_a_smooth_series_by_its_change_of_slope() {
    // Rises 2 per point for 30 points, then falls 3 per point: no level step anywhere, and the
    // residuals of a level-step fit are one long hump that the level test (rightly) discounts.
    let mut rng = Rng(12);
    let x: Vec<f64> = (0..56)
        .map(|i| {
            let t = i as f64;
            100.0
                + if i < 30 {
                    2.0 * t
                } else {
                    60.0 - 3.0 * (t - 30.0)
                }
                + 0.3 * rng.normal()
        })
        .collect();
    let cps = detect(&x, &DetectConfig::default());
    assert!(cps.iter().any(|c| c.index.abs_diff(30) <= 2), "{cps:?}");
    let off = DetectConfig {
        slope_change_z: f64::INFINITY,
        ..DetectConfig::default()
    };
    let level_only = detect(&x, &off);
    assert!(
        !level_only.iter().any(|c| c.index.abs_diff(30) <= 2),
        "{level_only:?}"
    );
}

#[test]
fn extreme_magnitudes_are_found_like_ordinary_ones() {
    // A step from +1 to −1 with 1% noise, at index 40 of 80.
    let unit = steps(17, &[(40, 1.0), (40, -1.0)], 0.01);
    let want: Vec<usize> = detect(&unit, &DetectConfig::default())
        .iter()
        .map(|c| c.index)
        .collect();
    assert_eq!(want, vec![40]);
    // The same series times 1e308 (differences overflow to infinity), 1e300, and 1e-308
    // (subnormal: differences lose all precision): the same change point, and the medians
    // in the original units.
    for scale in [1e308, 1e300, 1e-308] {
        let big: Vec<f64> = unit.iter().map(|v| v * scale).collect();
        let got = detect(&big, &DetectConfig::default());
        let at: Vec<usize> = got.iter().map(|c| c.index).collect();
        assert_eq!(at, want, "scale {scale}");
        assert!((got[0].before / scale - 1.0).abs() < 0.05, "{:?}", got[0]);
        assert!((got[0].after / scale + 1.0).abs() < 0.05, "{:?}", got[0]);
    }
}

/// Change points of `x` with the default settings but `refine_radius` (0: refinement off, the
/// placement before it existed).
fn indices_refined(x: &[f64], refine_radius: usize) -> Vec<usize> {
    let cfg = DetectConfig {
        refine_radius,
        ..DetectConfig::default()
    };
    detect(x, &cfg).iter().map(|c| c.index).collect()
}

#[test]
fn a_ten_percent_step_is_reported_at_its_first_point() {
    // A 10% step at index 51 of 120 points with 1% noise (10 σ): the first point of the new
    // level is 51, for every noise draw. Unrefined, the E-divisive split of the window 45..75
    // is pulled towards the window's centre and says 52 for some draws (seed 16: 106.2 at 51,
    // plainly the new level); the last assertion keeps this test about that (it fails if the
    // data stop exercising it).
    let mut unrefined_off = Vec::new();
    for seed in 0..30 {
        let x = steps(seed, &[(51, 100.0), (69, 110.0)], 0.01);
        assert_eq!(indices(&x), vec![51], "seed {seed}");
        let before = indices_refined(&x, 0);
        if before != vec![51] {
            unrefined_off.push((seed, before));
        }
    }
    assert_eq!(unrefined_off, vec![(16, vec![52])]);
}

#[test]
fn an_outlier_next_to_the_step_does_not_move_it() {
    // The same step with a fast run (−20%) just before it, or a slow run (+30%) just after its
    // first point, or both: each lies beyond its own level, away from the other one.
    let mut unrefined_off = 0;
    for seed in 0..10 {
        for (at, factor) in [(50, 0.8), (52, 1.3), (49, 1.3), (53, 0.8)] {
            let mut x = steps(seed, &[(51, 100.0), (69, 110.0)], 0.01);
            x[at] *= factor;
            assert_eq!(indices(&x), vec![51], "seed {seed}, outlier at {at}");
            unrefined_off += usize::from(indices_refined(&x, 0) != vec![51]);
        }
    }
    assert!(unrefined_off > 0);
}

/// Issue 27: five runs either side of a clean +13% step (about 4.6× the run-to-run noise), the
/// per-run medians of a real C benchmark, gave no change point while the step test fitted a
/// common trend on ten points.
#[test]
fn a_clear_step_with_five_runs_either_side_is_found() {
    let x = [
        10.21, 10.19, 10.15, 10.21, 9.84, 11.35, 11.68, 11.18, 11.14, 12.03,
    ];
    assert_eq!(indices(&x), vec![5]);
    let before = DetectConfig {
        short_history: 0,
        ..DetectConfig::default()
    };
    assert!(detect(&x, &before).is_empty(), "the old test misses it");
}
