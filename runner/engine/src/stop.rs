//! When to stop sampling: the relative half-width of the median's 95% interval is under the
//! target, or the time budget is spent, never before `min_samples` (nvbench and criterion stop
//! on a noise target with a floor and a budget in the same way).

use std::time::Duration;

use pitwall_stats::summary::median_ci_rel_half_width;

use crate::config::Sampling;

/// A configured number of seconds as a `Duration`, never panicking: negative or NaN is zero,
/// too large for a `Duration` is `Duration::MAX` (the config loader bounds these values; this
/// is the backstop for a `Sampling` built in code).
pub fn duration_from_secs(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).unwrap_or(if secs > 0.0 {
        Duration::MAX
    } else {
        Duration::ZERO
    })
}

/// Why sampling of a benchmark ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The interval of the median reached the target precision.
    Converged,
    /// `max_time_s` was spent first.
    TimeBudget,
    /// `max_samples` were taken first.
    MaxSamples,
    /// The hard `timeout_s` passed (only possible when one sample is very long).
    Timeout,
}

/// The stopping rule of one benchmark.
#[derive(Debug, Clone, Copy)]
pub struct StopRule {
    pub min_samples: usize,
    pub max_samples: usize,
    pub target_rel_ci: f64,
    pub max_time_s: f64,
    pub timeout_s: f64,
}

impl StopRule {
    pub fn from_sampling(s: &Sampling) -> StopRule {
        StopRule {
            min_samples: s.min_samples as usize,
            max_samples: s.max_samples as usize,
            target_rel_ci: s.target_rel_ci,
            max_time_s: s.max_time_s,
            timeout_s: s.timeout_s,
        }
    }

    /// Decides after a sample; `sorted` holds all samples so far in ascending order and
    /// `elapsed_s` is the time spent sampling. `None` means take another sample.
    pub fn decide(&self, sorted: &[f64], elapsed_s: f64) -> Option<StopReason> {
        let n = sorted.len();
        if elapsed_s >= self.timeout_s {
            return Some(StopReason::Timeout);
        }
        if n >= self.max_samples {
            return Some(StopReason::MaxSamples);
        }
        if n < self.min_samples {
            return None;
        }
        if median_ci_rel_half_width(sorted).is_some_and(|w| w <= self.target_rel_ci) {
            return Some(StopReason::Converged);
        }
        (elapsed_s >= self.max_time_s).then_some(StopReason::TimeBudget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> StopRule {
        StopRule {
            min_samples: 10,
            max_samples: 50,
            target_rel_ci: 0.01,
            max_time_s: 1.0,
            timeout_s: 5.0,
        }
    }

    #[test]
    fn never_stops_before_min_samples_unless_timeout() {
        let flat = vec![1.0; 9];
        assert_eq!(rule().decide(&flat, 2.0), None);
        assert_eq!(rule().decide(&flat, 5.0), Some(StopReason::Timeout));
    }

    #[test]
    fn converges_on_tight_samples_and_not_on_noisy_ones() {
        let tight: Vec<f64> = (0..10).map(|i| 100.0 + i as f64 * 0.01).collect();
        assert_eq!(rule().decide(&tight, 0.1), Some(StopReason::Converged));
        let noisy: Vec<f64> = (0..10).map(|i| 100.0 + i as f64 * 10.0).collect();
        assert_eq!(rule().decide(&noisy, 0.1), None);
        assert_eq!(rule().decide(&noisy, 1.0), Some(StopReason::TimeBudget));
        let many: Vec<f64> = (0..50).map(|i| 100.0 + i as f64 * 10.0).collect();
        assert_eq!(rule().decide(&many, 0.1), Some(StopReason::MaxSamples));
    }

    #[test]
    fn seconds_become_durations_without_panicking() {
        assert_eq!(duration_from_secs(1.5), Duration::from_millis(1500));
        assert_eq!(duration_from_secs(1e300), Duration::MAX);
        assert_eq!(duration_from_secs(f64::INFINITY), Duration::MAX);
        assert_eq!(duration_from_secs(-1.0), Duration::ZERO);
        assert_eq!(duration_from_secs(f64::NAN), Duration::ZERO);
    }
}
