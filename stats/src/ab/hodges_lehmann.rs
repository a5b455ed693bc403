//! Hodges–Lehmann shift estimate between candidate and baseline: the location shift that
//! matches the Mann-Whitney test (it is the shift that makes U centred), far more efficient
//! than a difference of medians and still robust to a few wild samples.
//!
//! Estimator: the median of all n₁·n₂ pairwise differences cand_j − base_i (Hodges & Lehmann,
//! "Estimates of location based on rank tests", *Ann. Math. Statist.* 34, 1963, §4; Lehmann,
//! *Nonparametrics*, 1975, §2.5). Its asymptotic efficiency relative to the difference of
//! means is 0.955 under normal noise and never below 0.864, against 0.637 for the difference of
//! medians. [`hodges_lehmann_ratio`] applies it to logarithms, giving a multiplicative shift for
//! timings, whose noise is multiplicative.

use super::AbError;
use super::bootstrap::median_in_place;

/// Median of the pairwise differences `cand[j] − base[i]`.
///
/// O(n₁n₂) memory and time (one selection), fine for repetition counts up to a few thousand.
/// Errors for empty or non-finite input.
pub fn hodges_lehmann(base: &[f64], cand: &[f64]) -> Result<f64, AbError> {
    validate(base)?;
    validate(cand)?;
    let mut diffs = Vec::with_capacity(base.len() * cand.len());
    for &c in cand {
        diffs.extend(base.iter().map(|&b| c - b));
    }
    Ok(median_in_place(&mut diffs))
}

/// Multiplicative Hodges–Lehmann shift: exp of the median of ln(cand[j]) − ln(base[i]).
/// Errors unless every value is finite and positive.
pub fn hodges_lehmann_ratio(base: &[f64], cand: &[f64]) -> Result<f64, AbError> {
    if base.iter().chain(cand).any(|&v| v <= 0.0) {
        return Err(AbError::NonPositive);
    }
    let lb: Vec<f64> = base.iter().map(|v| v.ln()).collect();
    let lc: Vec<f64> = cand.iter().map(|v| v.ln()).collect();
    Ok(hodges_lehmann(&lb, &lc)?.exp())
}

fn validate(s: &[f64]) -> Result<(), AbError> {
    if s.is_empty() {
        return Err(AbError::Empty);
    }
    if s.iter().any(|v| !v.is_finite()) {
        return Err(AbError::NonFinite);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Differences of [4, 6] − [1, 2, 3]: 3, 2, 1, 5, 4, 3 → median 3.
        assert_eq!(hodges_lehmann(&[1.0, 2.0, 3.0], &[4.0, 6.0]).unwrap(), 3.0);
        // Pure shift by 10 is recovered exactly, whatever the spread.
        let base = [1.0, 7.0, 3.0, 9.0, 4.0];
        let cand: Vec<f64> = base.iter().map(|v| v + 10.0).collect();
        assert_eq!(hodges_lehmann(&base, &cand).unwrap(), 10.0);
        // Antisymmetric.
        assert_eq!(hodges_lehmann(&cand, &base).unwrap(), -10.0);
        // Even count of differences averages the middle two: [2] − [1, 3] = 1, −1 → 0.
        assert_eq!(hodges_lehmann(&[1.0, 3.0], &[2.0]).unwrap(), 0.0);
    }

    #[test]
    fn robust_to_one_outlier() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let cand = [102.0, 103.0, 101.0, 102.5, 1000.0];
        let hl = hodges_lehmann(&base, &cand).unwrap();
        assert!((hl - 2.0).abs() < 1.0, "{hl}");
    }

    #[test]
    fn ratio_form() {
        let base = [10.0, 20.0, 40.0];
        let cand: Vec<f64> = base.iter().map(|v| v * 1.1).collect();
        assert!((hodges_lehmann_ratio(&base, &cand).unwrap() - 1.1).abs() < 1e-12);
        assert_eq!(
            hodges_lehmann_ratio(&[0.0], &[1.0]),
            Err(AbError::NonPositive)
        );
        assert_eq!(hodges_lehmann(&[], &[1.0]), Err(AbError::Empty));
    }
}
