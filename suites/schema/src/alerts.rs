//! Alerts as stored records: a step in one history series that made a benchmark worse (or
//! better) beyond the project's threshold, with what people decided about it. The record lives
//! in the schema because the stores keep it and may depend on nothing else; the rule that
//! makes alerts from change points is `pitwall_analysis::alerts`.

use serde::{Deserialize, Serialize};

/// Where an alert stands. A regression starts `active`; people move it to one of the triage
/// states (`acknowledged`, `dismissed`, `fixed`, `expected`). A step that made the benchmark
/// better is recorded as `improvement` and needs nobody's attention. A step at the tip of a
/// series with too few runs after it is `suspected`: detection alone owns it, promoting it
/// when the step is confirmed or deleting it when it clears.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertStatus {
    Active,
    Suspected,
    Acknowledged,
    Dismissed,
    Fixed,
    Expected,
    Improvement,
}

impl AlertStatus {
    /// Every status, in the order lists show them (open first).
    pub const ALL: [AlertStatus; 7] = [
        AlertStatus::Active,
        AlertStatus::Suspected,
        AlertStatus::Acknowledged,
        AlertStatus::Improvement,
        AlertStatus::Expected,
        AlertStatus::Fixed,
        AlertStatus::Dismissed,
    ];

    /// The stable text form used in JSON, the store and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertStatus::Active => "active",
            AlertStatus::Suspected => "suspected",
            AlertStatus::Acknowledged => "acknowledged",
            AlertStatus::Dismissed => "dismissed",
            AlertStatus::Fixed => "fixed",
            AlertStatus::Expected => "expected",
            AlertStatus::Improvement => "improvement",
        }
    }

    pub fn parse(s: &str) -> Option<AlertStatus> {
        AlertStatus::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// Whether the alert still wants someone's attention (nobody has triaged the regression).
    pub fn is_open(self) -> bool {
        self == AlertStatus::Active
    }

    /// Whether detection owns this status and may still change it: `suspected` (promoted or
    /// deleted) and `active` (dismissed when its step is no longer detected). Every other
    /// status is never changed by detection.
    pub fn is_detection_owned(self) -> bool {
        matches!(self, AlertStatus::Active | AlertStatus::Suspected)
    }

    /// Whether a person may set this status (`pitwall alert ack|dismiss|fix|expect`); `active`,
    /// `suspected` and `improvement` are only ever set by detection.
    pub fn is_triage(self) -> bool {
        matches!(
            self,
            AlertStatus::Acknowledged
                | AlertStatus::Dismissed
                | AlertStatus::Fixed
                | AlertStatus::Expected
        )
    }

    /// Position in [`AlertStatus::ALL`], for sorting.
    pub fn rank(self) -> usize {
        AlertStatus::ALL
            .iter()
            .position(|s| *s == self)
            .unwrap_or(usize::MAX)
    }
}

impl std::fmt::Display for AlertStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way the step went for the benchmark: what matching a re-detected step to a stored
/// alert compares (a regression never becomes an improvement of the same alert).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertKind {
    Regression,
    Improvement,
}

impl AlertKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::Regression => "regression",
            AlertKind::Improvement => "improvement",
        }
    }

    pub fn parse(s: &str) -> Option<AlertKind> {
        match s {
            "regression" => Some(AlertKind::Regression),
            "improvement" => Some(AlertKind::Improvement),
            _ => None,
        }
    }

    /// The status a newly detected alert of this kind gets.
    pub fn initial_status(self) -> AlertStatus {
        match self {
            AlertKind::Regression => AlertStatus::Active,
            AlertKind::Improvement => AlertStatus::Improvement,
        }
    }
}

/// What detection noticed about an alert's step besides its numbers, stored with it and shown
/// wherever the alert is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlertLabel {
    /// The first bad commit touches none of `[history] code_paths`.
    NoCodeChanged,
}

impl AlertLabel {
    /// The stable text form used in JSON and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertLabel::NoCodeChanged => "no-code-changed",
        }
    }

    pub fn parse(s: &str) -> Option<AlertLabel> {
        match s {
            "no-code-changed" => Some(AlertLabel::NoCodeChanged),
            _ => None,
        }
    }

    /// What people read.
    pub fn message(self) -> &'static str {
        match self {
            AlertLabel::NoCodeChanged => "no code changed: environment or noise suspected",
        }
    }
}

impl std::fmt::Display for AlertLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

/// One history series: (project, testbed, branch, benchmark key, measure). The key
/// (`suite/name[params]/measure`) already ends in the measure; the measure is kept apart for
/// lists and filters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AlertSeries {
    pub project: String,
    pub testbed: String,
    pub branch: String,
    pub key: String,
    pub measure: String,
}

/// A detected step and its triage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    /// Stable: a short hash of the series, the kind and the first bad commit when it was first
    /// detected; re-detection keeps it even when the estimated step moves a little.
    pub id: String,
    pub status: AlertStatus,
    pub kind: AlertKind,
    #[serde(flatten)]
    pub series: AlertSeries,
    /// Commit of the last run of the old level.
    pub last_good: String,
    /// Commit of the first run of the new level.
    pub first_bad: String,
    /// The run behind `first_bad` (re-detection finds the alert's place in the series by it).
    pub first_bad_run: String,
    /// Median of the per-run medians of the segment before and after the step.
    pub before: f64,
    pub after: f64,
    /// after / before − 1.
    pub rel_change: f64,
    /// 95% bootstrap interval of `rel_change` (`None` when a segment is too short).
    pub ci: Option<(f64, f64)>,
    /// What a person wrote when triaging.
    pub note: Option<String>,
    /// The commit `pitwall alert bisect` found between `last_good` and `first_bad`.
    pub culprit: Option<String>,
    /// For a `suspected` alert: how many more runs would confirm or clear its step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_points: Option<u32>,
    /// What detection noticed about the step (`no code changed: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<AlertLabel>,
    /// RFC 3339 times.
    pub created_at: String,
    pub updated_at: String,
}

impl Alert {
    /// Whether the numbers detection owns differ (what an upsert overwrites).
    pub fn detection_differs(&self, other: &Alert) -> bool {
        let bits = |v: f64| v.to_bits();
        let ci_bits = |c: Option<(f64, f64)>| c.map(|(a, b)| (a.to_bits(), b.to_bits()));
        self.last_good != other.last_good
            || self.first_bad != other.first_bad
            || self.first_bad_run != other.first_bad_run
            || bits(self.before) != bits(other.before)
            || bits(self.after) != bits(other.after)
            || bits(self.rel_change) != bits(other.rel_change)
            || ci_bits(self.ci) != ci_bits(other.ci)
            || self.more_points != other.more_points
            || self.label != other.label
    }
}

/// A change of status detection makes on its own (`suspected` promoted to `active`, an
/// untriaged alert whose step is gone dismissed, a cleared `suspected` alert deleted). The store
/// applies it only while the stored status is still `from`, so a person's triage in between
/// always wins.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertTransition {
    pub id: String,
    /// The status detection saw.
    pub from: AlertStatus,
    /// The new status; `None` deletes the alert.
    pub to: Option<AlertStatus>,
    /// Replaces the stored note when given.
    pub note: Option<String>,
    /// RFC 3339 time of the change.
    pub updated_at: String,
}

/// A person's change to an alert (`pitwall alert ack|dismiss|fix|expect|bisect`); fields left
/// `None` stay as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertUpdate {
    pub status: Option<AlertStatus>,
    pub note: Option<String>,
    pub culprit: Option<String>,
    /// RFC 3339 time of the change.
    pub updated_at: String,
    /// Who made it, as recorded in the alert's changes: a token's name over `pitwall serve`,
    /// `local:USER` from the command line.
    pub by: Option<String>,
}

/// Who changes an alert when detection does (`AlertTransition`), in the alert's changes.
pub const DETECTION: &str = "detection";

/// One recorded change of an alert (`Store::alert_changes`), oldest first: a person's
/// (`AlertUpdate`) or detection's (`AlertTransition`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertChange {
    /// RFC 3339.
    pub at: String,
    /// A token's name, `local:USER`, or [`DETECTION`]; `None` when not known.
    pub by: Option<String>,
    /// The status before, when the change set one.
    pub from: Option<AlertStatus>,
    /// The status set, if any.
    pub to: Option<AlertStatus>,
    /// The note set, if any.
    pub note: Option<String>,
    /// The culprit commit set, if any (`pitwall alert bisect`).
    pub culprit: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_their_text_and_json() {
        for s in AlertStatus::ALL {
            assert_eq!(AlertStatus::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert_eq!(AlertStatus::parse("ack"), None);
        let triage: Vec<_> = AlertStatus::ALL
            .into_iter()
            .filter(|s| s.is_triage())
            .collect();
        assert_eq!(triage.len(), 4);
        assert!(!AlertStatus::Suspected.is_open() && !AlertStatus::Suspected.is_triage());
        assert_eq!(
            AlertStatus::parse("suspected"),
            Some(AlertStatus::Suspected)
        );
        let l = AlertLabel::NoCodeChanged;
        assert_eq!(AlertLabel::parse(l.as_str()), Some(l));
        assert_eq!(serde_json::to_string(&l).unwrap(), "\"no-code-changed\"");
        assert!(AlertStatus::Active.is_open() && !AlertStatus::Improvement.is_open());
        for k in [AlertKind::Regression, AlertKind::Improvement] {
            assert_eq!(AlertKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(AlertKind::Regression.initial_status(), AlertStatus::Active);
    }
}
