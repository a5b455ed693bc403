//! The numbered schema migrations (`sql::schema`) applied to a SQLite store, so a database
//! written by an older pitwall is brought up to date (and one written by a newer pitwall is
//! refused) instead of misread.
//!
//! The schema version lives in `PRAGMA user_version`: version N means `MIGRATIONS[..N]` have
//! been applied. Migrations are applied inside one `BEGIN IMMEDIATE` transaction that re-reads
//! the version after taking the write lock, so two processes opening a fresh file at the same
//! moment do not both migrate: the second waits (busy timeout), then sees the new version.
//! Never edit a released migration; append a new step to `sql::schema`.

use std::sync::LazyLock;

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;
use super::sql::Dialect;
use super::sql::queries::SQLITE;
use super::sql::schema::{Backfill, Migration, local_role_note, migrations};

/// Every migration, in order (`sql::schema`). The schema version after applying
/// `MIGRATIONS[..n]` is `n`.
pub(super) static MIGRATIONS: LazyLock<Vec<Migration>> =
    LazyLock::new(|| migrations(Dialect::Sqlite));

/// Gives every run without a testbed or role the ones it implies (see
/// `rows::implied_labels`).
fn backfill_labels(conn: &Connection) -> rusqlite::Result<()> {
    let rows: Vec<(String, String, Option<String>)> = conn
        .prepare(&SQLITE.labels_to_fill)?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let mut update = conn.prepare(&SQLITE.set_labels)?;
    for (id, fingerprint, pair) in rows {
        let (testbed, role) = super::rows::implied_labels(&fingerprint, pair.as_deref());
        update.execute(rusqlite::params![id, testbed, role])?;
    }
    Ok(())
}

/// Makes the order of every pair stored before rounds alternated explicit.
fn backfill_round_orders(conn: &Connection) -> rusqlite::Result<()> {
    let rows: Vec<(String, String)> = conn
        .prepare(&SQLITE.pairs_to_fill)?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut update = conn.prepare(&SQLITE.set_pair)?;
    for (id, pair) in rows {
        if let Some(explicit) = super::rows::explicit_round_orders(&pair) {
            update.execute(rusqlite::params![id, explicit])?;
        }
    }
    Ok(())
}

/// Gives every result without a key the key and the point its columns and samples make, and
/// records the keys. Reads every sample once, a result at a time.
fn backfill_keys(conn: &Connection) -> rusqlite::Result<()> {
    type Row = (i64, String, String, String, String, Option<String>);
    let rows: Vec<Row> = conn
        .prepare(&SQLITE.keys_to_fill)?
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    let mut update = conn.prepare(&SQLITE.set_key)?;
    let mut record = conn.prepare(&SQLITE.record_key)?;
    let mut samples = conn.prepare(&SQLITE.samples_of_result)?;
    for (id, suite, name, params, measure, summary) in rows {
        let key = super::rows::key_of(&suite, &name, &params, &measure);
        let values: Vec<(f64, Option<String>)> = samples
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let point = super::rows::point_json_of_rows(&values, summary.as_deref());
        update.execute(rusqlite::params![id, key, point])?;
        record.execute([key])?;
    }
    Ok(())
}

/// The schema version this pitwall writes.
pub(super) fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// A migration script that SQLite rejected.
#[derive(Debug, thiserror::Error)]
#[error("applying schema migration {version}: {source}")]
pub(super) struct MigrationError {
    version: i64,
    #[source]
    source: rusqlite::Error,
}

/// The schema version recorded in the database (0 for a fresh file).
pub(super) fn current_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Whose database a SQLite file is, judged before pitwall writes anything to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ownership {
    /// A pitwall store (schema version set, `runs` table present).
    Pitwall,
    /// No tables at all: a new file, or an empty one.
    Empty,
    /// Tables, but not pitwall's; says what is missing.
    Foreign(String),
}

/// Tells a pitwall store from an empty database and from another program's database.
pub(super) fn ownership(conn: &Connection, version: i64) -> rusqlite::Result<Ownership> {
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        [],
        |r| r.get(0),
    )?;
    let runs: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'runs'",
        [],
        |r| r.get(0),
    )?;
    Ok(match (tables, version, runs) {
        (0, 0, _) => Ownership::Empty,
        (_, 0, _) => Ownership::Foreign(format!(
            "it has {tables} table(s) but no pitwall schema version"
        )),
        (_, _, 0) => Ownership::Foreign(format!("schema version {version} but no `runs` table")),
        _ => Ownership::Pitwall,
    })
}

/// The schema version and the ownership, read in one snapshot. Read apart, a process that
/// migrates the file between the two reads makes it look like tables without a version.
pub(super) fn version_and_ownership(conn: &Connection) -> rusqlite::Result<(i64, Ownership)> {
    let tx = conn.unchecked_transaction()?;
    let version = current_version(&tx)?;
    let owner = ownership(&tx, version)?;
    tx.finish()?;
    Ok((version, owner))
}

/// Refuses a database written by a newer pitwall.
pub(super) fn check_not_too_new(found: i64, store: &str) -> Result<(), StoreError> {
    if found > latest_version() {
        return Err(StoreError::TooNew {
            store: store.to_string(),
            found,
            supported: latest_version(),
        });
    }
    Ok(())
}

/// Brings the schema up to `latest_version()`. Returns how many migrations this call applied
/// (0 when the database was already current, or another process migrated it first); what a
/// migration has to tell the user (the runs it relabelled) goes into `notes`.
pub(super) fn migrate(
    conn: &mut Connection,
    store: &str,
    notes: &mut Vec<String>,
) -> Result<usize, StoreError> {
    let backend = |e: rusqlite::Error| StoreError::Backend {
        store: store.to_string(),
        source: Box::new(e),
    };
    // Fast path: an up-to-date database needs no write lock at all.
    let found = current_version(conn).map_err(backend)?;
    check_not_too_new(found, store)?;
    if found == latest_version() {
        return Ok(0);
    }

    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    // Re-read under the write lock: another process may have migrated meanwhile.
    let found = current_version(&tx).map_err(backend)?;
    check_not_too_new(found, store)?;
    let mut applied = 0;
    for (i, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = i as i64 + 1;
        let fail = |source| StoreError::Backend {
            store: store.to_string(),
            source: Box::new(MigrationError { version, source }),
        };
        tx.execute_batch(&migration.script).map_err(fail)?;
        for backfill in &migration.backfills {
            match backfill {
                Backfill::Labels => backfill_labels(&tx).map_err(fail)?,
                Backfill::Keys => backfill_keys(&tx).map_err(fail)?,
                Backfill::RoundOrders => backfill_round_orders(&tx).map_err(fail)?,
                Backfill::LocalRole => {
                    let relabelled = local_runs(&tx).map_err(fail)?;
                    tx.execute(&SQLITE.relabel_local, []).map_err(fail)?;
                    notes.extend(local_role_note(&relabelled));
                }
            }
        }
        // user_version is part of the database header, so it commits with the scripts.
        tx.pragma_update(None, "user_version", version)
            .map_err(fail)?;
        applied += 1;
    }
    tx.commit().map_err(backend)?;
    Ok(applied)
}

/// The runs `Backfill::LocalRole` relabels (id, start time), oldest first.
fn local_runs(tx: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut st = tx.prepare(&SQLITE.local_to_relabel)?;
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect()
}

#[cfg(test)]
mod tests;
