//! Reading SQLite rows back into schema `Run`s (the decoding itself, shared with the
//! PostgreSQL store, is in `rows`), so a stored run comes back exactly as it went in and stored
//! garbage is reported as `StoreError::Corrupt` naming what is wrong.

use pitwall_schema::{BenchmarkResult, Run};
use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::rows::{ResultRow, RunRow, SampleRow};
use super::sql::queries::SQLITE;

/// Maps a rusqlite error to `StoreError::Backend` for the store `store`.
pub(super) fn backend(store: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError::Backend {
        store: store.to_string(),
        source: Box::new(e),
    }
}

/// Reads run `id` with all its results and samples; `None` when no such run is stored.
///
/// Runs are written in one transaction and never updated, so once the `runs` row is visible
/// all of its results and samples are too.
pub(super) fn load_run(
    conn: &Connection,
    store: &str,
    id: &str,
) -> Result<Option<Run>, StoreError> {
    let be = backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.run_row).map_err(&be)?;
    let row = stmt
        .query_row([id], |r| {
            Ok(RunRow {
                project: r.get(0)?,
                commit: r.get(1)?,
                branch: r.get(2)?,
                started_at: r.get(3)?,
                finished_at: r.get(4)?,
                config_hash: r.get(5)?,
                status: r.get(6)?,
                fingerprint_json: r.get(7)?,
                commit_info_json: r.get(8)?,
                error: r.get(9)?,
                pair_json: r.get(10)?,
                testbed: r.get(11)?,
                role: r.get(12)?,
                exclusion_json: r.get(13)?,
                contention_json: r.get(14)?,
            })
        })
        .optional()
        .map_err(&be)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let results = load_results(conn, store, id)?;
    row.decode(store, id, results).map(Some)
}

fn load_results(
    conn: &Connection,
    store: &str,
    run_id: &str,
) -> Result<Vec<BenchmarkResult>, StoreError> {
    let be = backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.results_of_run).map_err(&be)?;
    let rows = stmt
        .query_map([run_id], |r| {
            Ok(ResultRow {
                id: r.get(0)?,
                ord: r.get(1)?,
                suite: r.get(2)?,
                name: r.get(3)?,
                params_json: r.get(4)?,
                measure: r.get(5)?,
                unit: r.get(6)?,
                direction: r.get(7)?,
                status: r.get(8)?,
                error: r.get(9)?,
                summary_json: r.get(10)?,
            })
        })
        .map_err(&be)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(&be)?;
    let mut results = Vec::with_capacity(rows.len());
    for (expected, row) in rows.into_iter().enumerate() {
        let samples = load_samples(conn, store, row.id)?;
        results.push(row.decode(store, run_id, expected, samples)?);
    }
    Ok(results)
}

fn load_samples(
    conn: &Connection,
    store: &str,
    result_id: i64,
) -> Result<Vec<SampleRow>, StoreError> {
    let be = backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.samples_to_load).map_err(&be)?;
    stmt.query_map(params![result_id], |r| {
        Ok(SampleRow {
            idx: r.get(0)?,
            value: r.get(1)?,
            meta_json: r.get(2)?,
            replicate: r.get(3)?,
        })
    })
    .map_err(&be)?
    .collect::<Result<Vec<SampleRow>, _>>()
    .map_err(&be)
}

#[cfg(test)]
mod tests;
