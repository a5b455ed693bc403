//! Cancellation by SIGINT/SIGTERM as a returned error. The host's restore thread
//! (`pitwall_host::gpu::install_signal_handler`) kills the running benchmark commands, restores
//! the clocks and ends the process by the signal; meanwhile the use cases stop at their next
//! check and return [`Cancelled`] with nothing of the interrupted run stored, and the binary
//! waits for that end in `pitwall_host::gpu::await_termination`. The library never parks.

#[cfg(test)]
use std::cell::Cell;

/// A use case stopped by SIGINT/SIGTERM before storing its interrupted run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted by {}; nothing stored", pitwall_host::gpu::signal_name(*.signal))]
pub struct Cancelled {
    /// The signal pitwall is dying of (`SIGINT` 2, `SIGTERM` 15).
    pub signal: i32,
}

/// `Err` once pitwall is terminating: the use cases check it before storing anything, and
/// where a long step ends.
pub fn check() -> Result<(), Cancelled> {
    match signal() {
        Some(signal) => Err(Cancelled { signal }),
        None => Ok(()),
    }
}

/// Whether pitwall is terminating: loops stop early on it (a round runs no more suites).
pub fn requested() -> bool {
    signal().is_some()
}

fn signal() -> Option<i32> {
    #[cfg(test)]
    if let Some(signal) = TEST_SIGNAL.with(Cell::get) {
        return Some(signal);
    }
    pitwall_host::gpu::termination_signal()
}

#[cfg(test)]
thread_local! {
    /// A termination seen only by this test thread (the process-wide flag would cancel the
    /// other tests, and get their commands killed).
    static TEST_SIGNAL: Cell<Option<i32>> = const { Cell::new(None) };
}

/// Test hook: this thread sees pitwall terminating by `signal` (`None`: not terminating).
#[cfg(test)]
pub(crate) fn terminate_for_test(signal: Option<i32>) {
    TEST_SIGNAL.with(|s| s.set(signal));
}
