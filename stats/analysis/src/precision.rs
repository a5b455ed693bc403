//! Whether a result reached the precision its sampling aimed for. Each suite samples until the
//! median's 95% interval is within `target_ci_pct` of it (or a budget runs out first); a run
//! records those targets (`pitwall_schema::sections::SamplingTargets`), and a result whose
//! interval stayed wider is `noisy`: its median is shown, but not as precisely as asked
//! (issue 25: a run's table said `ok` beside ±CI of 17–162% with a ±1% target). The table,
//! the JSON and the HTML report all read it from here.

use pitwall_schema::sections::SamplingTargets;
use pitwall_schema::{BenchmarkResult, ResultStatus, Run};
use pitwall_stats::Summary;
use serde::Serialize;

/// A result's precision: what its suite aimed for and what it reached, both as the relative
/// half-width of the median's 95% interval, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Precision {
    pub target_ci_pct: f64,
    pub reached_ci_pct: f64,
}

impl Precision {
    /// The interval is wider than the target.
    pub fn noisy(&self) -> bool {
        self.reached_ci_pct > self.target_ci_pct
    }

    /// `±17% reached, target ±1%`.
    pub fn describe(&self) -> String {
        format!(
            "±{} reached, target ±{}",
            crate::number::pct(self.reached_ci_pct / 100.0),
            crate::number::pct(self.target_ci_pct / 100.0)
        )
    }
}

/// The target of `suite` in `run`, when the run recorded one.
pub fn target_pct(run: &Run, suite: &str) -> Option<f64> {
    let targets: SamplingTargets = run.fingerprint.section()?;
    targets
        .0
        .get(suite)
        .copied()
        .filter(|t| t.is_finite() && *t > 0.0)
}

/// The precision of result `r` of `run`: for an `ok` result with an interval, in a run that
/// recorded its suite's target. The interval is the one the run's table shows.
pub fn of_result(run: &Run, r: &BenchmarkResult) -> Option<Precision> {
    if r.status != ResultStatus::Ok {
        return None;
    }
    let reached = Summary::of(&r.samples)?.ci_rel_half_width()?;
    Some(Precision {
        target_ci_pct: target_pct(run, &r.suite)?,
        reached_ci_pct: 100.0 * reached,
    })
}

/// The precision of an interval `ci` around `value` against `target_ci_pct` (a history
/// point's interval, whose runs recorded that target).
pub fn of_interval(value: f64, ci: (f64, f64), target_ci_pct: f64) -> Option<Precision> {
    if !(value.is_finite() && value != 0.0 && ci.0.is_finite() && ci.1.is_finite()) {
        return None;
    }
    Some(Precision {
        target_ci_pct,
        reached_ci_pct: 100.0 * (ci.1 - ci.0) / 2.0 / value.abs(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::{Direction, Fingerprint, RunStatus, Unit};

    fn run_with(target: Option<f64>, samples: Vec<f64>) -> Run {
        let mut fingerprint = Fingerprint::default();
        if let Some(t) = target {
            fingerprint.set_section(&SamplingTargets([("toy".to_string(), t)].into()));
        }
        Run {
            exclusion: None,
            contention: None,
            id: "r".into(),
            project: "p".into(),
            commit: "c".into(),
            branch: None,
            testbed: None,
            role: None,
            started_at: "2026-12-04T10:00:00Z".into(),
            finished_at: "2026-12-04T10:00:01Z".into(),
            config_hash: "h".into(),
            fingerprint,
            status: RunStatus::Complete,
            commit_info: None,
            error: None,
            pair: None,
            results: vec![BenchmarkResult {
                suite: "toy".into(),
                name: "sort".into(),
                params: Default::default(),
                measure: "time".into(),
                unit: Unit::new("ns"),
                direction: Direction::LowerIsBetter,
                status: ResultStatus::Ok,
                error: None,
                samples,
                sample_meta: vec![],
                replicates: vec![],
                summary: None,
            }],
        }
    }

    #[test]
    fn an_interval_wider_than_its_target_is_noisy() {
        // Spread ±20% around 100: the median's interval is far wider than ±1%.
        let wide: Vec<f64> = (0..20).map(|i| 80.0 + 2.0 * f64::from(i)).collect();
        let run = run_with(Some(1.0), wide);
        let p = of_result(&run, &run.results[0]).unwrap();
        assert!(p.noisy(), "{p:?}");
        assert_eq!(p.target_ci_pct, 1.0);
        assert!(p.reached_ci_pct > 5.0, "{p:?}");
        assert!(
            p.describe().contains("reached, target ±1"),
            "{}",
            p.describe()
        );
        // Tight samples meet the same target.
        let tight: Vec<f64> = (0..20).map(|i| 100.0 + 0.01 * f64::from(i)).collect();
        let run = run_with(Some(1.0), tight);
        assert!(!of_result(&run, &run.results[0]).unwrap().noisy());
    }

    #[test]
    fn runs_without_targets_and_results_that_are_not_ok_are_never_flagged() {
        let wide: Vec<f64> = (0..20).map(|i| 80.0 + 2.0 * f64::from(i)).collect();
        let run = run_with(None, wide.clone());
        assert_eq!(of_result(&run, &run.results[0]), None);
        let mut run = run_with(Some(1.0), wide);
        run.results[0].status = ResultStatus::Implausible;
        assert_eq!(of_result(&run, &run.results[0]), None);
        assert_eq!(target_pct(&run, "other"), None);
        let p = of_interval(100.0, (95.0, 105.0), 1.0).unwrap();
        assert!((p.reached_ci_pct - 5.0).abs() < 1e-12 && p.noisy());
        assert_eq!(of_interval(0.0, (1.0, 2.0), 1.0), None);
    }
}
