//! The PostgreSQL store's alerts, as `sqlite_alerts` does them: upserting what detection found
//! without touching what people decided, listing, and a person's update of one alert.

use pitwall_schema::{Alert, AlertChange, AlertTransition, AlertUpdate, DETECTION};
use postgres::{Client, GenericClient, Row};

use super::StoreError;
use super::alert_rows::{AlertRow, decode_change, more_points, no_alert};
use super::pg_conn::backend;
use super::sql::queries::POSTGRES;

fn row(r: &Row) -> AlertRow {
    AlertRow {
        id: r.get(0),
        project: r.get(1),
        testbed: r.get(2),
        branch: r.get(3),
        key: r.get(4),
        measure: r.get(5),
        kind: r.get(6),
        status: r.get(7),
        last_good: r.get(8),
        first_bad: r.get(9),
        first_bad_run: r.get(10),
        before: r.get(11),
        after: r.get(12),
        rel_change: r.get(13),
        ci_low: r.get(14),
        ci_high: r.get(15),
        note: r.get(16),
        culprit: r.get(17),
        created_at: r.get(18),
        updated_at: r.get(19),
        more_points: r.get(20),
        label: r.get(21),
    }
}

/// Inserts new alerts and brings stored ones (same id) up to date in one transaction; as the
/// SQLite store, only what detection owns changes and only when it differs. `ON CONFLICT`
/// makes two runners upserting the same alert at once end with one row.
pub(super) fn upsert(client: &mut Client, store: &str, alerts: &[Alert]) -> Result<(), StoreError> {
    let be = backend(store);
    let mut tx = client.transaction().map_err(&be)?;
    let stmt = tx.prepare(&POSTGRES.upsert_alert).map_err(&be)?;
    for a in alerts {
        let (ci_low, ci_high) = (a.ci.map(|c| c.0), a.ci.map(|c| c.1));
        let (more, label) = (more_points(a), a.label.map(|l| l.as_str()));
        tx.execute(
            &stmt,
            &[
                &a.id,
                &a.series.project,
                &a.series.testbed,
                &a.series.branch,
                &a.series.key,
                &a.series.measure,
                &a.kind.as_str(),
                &a.status.as_str(),
                &a.last_good,
                &a.first_bad,
                &a.first_bad_run,
                &a.before,
                &a.after,
                &a.rel_change,
                &ci_low,
                &ci_high,
                &a.note,
                &a.culprit,
                &a.created_at,
                &a.updated_at,
                &more,
                &label,
            ],
        )
        .map_err(&be)?;
    }
    tx.commit().map_err(&be)
}

/// Every alert, oldest first.
pub(super) fn list(client: &mut impl GenericClient, store: &str) -> Result<Vec<Alert>, StoreError> {
    client
        .query(&POSTGRES.list_alerts, &[])
        .map_err(backend(store))?
        .iter()
        .map(|r| row(r).decode(store))
        .collect()
}

/// Applies a person's change to alert `id` and returns the alert as stored after it.
pub(super) fn update(
    client: &mut Client,
    store: &str,
    id: &str,
    change: &AlertUpdate,
) -> Result<Alert, StoreError> {
    let be = backend(store);
    let mut tx = client.transaction().map_err(&be)?;
    let status = change.status.map(|s| s.as_str());
    // Locked until the change is recorded, so the status it records as before is the one
    // it replaced.
    let before: Option<String> = tx
        .query_opt(&format!("{} FOR UPDATE", POSTGRES.alert_status), &[&id])
        .map_err(&be)?
        .map(|r| r.get(0));
    let updated = tx
        .query_opt(
            &POSTGRES.update_alert,
            &[
                &id,
                &status,
                &change.note,
                &change.culprit,
                &change.updated_at,
            ],
        )
        .map_err(&be)?
        .ok_or_else(|| no_alert(store, id))?;
    let alert = row(&updated).decode(store)?;
    tx.execute(
        &POSTGRES.insert_alert_change,
        &[
            &id,
            &change.updated_at,
            &change.by,
            &change.status.and(before),
            &status,
            &change.note,
            &change.culprit,
        ],
    )
    .map_err(&be)?;
    tx.commit().map_err(&be)?;
    Ok(alert)
}

/// Applies detection's own status changes in one transaction, each only while the stored
/// status is still its `from`; returns how many alerts changed.
pub(super) fn transition(
    client: &mut Client,
    store: &str,
    changes: &[AlertTransition],
) -> Result<usize, StoreError> {
    let be = backend(store);
    let mut tx = client.transaction().map_err(&be)?;
    let mut n = 0;
    for c in changes {
        let from = c.from.as_str();
        let changed = match c.to {
            Some(to) => tx.execute(
                &POSTGRES.transition_alert,
                &[&c.id, &from, &to.as_str(), &c.note, &c.updated_at],
            ),
            // The alert's changes go with it.
            None => tx.execute(&POSTGRES.delete_alert_in_status, &[&c.id, &from]),
        }
        .map_err(&be)?;
        if let (1, Some(to)) = (changed, c.to) {
            tx.execute(
                &POSTGRES.insert_alert_change,
                &[
                    &c.id,
                    &c.updated_at,
                    &DETECTION,
                    &from,
                    &to.as_str(),
                    &c.note,
                    &None::<String>,
                ],
            )
            .map_err(&be)?;
        }
        n += changed;
    }
    tx.commit().map_err(&be)?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The recorded changes of alert `id`, oldest first (none for an unknown id).
pub(super) fn changes(
    client: &mut Client,
    store: &str,
    id: &str,
) -> Result<Vec<AlertChange>, StoreError> {
    let be = backend(store);
    let rows = client.query(&POSTGRES.alert_changes, &[&id]).map_err(&be)?;
    rows.iter()
        .map(|r| {
            decode_change(
                store,
                id,
                (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)),
            )
        })
        .collect()
}
