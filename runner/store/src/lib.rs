//! The result store: where runs are kept. A trait so SQLite (default) and PostgreSQL (shared)
//! backends sit behind one interface; `open` picks one from a store URL.

mod alert_rows;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
mod forge_comments;
mod migrations;
mod pair_runs;
mod pg;
mod pg_alerts;
mod pg_codec;
mod pg_conn;
mod pg_insert;
mod pg_migrations;
mod pg_query;
mod prune;
mod query;
mod redacting;
mod rows;
mod sessions;
mod shared;
mod sql;
mod sqlite;
mod sqlite_alerts;
mod sqlite_codec;
mod sqlite_files;
mod sqlite_insert;
mod summaries;
mod tokens;
mod url;

pub use pg::PgStore;
pub use redacting::{RedactingStore, redact_run};
pub use rows::point_of;
pub use sessions::StoredSession;
pub use shared::{MAX_CANDIDATES, MIN_PREFIX, pick_one};
pub use sqlite::SqliteStore;
pub use summaries::StoredSummary;
pub use tokens::{StoredToken, TokenRole};
pub use url::StoreUrl;

use pitwall_schema::{
    Alert, AlertChange, AlertTransition, AlertUpdate, Exclusion, Run, RunStatus, SampleSummary,
};

/// One line of `pitwall runs`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub id: String,
    pub project: String,
    pub commit: String,
    pub branch: Option<String>,
    pub started_at: String,
    pub status: RunStatus,
    pub results: usize,
    pub failed_results: usize,
    /// Shared by the two runs of an interleaved base/head measurement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_id: Option<String>,
    /// The machine it was measured on (`[testbed] name`, or derived from host and GPU).
    pub testbed: Option<String>,
    /// `history`, `local`, `calibration`, `pr-base` or `pr-head`.
    pub role: Option<String>,
    /// Taken out of history by a person (`pitwall runs exclude`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub excluded: bool,
}

/// Which stored runs, and which of their results, `Store::query_runs` reads: the runs one
/// history can hold, and only the benchmark keys asked for, so a series is read without
/// reading every sample of every run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunQuery {
    /// Only runs that can be in this branch's history: role `history` on this branch (a run
    /// that records no branch or role counts); every run when `None`.
    pub history_branch: Option<String>,
    /// Only runs on this testbed (a run that records none counts); every testbed when `None`.
    pub testbed: Option<String>,
    /// Only results with one of these keys (`BenchmarkResult::key`); none when empty (runs
    /// alone); every result when `None`.
    pub keys: Option<Vec<String>>,
    /// Only the newest N of the runs selected (by start time); all when `None`.
    pub newest: Option<usize>,
    /// Read the selected results' raw samples; without, each result carries its history
    /// point (`point_of`: median, its interval, range, count) as `summary` and no samples,
    /// which is all a history needs and a small part of what is stored.
    pub samples: bool,
    /// Read each run's fingerprint; without, a run that records its testbed carries the
    /// default (empty) fingerprint (one that does not keeps its own, which implies its testbed).
    pub fingerprints: bool,
}

/// Where a store says which runs its reads skipped (`Store::on_skipped`): one line each.
pub type SkipSink = Box<dyn Fn(&str) + Send>;

/// What happened to a run handed to `insert_run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOutcome {
    Inserted,
    /// A run with this id and identical content was already stored (imports are idempotent).
    AlreadyStored,
}

/// Store failures. Every variant names the store it concerns.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("invalid store url `{url}`: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("store {store}: cannot open: {source}")]
    Open {
        store: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(
        "store {store} {what} (hint: check --store, PITWALL_STORE or [store] url, or run `pitwall run` first to create it)"
    )]
    Missing { store: String, what: String },
    #[error(
        "store {store} is not a pitwall store ({what}); left unchanged (hint: check --store, PITWALL_STORE or [store] url, or name a new file)"
    )]
    Foreign { store: String, what: String },
    #[error("store {store}: schema version {found} is newer than this pitwall ({supported})")]
    TooNew {
        store: String,
        found: i64,
        supported: i64,
    },
    #[error("store {store}: no run matches `{id}`{}", shared::prefix_hint(.id))]
    NotFound { store: String, id: String },
    #[error("store {store}: `{id}` matches several runs ({candidates}); give more characters")]
    Ambiguous {
        store: String,
        id: String,
        candidates: String,
    },
    #[error("store {store}: no alert `{id}` (hint: `pitwall alerts` lists them)")]
    NoAlert { store: String, id: String },
    #[error("store {store}: cannot store {source}")]
    Invalid {
        store: String,
        #[source]
        source: pitwall_schema::SchemaError,
    },
    #[error("store {store}: run {id} is already stored with different content")]
    Conflict { store: String, id: String },
    #[error(
        "store {store}: a token named `{name}` exists (hint: `pitwall token revoke {name}` first, or choose another name)"
    )]
    TokenExists { store: String, name: String },
    #[error(
        "store {store}: {what} cannot be done through a server (hint: run it on the server's host, against its database)"
    )]
    NotOverHttp { store: String, what: String },
    #[error("store {store}: the server refused: {status} {message}")]
    Refused {
        store: String,
        status: u16,
        message: String,
    },
    #[error("store {store}: stored data is corrupt: {what}")]
    Corrupt { store: String, what: String },
    #[error("store {store}: {source}")]
    Backend {
        store: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Keeps runs. A run is stored whole or not at all (one transaction), and only a run that
/// passes `Run::validate`, so what is stored can always be read back.
pub trait Store {
    /// Human-readable location (path or URL without password), for messages.
    fn describe(&self) -> String;

    /// Stores a run and all its results and samples in one transaction.
    fn insert_run(&mut self, run: &Run) -> Result<InsertOutcome, StoreError>;

    /// Stores several runs in one transaction (a server's group commit): every run is stored
    /// or none is, and the outcomes are in the order of `runs`. The database stores override
    /// this; the default stores them one by one, which is not all-or-nothing.
    fn insert_runs(&mut self, runs: &[Run]) -> Result<Vec<InsertOutcome>, StoreError> {
        runs.iter().map(|r| self.insert_run(r)).collect()
    }

    /// Runs, newest first (by `started_at`, then id), at most `limit`.
    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>, StoreError>;

    /// A run by full id, unique id prefix, or `latest`.
    fn get_run(&self, id: &str) -> Result<Run, StoreError>;

    /// Every run, oldest first, for export.
    fn all_runs(&self) -> Result<Vec<Run>, StoreError>;

    /// Stores what detection found, in one transaction: an alert whose id is new is inserted
    /// as given; for a stored id only what detection owns (commits, numbers, `updated_at`) is
    /// updated, and only when it differs, so status, note, culprit and `created_at` are never
    /// reset by re-running detection.
    fn upsert_alerts(&mut self, alerts: &[Alert]) -> Result<(), StoreError>;

    /// Every alert, oldest first (by `created_at`, then id).
    fn list_alerts(&self) -> Result<Vec<Alert>, StoreError>;

    /// A person's change to alert `id` (exact id); `StoreError::NoAlert` when none has it.
    /// Returns the alert as stored after the change.
    fn update_alert(&mut self, id: &str, change: &AlertUpdate) -> Result<Alert, StoreError>;

    /// The recorded changes of alert `id` (exact id), oldest first: every `update_alert` and
    /// every `transition_alerts` that changed it, with when, by whom and what. Empty for an
    /// unknown id.
    fn alert_changes(&self, id: &str) -> Result<Vec<AlertChange>, StoreError>;

    /// Detection's own changes of status, in one transaction: each alert whose stored status
    /// is still the change's `from` gets its `to` (and note, when given, and `updated_at`), or
    /// is deleted when `to` is `None`; an alert whose status changed meanwhile (a person
    /// triaged it) or that is gone is left alone. Returns how many alerts changed.
    fn transition_alerts(&mut self, changes: &[AlertTransition]) -> Result<usize, StoreError>;

    /// Replaces the raw samples of run `id`'s results (full id) with the summaries given, one
    /// per result in order (`None` leaves a result as it is), in one transaction; returns how
    /// many samples were dropped. For `pitwall prune --keep-summaries`.
    fn prune_samples(
        &mut self,
        id: &str,
        summaries: &[Option<SampleSummary>],
    ) -> Result<usize, StoreError>;

    /// Deletes run `id` (full id) with its results and samples; `false` when none was stored.
    fn delete_run(&mut self, id: &str) -> Result<bool, StoreError>;

    /// Takes run `id` (full id) out of history with `exclusion`, or puts it back with `None`
    /// (`pitwall runs exclude`/`include`); its results stay stored. `false` when no run has
    /// the id.
    fn set_exclusion(
        &mut self,
        id: &str,
        exclusion: Option<&Exclusion>,
    ) -> Result<bool, StoreError>;

    /// The runs a query selects, oldest first (the order of `all_runs`), each with the
    /// results the query selects in their stored order; for the same branch and testbed the
    /// runs are the same whatever keys are asked for, so a history's point indices agree
    /// across queries. Read from one snapshot.
    fn query_runs(&self, query: &RunQuery) -> Result<Vec<Run>, StoreError>;

    /// Every benchmark key ever stored (`BenchmarkResult::key`), sorted; a key whose runs were
    /// all deleted may remain.
    fn series_keys(&self) -> Result<Vec<String>, StoreError>;

    /// Where reads report the runs they skip: a run with a row that cannot be read
    /// (`StoreError::Corrupt`) is left out of `list_runs`, `all_runs` and `query_runs`, and
    /// named once in one line, so one bad row never makes the rest of the store unreadable
    /// (`get_run` of that run still fails with the corruption). Without a sink, the skips go
    /// unsaid.
    fn on_skipped(&mut self, sink: SkipSink);

    /// What the migrations applied when this store was opened have to tell the user, one line
    /// each (the runs migration 10 relabelled `local`); empty when none applied or none has
    /// anything to say. The CLI prints them once.
    fn migration_notes(&self) -> Vec<String>;

    /// The id of the forge comment pitwall keeps on `target` (`github:OWNER/NAME#PR`,
    /// `gitlab:PROJECT!IID`), when one was stored: a hint the publisher checks before use.
    fn forge_comment(&self, target: &str) -> Result<Option<u64>, StoreError>;

    /// Keeps `id` as `target`'s forge comment, replacing an earlier one.
    fn set_forge_comment(&mut self, target: &str, id: u64) -> Result<(), StoreError>;

    /// The runs of interleaved pairs measured on `testbed`, newest first, as `list_runs`
    /// lists them: what the testbed's noise book is read from.
    fn list_pair_runs(&self, testbed: &str) -> Result<Vec<RunSummary>, StoreError> {
        Ok(self
            .list_runs(None)?
            .into_iter()
            .filter(|r| r.pair_id.is_some() && r.testbed.as_deref() == Some(testbed))
            .collect())
    }

    /// Whether the store detects alerts itself when a run is stored (`pitwall serve` does, for
    /// what is uploaded to it): then the caller does not.
    fn detects_alerts(&self) -> bool {
        false
    }

    /// Stores a new API token (`pitwall token create`); `TokenExists` when an unrevoked token
    /// has its name (a revoked one is replaced).
    fn create_token(&mut self, token: &StoredToken) -> Result<(), StoreError>;

    /// Every API token, revoked and expired ones too, by name.
    fn list_tokens(&self) -> Result<Vec<StoredToken>, StoreError>;

    /// Revokes token `name` at `at` (RFC 3339); false when there is no unrevoked token of
    /// that name.
    fn revoke_token(&mut self, name: &str, at: &str) -> Result<bool, StoreError>;

    /// Stores a new browser session of `pitwall serve`, first deleting the sessions that
    /// ended by its `created_at`.
    fn create_session(&mut self, session: &StoredSession) -> Result<(), StoreError>;

    /// The session whose id has SHA-256 `id_sha256`, ended or not.
    fn session(&self, id_sha256: &str) -> Result<Option<StoredSession>, StoreError>;

    /// Deletes a session (signing out); false when there was none.
    fn delete_session(&mut self, id_sha256: &str) -> Result<bool, StoreError>;

    /// Stores series summaries for `pitwall serve`'s index, each replacing the one of its
    /// (project, testbed, branch, key), in one transaction.
    fn upsert_series_summaries(&mut self, rows: &[StoredSummary]) -> Result<(), StoreError>;

    /// The series summaries of `project`, by testbed, branch and key.
    fn series_summaries(&self, project: &str) -> Result<Vec<StoredSummary>, StoreError>;
}

/// Whether opening a store may create it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create a missing SQLite file (and its directories): for commands that store runs.
    Create,
    /// The SQLite file must exist and be a pitwall store (`StoreError::Missing` otherwise):
    /// for commands that only read, so a mistyped path is not taken for an empty history.
    /// For PostgreSQL: the database must already hold pitwall's tables.
    Existing,
}

/// Opens the store a URL names, migrating it where needed. Either mode refuses a SQLite file
/// or PostgreSQL database that holds other tables named like pitwall's but is no pitwall store
/// (`StoreError::Foreign`) without changing it.
pub fn open(url: &StoreUrl, mode: OpenMode) -> Result<Box<dyn Store>, StoreError> {
    match url {
        StoreUrl::Sqlite(path) => Ok(Box::new(SqliteStore::open_with(path, mode)?)),
        StoreUrl::Postgres(u) => Ok(Box::new(PgStore::open_with(u, mode)?)),
        StoreUrl::Http(u) => Err(StoreError::BadUrl {
            url: u.clone(),
            reason: "a server's store is opened by the pitwall binary (pitwall-forge's client)"
                .into(),
        }),
    }
}
