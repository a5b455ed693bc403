//! The testbed's noise record in change detection (issue 27, "3× steps found when the testbed's
//! noise record supplies the noise"): on a short history the residual variance of ten points
//! has eight degrees of freedom, and the t quantile at the merge level (0.001) on eight degrees
//! of freedom is 5.04 against 3.29 for a known variance, so most of a 3σ step's power is lost
//! to not knowing σ. The record, made of earlier A/A pairs on the same testbed
//! (`pitwall calibrate`, pull requests), knows σ on many more degrees of freedom; pooling it
//! with the data's own estimate gives the test those degrees of freedom back.
//!
//! The method: the pooled variance (ν_d·s_d² + ν_r·s_r²)/(ν_d + ν_r) on ν_d + ν_r degrees of
//! freedom, the usual pooled estimate of a common variance from independent samples (Welch
//! 1947 for the unpooled case; Box, Hunter & Hunter, *Statistics for Experimenters*, §3.1),
//! used only when the data do not contradict the record: a one-sided F test of s_d²/s_r² on
//! (ν_d, ν_r) degrees of freedom at `KNOWN_NOISE_MIN_P` (history runs taken on other days than
//! the record's pairs can have day-to-day offsets the record never saw; then the data's own
//! variance alone is used, as without a record). The same check sets the record aside in a
//! pair's comparison (`pitwall_stats::ab::noise`).

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

/// Below this p-value of the F test (the data's variance above the record's) the record is
/// set aside for that test: the points vary more than the testbed's record says they should.
pub const KNOWN_NOISE_MIN_P: f64 = 0.05;

/// What the testbed's noise record says of one series: the variance of one point's natural
/// log between processes (one point being the geometric mean of its replicates, so the
/// record's per-replicate variance divided by the replicates a point has) and its degrees of
/// freedom. Detection works on the values, not their logs: on a stretch at level m the
/// variance of a value is about `log_var`·m² (the delta method).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KnownNoise {
    pub log_var: f64,
    pub dof: f64,
}

/// The variance and degrees of freedom a step test uses on a stretch at level `level`, given
/// the data's own `var` on `dof` degrees of freedom and the record `known`: pooled when the
/// data agree with the record, the data's own otherwise. The third value says whether the
/// record was pooled in.
pub(crate) fn pooled(
    var: f64,
    dof: f64,
    level: f64,
    known: Option<KnownNoise>,
) -> (f64, f64, bool) {
    let Some(k) = known else {
        return (var, dof, false);
    };
    let record = k.log_var * level * level;
    if !(record > 0.0 && record.is_finite() && k.dof >= 1.0 && dof >= 1.0 && var.is_finite()) {
        return (var, dof, false);
    }
    let Ok(f) = FisherSnedecor::new(dof, k.dof) else {
        return (var, dof, false);
    };
    if f.sf(var / record) < KNOWN_NOISE_MIN_P {
        return (var, dof, false);
    }
    let total = dof + k.dof;
    ((dof * var + k.dof * record) / total, total, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreeing_data_pool_with_the_record() {
        let k = KnownNoise {
            log_var: 1e-4,
            dof: 24.0,
        };
        // Level 10: the record's variance is 1e-2; the data's 1.2e-2 on 8 agrees.
        let (var, dof, used) = pooled(1.2e-2, 8.0, 10.0, Some(k));
        assert!(used);
        assert_eq!(dof, 32.0);
        assert!((var - (8.0 * 1.2e-2 + 24.0 * 1e-2) / 32.0).abs() < 1e-12);
    }

    #[test]
    fn data_much_noisier_than_the_record_set_it_aside() {
        let k = KnownNoise {
            log_var: 1e-4,
            dof: 24.0,
        };
        let (var, dof, used) = pooled(1e-1, 8.0, 10.0, Some(k));
        assert!(!used);
        assert_eq!((var, dof), (1e-1, 8.0));
    }

    #[test]
    fn no_or_degenerate_record_is_the_data_alone() {
        assert_eq!(pooled(2.0, 8.0, 10.0, None), (2.0, 8.0, false));
        let zero = KnownNoise {
            log_var: 0.0,
            dof: 10.0,
        };
        assert_eq!(pooled(2.0, 8.0, 10.0, Some(zero)), (2.0, 8.0, false));
        let no_dof = KnownNoise {
            log_var: 1e-4,
            dof: 0.5,
        };
        assert_eq!(pooled(2.0, 8.0, 10.0, Some(no_dof)), (2.0, 8.0, false));
    }
}
