//! The store's schema, once for both backends: its history as numbered steps ([`STEPS`]), and
//! each backend's migration scripts rendered from them ([`migrations`]). SQLite applies one
//! migration per step; PostgreSQL, which came later, created the runs table whole, so its
//! first migration is steps 1 and 2 and the rest follow one per step. The scripts are exactly
//! the ones each store has always applied (the tests compare them byte for byte), so existing
//! stores open with no new migration.
//!
//! Never edit a released step; append a new one (it becomes the next migration of both).

use super::Dialect;

/// A column's type and constraints, where the dialects spell them differently.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ty {
    /// The same text in both.
    Same(&'static str),
    /// A text primary key ordered by bytes (PostgreSQL: the "C" collation, as SQLite orders
    /// text, whatever the database's locale), so ordering and prefix lookups agree.
    TextKey,
    /// Text ordered by bytes, then the rest of the definition.
    OrderedText(&'static str),
    /// The integer key the database assigns (SQLite's rowid; an identity on PostgreSQL).
    RowId,
    /// A 64-bit integer, then the rest of the definition.
    Int64(&'static str),
    /// A double, then the rest of the definition.
    Real(&'static str),
    /// A non-null double kept bit for bit. SQLite: no declared type, since a `REAL` column has
    /// REAL affinity, and SQLite then writes integral doubles to disk as integers, which turns
    /// `-0.0` into `0.0` on the way back; the CHECK keeps the storage class REAL. PostgreSQL's
    /// `float8` keeps every double (including `-0`).
    ExactReal,
}

/// One column: its name and type.
#[derive(Debug, Clone, Copy)]
pub(super) struct Column(&'static str, Ty);

/// One change to the schema.
#[derive(Debug, Clone, Copy)]
pub(super) enum Op {
    /// `CREATE TABLE`: columns, then table constraints; `without_rowid` on SQLite only.
    Table {
        name: &'static str,
        columns: &'static [Column],
        constraints: &'static [&'static str],
        without_rowid: bool,
    },
    /// `CREATE INDEX name ON table (on)`.
    Index {
        name: &'static str,
        table: &'static str,
        on: &'static str,
    },
    /// `ALTER TABLE table ADD COLUMN`.
    AddColumn { table: &'static str, column: Column },
    /// `DROP INDEX IF EXISTS name` (a store made at a later step and set back by a test has none).
    DropIndex(&'static str),
    /// Statements for PostgreSQL alone (an index SQLite has no form of, a constraint only
    /// PostgreSQL checks per row); SQLite's migration of the step is then empty.
    Postgres(&'static str),
}

/// What a migration does besides its script, in the same transaction: filling new columns
/// for the rows stored before (each backend runs the statements in `queries`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backfill {
    /// Every run without a testbed or role gets the ones it implies (`rows::implied_labels`).
    Labels,
    /// Every result without a key gets its key and history point, and the keys are recorded.
    Keys,
    /// Every pair stored before rounds alternated gets its order made explicit: every round
    /// base first (`rows::explicit_round_orders`).
    RoundOrders,
    /// The working tree's runs stored as history before the role `local` existed become
    /// `local` (`queries::relabel_local`), said in a note (`local_role_note`).
    LocalRole,
}

/// One step of the schema's history.
pub(super) struct Step {
    pub ops: &'static [Op],
    pub backfill: Option<Backfill>,
}

use Ty::{ExactReal, Int64, OrderedText, Real, RowId, Same, TextKey};

const TEXT: Ty = Same("TEXT");
const TEXT_NOT_NULL: Ty = Same("TEXT NOT NULL");

/// Step 1: runs, their results and every raw sample.
///
/// * `results.ord` is the position of a result within its run (results come back in this
///   order); `UNIQUE (run_id, ord)` also serves as the index behind `run_id` lookups and the
///   cascade.
/// * `samples.value` holds each sample as a double, kept bit for bit (`Ty::ExactReal`).
/// * `*_json` columns hold serde_json text of the schema types; `samples.meta_json` is NULL for
///   every sample of a result that has no per-sample metadata.
/// * Enumerations (`status`, `direction`) are stored as their stable text forms and checked on
///   read rather than with CHECK constraints, so adding a value later needs no table rebuild.
const STEP_1: &[Op] = &[
    Op::Table {
        name: "runs",
        columns: &[
            Column("id", TextKey),
            Column("project", TEXT_NOT_NULL),
            Column("commit_sha", TEXT_NOT_NULL),
            Column("branch", TEXT),
            Column("started_at", OrderedText("NOT NULL")),
            Column("finished_at", TEXT_NOT_NULL),
            Column("config_hash", TEXT_NOT_NULL),
            Column("status", TEXT_NOT_NULL),
            Column("fingerprint_json", TEXT_NOT_NULL),
        ],
        constraints: &[],
        without_rowid: false,
    },
    Op::Index {
        name: "runs_by_started_at",
        table: "runs",
        on: "started_at, id",
    },
    Op::Table {
        name: "results",
        columns: &[
            Column("id", RowId),
            Column(
                "run_id",
                OrderedText("NOT NULL REFERENCES runs (id) ON DELETE CASCADE"),
            ),
            Column("ord", Same("INTEGER NOT NULL")),
            Column("suite", TEXT_NOT_NULL),
            Column("name", TEXT_NOT_NULL),
            Column("params_json", TEXT_NOT_NULL),
            Column("measure", TEXT_NOT_NULL),
            Column("unit", TEXT_NOT_NULL),
            Column("direction", TEXT_NOT_NULL),
            Column("status", TEXT_NOT_NULL),
            Column("error", TEXT),
        ],
        constraints: &["UNIQUE (run_id, ord)"],
        without_rowid: false,
    },
    Op::Index {
        name: "results_by_benchmark",
        table: "results",
        on: "suite, name",
    },
    Op::Table {
        name: "samples",
        columns: &[
            Column(
                "result_id",
                Int64("NOT NULL REFERENCES results (id) ON DELETE CASCADE"),
            ),
            Column("idx", Same("INTEGER NOT NULL")),
            Column("value", ExactReal),
            Column("meta_json", TEXT),
        ],
        constraints: &["PRIMARY KEY (result_id, idx)"],
        without_rowid: true,
    },
];

/// Step 2: what a run of an exact commit carries besides its results: the commit's
/// author/date/subject (`commit_info_json`), a run-level error such as a failed build's log tail
/// (`error`), and the link between the two runs of an interleaved base/head measurement
/// (`pair_json`, with `pair_id` indexed so a pair is found without parsing JSON).
const STEP_2: &[Op] = &[
    Op::AddColumn {
        table: "runs",
        column: Column("commit_info_json", TEXT),
    },
    Op::AddColumn {
        table: "runs",
        column: Column("error", TEXT),
    },
    Op::AddColumn {
        table: "runs",
        column: Column("pair_json", TEXT),
    },
    Op::AddColumn {
        table: "runs",
        column: Column("pair_id", TEXT),
    },
    Op::Index {
        name: "runs_by_pair",
        table: "runs",
        on: "pair_id",
    },
    Op::Index {
        name: "runs_by_commit",
        table: "runs",
        on: "commit_sha",
    },
];

/// Step 3: the replicate (benchmark process) each sample came from, `replicates` in the
/// schema (a `u32`; 64-bit since PostgreSQL has no unsigned integers). NULL for every sample of
/// a result whose replicates are unknown, which includes every sample stored before this step:
/// those runs read back with empty `replicates`.
const STEP_3: &[Op] = &[Op::AddColumn {
    table: "samples",
    column: Column("replicate", Int64("")),
}];

/// Step 4: what a run is part of besides its commit (`labels` in the schema): the testbed it
/// was measured on and its role (`history`, `pr-base`, `pr-head`), with an index for reading
/// one series' runs. Runs stored before get their values from `Backfill::Labels`: the testbed
/// their fingerprint implies and the role their pair implies; their branch stays as stored
/// (NULL when unknown).
const STEP_4: &[Op] = &[
    Op::AddColumn {
        table: "runs",
        column: Column("testbed", TEXT),
    },
    Op::AddColumn {
        table: "runs",
        column: Column("role", TEXT),
    },
    Op::Index {
        name: "runs_by_series",
        table: "runs",
        on: "project, testbed, branch, role, started_at",
    },
];

/// Step 5: the summary `pitwall prune --keep-summaries` leaves in place of a result's raw
/// samples (`BenchmarkResult::summary`, serde_json text); NULL while the samples are kept.
const STEP_5: &[Op] = &[Op::AddColumn {
    table: "results",
    column: Column("summary_json", TEXT),
}];

/// Step 6: each result's benchmark key (`BenchmarkResult::key`, `suite/name[params]/measure`)
/// as a column with an index, its history point (`rows::point_of`: median and its interval,
/// range, count, as `SampleSummary` JSON; NULL without a finite sample), and the set of keys
/// ever stored, so one series is read without reading every run or sample
/// (`Store::query_runs`). `Backfill::Keys` fills them for the results stored before.
const STEP_6: &[Op] = &[
    Op::AddColumn {
        table: "results",
        column: Column("bench_key", TEXT),
    },
    Op::AddColumn {
        table: "results",
        column: Column("point_json", TEXT),
    },
    Op::Index {
        name: "results_by_key",
        table: "results",
        on: "bench_key",
    },
    Op::Table {
        name: "series_keys",
        columns: &[Column("bench_key", TextKey)],
        constraints: &[],
        without_rowid: true,
    },
];

/// Step 7: alerts, the steps detection found in a history series and what people decided
/// about them (`pitwall_schema::Alert`). One row per alert, keyed by its stable id; the series
/// columns are indexed so re-detection reads one series' alerts. `status` and `kind` are stored
/// as their text forms and checked on read. `ci_low`/`ci_high` are NULL when no interval.
const STEP_7: &[Op] = &[
    Op::Table {
        name: "alerts",
        columns: &[
            Column("id", Same("TEXT PRIMARY KEY NOT NULL")),
            Column("project", TEXT_NOT_NULL),
            Column("testbed", TEXT_NOT_NULL),
            Column("branch", TEXT_NOT_NULL),
            Column("bench_key", TEXT_NOT_NULL),
            Column("measure", TEXT_NOT_NULL),
            Column("kind", TEXT_NOT_NULL),
            Column("status", TEXT_NOT_NULL),
            Column("last_good", TEXT_NOT_NULL),
            Column("first_bad", TEXT_NOT_NULL),
            Column("first_bad_run", TEXT_NOT_NULL),
            Column("before_value", Real("NOT NULL")),
            Column("after_value", Real("NOT NULL")),
            Column("rel_change", Real("NOT NULL")),
            Column("ci_low", Real("")),
            Column("ci_high", Real("")),
            Column("note", TEXT),
            Column("culprit", TEXT),
            Column("created_at", TEXT_NOT_NULL),
            Column("updated_at", TEXT_NOT_NULL),
        ],
        constraints: &[],
        without_rowid: false,
    },
    Op::Index {
        name: "alerts_by_series",
        table: "alerts",
        on: "project, testbed, branch, bench_key",
    },
];

/// Step 8: the forge comment pitwall keeps per pull or merge request (`target`, e.g.
/// `github:octo/bench#7`), so the next publish edits it without searching the comments.
const STEP_8: &[Op] = &[Op::Table {
    name: "forge_comments",
    columns: &[
        Column("target", Same("TEXT PRIMARY KEY NOT NULL")),
        Column("comment_id", Int64("NOT NULL")),
    ],
    constraints: &[],
    without_rowid: false,
}];

/// Step 9 (issue 25): the rounds of a pair alternate their order (base-head, head-base, …),
/// recorded as the pair's `round_orders` inside `pair_json`; no table changes.
/// `Backfill::RoundOrders` makes the order of the pairs stored before explicit.
const STEP_9: &[Op] = &[];

/// Step 10 (issue 27): a run a person took out of history (`pitwall runs exclude ID --note`)
/// keeps its note and time in `exclusion_json` (NULL while it counts). `Backfill::LocalRole`
/// relabels the runs of the working tree that earlier versions stored as `history` (measured
/// by `pitwall run` without `--commit`; not those imported from other tools' files, nor the
/// sides of a pair) as `local`, which no history, alert or write-up reads; the commit order of
/// a run (`CommitInfo::first_parent_position`) lives in `commit_info_json` and needs no column.
const STEP_10: &[Op] = &[Op::AddColumn {
    table: "runs",
    column: Column("exclusion_json", TEXT),
}];

/// Step 11 (issue 27): what detection says
/// of an alert besides its numbers, both NULL for alerts stored before: `more_points`, how
/// many more runs would confirm or clear a `suspected` alert's step, and `label`
/// (`AlertLabel`, e.g. `no-code-changed`). Status `suspected` is one more text of the
/// `status` column, checked on read as every status is.
const STEP_11: &[Op] = &[
    Op::AddColumn {
        table: "alerts",
        column: Column("more_points", Int64("")),
    },
    Op::AddColumn {
        table: "alerts",
        column: Column("label", TEXT),
    },
];

/// Step 12 (issue 27): the machine's contention while a
/// run measured (`pitwall_schema::Contention`) as JSON text, NULL when it was not sampled
/// (runs stored before, imports without it, failed builds).
const STEP_12: &[Op] = &[Op::AddColumn {
    table: "runs",
    column: Column("contention_json", TEXT),
}];

/// The schema's history, in order.
const STEPS: &[Step] = &[
    Step {
        ops: STEP_1,
        backfill: None,
    },
    Step {
        ops: STEP_2,
        backfill: None,
    },
    Step {
        ops: STEP_3,
        backfill: None,
    },
    Step {
        ops: STEP_4,
        backfill: Some(Backfill::Labels),
    },
    Step {
        ops: STEP_5,
        backfill: None,
    },
    Step {
        ops: STEP_6,
        backfill: Some(Backfill::Keys),
    },
    Step {
        ops: STEP_7,
        backfill: None,
    },
    Step {
        ops: STEP_8,
        backfill: None,
    },
    Step {
        ops: STEP_9,
        backfill: Some(Backfill::RoundOrders),
    },
    Step {
        ops: STEP_10,
        backfill: Some(Backfill::LocalRole),
    },
    Step {
        ops: STEP_11,
        backfill: None,
    },
    Step {
        ops: STEP_12,
        backfill: None,
    },
    Step {
        ops: STEP_13,
        backfill: None,
    },
    Step {
        ops: STEP_14,
        backfill: None,
    },
    Step {
        ops: STEP_15,
        backfill: None,
    },
    Step {
        ops: STEP_16,
        backfill: None,
    },
    Step {
        ops: STEP_17,
        backfill: None,
    },
    Step {
        ops: STEP_18,
        backfill: None,
    },
];

/// One numbered migration of one backend: its script, then its backfills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Migration {
    pub script: String,
    pub backfills: Vec<Backfill>,
}

/// How many steps a dialect's first migration applies; every later migration applies one.
/// PostgreSQL's store came after SQLite's step 2 and created the runs table whole.
fn steps_in_first_migration(d: Dialect) -> usize {
    match d {
        Dialect::Sqlite => 1,
        Dialect::Postgres => 2,
    }
}

/// Every migration of a dialect, in order: the schema version after applying the first `n`
/// is `n`. A step appended to [`STEPS`] becomes the next migration of both.
pub(crate) fn migrations(d: Dialect) -> Vec<Migration> {
    let first = steps_in_first_migration(d);
    std::iter::once(&STEPS[..first])
        .chain(STEPS[first..].chunks(1))
        .map(|steps| Migration {
            script: render::script(d, steps),
            backfills: steps.iter().filter_map(|s| s.backfill).collect(),
        })
        .collect()
}

mod notes;
mod render;
mod serve_steps;

use serve_steps::{STEP_13, STEP_14, STEP_15, STEP_16, STEP_17, STEP_18};

pub(crate) use notes::local_role_note;
#[cfg(test)]
mod tests;
