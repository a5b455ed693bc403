//! `pitwall compare` with a project's settings: each benchmark's threshold from the
//! configuration and the environment rules of the host's fingerprint, around the one comparison
//! of `pitwall_analysis::compare`.

use pitwall_analysis::comparison::ComparisonReport;
use pitwall_stats::ab::AbConfig;

pub use pitwall_analysis::compare::{CompareOptions, replicates_of, round_orders};

use crate::source::Side;
use pitwall_engine::config::Config;

/// Threshold for a benchmark in percent: `--threshold`, else its suite's `threshold_pct`, else
/// `[thresholds] regression_pct`.
fn threshold_pct(config: &Config, override_pct: Option<f64>, suite: &str) -> f64 {
    override_pct
        .or_else(|| {
            config
                .suites
                .iter()
                .find(|s| s.name == suite)
                .and_then(|s| s.threshold_pct)
        })
        .unwrap_or(config.thresholds.regression_pct)
}

/// Compares two sides. `override_pct` is `--threshold`.
pub fn compare(
    baseline: &Side,
    candidate: &Side,
    config: &Config,
    override_pct: Option<f64>,
    ab: &AbConfig,
    options: CompareOptions,
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
        &|suite| threshold_pct(config, override_pct, suite),
        env_mismatch,
        ab,
        options,
    )
}
