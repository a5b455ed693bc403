//! Group-sequential boundaries: a comparison may be looked at after every round and stopped as
//! soon as it is decided, without the inflation of error that repeated looks at a fixed-sample
//! test cause.
//!
//! # Method
//! Lan & DeMets (1983, *Biometrika* 70, "Discrete sequential boundaries for clinical trials")
//! alpha spending. Looks happen after rounds `first_look, first_look + 1, …, max_looks`; the
//! information fraction of a look is `t = round / max_looks` (each round adds the same number
//! of replicates per side). A spending function `α(t)` says how much of the two-sided error
//! `α` may have been spent by `t`; the boundary `c_k` of look k is chosen so that, under no
//! difference, the probability of first crossing `|Z| ≥ c_k` at look k is `α(t_k) − α(t_{k−1})`.
//! That probability is computed exactly for the canonical joint distribution of sequential
//! z-statistics (Brownian motion observed at `t_1 < t_2 < …`) by the numerical integration of
//! Armitage, McPherson & Rowe (1969, *JRSS A* 132), as in Jennison & Turnbull, *Group
//! Sequential Methods with Applications to Clinical Trials* (2000), ch. 19.
//!
//! The intervals `estimate ± c_k · se` are then *repeated confidence intervals* (Jennison &
//! Turnbull 1989, *JRSS B* 51): with probability at least `1 − α` every one of them covers the
//! true value at once, so a decision read off any of them, at any look, whenever the looking
//! stops, keeps its error rate. With a t statistic (unknown variance) the z boundary is used at
//! the same nominal level (`t_df` quantile of `Φ(c_k)`), the usual approximation (Jennison &
//! Turnbull 2000, §3.9).
//!
//! The default spending is the power family `α(t) = α·t^1.5` (Kim & DeMets 1987): it spends
//! little at the first looks, when only 2–3 replicates per side exist and t intervals are very
//! wide, and keeps the last boundary close to the fixed-sample one ([`DEFAULT_SPENDING`]).

use statrs::distribution::{Continuous, ContinuousCDF, Normal};

/// How the error rate is spent over the looks.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spending {
    /// `α(t) = 2 − 2Φ(z_{α/2}/√t)`: little early, most at the end.
    OBrienFleming,
    /// `α(t) = α·ln(1 + (e − 1)t)`: about even over the looks.
    Pocock,
    /// `α(t) = α·t^ρ` (Kim & DeMets 1987, *Biometrics* 43): ρ = 1 is close to Pocock, ρ ≈ 3
    /// to O'Brien–Fleming.
    Power(f64),
}

/// When a comparison is looked at, and how its error rate is spent. A pair measured until
/// decided keeps its record (`pitwall_schema::SequentialPlanRecord`, made and read back by
/// `pitwall_analysis::sequential`) so that its verdicts are read again with the same plan.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SequentialPlan {
    /// Round of the first look (the first batch).
    pub first_look: u32,
    /// Round of the last possible look.
    pub max_looks: u32,
    /// Two-sided error rate over all looks together.
    pub alpha: f64,
    pub spending: Spending,
}

/// The spending of `--until-decided`: the power family with ρ = 1.5, between Pocock (ρ ≈ 1)
/// and O'Brien–Fleming (ρ ≈ 3). In the synthetic evaluation (docs/STATISTICS.md; 2500
/// pair-trials of `stats/examples/ab_sequential_sim.rs` per setting, same data) ρ = 1.5 needed
/// 9.85 rounds per pair against 10.17 for ρ = 2 and 10.46 for ρ = 2.5, at the same detection
/// and false-positive rates within their noise; ρ = 1 let false positives rise to 0.8%: with
/// 2–3 replicates a side, early looks are worth little, but not nothing.
pub const DEFAULT_SPENDING: Spending = Spending::Power(1.5);

/// Plans whose boundaries are remembered per thread (a process uses one or two).
const MEMO_PLANS: usize = 8;

/// Grid points per look in the numerical integration (odd, so 0 is a point).
const GRID: usize = 401;

fn std_normal() -> Normal {
    Normal::new(0.0, 1.0).expect("unit normal")
}

impl SequentialPlan {
    /// A single look after `rounds` rounds: the fixed-sample test at level `alpha`.
    pub fn fixed(rounds: u32, alpha: f64) -> SequentialPlan {
        SequentialPlan {
            first_look: rounds.max(1),
            max_looks: rounds.max(1),
            alpha,
            spending: Spending::OBrienFleming,
        }
    }

    /// Looks after every round from `first_look` to `max_looks`, with [`DEFAULT_SPENDING`].
    pub fn until_decided(first_look: u32, max_looks: u32, alpha: f64) -> SequentialPlan {
        let first_look = first_look.max(1);
        SequentialPlan {
            first_look,
            max_looks: max_looks.max(first_look),
            alpha,
            spending: DEFAULT_SPENDING,
        }
    }

    /// Whether a look after `round` may be the last one before `max_looks`.
    pub fn is_final(&self, round: u32) -> bool {
        round >= self.max_looks
    }

    /// Error spent by information fraction `t` (0 < t ≤ 1).
    fn spent(&self, t: f64) -> f64 {
        if t >= 1.0 {
            return self.alpha;
        }
        match self.spending {
            Spending::OBrienFleming => {
                let z = std_normal().inverse_cdf(1.0 - self.alpha / 2.0);
                2.0 * (1.0 - std_normal().cdf(z / t.sqrt()))
            }
            Spending::Pocock => self.alpha * (1.0 + (std::f64::consts::E - 1.0) * t).ln(),
            Spending::Power(rho) => self.alpha * t.powf(rho),
        }
    }

    /// The z boundaries of looks `first_look..=max_looks`, in order. The numerical
    /// integration costs milliseconds and every look of a pair recomputes the same plan, so
    /// results are remembered per thread.
    pub fn boundaries(&self) -> Vec<f64> {
        thread_local! {
            static MEMO: std::cell::RefCell<Vec<(SequentialPlan, Vec<f64>)>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        if let Some(b) = MEMO.with(|m| {
            m.borrow()
                .iter()
                .find(|(p, _)| p == self)
                .map(|(_, b)| b.clone())
        }) {
            return b;
        }
        let b = self.compute_boundaries();
        MEMO.with(|m| {
            let mut m = m.borrow_mut();
            if m.len() >= MEMO_PLANS {
                m.remove(0);
            }
            m.push((*self, b.clone()));
        });
        b
    }

    fn compute_boundaries(&self) -> Vec<f64> {
        let n = std_normal();
        let looks: Vec<f64> = (self.first_look..=self.max_looks)
            .map(|r| f64::from(r) / f64::from(self.max_looks))
            .collect();
        let mut out = Vec::with_capacity(looks.len());
        // Density of the score S_t = Z_t·√t over the continuation region of the last look.
        let mut grid: Vec<f64> = Vec::new();
        let mut dens: Vec<f64> = Vec::new();
        let mut spent = 0.0;
        let mut prev_t = 0.0;
        for (k, &t) in looks.iter().enumerate() {
            let target = (self.spent(t) - spent).max(1e-300);
            let c = if k == 0 {
                let c = n.inverse_cdf(1.0 - target / 2.0);
                spent += target;
                c
            } else {
                let dt = t - prev_t;
                let sd = dt.sqrt();
                let exceed = |c: f64| -> f64 {
                    let b = c * t.sqrt();
                    let f: Vec<f64> = grid
                        .iter()
                        .zip(&dens)
                        .map(|(&x, &d)| d * (n.sf((b - x) / sd) + n.cdf((-b - x) / sd)))
                        .collect();
                    trapezoid(&grid, &f)
                };
                let (mut lo, mut hi) = (0.0, 40.0);
                for _ in 0..80 {
                    let mid = 0.5 * (lo + hi);
                    if exceed(mid) > target {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                let c = 0.5 * (lo + hi);
                spent += exceed(c);
                c
            };
            out.push(c);
            // Carry the density of S over |S| < c·√t to the next look.
            let b = c * t.sqrt();
            let x: Vec<f64> = (0..GRID)
                .map(|i| -b + 2.0 * b * i as f64 / (GRID - 1) as f64)
                .collect();
            dens = if k == 0 {
                x.iter().map(|&v| n.pdf(v / t.sqrt()) / t.sqrt()).collect()
            } else {
                let sd = (t - prev_t).sqrt();
                x.iter()
                    .map(|&v| {
                        let f: Vec<f64> = grid
                            .iter()
                            .zip(&dens)
                            .map(|(&g, &d)| d * n.pdf((v - g) / sd) / sd)
                            .collect();
                        trapezoid(&grid, &f)
                    })
                    .collect()
            };
            grid = x;
            prev_t = t;
        }
        out
    }

    /// The z boundary of the look after `round` (clamped into the plan's looks).
    pub fn boundary_at(&self, boundaries: &[f64], round: u32) -> f64 {
        let i = round.clamp(self.first_look, self.max_looks) - self.first_look;
        boundaries[(i as usize).min(boundaries.len() - 1)]
    }
}

/// Trapezoidal rule over an evenly or unevenly spaced grid.
fn trapezoid(x: &[f64], f: &[f64]) -> f64 {
    x.windows(2)
        .zip(f.windows(2))
        .map(|(xs, fs)| 0.5 * (xs[1] - xs[0]) * (fs[0] + fs[1]))
        .sum()
}

/// Two-sided nominal level of a z boundary: `2(1 − Φ(c))`.
pub fn nominal_level(c: f64) -> f64 {
    2.0 * std_normal().sf(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_look_is_the_fixed_sample_test() {
        let p = SequentialPlan::fixed(5, 0.05);
        let b = p.boundaries();
        assert_eq!(b.len(), 1);
        assert!((b[0] - 1.959_964).abs() < 1e-4, "{b:?}");
        assert!((nominal_level(b[0]) - 0.05).abs() < 1e-9);
    }

    #[test]
    fn obrien_fleming_boundaries() {
        // Five equally spaced looks, two-sided 0.05, symmetric boundaries. The first is exact:
        // all of α(0.2) is spent there, so c₁ = z_{0.025}/√0.2. The rest agree with an
        // independent NumPy/SciPy implementation of the same recursion (2001-point grid).
        let p = SequentialPlan {
            spending: Spending::OBrienFleming,
            ..SequentialPlan::until_decided(1, 5, 0.05)
        };
        let b = p.boundaries();
        let want = [1.959_964 / 0.2_f64.sqrt(), 3.0997, 2.5534, 2.2538, 2.0635];
        for (got, want) in b.iter().zip(want) {
            assert!((got - want).abs() < 0.005, "{b:?}");
        }
    }

    #[test]
    fn power_spending_boundaries() {
        // α·t², five looks: the first is exact (z at α/25 two-sided); the rest agree with the
        // independent NumPy/SciPy recursion.
        let p = SequentialPlan {
            spending: Spending::Power(2.0),
            ..SequentialPlan::until_decided(1, 5, 0.05)
        };
        let b = p.boundaries();
        let want = [3.0902, 2.7141, 2.4728, 2.2799, 2.1140];
        for (got, want) in b.iter().zip(want) {
            assert!((got - want).abs() < 0.005, "{b:?}");
        }
        assert_eq!(
            SequentialPlan::until_decided(3, 15, 0.05).spending,
            DEFAULT_SPENDING
        );
    }

    #[test]
    fn pocock_spending_boundaries_are_nearly_flat() {
        // Lan–DeMets Pocock-type spending, 5 looks, 0.05: 2.438, 2.427, 2.410, 2.397, 2.389.
        let p = SequentialPlan {
            spending: Spending::Pocock,
            ..SequentialPlan::until_decided(1, 5, 0.05)
        };
        let b = p.boundaries();
        let want = [2.438, 2.427, 2.410, 2.397, 2.389];
        for (got, want) in b.iter().zip(want) {
            assert!((got - want).abs() < 0.01, "{b:?}");
        }
    }

    #[test]
    fn the_error_over_all_looks_is_alpha_by_simulation() {
        // Brownian motion under no difference, looked at after rounds 3..=15 of 15: the share
        // of paths that ever cross is α (within Monte Carlo error).
        let p = SequentialPlan::until_decided(3, 15, 0.05);
        let b = p.boundaries();
        let mut rng = super::super::Xoshiro256::seed_from(7);
        let mut normal = || {
            let u1 = rng.next_f64().max(1e-300);
            let u2 = rng.next_f64();
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let trials = 40_000;
        let mut crossed = 0;
        for _ in 0..trials {
            let mut s = 0.0;
            for r in 1..=15u32 {
                s += normal();
                if r >= 3 && (s / f64::from(r).sqrt()).abs() >= b[(r - 3) as usize] {
                    crossed += 1;
                    break;
                }
            }
        }
        let rate = crossed as f64 / trials as f64;
        assert!((rate - 0.05).abs() < 0.006, "crossing rate {rate}");
        // Looking every round at the fixed 1.96 would cross far more often.
        assert!(b.iter().all(|&c| c > 1.96));
    }
}
