//! Robust summaries of raw samples: median, quantiles, MAD and a distribution-free confidence
//! interval of the median, used by the measurement engine's stopping rule and by every table.

/// Quantile `q` in [0, 1] of `sorted` (ascending) by linear interpolation between order
/// statistics (Hyndman & Fan 1996, definition 7; the default of R and NumPy).
/// `None` for an empty slice.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let q = q.clamp(0.0, 1.0);
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// Quantile of unsorted samples (sorts a copy).
pub fn quantile(samples: &[f64], q: f64) -> Option<f64> {
    quantile_sorted(&sorted(samples), q)
}

/// Median of unsorted samples.
pub fn median(samples: &[f64]) -> Option<f64> {
    quantile(samples, 0.5)
}

/// Median absolute deviation (unscaled): median of |x − median|.
pub fn mad(samples: &[f64]) -> Option<f64> {
    let m = median(samples)?;
    let dev: Vec<f64> = samples.iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

/// Two-sided 95% confidence interval of the median from order statistics: with n samples the
/// number below the true median is Binomial(n, ½), so the interval runs from the j-th to the
/// k-th smallest sample with j, k = n/2 ∓ 1.96·√n/2 (normal approximation to the binomial;
/// Conover, *Practical Nonparametric Statistics*, 3rd ed., 1999, §3.2). Distribution-free, so
/// skewed timing noise does not distort it. `None` when n < 6 (no 95% interval exists).
pub fn median_ci(sorted: &[f64]) -> Option<(f64, f64)> {
    let n = sorted.len();
    if n < 6 {
        return None;
    }
    let half = 1.959_963_984_540_054 * (n as f64).sqrt() / 2.0;
    let centre = n as f64 / 2.0;
    // 1-based ranks, clamped to the sample.
    let j = ((centre - half).floor() as usize).max(1);
    let k = ((centre + half).ceil() as usize + 1).min(n);
    Some((sorted[j - 1], sorted[k - 1]))
}

/// One value from several replicates (benchmark processes) of the same code: their geometric
/// mean, with a 95% Student-t interval on the log scale from the spread between them when there
/// are at least two, exp(m ± t₀.₉₇₅,ₖ₋₁ · s/√k) (the between-process spread, the honest noise
/// of a re-measurement; Kalibera & Jones, ISMM 2013, §4). When some value is not positive
/// (counts at zero, signed measures) there is no geometric mean: the arithmetic mean is
/// returned, with the same interval on the linear scale. `None` for no value or a non-finite
/// result.
pub fn replicate_mean_ci(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let k = values.len();
    match values {
        [] => return None,
        // One replicate is its own value, exactly (exp(ln v) may differ in the last bit).
        [v] => return v.is_finite().then_some((*v, None)),
        _ => {}
    }
    let log_scale = values.iter().all(|v| *v > 0.0);
    let x: Vec<f64> = if log_scale {
        values.iter().map(|v| v.ln()).collect()
    } else {
        values.to_vec()
    };
    let mean = x.iter().sum::<f64>() / k as f64;
    let back = |v: f64| if log_scale { v.exp() } else { v };
    let centre = back(mean);
    if !centre.is_finite() {
        return None;
    }
    let ci = (k >= 2)
        .then(|| {
            let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
            let t = StudentsT::new(0.0, 1.0, (k - 1) as f64)
                .ok()?
                .inverse_cdf(0.975);
            let half = t * (var / k as f64).sqrt();
            let (lo, hi) = (back(mean - half), back(mean + half));
            (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
        })
        .flatten();
    Some((centre, ci))
}

/// Relative half-width of the median's 95% interval: (hi − lo) / 2 / |median|.
/// `None` when the interval does not exist or the median is zero.
pub fn median_ci_rel_half_width(sorted: &[f64]) -> Option<f64> {
    let (lo, hi) = median_ci(sorted)?;
    let m = quantile_sorted(sorted, 0.5)?;
    if m == 0.0 {
        return None;
    }
    Some((hi - lo) / 2.0 / m.abs())
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// What tables show of a sample set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    pub mad: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    /// 95% interval of the median, when n ≥ 6.
    pub median_ci: Option<(f64, f64)>,
}

impl Summary {
    /// Summarises samples; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let s = sorted(samples);
        let n = s.len();
        if n == 0 {
            return None;
        }
        let median = quantile_sorted(&s, 0.5)?;
        Some(Summary {
            n,
            min: s[0],
            max: s[n - 1],
            mean: s.iter().sum::<f64>() / n as f64,
            median,
            mad: mad(&s)?,
            p90: quantile_sorted(&s, 0.90)?,
            p99: quantile_sorted(&s, 0.99)?,
            p999: quantile_sorted(&s, 0.999)?,
            median_ci: median_ci(&s),
        })
    }

    /// Relative half-width of the median's interval, when it exists.
    pub fn ci_rel_half_width(&self) -> Option<f64> {
        let (lo, hi) = self.median_ci?;
        (self.median != 0.0).then(|| (hi - lo) / 2.0 / self.median.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_numpy_linear() {
        // numpy.quantile([1, 2, 3, 4, 10], [0, .25, .5, .9, 1]) = [1, 2, 3, 7.6, 10]
        let x = [10.0, 2.0, 4.0, 1.0, 3.0];
        assert_eq!(quantile(&x, 0.0), Some(1.0));
        assert_eq!(quantile(&x, 0.25), Some(2.0));
        assert_eq!(median(&x), Some(3.0));
        assert!((quantile(&x, 0.9).unwrap() - 7.6).abs() < 1e-12);
        assert_eq!(quantile(&x, 1.0), Some(10.0));
        assert_eq!(median(&[1.0, 2.0]), Some(1.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn mad_of_known_set() {
        // |x - 3| = [2, 1, 0, 1, 7] -> median 1
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 10.0]), Some(1.0));
    }

    #[test]
    fn median_ci_ranks() {
        let x: Vec<f64> = (1..=100).map(f64::from).collect();
        // n = 100: 50 ∓ 9.8 -> ranks 40 and 61 (Conover's table gives 40, 61).
        assert_eq!(median_ci(&x), Some((40.0, 61.0)));
        assert_eq!(median_ci(&x[..5]), None);
        let (lo, hi) = median_ci(&x[..10]).unwrap();
        assert!(lo <= 5.5 && hi >= 5.5 && lo >= 1.0 && hi <= 10.0);
    }

    #[test]
    fn ci_covers_true_median_about_95_percent() {
        // Deterministic LCG uniform samples on [0, 1): true median 0.5.
        let mut state: u64 = 42;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let trials = 2000;
        let mut covered = 0;
        for _ in 0..trials {
            let mut s: Vec<f64> = (0..40).map(|_| next()).collect();
            s.sort_by(f64::total_cmp);
            let (lo, hi) = median_ci(&s).unwrap();
            if lo <= 0.5 && 0.5 <= hi {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!((0.93..=0.985).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn summary_fields() {
        let x: Vec<f64> = (1..=1000).map(f64::from).collect();
        let s = Summary::of(&x).unwrap();
        assert_eq!(s.n, 1000);
        assert_eq!(s.median, 500.5);
        assert!((s.p999 - 999.001).abs() < 1e-9);
        assert!(s.ci_rel_half_width().unwrap() < 0.07);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn replicate_mean_is_geometric_with_a_between_replicate_interval() {
        let (m, ci) = replicate_mean_ci(&[10.0, 40.0]).unwrap();
        assert!((m - 20.0).abs() < 1e-9);
        // ln values 2.303, 3.689: mean 2.996, s = 0.980, se = ln 2, t(1) = 12.706.
        let (lo, hi) = ci.unwrap();
        assert!(
            (lo.ln() - (20f64.ln() - 12.706_2 * std::f64::consts::LN_2)).abs() < 1e-3,
            "{lo}"
        );
        assert!(
            (hi.ln() - (20f64.ln() + 12.706_2 * std::f64::consts::LN_2)).abs() < 1e-3,
            "{hi}"
        );
        assert_eq!(replicate_mean_ci(&[5.0]), Some((5.0, None)));
        assert_eq!(replicate_mean_ci(&[0.0, 2.0]).map(|r| r.0), Some(1.0));
        assert_eq!(replicate_mean_ci(&[]), None);
    }
}
