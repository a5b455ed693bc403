//! What the renderers hand the forge client: the hidden first lines by which pitwall finds its
//! own comment, note and issues again, and a comparison's outcome as a commit status or check
//! run shows it. Written by `pitwall-reports`, read by `pitwall-forge`, two crates that do not
//! depend on each other.

/// First line of every pitwall comparison comment (GitHub) or note (GitLab); the forge finds
/// its earlier comment by it (only one its own identity wrote: anyone can type it).
pub const MARKER: &str = "<!-- pitwall:comparison -->";

/// The hidden first line of alert `id`'s issue, by which pitwall finds it again (only in an
/// issue its own identity opened: anyone can type the marker).
pub fn alert_marker(id: &str) -> String {
    let id: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!("<!-- pitwall-alert {id} -->")
}

/// A comparison's outcome for a commit status or check run.
///
/// GitHub's commit statuses know `success`, `failure`, `error` and `pending`, no "neutral":
/// [`Outcome::Neutral`] (inconclusive or incomparable) is sent there as `success` with a
/// description that starts with `inconclusive:` or `incomparable:`; a check run keeps it
/// neutral. `pending` would never resolve and block a required check forever, and
/// `error`/`failure` would fail a pull request on evidence that does not show a regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failure,
    Neutral,
}

/// A comparison as a commit status and a check run show it, rendered by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgeSummary {
    pub outcome: Outcome,
    /// One line: the comparison's summary (a check run's title).
    pub title: String,
    /// The commit status's description, before the forge cuts it to its limit.
    pub description: String,
}
