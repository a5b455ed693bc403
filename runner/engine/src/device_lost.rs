//! A benchmark that leaves its device unusable in the process (`BenchError::DeviceLost`: a
//! sticky CUDA error such as an illegal address poisons every later CUDA call of the process)
//! ends its worker: the benchmarks after it are not run there but listed as unfinished, each
//! with a failed result saying why, and pitwall runs them again in a fresh worker, as often as
//! it takes. In-process runs (no worker) keep the failed results.

use std::collections::BTreeSet;

use pitwall_schema::{Benchmark, BenchmarkResult, schema};

use crate::observer::RunObserver;
use crate::outcome::SuiteOutcome;

/// The failed result of a benchmark not run because `lost_by` left the device unusable.
pub(super) fn not_run(suite: &str, bench: &dyn Benchmark, lost_by: &str) -> BenchmarkResult {
    let id = bench.id();
    let msg = format!(
        "benchmark {}: not run: {lost_by} left the device unusable in this process",
        id.display()
    );
    let mut r = BenchmarkResult::failed(suite, &id.name, id.params.clone(), msg);
    if let Some(m) = bench.metrics().first() {
        r.measure = m.measure.clone();
        r.unit = m.unit.clone();
        r.direction = m.direction;
    }
    r
}

/// `first`, with its unfinished benchmarks run again by `rerun` (a fresh worker given only
/// those display names) until none is left: their placeholder results are replaced by the
/// fresh worker's. Each round runs at least the first of them, so it ends.
pub(super) fn rerun_unfinished(
    suite: &str,
    mut outcome: SuiteOutcome,
    observer: &dyn RunObserver,
    mut rerun: impl FnMut(&BTreeSet<String>) -> SuiteOutcome,
) -> SuiteOutcome {
    while !outcome.unfinished.is_empty() {
        let only: BTreeSet<String> = std::mem::take(&mut outcome.unfinished)
            .into_iter()
            .collect();
        observer.warning(
            suite,
            &format!(
                "{} benchmark(s) continue in a fresh worker: a benchmark left the device unusable in the last one",
                only.len()
            ),
        );
        let next = rerun(&only);
        outcome
            .results
            .retain(|r| !only.contains(&schema::display_name(&r.name, &r.params)));
        outcome.results.extend(next.results);
        outcome.notes.extend(next.notes);
        outcome.context.extend(next.context);
        if next.unfinished.len() < only.len() {
            outcome.unfinished = next.unfinished;
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use pitwall_schema::ResultStatus;

    use super::*;
    use crate::observer::NullObserver;

    fn outcome(results: &[(&str, bool)], unfinished: &[&str]) -> SuiteOutcome {
        SuiteOutcome {
            results: results
                .iter()
                .map(|&(name, ok)| {
                    let mut r =
                        BenchmarkResult::failed("kernel", name, BTreeMap::new(), "x".into());
                    if ok {
                        r.status = ResultStatus::Ok;
                        r.error = None;
                    }
                    r
                })
                .collect(),
            skipped: None,
            context: BTreeMap::new(),
            notes: Vec::new(),
            unfinished: unfinished.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Issue 23, defect 8: after a sticky error the rest runs in fresh workers, each given
    /// only what is left, and their results replace the placeholders.
    #[test]
    fn unfinished_benchmarks_run_again_in_fresh_workers_until_none_is_left() {
        // Worker 1: a ok, b lost the device, c and d not run. Worker 2 (c, d): c lost it
        // again, d not run. Worker 3 (d): ok.
        let first = outcome(
            &[("a", true), ("b", false), ("c", false), ("d", false)],
            &["c", "d"],
        );
        let mut asked = Vec::new();
        let done = rerun_unfinished("kernel", first, &NullObserver, |only| {
            asked.push(only.iter().cloned().collect::<Vec<_>>());
            match only.len() {
                2 => outcome(&[("c", false), ("d", false)], &["d"]),
                _ => outcome(&[("d", true)], &[]),
            }
        });
        assert_eq!(asked, [vec!["c", "d"], vec!["d"]]);
        let got: Vec<(&str, bool)> = done
            .results
            .iter()
            .map(|r| (r.name.as_str(), r.status == ResultStatus::Ok))
            .collect();
        assert_eq!(got, [("a", true), ("b", false), ("c", false), ("d", true)]);
        assert!(done.unfinished.is_empty());
    }

    #[test]
    fn a_fresh_worker_that_makes_no_progress_ends_the_retries() {
        let first = outcome(&[("a", false), ("b", false)], &["b"]);
        let mut rounds = 0;
        let done = rerun_unfinished("kernel", first, &NullObserver, |_| {
            rounds += 1;
            outcome(&[("b", false)], &["b"])
        });
        assert_eq!(rounds, 1);
        assert_eq!(done.results.len(), 2);
    }

    /// A benchmark that loses the device on its first run, or one of constant speed.
    struct Bench(&'static str, bool);

    impl Benchmark for Bench {
        fn id(&self) -> pitwall_schema::BenchmarkId {
            pitwall_schema::BenchmarkId::new(self.0, &[])
        }
        fn sampling(&self) -> pitwall_schema::SamplingHint {
            pitwall_schema::SamplingHint::PerIteration
        }
        fn metrics(&self) -> Vec<pitwall_schema::MetricSpec> {
            vec![pitwall_schema::MetricSpec::time("time")]
        }
        fn run(&mut self, iters: u64) -> Result<f64, pitwall_schema::BenchError> {
            if self.1 {
                Err(pitwall_schema::BenchError::DeviceLost(
                    "CUDA driver: CUDA_ERROR_ILLEGAL_ADDRESS".into(),
                ))
            } else {
                Ok(1000.0 * iters as f64)
            }
        }
    }

    struct Backend3;

    impl pitwall_schema::Backend for Backend3 {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn benchmarks(
            &self,
            _: pitwall_schema::SuiteKind,
            _: &pitwall_schema::backend::SuiteOptions,
        ) -> Result<Vec<Box<dyn Benchmark>>, pitwall_schema::BackendError> {
            Ok(vec![
                Box::new(Bench("a", false)),
                Box::new(Bench("b", true)),
                Box::new(Bench("c", false)),
            ])
        }
    }

    /// Issue 23, defect 8: in the process that lost its device, nothing runs after the
    /// benchmark that lost it; the rest is listed for a fresh worker, each with a failed result.
    #[test]
    fn nothing_runs_after_a_benchmark_that_lost_the_device() {
        let mut suite = crate::config::SuiteConfig::builtin(pitwall_schema::SuiteKind::Kernel);
        suite.sampling.warmup_s = 0.0;
        suite.sampling.max_time_s = 0.01;
        suite.sampling.min_samples = 3;
        let outcome = crate::run_suite(
            &suite,
            &Backend3,
            std::path::Path::new("/"),
            crate::Selection::default(),
            &NullObserver,
            None,
            &crate::Isolation::InProcess,
        );
        let status: Vec<(&str, ResultStatus)> = outcome
            .results
            .iter()
            .map(|r| (r.name.as_str(), r.status))
            .collect();
        assert_eq!(
            status,
            [
                ("a", ResultStatus::Ok),
                ("b", ResultStatus::Failed),
                ("c", ResultStatus::Failed)
            ]
        );
        assert_eq!(outcome.unfinished, ["c"]);
        let why = outcome.results[2].error.as_deref().unwrap();
        assert_eq!(
            why,
            "benchmark c: not run: benchmark b left the device unusable in this process"
        );
    }
}
