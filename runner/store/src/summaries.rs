//! The series summaries of `pitwall serve`'s index (issue 30), kept in the store: one row per
//! (project, testbed, branch, benchmark key) holding the analysis' summary as JSON, replaced
//! whenever the series is re-detected after runs are stored. The store keeps the JSON as
//! text; what it holds is the analysis' business (`pitwall_analysis::summary`).

use postgres::Client;
use rusqlite::{Connection, params};

use super::StoreError;
use super::sql::queries::{POSTGRES, SQLITE};

/// One stored summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSummary {
    pub project: String,
    pub testbed: String,
    pub branch: String,
    pub key: String,
    /// The summary, as JSON.
    pub json: String,
    /// RFC 3339.
    pub updated_at: String,
}

type Row = (String, String, String, String, String, String);

fn of_row(r: Row) -> StoredSummary {
    StoredSummary {
        project: r.0,
        testbed: r.1,
        branch: r.2,
        key: r.3,
        json: r.4,
        updated_at: r.5,
    }
}

/// Stores `rows`, each replacing the summary of its series, in one transaction.
pub(super) fn sqlite_upsert(
    conn: &Connection,
    store: &str,
    rows: &[StoredSummary],
) -> Result<(), StoreError> {
    let be = super::sqlite_codec::backend(store);
    let tx = conn.unchecked_transaction().map_err(&be)?;
    {
        let mut stmt = tx.prepare_cached(&SQLITE.upsert_summary).map_err(&be)?;
        for s in rows {
            stmt.execute(params![
                s.project,
                s.testbed,
                s.branch,
                s.key,
                s.json,
                s.updated_at
            ])
            .map_err(&be)?;
        }
    }
    tx.commit().map_err(&be)
}

/// The summaries of `project`, by testbed, branch and key.
pub(super) fn sqlite_list(
    conn: &Connection,
    store: &str,
    project: &str,
) -> Result<Vec<StoredSummary>, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.list_summaries).map_err(&be)?;
    let rows = stmt
        .query_map(params![project], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .map_err(&be)?
        .collect::<Result<Vec<Row>, _>>()
        .map_err(&be)?;
    Ok(rows.into_iter().map(of_row).collect())
}

/// [`sqlite_upsert`] on PostgreSQL.
pub(super) fn pg_upsert(
    client: &mut Client,
    store: &str,
    rows: &[StoredSummary],
) -> Result<(), StoreError> {
    let be = super::pg_conn::backend(store);
    let mut tx = client.transaction().map_err(&be)?;
    let stmt = tx.prepare(&POSTGRES.upsert_summary).map_err(&be)?;
    for s in rows {
        tx.execute(
            &stmt,
            &[
                &s.project,
                &s.testbed,
                &s.branch,
                &s.key,
                &s.json,
                &s.updated_at,
            ],
        )
        .map_err(&be)?;
    }
    tx.commit().map_err(&be)
}

/// [`sqlite_list`] on PostgreSQL.
pub(super) fn pg_list(
    client: &mut Client,
    store: &str,
    project: &str,
) -> Result<Vec<StoredSummary>, StoreError> {
    let be = super::pg_conn::backend(store);
    Ok(client
        .query(&POSTGRES.list_summaries, &[&project])
        .map_err(&be)?
        .iter()
        .map(|r| of_row((r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5))))
        .collect())
}

/// What every store does with summaries, checked against each backend.
#[cfg(test)]
pub(super) fn conformance(store: &mut dyn super::Store) {
    let row = |project: &str, key: &str, json: &str| StoredSummary {
        project: project.into(),
        testbed: "h200-a".into(),
        branch: "main".into(),
        key: key.into(),
        json: json.into(),
        updated_at: "2026-12-06T00:00:00Z".into(),
    };
    assert!(store.series_summaries("shop").unwrap().is_empty());
    store
        .upsert_series_summaries(&[
            row("shop", "k/b", "{\"v\":1}"),
            row("shop", "k/a", "{\"v\":2}"),
            row("other", "k/a", "{\"v\":3}"),
        ])
        .unwrap();
    let listed = store.series_summaries("shop").unwrap();
    assert_eq!(
        listed.iter().map(|s| s.key.as_str()).collect::<Vec<_>>(),
        ["k/a", "k/b"]
    );
    // A new summary of a series replaces its old one.
    store
        .upsert_series_summaries(&[row("shop", "k/a", "{\"v\":4}")])
        .unwrap();
    let listed = store.series_summaries("shop").unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].json, "{\"v\":4}");
    assert_eq!(
        store.series_summaries("other").unwrap()[0].json,
        "{\"v\":3}"
    );
}
