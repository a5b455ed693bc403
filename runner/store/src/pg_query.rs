//! `Store::query_runs` and `Store::series_keys` on PostgreSQL: the same three queries as the
//! SQLite store's (`query.rs`, which also decodes), in one repeatable-read snapshot.

use std::collections::HashMap;

use pitwall_schema::Run;
use postgres::Client;

use super::query::{Rows, assemble, default_fingerprint_json};
use super::rows::{ResultRow, RunRow, SampleRow};
use super::sql::Dialect;
use super::sql::queries::POSTGRES;
use super::sql::selection;
use super::{RunQuery, StoreError};

pub(super) fn pg_query_runs(
    client: &mut Client,
    store: &str,
    q: &RunQuery,
    skips: &super::shared::Skips,
) -> Result<Vec<Run>, StoreError> {
    let be = super::pg_conn::backend(store);
    let mut tx = super::pg_conn::snapshot(client).map_err(&be)?;
    let newest: Option<i64> = q.newest.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
    let runs = pg_runs(&mut tx, q, newest).map_err(&be)?;
    let mut results = Vec::new();
    let mut samples: HashMap<i64, Vec<SampleRow>> = HashMap::new();
    if !q.keys.as_ref().is_some_and(Vec::is_empty) {
        let params: [&(dyn postgres::types::ToSql + Sync); 4] =
            [&q.history_branch, &q.testbed, &q.keys, &newest];
        // A series' every point: from the covering index, then those of the runs read.
        let points = q.keys.is_some() && q.newest.is_none() && !q.samples;
        let rows = if points {
            tx.query(&selection::pg_point_results(), &[&q.keys])
        } else {
            tx.query(&selection::results(Dialect::Postgres, q), &params)
        };
        for r in rows.map_err(&be)? {
            results.push((
                r.get::<_, String>(0),
                ResultRow {
                    id: r.get(1),
                    ord: i64::from(r.get::<_, i32>(2)),
                    suite: r.get(3),
                    name: r.get(4),
                    params_json: r.get(5),
                    measure: r.get(6),
                    unit: r.get(7),
                    direction: r.get(8),
                    status: r.get(9),
                    error: r.get(10),
                    summary_json: r.get(11),
                },
            ));
        }
        if points {
            // Each run's results in their order (`assemble` groups them by run and leaves
            // out those of runs not read).
            results.sort_by_key(|(_, r)| r.ord);
        }
        let sample_rows = if q.samples {
            tx.query(&selection::samples(Dialect::Postgres, q), &params)
                .map_err(&be)?
        } else {
            Vec::new()
        };
        for s in sample_rows {
            samples.entry(s.get(0)).or_default().push(SampleRow {
                idx: i64::from(s.get::<_, i32>(1)),
                value: s.get(2),
                meta_json: s.get(3),
                replicate: s.get(4),
            });
        }
    }
    tx.commit().map_err(&be)?;
    assemble(
        store,
        Rows {
            runs,
            results,
            samples,
        },
        skips,
    )
}

pub(super) fn pg_series_keys(client: &mut Client, store: &str) -> Result<Vec<String>, StoreError> {
    let be = super::pg_conn::backend(store);
    Ok(client
        .query(&POSTGRES.series_keys, &[])
        .map_err(&be)?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// The rows of the runs a query selects (`newest`: its N as PostgreSQL's bigint), oldest
/// first.
fn pg_runs(
    tx: &mut postgres::Transaction<'_>,
    q: &RunQuery,
    newest: Option<i64>,
) -> Result<Vec<(String, RunRow)>, postgres::Error> {
    let default_fp = default_fingerprint_json();
    Ok(tx
        .query(
            &selection::runs(Dialect::Postgres),
            &[
                &q.history_branch,
                &q.testbed,
                &None::<Vec<String>>,
                &newest,
                &q.fingerprints,
            ],
        )?
        .iter()
        .map(|r| {
            (
                r.get::<_, String>(0),
                RunRow {
                    project: r.get(1),
                    commit: r.get(2),
                    branch: r.get(3),
                    started_at: r.get(4),
                    finished_at: r.get(5),
                    config_hash: r.get(6),
                    status: r.get(7),
                    fingerprint_json: r
                        .get::<_, Option<String>>(8)
                        .unwrap_or_else(|| default_fp.clone()),
                    commit_info_json: r.get(9),
                    error: r.get(10),
                    pair_json: r.get(11),
                    testbed: r.get(12),
                    role: r.get(13),
                    exclusion_json: r.get(14),
                    contention_json: r.get(15),
                },
            )
        })
        .collect())
}
