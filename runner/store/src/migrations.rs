//! Numbered schema migrations for the SQLite store, so a database written by an older pitwall is
//! brought up to date (and one written by a newer pitwall is refused) instead of misread.
//!
//! The schema version lives in `PRAGMA user_version`: version N means `MIGRATIONS[..N]` have
//! been applied. Migrations are applied inside one `BEGIN IMMEDIATE` transaction that re-reads
//! the version after taking the write lock, so two processes opening a fresh file at the same
//! moment do not both migrate: the second waits (busy timeout), then sees the new version.
//! Never edit a released migration; append a new one.

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

/// Migration 1: runs, their results and every raw sample.
///
/// * `results.ord` is the position of a result within its run (results come back in this
///   order); `UNIQUE (run_id, ord)` also serves as the index behind `run_id` lookups and the
///   cascade.
/// * `samples.value` holds each sample as an 8-byte IEEE 754 double (storage class REAL,
///   enforced by the CHECK). The column deliberately has no declared type: a `REAL` column has
///   REAL affinity, and SQLite then writes integral doubles to disk as integers, which turns
///   `-0.0` into `0.0` on the way back. Without affinity the double is kept bit for bit.
/// * `*_json` columns hold serde_json text of the schema types; `samples.meta_json` is NULL for
///   every sample of a result that has no per-sample metadata.
/// * Enumerations (`status`, `direction`) are stored as their stable text forms and checked on
///   read rather than with CHECK constraints, so adding a value later needs no table rebuild.
const V1: &str = "
CREATE TABLE runs (
    id               TEXT PRIMARY KEY NOT NULL,
    project          TEXT NOT NULL,
    commit_sha       TEXT NOT NULL,
    branch           TEXT,
    started_at       TEXT NOT NULL,
    finished_at      TEXT NOT NULL,
    config_hash      TEXT NOT NULL,
    status           TEXT NOT NULL,
    fingerprint_json TEXT NOT NULL
);
CREATE INDEX runs_by_started_at ON runs (started_at, id);

CREATE TABLE results (
    id          INTEGER PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord         INTEGER NOT NULL,
    suite       TEXT NOT NULL,
    name        TEXT NOT NULL,
    params_json TEXT NOT NULL,
    measure     TEXT NOT NULL,
    unit        TEXT NOT NULL,
    direction   TEXT NOT NULL,
    status      TEXT NOT NULL,
    error       TEXT,
    UNIQUE (run_id, ord)
);
CREATE INDEX results_by_benchmark ON results (suite, name);

CREATE TABLE samples (
    result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    value     NOT NULL CHECK (typeof(value) = 'real'),
    meta_json TEXT,
    PRIMARY KEY (result_id, idx)
) WITHOUT ROWID;
";

/// Migration 2: what a run of an exact commit carries besides its results: the commit's
/// author/date/subject (`commit_info_json`), a run-level error such as a failed build's log tail
/// (`error`), and the link between the two runs of an interleaved base/head measurement
/// (`pair_json`, with `pair_id` indexed so a pair is found without parsing JSON).
const V2: &str = "
ALTER TABLE runs ADD COLUMN commit_info_json TEXT;
ALTER TABLE runs ADD COLUMN error TEXT;
ALTER TABLE runs ADD COLUMN pair_json TEXT;
ALTER TABLE runs ADD COLUMN pair_id TEXT;
CREATE INDEX runs_by_pair ON runs (pair_id);
CREATE INDEX runs_by_commit ON runs (commit_sha);
";

/// Migration 3: the replicate (benchmark process) each sample came from, `replicates` in the
/// schema. NULL for every sample of a result whose replicates are unknown, which includes every
/// sample stored before this migration: those runs read back with empty `replicates`.
const V3: &str = "
ALTER TABLE samples ADD COLUMN replicate INTEGER;
";

/// Migration 4: what a run is part of besides its commit (`labels` in the schema): the
/// testbed it was measured on and its role (`history`, `pr-base`, `pr-head`), with an index
/// for reading one series' runs. Runs stored before get their values from
/// [`backfill_labels`] in the same transaction: the testbed their fingerprint implies and the
/// role their pair implies; their branch stays as stored (NULL when unknown).
const V4: &str = "
ALTER TABLE runs ADD COLUMN testbed TEXT;
ALTER TABLE runs ADD COLUMN role TEXT;
CREATE INDEX runs_by_series ON runs (project, testbed, branch, role, started_at);
";

/// Migration 5: the summary `pitwall prune --keep-summaries` leaves in place of a result's raw
/// samples (`BenchmarkResult::summary`, serde_json text); NULL while the samples are kept.
const V5: &str = "
ALTER TABLE results ADD COLUMN summary_json TEXT;
";

/// Migration 6: each result's benchmark key (`BenchmarkResult::key`, `suite/name[params]/
/// measure`) as a column with an index, its history point (`rows::point_of`: median and its
/// interval, range, count, as `SampleSummary` JSON; NULL without a finite sample), and the set
/// of keys ever stored, so one series is read without reading every run or sample
/// (`Store::query_runs`). [`backfill_keys`] fills them for the results stored before, in the
/// same transaction.
const V6: &str = "
ALTER TABLE results ADD COLUMN bench_key TEXT;
ALTER TABLE results ADD COLUMN point_json TEXT;
CREATE INDEX results_by_key ON results (bench_key);
CREATE TABLE series_keys (bench_key TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
";

/// The version whose script [`backfill_keys`] completes.
const KEYS_VERSION: i64 = 6;

/// Gives every result without a key the key and the point its columns and samples make, and
/// records the keys. Reads every sample once, a result at a time.
fn backfill_keys(conn: &Connection) -> rusqlite::Result<()> {
    type Row = (i64, String, String, String, String, Option<String>);
    let rows: Vec<Row> = conn
        .prepare(
            "SELECT id, suite, name, params_json, measure, summary_json FROM results
             WHERE bench_key IS NULL",
        )?
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
    let mut update =
        conn.prepare("UPDATE results SET bench_key = ?2, point_json = ?3 WHERE id = ?1")?;
    let mut record = conn.prepare("INSERT OR IGNORE INTO series_keys (bench_key) VALUES (?1)")?;
    let mut samples = conn.prepare("SELECT value, meta_json FROM samples WHERE result_id = ?1")?;
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

/// Migration 7: alerts, the steps detection found in a history series and what people decided
/// about them (`pitwall_schema::Alert`). One row per alert, keyed by its stable id; the series
/// columns are indexed so re-detection reads one series' alerts. `status` and `kind` are stored
/// as their text forms and checked on read. `ci_low`/`ci_high` are NULL when no interval.
const V7: &str = "
CREATE TABLE alerts (
    id            TEXT PRIMARY KEY NOT NULL,
    project       TEXT NOT NULL,
    testbed       TEXT NOT NULL,
    branch        TEXT NOT NULL,
    bench_key     TEXT NOT NULL,
    measure       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    status        TEXT NOT NULL,
    last_good     TEXT NOT NULL,
    first_bad     TEXT NOT NULL,
    first_bad_run TEXT NOT NULL,
    before_value  REAL NOT NULL,
    after_value   REAL NOT NULL,
    rel_change    REAL NOT NULL,
    ci_low        REAL,
    ci_high       REAL,
    note          TEXT,
    culprit       TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX alerts_by_series ON alerts (project, testbed, branch, bench_key);
";

/// Migration 8: the forge comment pitwall keeps per pull or merge request (`target`, e.g.
/// `github:octo/bench#7`), so the next publish edits it without searching the comments.
const V8: &str = "
CREATE TABLE forge_comments (
    target     TEXT PRIMARY KEY NOT NULL,
    comment_id INTEGER NOT NULL
);
";

/// The version whose script [`backfill_labels`] completes.
const LABELS_VERSION: i64 = 4;

/// Every migration, in order. The schema version after applying `MIGRATIONS[..n]` is `n`.
pub(super) const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7, V8];

/// Gives every run without a testbed or role the ones it implies (see
/// `rows::implied_labels`).
fn backfill_labels(conn: &Connection) -> rusqlite::Result<()> {
    let rows: Vec<(String, String, Option<String>)> = conn
        .prepare("SELECT id, fingerprint_json, pair_json FROM runs WHERE testbed IS NULL OR role IS NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    let mut update = conn.prepare("UPDATE runs SET testbed = ?2, role = ?3 WHERE id = ?1")?;
    for (id, fingerprint, pair) in rows {
        let (testbed, role) = super::rows::implied_labels(&fingerprint, pair.as_deref());
        update.execute(rusqlite::params![id, testbed, role])?;
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
/// (0 when the database was already current, or another process migrated it first).
pub(super) fn migrate(conn: &mut Connection, store: &str) -> Result<usize, StoreError> {
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
    for (i, script) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = i as i64 + 1;
        let fail = |source| StoreError::Backend {
            store: store.to_string(),
            source: Box::new(MigrationError { version, source }),
        };
        tx.execute_batch(script).map_err(fail)?;
        if version == LABELS_VERSION {
            backfill_labels(&tx).map_err(fail)?;
        }
        if version == KEYS_VERSION {
            backfill_keys(&tx).map_err(fail)?;
        }
        // user_version is part of the database header, so it commits with the scripts.
        tx.pragma_update(None, "user_version", version)
            .map_err(fail)?;
        applied += 1;
    }
    tx.commit().map_err(backend)?;
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_a_fresh_database_once() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(current_version(&conn).unwrap(), 0);
        assert_eq!(migrate(&mut conn, "mem").unwrap(), MIGRATIONS.len());
        assert_eq!(current_version(&conn).unwrap(), latest_version());
        assert_eq!(migrate(&mut conn, "mem").unwrap(), 0);
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            tables,
            [
                "alerts",
                "forge_comments",
                "results",
                "runs",
                "samples",
                "series_keys"
            ]
        );
    }

    #[test]
    fn refuses_newer_versions() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", latest_version() + 1)
            .unwrap();
        let err = migrate(&mut conn, "mem").unwrap_err();
        assert!(
            matches!(err, StoreError::TooNew { found, supported, .. }
                if found == latest_version() + 1 && supported == latest_version()),
            "{err:?}"
        );
    }
}
