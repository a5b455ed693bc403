//! The endpoints of a bisection are measured as a pair, whose observer calls the sides
//! base and head; this one passes every event on, saying good and bad instead.

use pitwall_engine::{RunObserver, Step};

/// The observer of the endpoints' pair, which calls its sides base and head: here they are
/// good and bad.
pub(super) struct Endpoints<'a>(pub(super) &'a dyn RunObserver);

impl RunObserver for Endpoints<'_> {
    fn suite_started(&self, suite: &str, benchmarks: usize) {
        self.0.suite_started(suite, benchmarks);
    }
    fn benchmark_started(&self, suite: &str, benchmark: &str) {
        self.0.benchmark_started(suite, benchmark);
    }
    fn benchmark_finished(&self, suite: &str, benchmark: &str, error: Option<&str>) {
        self.0.benchmark_finished(suite, benchmark, error);
    }
    fn suite_skipped(&self, suite: &str, reason: &str) {
        self.0.suite_skipped(suite, reason);
    }
    fn warning(&self, suite: &str, line: &str) {
        self.0.warning(suite, line);
    }
    fn suite_finished(&self, suite: &str) {
        self.0.suite_finished(suite);
    }
    fn worker_started(&self, suite: &str, pid: u32) {
        self.0.worker_started(suite, pid);
    }
    fn step(&self, step: &Step<'_>) {
        match step {
            Step::Round {
                round,
                rounds,
                side: Some(side),
                target,
            } => self.0.step(&Step::Round {
                round: *round,
                rounds: *rounds,
                side: Some(match *side {
                    "base" => "good",
                    "head" => "bad",
                    other => other,
                }),
                target,
            }),
            other => self.0.step(other),
        }
    }
}
