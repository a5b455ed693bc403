//! The SQLite store's alerts: upserting what detection found without touching what people
//! decided, listing, and a person's update of one alert. Kept apart from `sqlite.rs`, which
//! holds the runs.

use pitwall_schema::{Alert, AlertChange, AlertTransition, AlertUpdate, DETECTION};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::StoreError;
use super::alert_rows::{AlertRow, decode_change, more_points, no_alert};
use super::sql::queries::SQLITE;
use super::sqlite_codec::backend;

fn row(r: &Row<'_>) -> rusqlite::Result<AlertRow> {
    Ok(AlertRow {
        id: r.get(0)?,
        project: r.get(1)?,
        testbed: r.get(2)?,
        branch: r.get(3)?,
        key: r.get(4)?,
        measure: r.get(5)?,
        kind: r.get(6)?,
        status: r.get(7)?,
        last_good: r.get(8)?,
        first_bad: r.get(9)?,
        first_bad_run: r.get(10)?,
        before: r.get(11)?,
        after: r.get(12)?,
        rel_change: r.get(13)?,
        ci_low: r.get(14)?,
        ci_high: r.get(15)?,
        note: r.get(16)?,
        culprit: r.get(17)?,
        created_at: r.get(18)?,
        updated_at: r.get(19)?,
        more_points: r.get(20)?,
        label: r.get(21)?,
    })
}

/// Inserts new alerts and brings stored ones (same id) up to date in one write transaction.
/// Only what detection owns changes (commits, numbers, `updated_at`), and only when it differs:
/// status, note, culprit and `created_at` of a stored alert are never touched.
pub(super) fn upsert(
    conn: &mut Connection,
    store: &str,
    alerts: &[Alert],
) -> Result<(), StoreError> {
    let be = backend(store);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&be)?;
    {
        let mut stmt = tx.prepare_cached(&SQLITE.upsert_alert).map_err(&be)?;
        for a in alerts {
            stmt.execute(params![
                a.id,
                a.series.project,
                a.series.testbed,
                a.series.branch,
                a.series.key,
                a.series.measure,
                a.kind.as_str(),
                a.status.as_str(),
                a.last_good,
                a.first_bad,
                a.first_bad_run,
                a.before,
                a.after,
                a.rel_change,
                a.ci.map(|c| c.0),
                a.ci.map(|c| c.1),
                a.note,
                a.culprit,
                a.created_at,
                a.updated_at,
                more_points(a),
                a.label.map(|l| l.as_str()),
            ])
            .map_err(&be)?;
        }
    }
    tx.commit().map_err(&be)
}

/// Every alert, oldest first.
pub(super) fn list(conn: &Connection, store: &str) -> Result<Vec<Alert>, StoreError> {
    let be = backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.list_alerts).map_err(&be)?;
    let rows = stmt.query_map([], row).map_err(&be)?;
    rows.map(|r| r.map_err(&be)?.decode(store)).collect()
}

/// Applies a person's change to alert `id` and returns the alert as stored after it.
pub(super) fn update(
    conn: &mut Connection,
    store: &str,
    id: &str,
    change: &AlertUpdate,
) -> Result<Alert, StoreError> {
    let be = backend(store);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&be)?;
    let before: Option<String> = tx
        .query_row(&SQLITE.alert_status, [id], |r| r.get(0))
        .optional()
        .map_err(&be)?;
    let n = tx
        .execute(
            &SQLITE.update_alert,
            params![
                id,
                change.status.map(|s| s.as_str()),
                change.note,
                change.culprit,
                change.updated_at
            ],
        )
        .map_err(&be)?;
    if n == 0 {
        return Err(no_alert(store, id));
    }
    tx.execute(
        &SQLITE.insert_alert_change,
        params![
            id,
            change.updated_at,
            change.by,
            change.status.and(before),
            change.status.map(|s| s.as_str()),
            change.note,
            change.culprit
        ],
    )
    .map_err(&be)?;
    let stored = tx
        .query_row(&SQLITE.alert_by_id, [id], row)
        .optional()
        .map_err(&be)?
        .ok_or_else(|| no_alert(store, id))?
        .decode(store)?;
    tx.commit().map_err(&be)?;
    Ok(stored)
}

/// Applies detection's own status changes in one write transaction, each only while the
/// stored status is still its `from`; returns how many alerts changed.
pub(super) fn transition(
    conn: &mut Connection,
    store: &str,
    changes: &[AlertTransition],
) -> Result<usize, StoreError> {
    let be = backend(store);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&be)?;
    let mut n = 0;
    for c in changes {
        let changed = match c.to {
            Some(to) => tx.execute(
                &SQLITE.transition_alert,
                params![c.id, c.from.as_str(), to.as_str(), c.note, c.updated_at],
            ),
            // The alert's changes go with it.
            None => tx.execute(
                &SQLITE.delete_alert_in_status,
                params![c.id, c.from.as_str()],
            ),
        }
        .map_err(&be)?;
        if let (1, Some(to)) = (changed, c.to) {
            tx.execute(
                &SQLITE.insert_alert_change,
                params![
                    c.id,
                    c.updated_at,
                    DETECTION,
                    c.from.as_str(),
                    to.as_str(),
                    c.note,
                    None::<String>
                ],
            )
            .map_err(&be)?;
        }
        n += changed;
    }
    tx.commit().map_err(&be)?;
    Ok(n)
}

/// The recorded changes of alert `id`, oldest first (none for an unknown id).
pub(super) fn changes(
    conn: &Connection,
    store: &str,
    id: &str,
) -> Result<Vec<AlertChange>, StoreError> {
    let be = backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.alert_changes).map_err(&be)?;
    let rows = stmt
        .query_map([id], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .map_err(&be)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(decode_change(store, id, row.map_err(&be)?)?);
    }
    Ok(out)
}
