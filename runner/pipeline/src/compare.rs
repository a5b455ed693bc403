//! `pitwall compare` with a project's settings: each benchmark's threshold from the
//! configuration and the environment rules of the host's fingerprint, around the one comparison
//! of `pitwall_analysis::compare`.

use pitwall_analysis::comparison::ComparisonReport;
use pitwall_analysis::{NoiseBook, ThresholdRule};
use pitwall_stats::ab::AbConfig;

pub use pitwall_analysis::compare::{CompareOptions, replicates_of, round_orders};

use crate::source::Side;
use pitwall_engine::config::Config;

/// Threshold rule of a suite's benchmarks: `--threshold`, else the suite's `threshold_pct`
/// (a number, or `"auto"`), else `[thresholds] threshold_pct = "auto"`, else
/// `[thresholds] regression_pct`. `"auto"` never goes below `regression_pct` and looks as far
/// as `[ci] max_rounds`.
pub fn threshold_rule(config: &Config, override_pct: Option<f64>, suite: &str) -> ThresholdRule {
    if let Some(p) = override_pct {
        return ThresholdRule::Fixed(p);
    }
    let own = config.suites.iter().find(|s| s.name == suite);
    if let Some(p) = own.and_then(|s| s.threshold_pct) {
        return ThresholdRule::Fixed(p);
    }
    if own.is_some_and(|s| s.threshold_auto) || config.thresholds.auto {
        ThresholdRule::Auto {
            floor_pct: config.thresholds.regression_pct,
            max_rounds: config.ci.max_rounds,
        }
    } else {
        ThresholdRule::Fixed(config.thresholds.regression_pct)
    }
}

/// Compares two sides. `override_pct` is `--threshold`; `noise` is the testbed's noise book of
/// earlier pairs (`crate::noise`), [`NoiseBook::empty`] for none.
pub fn compare(
    baseline: &Side,
    candidate: &Side,
    config: &Config,
    override_pct: Option<f64>,
    ab: &AbConfig,
    options: CompareOptions,
    noise: &NoiseBook,
) -> ComparisonReport {
    let env_mismatch = match (&baseline.run, &candidate.run) {
        (Some(a), Some(b)) => {
            pitwall_host::fingerprint::differences(&a.fingerprint, &b.fingerprint)
        }
        _ => Vec::new(),
    };
    pitwall_analysis::compare::compare(
        baseline,
        candidate,
        &|suite| threshold_rule(config, override_pct, suite),
        env_mismatch,
        ab,
        options,
        noise,
    )
}
