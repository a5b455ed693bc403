//! Storing runs in SQLite: one `BEGIN IMMEDIATE` transaction for a run, or for a batch of runs
//! (the server's group commit), so a batch is stored whole or not at all.

use pitwall_schema::Run;
use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use super::rows::{RunRow, already_stored, meta_json, replicate, to_json};
use super::shared::fault_pause_in_txn;
use super::sql::queries::SQLITE;
use super::sqlite_codec::{backend, load_run};
use super::{InsertOutcome, StoreError};

/// SQLite's page cache while runs are stored, in KiB (its default is 2 MiB).
const BULK_CACHE_KIB: i64 = 64 * 1024;

/// Stores `runs` in one transaction: every run is checked first, then each is inserted or
/// found already stored; any error rolls every one of them back.
pub(super) fn insert_runs(
    conn: &mut Connection,
    store: &str,
    runs: &[Run],
) -> Result<Vec<InsertOutcome>, StoreError> {
    super::rows::validate_all(store, runs)?;
    let be = backend(store);
    // A big transaction dirties more pages than SQLite's default 2 MiB cache holds, and a full
    // cache spills them to the log mid-transaction, over and over; a larger cache while
    // storing, given back after, writes each page once (docs/PERFORMANCE.md).
    let cache: i64 = conn
        .pragma_query_value(None, "cache_size", |r| r.get(0))
        .map_err(&be)?;
    conn.pragma_update(None, "cache_size", -BULK_CACHE_KIB)
        .map_err(&be)?;
    let stored = insert_all(conn, store, runs);
    conn.pragma_update(None, "cache_size", cache).map_err(&be)?;
    stored
}

/// `insert_runs` once the runs are known valid.
fn insert_all(
    conn: &mut Connection,
    store: &str,
    runs: &[Run],
) -> Result<Vec<InsertOutcome>, StoreError> {
    let be = backend(store);
    // IMMEDIATE takes the write lock up front (waiting up to the busy timeout), so the
    // duplicate checks and the inserts see the same database state.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&be)?;
    let mut outcomes = Vec::with_capacity(runs.len());
    for run in runs {
        outcomes.push(insert_one(&tx, store, run)?);
    }
    if outcomes.contains(&InsertOutcome::Inserted) {
        fault_pause_in_txn();
        tx.commit().map_err(&be)?;
    }
    // Else dropping `tx` rolls back the (read-only) transaction.
    Ok(outcomes)
}

/// One run inside `tx`: `AlreadyStored` when an identical run has its id, a conflict when a
/// different one has.
fn insert_one(tx: &Transaction<'_>, store: &str, run: &Run) -> Result<InsertOutcome, StoreError> {
    let be = backend(store);
    if let Some(stored) = load_run(tx, store, &run.id)? {
        return already_stored(store, &stored, run);
    }
    let row = RunRow::of(run);
    tx.prepare_cached(&SQLITE.insert_run)
        .and_then(|mut s| {
            s.execute(params![
                run.id,
                row.project,
                row.commit,
                row.branch,
                row.started_at,
                row.finished_at,
                row.config_hash,
                row.status,
                row.fingerprint_json,
                row.commit_info_json,
                row.error,
                row.pair_json,
                run.pair.as_ref().map(|p| p.id.clone()),
                row.testbed,
                row.role,
                row.exclusion_json,
                row.contention_json,
            ])
        })
        .map_err(&be)?;
    let mut ins_result = tx.prepare_cached(&SQLITE.insert_results).map_err(&be)?;
    let mut ins_key = tx.prepare_cached(&SQLITE.insert_keys).map_err(&be)?;
    let mut ins_sample = tx.prepare_cached(&SQLITE.insert_samples).map_err(&be)?;
    for (ord, r) in run.results.iter().enumerate() {
        let key = r.key();
        ins_result
            .execute(params![
                run.id,
                ord as i64,
                r.suite,
                r.name,
                to_json(&r.params),
                r.measure,
                r.unit.as_str(),
                r.direction.as_str(),
                r.status.as_str(),
                r.error,
                r.summary.as_ref().map(to_json),
                key,
                super::rows::point_of(r).as_ref().map(to_json),
            ])
            .map_err(&be)?;
        ins_key.execute([&key]).map_err(&be)?;
        let result_id = tx.last_insert_rowid();
        for (idx, value) in r.samples.iter().enumerate() {
            ins_sample
                .execute(params![
                    result_id,
                    idx as i64,
                    value,
                    meta_json(r, idx),
                    replicate(r, idx)
                ])
                .map_err(&be)?;
        }
    }
    Ok(InsertOutcome::Inserted)
}
