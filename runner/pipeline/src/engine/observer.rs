//! Progress events of a run, so the CLI can draw progress bars while the library stays free
//! of any terminal code.

/// Receives progress of a run. All methods default to doing nothing.
pub trait RunObserver {
    /// A suite starts with `benchmarks` benchmarks (0 when unknown, e.g. a command suite).
    fn suite_started(&self, _suite: &str, _benchmarks: usize) {}
    /// One benchmark (or one command execution) starts.
    fn benchmark_started(&self, _suite: &str, _benchmark: &str) {}
    /// One benchmark finished; `error` is set when it failed.
    fn benchmark_finished(&self, _suite: &str, _benchmark: &str, _error: Option<&str>) {}
    /// A suite was skipped (e.g. no GPU), with the reason as one line.
    fn suite_skipped(&self, _suite: &str, _reason: &str) {}
    /// Something about a suite's results the user should know (e.g. stale results that were
    /// ignored), as one line; it is recorded with the run's format notes too.
    fn warning(&self, _suite: &str, _line: &str) {}
    fn suite_finished(&self, _suite: &str) {}
    /// A built-in suite's round runs in a fresh worker process with this id.
    fn worker_started(&self, _suite: &str, _pid: u32) {}
}

/// Ignores every event.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullObserver;

impl RunObserver for NullObserver {}
