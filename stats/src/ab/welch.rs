//! Welch's unequal-variance t-test, reported next to the rank test as a second opinion on the
//! means (statrs has the t distribution but not the test).
//!
//! t = (x̄ − ȳ) / √(s²ₓ/nₓ + s²ᵧ/nᵧ) with sample variances (ddof = 1), degrees of freedom by
//! the Welch–Satterthwaite equation (Welch 1947, *Biometrika* 34, eq. 9; Satterthwaite 1946),
//! two-sided p = 2·P(T_df > |t|). Matches `scipy.stats.ttest_ind(x, y, equal_var=False)`,
//! checked by `stats/golden/welch.json`.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use super::AbError;

/// Result of [`welch_t_test`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WelchResult {
    /// t statistic (positive when mean(x) > mean(y)).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Welch's t-test of `x` against `y`, two-sided.
///
/// Needs at least two finite values per sample. When both variances are zero SciPy returns NaN;
/// here the test is decided outright instead: p = 1 for equal means (t = 0, df = nₓ + nᵧ − 2)
/// and p = 0 otherwise (t = ±∞), so callers never see NaN.
pub fn welch_t_test(x: &[f64], y: &[f64]) -> Result<WelchResult, AbError> {
    let (mx, vx) = mean_var(x)?;
    let (my, vy) = mean_var(y)?;
    let (nx, ny) = (x.len() as f64, y.len() as f64);
    let (ax, ay) = (vx / nx, vy / ny);
    let se2 = ax + ay;
    if se2 == 0.0 {
        let df = nx + ny - 2.0;
        return Ok(if mx == my {
            WelchResult {
                t: 0.0,
                df,
                p_value: 1.0,
            }
        } else {
            WelchResult {
                t: f64::INFINITY.copysign(mx - my),
                df,
                p_value: 0.0,
            }
        });
    }
    let t = (mx - my) / se2.sqrt();
    let df = se2 * se2 / (ax * ax / (nx - 1.0) + ay * ay / (ny - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).map_err(|_| AbError::Degenerate)?;
    // sf(|t|) keeps relative precision in the tail, where 1 − cdf would not.
    let p = (2.0 * dist.sf(t.abs())).min(1.0);
    Ok(WelchResult { t, df, p_value: p })
}

/// Mean and unbiased variance with a two-pass algorithm (numerically stable for the tiny
/// relative spreads of timings).
fn mean_var(s: &[f64]) -> Result<(f64, f64), AbError> {
    if s.len() < 2 {
        return Err(AbError::TooFewSamples {
            needed: 2,
            got: s.len(),
        });
    }
    if s.iter().any(|v| !v.is_finite()) {
        return Err(AbError::NonFinite);
    }
    let n = s.len() as f64;
    let mean = s.iter().sum::<f64>() / n;
    let var = s.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    Ok((mean, var))
}

/// Quantile of Student's t at probability `p` (the normal for very large df).
pub(super) fn t_quantile(p: f64, dof: f64) -> f64 {
    if !dof.is_finite() || dof > 1e6 {
        return Normal::new(0.0, 1.0).expect("unit normal").inverse_cdf(p);
    }
    StudentsT::new(0.0, 1.0, dof)
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(f64::NAN)
}

/// Upper tail of Student's t at `x` (the normal for very large df).
pub(super) fn t_sf(x: f64, dof: f64) -> f64 {
    if !dof.is_finite() || dof > 1e6 {
        return Normal::new(0.0, 1.0).expect("unit normal").sf(x);
    }
    StudentsT::new(0.0, 1.0, dof)
        .map(|t| t.sf(x))
        .unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_example() {
        // scipy.stats.ttest_ind([1,2,3,4,5], [2,4,6,8,10], equal_var=False):
        // t = -1.8973665961010275, df = 5.882352941176471, p = 0.10753119493062728
        let r = welch_t_test(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert!((r.t + 1.897_366_596_101_027_5).abs() < 1e-12);
        assert!((r.df - 5.882_352_941_176_471).abs() < 1e-12);
        assert!((r.p_value - 0.107_531_194_930_627_28).abs() < 1e-9);
    }

    #[test]
    fn zero_variance_is_decided() {
        let r = welch_t_test(&[2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap();
        assert_eq!(r.p_value, 1.0);
        let r = welch_t_test(&[2.0, 2.0], &[3.0, 3.0]).unwrap();
        assert_eq!(r.p_value, 0.0);
        assert!(r.t < 0.0);
    }

    #[test]
    fn too_few() {
        assert!(matches!(
            welch_t_test(&[1.0], &[1.0, 2.0]),
            Err(AbError::TooFewSamples { needed: 2, got: 1 })
        ));
    }
}
