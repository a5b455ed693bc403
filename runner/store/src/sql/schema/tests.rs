//! The migration scripts exactly as each store applied them before they were generated from one
//! schema (`super`): a script that changed by one byte would give new stores a schema that
//! differs from the old stores' (SQLite keeps each `CREATE` text), so they must stay equal.

use super::super::Dialect;
use super::*;

/// The SQLite store's migrations 1 to 8 as they were written by hand.
const SQLITE: [&str; 18] = [
    "
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
",
    "
ALTER TABLE runs ADD COLUMN commit_info_json TEXT;
ALTER TABLE runs ADD COLUMN error TEXT;
ALTER TABLE runs ADD COLUMN pair_json TEXT;
ALTER TABLE runs ADD COLUMN pair_id TEXT;
CREATE INDEX runs_by_pair ON runs (pair_id);
CREATE INDEX runs_by_commit ON runs (commit_sha);
",
    "
ALTER TABLE samples ADD COLUMN replicate INTEGER;
",
    "
ALTER TABLE runs ADD COLUMN testbed TEXT;
ALTER TABLE runs ADD COLUMN role TEXT;
CREATE INDEX runs_by_series ON runs (project, testbed, branch, role, started_at);
",
    "
ALTER TABLE results ADD COLUMN summary_json TEXT;
",
    "
ALTER TABLE results ADD COLUMN bench_key TEXT;
ALTER TABLE results ADD COLUMN point_json TEXT;
CREATE INDEX results_by_key ON results (bench_key);
CREATE TABLE series_keys (bench_key TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
",
    "
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
",
    "
CREATE TABLE forge_comments (
    target     TEXT PRIMARY KEY NOT NULL,
    comment_id INTEGER NOT NULL
);
",
    // Step 9 (round orders) changes no table; its backfill does the work.
    "\n",
    "
ALTER TABLE runs ADD COLUMN exclusion_json TEXT;
",
    "
ALTER TABLE alerts ADD COLUMN more_points INTEGER;
ALTER TABLE alerts ADD COLUMN label TEXT;
",
    // Step 12 (contention).
    "\nALTER TABLE runs ADD COLUMN contention_json TEXT;\n",
    // Step 13 (tokens of `pitwall serve`).
    "
CREATE TABLE tokens (
    name          TEXT PRIMARY KEY NOT NULL,
    role          TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    expires_at    TEXT,
    revoked_at    TEXT
);
",
    // Step 14 (alert changes).
    "
CREATE TABLE alert_changes (
    id          INTEGER PRIMARY KEY,
    alert_id    TEXT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    at          TEXT NOT NULL,
    by_name     TEXT,
    from_status TEXT,
    to_status   TEXT,
    note        TEXT,
    culprit     TEXT
);
CREATE INDEX alert_changes_by_alert ON alert_changes (alert_id, id);
",
    // Step 15 (browser sessions of `pitwall serve`).
    "
CREATE TABLE sessions (
    id_sha256    TEXT PRIMARY KEY NOT NULL,
    token_sha256 TEXT NOT NULL,
    token_name   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL
);
",
    // Step 16 (series summaries of `pitwall serve`'s index).
    "
CREATE TABLE series_summaries (
    project      TEXT NOT NULL,
    testbed      TEXT NOT NULL,
    branch       TEXT NOT NULL,
    bench_key    TEXT NOT NULL,
    summary_json TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (project, testbed, branch, bench_key)
);
",
    // Step 17 (PostgreSQL only: the covering index of history points, no samples foreign key).
    "\n",
    // Step 18 (the unused index of results by suite and name goes).
    "\nDROP INDEX IF EXISTS results_by_benchmark;\n",
];

/// The PostgreSQL store's migrations 1 to 7 as they were written by hand.
const POSTGRES: [&str; 17] = [
    r#"
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
"#,
    "
ALTER TABLE samples ADD COLUMN replicate BIGINT;
",
    "
ALTER TABLE runs ADD COLUMN testbed TEXT;
ALTER TABLE runs ADD COLUMN role TEXT;
CREATE INDEX runs_by_series ON runs (project, testbed, branch, role, started_at);
",
    "
ALTER TABLE results ADD COLUMN summary_json TEXT;
",
    "
ALTER TABLE results ADD COLUMN bench_key TEXT;
ALTER TABLE results ADD COLUMN point_json TEXT;
CREATE INDEX results_by_key ON results (bench_key);
CREATE TABLE series_keys (bench_key TEXT COLLATE \"C\" PRIMARY KEY);
",
    "
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
",
    "
CREATE TABLE forge_comments (
    target     TEXT PRIMARY KEY NOT NULL,
    comment_id BIGINT NOT NULL
);
",
    // Step 9 (round orders) changes no table; its backfill does the work.
    "\n",
    "
ALTER TABLE runs ADD COLUMN exclusion_json TEXT;
",
    "
ALTER TABLE alerts ADD COLUMN more_points BIGINT;
ALTER TABLE alerts ADD COLUMN label TEXT;
",
    // Step 12 (contention).
    "\nALTER TABLE runs ADD COLUMN contention_json TEXT;\n",
    // Step 13 (tokens of `pitwall serve`).
    "
CREATE TABLE tokens (
    name          TEXT PRIMARY KEY NOT NULL,
    role          TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    expires_at    TEXT,
    revoked_at    TEXT
);
",
    // Step 14 (alert changes).
    "
CREATE TABLE alert_changes (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    alert_id    TEXT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
    at          TEXT NOT NULL,
    by_name     TEXT,
    from_status TEXT,
    to_status   TEXT,
    note        TEXT,
    culprit     TEXT
);
CREATE INDEX alert_changes_by_alert ON alert_changes (alert_id, id);
",
    // Step 15 (browser sessions of `pitwall serve`).
    "
CREATE TABLE sessions (
    id_sha256    TEXT PRIMARY KEY NOT NULL,
    token_sha256 TEXT NOT NULL,
    token_name   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL
);
",
    // Step 16 (series summaries of `pitwall serve`'s index).
    "
CREATE TABLE series_summaries (
    project      TEXT NOT NULL,
    testbed      TEXT NOT NULL,
    branch       TEXT NOT NULL,
    bench_key    TEXT NOT NULL,
    summary_json TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (project, testbed, branch, bench_key)
);
",
    // Step 17: history points read from a covering index; samples without a foreign key.
    "
CREATE INDEX results_points ON results (bench_key, run_id, ord)
    INCLUDE (id, suite, name, params_json, measure, unit, direction, status, point_json)
    WHERE error IS NULL
      AND octet_length(bench_key) + octet_length(params_json) + octet_length(coalesce(point_json, '')) < 2000;
CREATE INDEX results_points_rest ON results (bench_key)
    WHERE NOT (error IS NULL
      AND octet_length(bench_key) + octet_length(params_json) + octet_length(coalesce(point_json, '')) < 2000);
ALTER TABLE samples DROP CONSTRAINT samples_result_id_fkey;
",
    // Step 18: no index by suite and name; a row of samples per result.
    "
DROP INDEX IF EXISTS results_by_benchmark;
CREATE TABLE sample_sets (
    result_id  BIGINT PRIMARY KEY,
    vals       DOUBLE PRECISION[] NOT NULL,
    metas      TEXT[],
    replicates BIGINT[]
);
",
];

#[test]
fn sqlite_scripts_are_the_hand_written_ones() {
    let generated: Vec<String> = migrations(Dialect::Sqlite)
        .into_iter()
        .map(|m| m.script)
        .collect();
    assert_eq!(generated, SQLITE);
}

#[test]
fn postgres_scripts_are_the_hand_written_ones() {
    let generated: Vec<String> = migrations(Dialect::Postgres)
        .into_iter()
        .map(|m| m.script)
        .collect();
    assert_eq!(generated, POSTGRES);
}

#[test]
fn backfills_run_after_the_scripts_that_add_their_columns() {
    let at = |d| -> Vec<(usize, Backfill)> {
        migrations(d)
            .into_iter()
            .enumerate()
            .flat_map(|(i, m)| m.backfills.into_iter().map(move |b| (i + 1, b)))
            .collect()
    };
    assert_eq!(
        at(Dialect::Sqlite),
        [
            (4, Backfill::Labels),
            (6, Backfill::Keys),
            (9, Backfill::RoundOrders),
            (10, Backfill::LocalRole)
        ]
    );
    assert_eq!(
        at(Dialect::Postgres),
        [
            (3, Backfill::Labels),
            (5, Backfill::Keys),
            (8, Backfill::RoundOrders),
            (9, Backfill::LocalRole)
        ]
    );
}
