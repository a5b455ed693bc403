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
    let mut samples: Vec<SampleInsert> = Vec::new();
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
        for (idx, &value) in r.samples.iter().enumerate() {
            samples.push((
                result_id,
                idx as i64,
                value,
                meta_json(r, idx),
                replicate(r, idx),
            ));
        }
    }
    insert_samples(tx, &samples).map_err(&be)?;
    Ok(InsertOutcome::Inserted)
}

/// One sample row: result id, index, value, metadata JSON, replicate.
type SampleInsert = (i64, i64, f64, Option<String>, Option<i64>);

/// Sample rows stored by one statement: a 1,000-result run has 10,000 of them or more, and
/// executing a statement per row cost about as much as the rows themselves
/// (docs/PERFORMANCE.md, "`pitwall serve` at scale"). 100 rows bind 500 parameters, far
/// below SQLite's limit of 32,766.
const SAMPLE_ROWS_PER_STATEMENT: usize = 100;

/// `INSERT INTO samples … VALUES (…), (…), …` for `rows` rows.
fn insert_samples_sql(rows: usize) -> String {
    let values = vec!["(?, ?, ?, ?, ?)"; rows].join(", ");
    format!("INSERT INTO samples (result_id, idx, value, meta_json, replicate) VALUES {values}")
}

/// Stores `rows` in statements of [`SAMPLE_ROWS_PER_STATEMENT`] rows, the rest one by one.
fn insert_samples(tx: &Transaction<'_>, rows: &[SampleInsert]) -> rusqlite::Result<()> {
    static MANY: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| insert_samples_sql(SAMPLE_ROWS_PER_STATEMENT));
    let mut chunks = rows.chunks_exact(SAMPLE_ROWS_PER_STATEMENT);
    let mut many = tx.prepare_cached(&MANY)?;
    for chunk in chunks.by_ref() {
        let params: Vec<&dyn rusqlite::ToSql> = chunk
            .iter()
            .flat_map(|(id, idx, value, meta, replicate)| {
                [id as &dyn rusqlite::ToSql, idx, value, meta, replicate]
            })
            .collect();
        many.execute(rusqlite::params_from_iter(params))?;
    }
    let mut one = tx.prepare_cached(&SQLITE.insert_samples)?;
    for (id, idx, value, meta, replicate) in chunks.remainder() {
        one.execute(params![id, idx, value, meta, replicate])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{ok_result, rich_run, run};
    use crate::{SqliteStore, Store};
    use pitwall_schema::SampleMeta;

    /// Samples stored a hundred rows a statement and the rest one by one read back as they
    /// were, in order, with their metadata and replicates, across results of a run: 101
    /// samples (a statement and one row), none, 99 (spanning the next statement), and the rich
    /// run's exact doubles.
    #[test]
    fn samples_stored_many_a_statement_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
        let mut many = ok_result("many", (0..101).map(|i| f64::from(i) * 0.5).collect());
        many.sample_meta = (0..101)
            .map(|i| SampleMeta {
                sm_clock_mhz: Some(1000 + i),
                ..SampleMeta::default()
            })
            .collect();
        let mut none = ok_result("none", Vec::new());
        none.status = pitwall_schema::ResultStatus::Failed;
        none.error = Some("no samples".into());
        let mut split = ok_result("split", (0..99).map(|i| -f64::from(i)).collect());
        split.replicates = (0..99).map(|i| i / 33).collect();
        let r = run(
            "01900000-0000-7000-8000-00000000c001",
            "2026-03-01T10:00:00Z",
            vec![many, none, split],
        );
        let rich = rich_run();
        assert_eq!(
            store.insert_runs(&[r.clone(), rich.clone()]).unwrap(),
            [InsertOutcome::Inserted, InsertOutcome::Inserted]
        );
        assert_eq!(store.get_run(&r.id).unwrap(), r);
        assert_eq!(store.get_run(&rich.id).unwrap(), rich);
    }
}
