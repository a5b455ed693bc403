//! Tests of the trended variance prior: it finds a proportional relation, ignores an absent
//! one, and falls back to the plain prior with too few benchmarks.

use super::*;
use crate::ab::Xoshiro256;

/// `scale · χ²_d / d` draws.
fn chi2(rng: &mut Xoshiro256, scale: f64, d: usize) -> f64 {
    let ss: f64 = (0..d)
        .map(|_| {
            let u1 = rng.next_f64().max(1e-300);
            let u2 = rng.next_f64();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            z * z
        })
        .sum();
    scale * ss / d as f64
}

/// Within-process variances spread over two decades.
fn covariates(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 1e-5 * 10f64.powf(2.0 * i as f64 / n as f64))
        .collect()
}

#[test]
fn a_proportional_relation_is_found_and_borrowed_along() {
    let mut rng = Xoshiro256::seed_from(11);
    let w = covariates(300);
    let obs: Vec<VarianceObs> = w
        .iter()
        .map(|&w| VarianceObs {
            s2: chi2(&mut rng, 3.0 * w, 6),
            d: 6.0,
            within: Some(w),
        })
        .collect();
    let p = fit_trended_prior(&obs);
    let slope = p.slope().expect("a trend");
    assert!((slope - 1.0).abs() < 0.1, "{slope}");
    // One common relative variance: the prior is sure of it and its scale follows w.
    for &w in &[1e-5, 1e-4, 1e-3] {
        let at = p.at(Some(w));
        assert!(at.df > 30.0, "{at:?}");
        assert!((at.scale / (3.0 * w) - 1.0).abs() < 0.15, "{w}: {at:?}");
    }
    // The plain prior cannot borrow much across two decades of variance.
    assert!(p.plain.df < 5.0, "{:?}", p.plain);
    // A benchmark without a covariate gets the plain prior.
    assert_eq!(p.at(None), p.plain);
}

#[test]
fn no_relation_means_a_flat_line() {
    let mut rng = Xoshiro256::seed_from(12);
    let w = covariates(300);
    let obs: Vec<VarianceObs> = w
        .iter()
        .map(|&w| VarianceObs {
            s2: chi2(&mut rng, 2e-4, 6),
            d: 6.0,
            within: Some(w),
        })
        .collect();
    let p = fit_trended_prior(&obs);
    assert!(p.slope().expect("a trend") < 0.1, "{p:?}");
    let lo = p.at(Some(1e-5)).scale;
    let hi = p.at(Some(1e-3)).scale;
    assert!(
        (lo / 2e-4 - 1.0).abs() < 0.3 && (hi / 2e-4 - 1.0).abs() < 0.3,
        "{lo} {hi}"
    );
}

#[test]
fn unrelated_noise_borrows_little() {
    // Variances spread over two decades at random, unrelated to the covariate.
    let mut rng = Xoshiro256::seed_from(13);
    let w = covariates(300);
    let obs: Vec<VarianceObs> = w
        .iter()
        .map(|&w| {
            let scale = 1e-4 * 10f64.powf(2.0 * rng.next_f64());
            VarianceObs {
                s2: chi2(&mut rng, scale, 6),
                d: 6.0,
                within: Some(w),
            }
        })
        .collect();
    let p = fit_trended_prior(&obs);
    assert!(p.at(Some(1e-4)).df < 5.0, "{p:?}");
}

#[test]
fn too_few_covariates_give_the_plain_prior() {
    let obs: Vec<VarianceObs> = (0..MIN_BENCHMARKS_FOR_TREND + 2)
        .map(|i| VarianceObs {
            s2: 1.0 + i as f64 / 10.0,
            d: 4.0,
            within: (i < MIN_BENCHMARKS_FOR_TREND - 1).then_some(0.1),
        })
        .collect();
    let p = fit_trended_prior(&obs);
    assert!(p.slope().is_none());
    assert_eq!(p.at(Some(0.1)), p.plain);
    assert_eq!(TrendedPrior::NONE.at(Some(0.1)), VariancePrior::NONE);
}

#[test]
fn a_trended_prior_shrinks_both_ways_and_the_plain_one_only_up() {
    let mut rng = Xoshiro256::seed_from(14);
    let w = covariates(200);
    let obs: Vec<VarianceObs> = w
        .iter()
        .map(|&w| VarianceObs {
            s2: chi2(&mut rng, 3.0 * w, 4),
            d: 4.0,
            within: Some(w),
        })
        .collect();
    let p = fit_trended_prior(&obs);
    let at = p.at(Some(1e-4));
    // A variance drawn high by chance is pulled down towards its trend, one drawn low up.
    let (down, _) = at.moderate(3e-3, 4.0);
    let (up, _) = at.moderate(1e-5, 4.0);
    assert!(down < 3e-3 && up > 1e-5, "{down} {up} {at:?}");
    // The one-scale prior never lowers a variance.
    let (kept, _) = p.plain.moderate(1.0, 4.0);
    assert!(kept >= 1.0, "{kept}");
}
