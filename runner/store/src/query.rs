//! Reading part of the store: the runs one history can hold and only the results of the
//! benchmark keys asked for (`Store::query_runs`), so `detect --benchmark`, the alerts and the
//! report read one series at a time instead of every sample of every run. Three queries per
//! call (runs, results, samples), each over an index, whatever the number of runs.

use std::collections::HashMap;

use pitwall_schema::{BenchmarkResult, Run};
use rusqlite::{Connection, params};

use super::rows::{ResultRow, RunRow, SampleRow, to_json};
use super::shared::Skips;
use super::sql::Dialect;
use super::sql::queries::SQLITE;
use super::sql::selection;
use super::{RunQuery, StoreError};

/// Rows of one query, before decoding.
pub(super) struct Rows {
    /// (id, row), oldest first.
    pub runs: Vec<(String, RunRow)>,
    /// (run id, row), in run and result order.
    pub results: Vec<(String, ResultRow)>,
    /// By result id, each in index order.
    pub samples: HashMap<i64, Vec<SampleRow>>,
}

/// What a run row's fingerprint column is read as when fingerprints were not asked for.
pub(super) fn default_fingerprint_json() -> String {
    super::rows::DEFAULT_FINGERPRINT_JSON.clone()
}

/// Decodes the rows into runs, oldest first; each run holds its selected results in order. A
/// run with a row that cannot be decoded is left out and said once (`skips`).
pub(super) fn assemble(store: &str, rows: Rows, skips: &Skips) -> Result<Vec<Run>, StoreError> {
    let Rows {
        runs,
        results,
        mut samples,
    } = rows;
    // Each run's results by its position among the runs read; a result of a run not read
    // (another branch's, in a statement that does not join the runs) is left alone.
    let mut by_run: Vec<Result<Vec<BenchmarkResult>, StoreError>> =
        runs.iter().map(|_| Ok(Vec::new())).collect();
    {
        let index: HashMap<&str, usize> = runs
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (id.as_str(), i))
            .collect();
        for (run_id, row) in results {
            let Some(&i) = index.get(run_id.as_str()) else {
                continue;
            };
            let own = samples.remove(&row.id).unwrap_or_default();
            let ord = usize::try_from(row.ord).unwrap_or(usize::MAX);
            let decoded = row.decode(store, &run_id, ord, own);
            let entry = &mut by_run[i];
            if let Ok(list) = entry {
                match decoded {
                    Ok(result) => list.push(result),
                    Err(e) => *entry = Err(e),
                }
            }
        }
    }
    let mut out = Vec::with_capacity(runs.len());
    for ((id, row), results) in runs.into_iter().zip(by_run) {
        let run = results.and_then(|results| row.decode(store, &id, results));
        out.extend(skips.skip(run)?);
    }
    Ok(out)
}

/// SQLite: the rows of the runs a query selects (`filter`: its five parameters), oldest first.
fn sqlite_runs(
    conn: &Connection,
    store: &str,
    filter: &[&dyn rusqlite::ToSql],
) -> Result<Vec<(String, RunRow)>, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let default_fp = default_fingerprint_json();
    let sql = selection::runs(Dialect::Sqlite);
    let mut stmt = conn.prepare_cached(&sql).map_err(&be)?;
    let rows = stmt
        .query_map(filter, |r| {
            Ok((
                r.get::<_, String>(0)?,
                RunRow {
                    project: r.get(1)?,
                    commit: r.get(2)?,
                    branch: r.get(3)?,
                    started_at: r.get(4)?,
                    finished_at: r.get(5)?,
                    config_hash: r.get(6)?,
                    status: r.get(7)?,
                    fingerprint_json: r
                        .get::<_, Option<String>>(8)?
                        .unwrap_or_else(|| default_fp.clone()),
                    commit_info_json: r.get(9)?,
                    error: r.get(10)?,
                    pair_json: r.get(11)?,
                    testbed: r.get(12)?,
                    role: r.get(13)?,
                    exclusion_json: r.get(14)?,
                    contention_json: r.get(15)?,
                },
            ))
        })
        .map_err(&be)?;
    let mut runs = Vec::new();
    for row in rows {
        runs.push(row.map_err(&be)?);
    }
    Ok(runs)
}

/// SQLite: the runs and results a query selects, in one read transaction.
pub(super) fn sqlite_query_runs(
    conn: &Connection,
    store: &str,
    q: &RunQuery,
    skips: &Skips,
) -> Result<Vec<Run>, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let tx = conn.unchecked_transaction().map_err(&be)?;
    let keys = q.keys.as_ref().map(to_json);
    let newest = q.newest.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
    let filter = params![q.history_branch, q.testbed, keys, q.fingerprints, newest];
    let runs = sqlite_runs(&tx, store, filter)?;
    let mut results = Vec::new();
    let mut samples: HashMap<i64, Vec<SampleRow>> = HashMap::new();
    let none_asked = q.keys.as_ref().is_some_and(Vec::is_empty);
    let result_row = |r: &rusqlite::Row<'_>| {
        Ok((
            r.get::<_, String>(0)?,
            ResultRow {
                id: r.get(1)?,
                ord: r.get(2)?,
                suite: r.get(3)?,
                name: r.get(4)?,
                params_json: r.get(5)?,
                measure: r.get(6)?,
                unit: r.get(7)?,
                direction: r.get(8)?,
                status: r.get(9)?,
                error: r.get(10)?,
                summary_json: r.get(11)?,
            },
        ))
    };
    if !none_asked && q.newest.is_none() && keys.is_some() {
        // A series' every run: the keys' results alone, then those of the runs read.
        let sql = selection::sqlite_key_results(q);
        let mut stmt = tx.prepare_cached(&sql).map_err(&be)?;
        for row in stmt.query_map([&keys], result_row).map_err(&be)? {
            results.push(row.map_err(&be)?);
        }
        // Each run's results in their order (`assemble` groups them by run and leaves out
        // those of runs not read).
        results.sort_by_key(|(_, r)| r.ord);
    } else if !none_asked {
        let sql = selection::results(Dialect::Sqlite, q);
        let mut stmt = tx.prepare_cached(&sql).map_err(&be)?;
        for row in stmt.query_map(filter, result_row).map_err(&be)? {
            results.push(row.map_err(&be)?);
        }
    }
    if !none_asked && q.samples {
        let sql = selection::samples(Dialect::Sqlite, q);
        let mut stmt = tx.prepare_cached(&sql).map_err(&be)?;
        let rows = stmt
            .query_map(filter, |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    SampleRow {
                        idx: r.get(1)?,
                        value: r.get(2)?,
                        meta_json: r.get(3)?,
                        replicate: r.get(4)?,
                    },
                ))
            })
            .map_err(&be)?;
        for row in rows {
            let (result_id, sample) = row.map_err(&be)?;
            samples.entry(result_id).or_default().push(sample);
        }
    }
    tx.finish().map_err(&be)?;
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

/// SQLite: every benchmark key ever stored, sorted.
pub(super) fn sqlite_series_keys(
    conn: &Connection,
    store: &str,
) -> Result<Vec<String>, StoreError> {
    let be = super::sqlite_codec::backend(store);
    conn.prepare_cached(&SQLITE.series_keys)
        .map_err(&be)?
        .query_map([], |r| r.get(0))
        .map_err(&be)?
        .collect::<Result<_, _>>()
        .map_err(&be)
}

#[cfg(test)]
mod tests;
