//! Contended runs in a history: which runs are contended (their `contention` says so), and
//! the points they make, kept beside a series' points but never fed to change detection.

use pitwall_schema::Run;

use super::Point;

/// A point of contended runs of one commit.
#[derive(Debug, Clone, PartialEq)]
pub struct ContendedPoint {
    pub point: Point,
    /// How many of the series' (clean) points come before it in commit order: it is drawn
    /// between point `after - 1` and point `after`.
    pub after: usize,
    /// Why its first run is contended (`Contention::reasons`).
    pub reasons: Vec<String>,
}

/// Whether `run` was measured on a contended machine.
pub(crate) fn is_contended(run: &Run) -> bool {
    run.contention.as_ref().is_some_and(|c| c.contended)
}

/// Why `run` is contended; empty when it is not.
pub(crate) fn reasons(run: &Run) -> Vec<String> {
    run.contention
        .as_ref()
        .filter(|c| c.contended)
        .map(|c| c.reasons.clone())
        .unwrap_or_default()
}
