//! Numbered schema migrations of the PostgreSQL store, applied under an advisory lock so that
//! runners opening a fresh or older database at once migrate it once, and a database that is
//! not pitwall's (or is from a newer pitwall) is refused before anything is written.
//!
//! The version lives in the one row of `pitwall_schema`: version N means `MIGRATIONS[..N]` have
//! been applied. Numbered independently of the SQLite store's migrations.

use postgres::{Client, GenericClient};

use super::pg_conn::{LOCK_KEY, backend};
use super::{OpenMode, StoreError};

/// Migration 1: the SQLite store's tables (see `migrations.rs` there for the why of each
/// column). `id` and `started_at` use the "C" collation so that ordering and prefix lookups
/// are by bytes, as in SQLite, whatever the database's locale; samples are `float8`, which
/// PostgreSQL keeps bit for bit (including `-0`).
const V1: &str = r#"
CREATE TABLE runs (
    id               TEXT COLLATE "C" PRIMARY KEY,
    project          TEXT NOT NULL,
    commit_sha       TEXT NOT NULL,
    branch           TEXT,
    started_at       TEXT COLLATE "C" NOT NULL,
    finished_at      TEXT NOT NULL,
    config_hash      TEXT NOT NULL,
    status           TEXT NOT NULL,
    fingerprint_json TEXT NOT NULL,
    commit_info_json TEXT,
    error            TEXT,
    pair_json        TEXT,
    pair_id          TEXT
);
CREATE INDEX runs_by_started_at ON runs (started_at, id);
CREATE INDEX runs_by_pair ON runs (pair_id);
CREATE INDEX runs_by_commit ON runs (commit_sha);

CREATE TABLE results (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
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
    result_id BIGINT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    value     DOUBLE PRECISION NOT NULL,
    meta_json TEXT,
    PRIMARY KEY (result_id, idx)
);
"#;

/// Migration 2: the replicate (benchmark process) of each sample, as SQLite migration 3. A
/// `u32` in the schema, so `BIGINT`: PostgreSQL has no unsigned integers. NULL for every sample
/// of a result whose replicates are unknown, including every sample stored before this.
const V2: &str = "
ALTER TABLE samples ADD COLUMN replicate BIGINT;
";

/// Migration 3: the testbed and role of each run, as SQLite migration 4; runs stored before
/// get the values they imply from [`backfill_labels`] in the same transaction.
const V3: &str = "
ALTER TABLE runs ADD COLUMN testbed TEXT;
ALTER TABLE runs ADD COLUMN role TEXT;
CREATE INDEX runs_by_series ON runs (project, testbed, branch, role, started_at);
";

/// Migration 4: the summary `pitwall prune --keep-summaries` leaves in place of a result's raw
/// samples, as SQLite migration 5.
const V4: &str = "
ALTER TABLE results ADD COLUMN summary_json TEXT;
";

/// Migration 5: each result's benchmark key and the set of keys ever stored, as SQLite
/// migration 6; [`backfill_keys`] fills them for results stored before.
const V5: &str = "
ALTER TABLE results ADD COLUMN bench_key TEXT;
ALTER TABLE results ADD COLUMN point_json TEXT;
CREATE INDEX results_by_key ON results (bench_key);
CREATE TABLE series_keys (bench_key TEXT COLLATE \"C\" PRIMARY KEY);
";

/// The version whose script [`backfill_keys`] completes.
const KEYS_VERSION: usize = 5;

fn backfill_keys(client: &mut impl GenericClient) -> Result<(), postgres::Error> {
    let rows = client.query(
        "SELECT id, suite, name, params_json, measure, summary_json FROM results
         WHERE bench_key IS NULL",
        &[],
    )?;
    for r in rows {
        let id: i64 = r.get(0);
        let key = super::rows::key_of(r.get(1), r.get(2), r.get(3), r.get(4));
        let values: Vec<(f64, Option<String>)> = client
            .query(
                "SELECT value, meta_json FROM samples WHERE result_id = $1",
                &[&id],
            )?
            .iter()
            .map(|s| (s.get(0), s.get(1)))
            .collect();
        let summary: Option<String> = r.get(5);
        let point = super::rows::point_json_of_rows(&values, summary.as_deref());
        client.execute(
            "UPDATE results SET bench_key = $2, point_json = $3 WHERE id = $1",
            &[&id, &key, &point],
        )?;
        client.execute(
            "INSERT INTO series_keys (bench_key) VALUES ($1) ON CONFLICT DO NOTHING",
            &[&key],
        )?;
    }
    Ok(())
}

/// Migration 6: alerts, as SQLite migration 7 (`DOUBLE PRECISION` for the numbers).
const V6: &str = "
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
    before_value  DOUBLE PRECISION NOT NULL,
    after_value   DOUBLE PRECISION NOT NULL,
    rel_change    DOUBLE PRECISION NOT NULL,
    ci_low        DOUBLE PRECISION,
    ci_high       DOUBLE PRECISION,
    note          TEXT,
    culprit       TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX alerts_by_series ON alerts (project, testbed, branch, bench_key);
";

/// Migration 7: the forge comment kept per pull or merge request, as SQLite migration 8.
const V7: &str = "
CREATE TABLE forge_comments (
    target     TEXT PRIMARY KEY NOT NULL,
    comment_id BIGINT NOT NULL
);
";

/// The version whose script [`backfill_labels`] completes.
const LABELS_VERSION: usize = 3;

/// Every migration, in order; never edit a released one, append.
pub(super) const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7];

/// Gives every run without a testbed or role the ones it implies (see
/// `rows::implied_labels`).
fn backfill_labels(client: &mut impl GenericClient) -> Result<(), postgres::Error> {
    let rows = client.query(
        "SELECT id, fingerprint_json, pair_json FROM runs WHERE testbed IS NULL OR role IS NULL",
        &[],
    )?;
    for r in rows {
        let id: String = r.get(0);
        let fingerprint: String = r.get(1);
        let pair: Option<String> = r.get(2);
        let (testbed, role) = super::rows::implied_labels(&fingerprint, pair.as_deref());
        client.execute(
            "UPDATE runs SET testbed = $2, role = $3 WHERE id = $1",
            &[&id, &testbed, &role],
        )?;
    }
    Ok(())
}

/// Refuses, before anything is written, a database whose `runs` table is not pitwall's (no
/// `pitwall_schema` beside it), and with `OpenMode::Existing` one without pitwall's tables.
/// Called under the migration lock, so a runner migrating at the same moment is not mistaken
/// for a foreign application.
fn check_is_ours(
    client: &mut impl GenericClient,
    store: &str,
    mode: OpenMode,
) -> Result<(), StoreError> {
    let mut exists = |table: &str| -> Result<bool, StoreError> {
        let row = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
            .map_err(backend(store))?;
        Ok(row.get(0))
    };
    let ours = exists("pitwall_schema")?;
    if !ours && exists("runs")? {
        return Err(StoreError::Foreign {
            store: store.to_string(),
            what: "it has a `runs` table but no `pitwall_schema`".into(),
        });
    }
    if !ours && mode == OpenMode::Existing {
        return Err(StoreError::Missing {
            store: store.to_string(),
            what: "has no pitwall tables".into(),
        });
    }
    Ok(())
}

pub(super) fn current_version(client: &mut impl GenericClient) -> Result<i64, postgres::Error> {
    let rows = client.query("SELECT version FROM pitwall_schema", &[])?;
    Ok(rows.first().map_or(0, |r| i64::from(r.get::<_, i32>(0))))
}

/// Applies the migrations this database lacks, in one transaction under the advisory lock, so
/// two runners opening a fresh database at once do not both migrate.
pub(super) fn migrate(client: &mut Client, store: &str, mode: OpenMode) -> Result<(), StoreError> {
    let be = backend(store);
    let mut tx = client.transaction().map_err(&be)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .map_err(&be)?;
    // Refusing drops `tx`: nothing was written.
    check_is_ours(&mut tx, store, mode)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS pitwall_schema (version INTEGER NOT NULL)")
        .map_err(&be)?;
    let found = current_version(&mut tx).map_err(&be)?;
    let latest = MIGRATIONS.len() as i64;
    if found > latest {
        return Err(StoreError::TooNew {
            store: store.to_string(),
            found,
            supported: latest,
        });
    }
    if found == latest {
        return tx.commit().map_err(&be);
    }
    for (n, script) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let fail = |e: postgres::Error| StoreError::Backend {
            store: store.to_string(),
            source: format!("applying schema migration {}: {e}", n + 1).into(),
        };
        tx.batch_execute(script).map_err(fail)?;
        if n + 1 == LABELS_VERSION {
            backfill_labels(&mut tx).map_err(fail)?;
        }
        if n + 1 == KEYS_VERSION {
            backfill_keys(&mut tx).map_err(fail)?;
        }
    }
    tx.execute("DELETE FROM pitwall_schema", &[]).map_err(&be)?;
    tx.execute(
        "INSERT INTO pitwall_schema (version) VALUES ($1)",
        &[&(latest as i32)],
    )
    .map_err(&be)?;
    tx.commit().map_err(&be)
}
