//! The steps of the schema that `pitwall serve` brought (issues 29 and 30): its API tokens,
//! the record of every change to an alert, and its browser sessions. Kept apart from the
//! older steps in `schema.rs` only for size; [`super::STEPS`] lists them in order.

use super::Ty::{RowId, Same};
use super::{Column, Op, TEXT, TEXT_NOT_NULL};

/// Step 13 (issue 29): the API tokens of `pitwall serve`, by name: the role, the SHA-256 of
/// the secret (the secret itself is shown once and never stored), when it was made, when it
/// expires (NULL: never) and when it was revoked (NULL while it counts).
pub(super) const STEP_13: &[Op] = &[Op::Table {
    name: "tokens",
    columns: &[
        Column("name", Same("TEXT PRIMARY KEY NOT NULL")),
        Column("role", TEXT_NOT_NULL),
        Column("secret_sha256", TEXT_NOT_NULL),
        Column("created_at", TEXT_NOT_NULL),
        Column("expires_at", TEXT),
        Column("revoked_at", TEXT),
    ],
    constraints: &[],
    without_rowid: false,
}];

/// Step 14 (issue 30): every change made to an alert, in order: when, by whom (a token's
/// name over `pitwall serve`, `local:USER` from the command line, `detection`), its status
/// before and after, the note and culprit it set. Deleted with its alert.
pub(super) const STEP_14: &[Op] = &[
    Op::Table {
        name: "alert_changes",
        columns: &[
            Column("id", RowId),
            Column(
                "alert_id",
                Same("TEXT NOT NULL REFERENCES alerts (id) ON DELETE CASCADE"),
            ),
            Column("at", TEXT_NOT_NULL),
            Column("by_name", TEXT),
            Column("from_status", TEXT),
            Column("to_status", TEXT),
            Column("note", TEXT),
            Column("culprit", TEXT),
        ],
        constraints: &[],
        without_rowid: false,
    },
    Op::Index {
        name: "alert_changes_by_alert",
        table: "alert_changes",
        on: "alert_id, id",
    },
];

/// Step 15 (issue 30): the browser sessions of `pitwall serve`. A session is made by signing
/// in with a token; its random id is kept only as its SHA-256, beside the SHA-256 of the
/// token's secret it was made with (so revoking the token, or replacing a revoked token of
/// that name with a new secret, ends it), the token's name, and when it was made and ends.
pub(super) const STEP_15: &[Op] = &[Op::Table {
    name: "sessions",
    columns: &[
        Column("id_sha256", Same("TEXT PRIMARY KEY NOT NULL")),
        Column("token_sha256", TEXT_NOT_NULL),
        Column("token_name", TEXT_NOT_NULL),
        Column("created_at", TEXT_NOT_NULL),
        Column("expires_at", TEXT_NOT_NULL),
    ],
    constraints: &[],
    without_rowid: false,
}];

/// Step 16 (issue 30): a summary per series for the index of `pitwall serve`, kept when the
/// series is re-detected after runs are stored: the analysis' summary as JSON
/// (`pitwall_analysis::summary::SeriesSummary`) and when it was made, by (project, testbed,
/// branch, benchmark key). Empty for the series stored before until they are re-detected
/// (`pitwall serve` fills it at start when it is empty).
pub(super) const STEP_16: &[Op] = &[Op::Table {
    name: "series_summaries",
    columns: &[
        Column("project", TEXT_NOT_NULL),
        Column("testbed", TEXT_NOT_NULL),
        Column("branch", TEXT_NOT_NULL),
        Column("bench_key", TEXT_NOT_NULL),
        Column("summary_json", TEXT_NOT_NULL),
        Column("updated_at", TEXT_NOT_NULL),
    ],
    constraints: &["PRIMARY KEY (project, testbed, branch, bench_key)"],
    without_rowid: false,
}];

/// Step 17 (issue 29), PostgreSQL only: a series read from the index alone, and a run stored
/// without a check per sample.
///
/// * `results_points` holds, by benchmark key, every column a history read takes
///   (`selection::results` without samples), so the read of a 10,000-run series walks a few
///   hundred index pages in key order instead of 10,000 heap pages (an index-only scan). A
///   b-tree entry must fit a third of a page: results with an error, or whose key, parameters
///   and point together reach 2,000 bytes (an entry must stay under about 2,700 with the other
///   columns), are left out of it and listed by
///   `results_points_rest` instead; the read takes both (`selection::POSTGRES_POINTS`).
/// * The samples' foreign key to their results goes: checking it for each of a run's 10,000
///   samples was half the time of storing the run. Nothing else writes samples than the
///   insert of their run, and deleting a run deletes its samples first (`pg_delete_run`).
///
/// SQLite keeps its own layout: its results are read in their rowid order, and its foreign key
/// checks cost nothing comparable.
pub(super) const STEP_17: &[Op] = &[Op::Postgres(
    "CREATE INDEX results_points ON results (bench_key, run_id, ord)
    INCLUDE (id, suite, name, params_json, measure, unit, direction, status, point_json)
    WHERE error IS NULL
      AND octet_length(bench_key) + octet_length(params_json) + octet_length(coalesce(point_json, '')) < 2000;
CREATE INDEX results_points_rest ON results (bench_key)
    WHERE NOT (error IS NULL
      AND octet_length(bench_key) + octet_length(params_json) + octet_length(coalesce(point_json, '')) < 2000);
ALTER TABLE samples DROP CONSTRAINT samples_result_id_fkey;",
)];

/// Step 18 (issue 29): cheaper run inserts.
///
/// * `results_by_benchmark` (suite, name) goes. No statement has read by it since results were
///   keyed (step 6), and keeping it up cost a sixth of the time of storing a run's results on
///   PostgreSQL (docs/PERFORMANCE.md, "`pitwall serve` at scale").
/// * PostgreSQL only: a result's samples are stored as one row of arrays (`sample_sets`: the
///   values; the metadata texts and replicates, or NULL when the result has none) instead of a
///   row each, a tenth of the rows and index entries for a run of ten samples a result. The
///   rows stored before stay in `samples`; reads take both (`queries`, `selection::samples`).
pub(super) const STEP_18: &[Op] = &[
    Op::DropIndex("results_by_benchmark"),
    Op::Postgres(
        "CREATE TABLE sample_sets (
    result_id  BIGINT PRIMARY KEY,
    vals       DOUBLE PRECISION[] NOT NULL,
    metas      TEXT[],
    replicates BIGINT[]
);",
    ),
];
