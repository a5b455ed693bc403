//! Tests of the A/B verdict: its decisions on constructed samples and their edge cases.

use super::*;

fn lognormal(rng: &mut super::super::Xoshiro256, n: usize, scale: f64, sigma: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let u1 = rng.next_f64().max(1e-300);
            let u2 = rng.next_f64();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            scale * (sigma * z).exp()
        })
        .collect()
}

fn one(base: &[f64], cand: &[f64], hib: bool) -> Comparison {
    let pair = PairInput {
        base,
        cand,
        higher_is_better: hib,
        threshold: None,
    };
    compare_all(&[pair], &AbConfig::default()).remove(0)
}

#[test]
fn names() {
    assert_eq!(Verdict::Regression.as_str(), "regression");
    assert_eq!(Verdict::Inconclusive.to_string(), "inconclusive");
}

#[test]
fn identical_samples_are_unchanged() {
    let x = [
        100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1, 100.3, 99.9,
    ];
    let c = one(&x, &x, false);
    assert_eq!(c.verdict, Verdict::Unchanged, "{}", c.reason);
    assert_eq!(c.ratio, 1.0);
    assert_eq!(c.p_value, 1.0);
    assert!(c.more_samples.is_none());
}

#[test]
fn all_zero_counts_are_unchanged_but_a_zero_baseline_is_not_a_ratio() {
    let zeros = [0.0; 8];
    let c = one(&zeros, &zeros, false);
    assert_eq!(c.verdict, Verdict::Unchanged, "{}", c.reason);
    assert_eq!(c.reason, "every sample is zero on both sides");
    // Zero median, but the candidate has errors now: no ratio, so no verdict either way.
    let some = [0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 4.0, 5.0];
    let c = one(&zeros, &some, false);
    assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.reason);
    assert!(c.reason.contains("baseline median is zero"), "{}", c.reason);
}

#[test]
fn clear_slowdown_direction_aware() {
    let mut rng = super::super::Xoshiro256::seed_from(9);
    let base = lognormal(&mut rng, 12, 100.0, 0.01);
    let cand = lognormal(&mut rng, 12, 120.0, 0.01);
    let c = one(&base, &cand, false);
    assert_eq!(c.verdict, Verdict::Regression, "{}", c.reason);
    assert!((c.ratio - 1.2).abs() < 0.02);
    assert!(c.ci.0 > 1.1 && c.q_value < 0.01);
    // The same numbers as a throughput: higher is better, so an improvement.
    let c = one(&base, &cand, true);
    assert_eq!(c.verdict, Verdict::Improvement, "{}", c.reason);
    // And a 20% faster time is an improvement.
    let c = one(&cand, &base, false);
    assert_eq!(c.verdict, Verdict::Improvement, "{}", c.reason);
}

#[test]
fn three_samples_are_inconclusive_with_reason() {
    let c = one(&[1.0, 1.1, 1.2], &[2.0, 2.1, 2.2], false);
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(c.reason.contains("too few samples"), "{}", c.reason);
    assert_eq!(c.more_samples, Some(5));
    assert_eq!((c.base_n, c.cand_n), (3, 3));
}

#[test]
fn failed_runs_are_not_compared() {
    let base = [1.0, 1.0, 1.1, 1.0, 0.9];
    let c = one(&base, &[1.0, f64::NAN, 1.0, 1.0, 1.0], false);
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert!(c.reason.contains("not finite"), "{}", c.reason);
}

#[test]
fn slow_outlier_does_not_make_a_regression() {
    let base = [100.0, 100.4, 99.7, 100.1, 99.9, 100.2, 99.8, 100.3];
    let cand = [100.1, 99.8, 100.3, 180.0, 99.9, 100.2, 160.0, 100.0];
    let c = one(&base, &cand, false);
    assert_ne!(c.verdict, Verdict::Regression, "{}", c.reason);
    assert!(
        c.reason.contains("2 slow outliers set aside"),
        "{}",
        c.reason
    );
    assert!((c.ratio - 1.0).abs() < 0.005);
    assert_eq!(c.cand_n, 8);
}

#[test]
fn small_noisy_change_is_inconclusive_with_estimate() {
    // ±4% noise and a 1% shift: neither a call nor "unchanged" is justified.
    let base = [100.0, 104.0, 96.0, 102.0, 98.0, 101.0];
    let cand = [101.0, 105.0, 97.0, 103.0, 99.0, 102.0];
    let c = one(&base, &cand, false);
    assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.reason);
    assert!(c.reason.contains("not significant"), "{}", c.reason);
    assert!(c.more_samples.unwrap() > 6);
}

#[test]
fn per_benchmark_threshold_and_bh_across_pairs() {
    let mut rng = super::super::Xoshiro256::seed_from(5);
    let base = lognormal(&mut rng, 15, 100.0, 0.005);
    let cand = lognormal(&mut rng, 15, 103.0, 0.005);
    let loose = PairInput {
        base: &base,
        cand: &cand,
        higher_is_better: false,
        threshold: Some(0.05),
    };
    let strict = PairInput {
        threshold: None,
        ..loose
    };
    let out = compare_all(&[loose, strict], &AbConfig::default());
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].threshold, 0.05);
    assert_ne!(out[0].verdict, Verdict::Regression, "{}", out[0].reason);
    assert_eq!(out[1].verdict, Verdict::Regression, "{}", out[1].reason);
    // Two equal p-values: BH leaves them as they are (m·p/2 for both).
    assert_eq!(out[0].q_value, out[0].p_value);
    // Deterministic.
    assert_eq!(out, compare_all(&[loose, strict], &AbConfig::default()));
    assert!(compare_all(&[], &AbConfig::default()).is_empty());
}

#[test]
fn serializes_snake_case() {
    let c = one(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0], false);
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains("\"verdict\":\"inconclusive\""), "{json}");
}
