//! The `alerts` table's rows and how they become schema `Alert`s again, shared by the SQLite
//! and PostgreSQL stores so both keep the same columns, order the same way and report stored
//! garbage (an unknown status or kind) as `StoreError::Corrupt`.

use pitwall_schema::{Alert, AlertChange, AlertKind, AlertLabel, AlertSeries, AlertStatus};

use super::StoreError;
use super::rows::corrupt;

/// The columns of an alert, in the order every statement names them.
pub(super) const COLUMNS: &str = "id, project, testbed, branch, bench_key, measure, kind, status, \
     last_good, first_bad, first_bad_run, before_value, after_value, rel_change, ci_low, \
     ci_high, note, culprit, created_at, updated_at, more_points, label";

/// How lists are ordered: oldest first, then by id, so every store lists alike.
pub(super) const ORDER: &str = "ORDER BY created_at, id";

/// One recorded change of an alert as the backends read it: at, by, from, to, note, culprit.
pub(super) type ChangeRow = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The schema change of alert `id`; an unknown status is corruption.
pub(super) fn decode_change(
    store: &str,
    id: &str,
    row: ChangeRow,
) -> Result<AlertChange, StoreError> {
    let (at, by, from, to, note, culprit) = row;
    let status = |s: Option<String>| -> Result<Option<AlertStatus>, StoreError> {
        s.map(|s| {
            AlertStatus::parse(&s).ok_or_else(|| {
                corrupt(
                    store,
                    format!("a change of alert {id}: unknown status `{s}`"),
                )
            })
        })
        .transpose()
    };
    Ok(AlertChange {
        at,
        by,
        from: status(from)?,
        to: status(to)?,
        note,
        culprit,
    })
}

/// One stored alert as the backends read it.
#[derive(Debug, Clone)]
pub(super) struct AlertRow {
    pub id: String,
    pub project: String,
    pub testbed: String,
    pub branch: String,
    pub key: String,
    pub measure: String,
    pub kind: String,
    pub status: String,
    pub last_good: String,
    pub first_bad: String,
    pub first_bad_run: String,
    pub before: f64,
    pub after: f64,
    pub rel_change: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub note: Option<String>,
    pub culprit: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub more_points: Option<i64>,
    pub label: Option<String>,
}

impl AlertRow {
    /// The schema alert; an unknown status or kind is corruption.
    pub fn decode(self, store: &str) -> Result<Alert, StoreError> {
        let status = AlertStatus::parse(&self.status).ok_or_else(|| {
            corrupt(
                store,
                format!("alert {}: unknown status `{}`", self.id, self.status),
            )
        })?;
        let kind = AlertKind::parse(&self.kind).ok_or_else(|| {
            corrupt(
                store,
                format!("alert {}: unknown kind `{}`", self.id, self.kind),
            )
        })?;
        let more_points = self
            .more_points
            .map(|n| {
                u32::try_from(n).map_err(|_| {
                    corrupt(
                        store,
                        format!("alert {}: more_points `{n}` out of range", self.id),
                    )
                })
            })
            .transpose()?;
        let label = self
            .label
            .map(|l| {
                AlertLabel::parse(&l).ok_or_else(|| {
                    corrupt(store, format!("alert {}: unknown label `{l}`", self.id))
                })
            })
            .transpose()?;
        Ok(Alert {
            id: self.id,
            status,
            kind,
            series: AlertSeries {
                project: self.project,
                testbed: self.testbed,
                branch: self.branch,
                key: self.key,
                measure: self.measure,
            },
            last_good: self.last_good,
            first_bad: self.first_bad,
            first_bad_run: self.first_bad_run,
            before: self.before,
            after: self.after,
            rel_change: self.rel_change,
            ci: self.ci_low.zip(self.ci_high),
            note: self.note,
            culprit: self.culprit,
            more_points,
            label,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// An alert's `more_points` as the stores bind it.
pub(super) fn more_points(a: &Alert) -> Option<i64> {
    a.more_points.map(i64::from)
}

/// The error for an alert id no stored alert has.
pub(super) fn no_alert(store: &str, id: &str) -> StoreError {
    StoreError::NoAlert {
        store: store.to_string(),
        id: id.to_string(),
    }
}
