//! Empirical-Bayes moderated variances: with 2–5 replicates per side, each benchmark's own
//! variance estimate has only a few degrees of freedom, and t intervals are then very wide.
//! The benchmarks of one comparison share a machine and a harness, so their relative noise is
//! similar; borrowing strength across them gives every benchmark more degrees of freedom
//! without assuming one common variance.
//!
//! # Method
//! Smyth (2004), "Linear models and empirical Bayes methods for assessing differential
//! expression in microarray experiments", *Statistical Applications in Genetics and Molecular
//! Biology* 3(1), art. 3 — the "moderated t" of limma. Each benchmark's variance `s²` (on
//! `d` degrees of freedom) is taken as drawn from a scaled inverse-χ² prior with `d₀` degrees
//! of freedom and scale `s₀²`; the posterior variance is
//! `s̃² = (d₀·s₀² + d·s²) / (d₀ + d)` and the moderated t statistic has `d₀ + d` degrees of
//! freedom. `d₀` and `s₀²` are estimated by matching the first two moments of `log s²`
//! (Smyth 2004, §6.2): `e = log s² − ψ(d/2) + log(d/2)`, `ψ′(d₀/2) = var(e) − mean ψ′(d/2)`,
//! `s₀² = exp(mean e + ψ(d₀/2) − log(d₀/2))`. When the variances vary no more than their
//! sampling error explains, `d₀` is infinite (one common variance); when they vary much more,
//! `d₀` is small and each benchmark keeps essentially its own variance.

use statrs::function::gamma::digamma;

/// The fitted prior: `d₀` (may be infinite) and `s₀²`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VariancePrior {
    pub df: f64,
    pub scale: f64,
    /// Whether a posterior variance is kept at or above the benchmark's own (see
    /// [`VariancePrior::moderate`]): true for the one-scale prior of [`fit_prior`], false for
    /// a prior whose scale already follows each benchmark's noise (the `trend` module).
    pub never_below_own: bool,
}

impl VariancePrior {
    /// No borrowing: each benchmark uses its own variance.
    pub const NONE: VariancePrior = VariancePrior {
        df: 0.0,
        scale: 0.0,
        never_below_own: true,
    };

    /// The posterior variance and its degrees of freedom for a benchmark with variance `s2`
    /// on `d` degrees of freedom. With one scale for all benchmarks it is never below `s2`
    /// itself: borrowing may widen a quiet benchmark's interval and lends it degrees of
    /// freedom, but a benchmark noisier than the rest keeps its own variance. Benchmark noise
    /// is heterogeneous in a fixed way (some are always noisier), which the exchangeable prior
    /// of Smyth (2004) does not model; shrinking those variances down is where false calls
    /// came from in the synthetic evaluation. A trended prior models that heterogeneity, and
    /// its posterior is Smyth's, both ways.
    pub fn moderate(&self, s2: f64, d: f64) -> (f64, f64) {
        let floor = if self.never_below_own { s2 } else { 0.0 };
        if self.df <= 0.0 {
            (s2, d)
        } else if self.df.is_infinite() {
            (self.scale.max(floor), f64::INFINITY)
        } else {
            (
                ((self.df * self.scale + d * s2) / (self.df + d)).max(floor),
                self.df + d,
            )
        }
    }
}

/// Fewest benchmarks for which a prior is fitted; with fewer there is nothing to borrow from.
pub const MIN_BENCHMARKS_FOR_PRIOR: usize = 3;

/// Fits the prior from `(s², d)` pairs (variances with positive degrees of freedom; zero or
/// non-finite variances are left out). Returns [`VariancePrior::NONE`] with fewer than
/// [`MIN_BENCHMARKS_FOR_PRIOR`] usable variances.
pub fn fit_prior(variances: &[(f64, f64)]) -> VariancePrior {
    let usable: Vec<(f64, f64)> = variances
        .iter()
        .copied()
        .filter(|&(s2, d)| s2.is_finite() && s2 > 0.0 && d > 0.0)
        .collect();
    let n = usable.len();
    if n < MIN_BENCHMARKS_FOR_PRIOR {
        return VariancePrior::NONE;
    }
    let e: Vec<f64> = usable
        .iter()
        .map(|&(s2, d)| s2.ln() - digamma(d / 2.0) + (d / 2.0).ln())
        .collect();
    let mean = e.iter().sum::<f64>() / n as f64;
    let spread = e.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        - usable.iter().map(|&(_, d)| trigamma(d / 2.0)).sum::<f64>() / n as f64;
    if spread <= 0.0 {
        return VariancePrior {
            df: f64::INFINITY,
            scale: mean.exp(),
            never_below_own: true,
        };
    }
    let d0 = 2.0 * trigamma_inverse(spread);
    VariancePrior {
        df: d0,
        scale: (mean + digamma(d0 / 2.0) - (d0 / 2.0).ln()).exp(),
        never_below_own: true,
    }
}

/// ψ′(x) for x > 0: recurrence up to x ≥ 10, then the asymptotic series (Abramowitz & Stegun
/// 6.4.12), accurate to about 1e-12.
pub fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 10.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let x2 = 1.0 / (x * x);
    acc + 1.0 / x
        + x2 / 2.0
        + (1.0 / x) * x2 * (1.0 / 6.0 - x2 * (1.0 / 30.0 - x2 * (1.0 / 42.0 - x2 / 30.0)))
}

/// ψ″(x) for x > 0, the same way (Abramowitz & Stegun 6.4.13).
fn tetragamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 10.0 {
        acc -= 2.0 / (x * x * x);
        x += 1.0;
    }
    let x2 = 1.0 / (x * x);
    acc - x2 - x2 / x - x2 * x2 * (0.5 - x2 * (1.0 / 6.0 - x2 * (1.0 / 6.0 - x2 * 0.3)))
}

/// The x with ψ′(x) = y, by Newton's method from limma's starting point (Smyth 2004,
/// appendix): monotone convergence on the convex function 1/ψ′.
pub(super) fn trigamma_inverse(y: f64) -> f64 {
    if y > 1e7 {
        return 1.0 / y.sqrt();
    }
    if y < 1e-6 {
        return 1.0 / y;
    }
    let mut x = 0.5 + 1.0 / y;
    for _ in 0..100 {
        let tri = trigamma(x);
        let step = tri * (1.0 - tri / y) / tetragamma(x);
        x += step;
        if -step / x < 1e-10 {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polygamma_values() {
        // ψ′(1) = π²/6, ψ′(1/2) = π²/2, ψ″(1) = −2ζ(3).
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-10);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-10);
        assert!((tetragamma(1.0) + 2.0 * 1.202_056_903_159_594).abs() < 1e-9);
        for y in [0.01, 0.3, 2.0, 50.0] {
            assert!((trigamma(trigamma_inverse(y)) - y).abs() < 1e-8 * y.max(1.0));
        }
    }

    fn chi2_variances(rng: &mut super::super::Xoshiro256, scales: &[f64], d: usize) -> Vec<f64> {
        scales
            .iter()
            .map(|&s| {
                let ss: f64 = (0..d)
                    .map(|_| {
                        let u1 = rng.next_f64().max(1e-300);
                        let u2 = rng.next_f64();
                        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                        z * z
                    })
                    .sum();
                s * ss / d as f64
            })
            .collect()
    }

    #[test]
    fn one_common_variance_gives_a_large_prior_df() {
        let mut rng = super::super::Xoshiro256::seed_from(3);
        let v = chi2_variances(&mut rng, &[4.0; 400], 4);
        let prior = fit_prior(&v.iter().map(|&s| (s, 4.0)).collect::<Vec<_>>());
        assert!(prior.df > 50.0, "{prior:?}");
        assert!((prior.scale - 4.0).abs() < 0.4, "{prior:?}");
    }

    #[test]
    fn very_different_variances_borrow_little() {
        let mut rng = super::super::Xoshiro256::seed_from(4);
        let scales: Vec<f64> = (0..300)
            .map(|i| 10f64.powf((i % 30) as f64 / 10.0))
            .collect();
        let v = chi2_variances(&mut rng, &scales, 8);
        let prior = fit_prior(&v.iter().map(|&s| (s, 8.0)).collect::<Vec<_>>());
        assert!(prior.df < 3.0, "{prior:?}");
        let (post, df) = prior.moderate(100.0, 8.0);
        assert!(post >= 100.0 && df < 11.0, "{post} {df}");
        // A quiet benchmark is pulled up towards the prior, never a noisy one down.
        let (quiet, _) = prior.moderate(0.01, 8.0);
        assert!(quiet > 0.01, "{quiet}");
    }

    #[test]
    fn too_few_benchmarks_means_no_prior() {
        assert_eq!(fit_prior(&[(1.0, 2.0), (2.0, 2.0)]), VariancePrior::NONE);
        assert_eq!(VariancePrior::NONE.moderate(3.0, 4.0), (3.0, 4.0));
        // Zero variances are not usable.
        assert_eq!(
            fit_prior(&[(0.0, 2.0), (0.0, 2.0), (1.0, 2.0)]),
            VariancePrior::NONE
        );
    }
}
