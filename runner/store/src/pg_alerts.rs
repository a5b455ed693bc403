//! The PostgreSQL store's alerts, as `sqlite_alerts` does them: upserting what detection found
//! without touching what people decided, listing, and a person's update of one alert.

use pitwall_schema::{Alert, AlertUpdate};
use postgres::{Client, GenericClient, Row};

use super::StoreError;
use super::alert_rows::{AlertRow, COLUMNS, ORDER, no_alert};
use super::pg_conn::backend;

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
    }
}

/// Inserts new alerts and brings stored ones (same id) up to date in one transaction; as the
/// SQLite store, only what detection owns changes and only when it differs. `ON CONFLICT`
/// makes two runners upserting the same alert at once end with one row.
pub(super) fn upsert(client: &mut Client, store: &str, alerts: &[Alert]) -> Result<(), StoreError> {
    let be = backend(store);
    let mut tx = client.transaction().map_err(&be)?;
    let stmt = tx
        .prepare(&format!(
            "INSERT INTO alerts ({COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                     $17, $18, $19, $20)
             ON CONFLICT (id) DO UPDATE SET
                 last_good = EXCLUDED.last_good, first_bad = EXCLUDED.first_bad,
                 first_bad_run = EXCLUDED.first_bad_run,
                 before_value = EXCLUDED.before_value, after_value = EXCLUDED.after_value,
                 rel_change = EXCLUDED.rel_change, ci_low = EXCLUDED.ci_low,
                 ci_high = EXCLUDED.ci_high, updated_at = EXCLUDED.updated_at
             WHERE (alerts.last_good, alerts.first_bad, alerts.first_bad_run,
                    alerts.before_value, alerts.after_value, alerts.rel_change,
                    alerts.ci_low, alerts.ci_high)
                   IS DISTINCT FROM
                   (EXCLUDED.last_good, EXCLUDED.first_bad, EXCLUDED.first_bad_run,
                    EXCLUDED.before_value, EXCLUDED.after_value, EXCLUDED.rel_change,
                    EXCLUDED.ci_low, EXCLUDED.ci_high)"
        ))
        .map_err(&be)?;
    for a in alerts {
        let (ci_low, ci_high) = (a.ci.map(|c| c.0), a.ci.map(|c| c.1));
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
            ],
        )
        .map_err(&be)?;
    }
    tx.commit().map_err(&be)
}

/// Every alert, oldest first.
pub(super) fn list(client: &mut impl GenericClient, store: &str) -> Result<Vec<Alert>, StoreError> {
    client
        .query(&format!("SELECT {COLUMNS} FROM alerts {ORDER}"), &[])
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
    let updated = tx
        .query_opt(
            &format!(
                "UPDATE alerts SET status = coalesce($2, status), note = coalesce($3, note),
                                   culprit = coalesce($4, culprit), updated_at = $5
                 WHERE id = $1 RETURNING {COLUMNS}"
            ),
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
    tx.commit().map_err(&be)?;
    Ok(alert)
}
