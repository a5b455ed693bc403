//! The embedded SQLite store, pitwall's default: one file, no server, safe for several pitwall
//! processes at once (WAL, a busy timeout, and `BEGIN IMMEDIATE` for every write).

use std::path::{Path, PathBuf};
use std::time::Duration;

use pitwall_schema::{Alert, AlertUpdate, Run};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::rows::SummaryRow;
use super::shared::{MAX_CANDIDATES, MIN_PREFIX, Skips};
use super::sql::queries::SQLITE;
use super::sqlite_codec::{backend, load_run};
use super::sqlite_files::{percent_encode_path, remove_new_store_files, writable};
use super::{InsertOutcome, OpenMode, RunSummary, Store, StoreError, migrations, sqlite_alerts};

/// How long a connection waits for another process's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The embedded SQLite store.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    conn: Connection,
    skips: Skips,
    /// What migrating on open had to say (`Store::migration_notes`).
    notes: Vec<String>,
}

impl SqliteStore {
    /// Opens the database at `path`, creating it (and its parent directories) and applying
    /// migrations as needed.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, OpenMode::Create)
    }

    /// Opens the database at `path`; with `OpenMode::Existing` a missing file or an empty
    /// database is `StoreError::Missing` and nothing is created. A database with other tables
    /// is refused in either mode before anything is written to it.
    pub fn open_with(path: &Path, mode: OpenMode) -> Result<SqliteStore, StoreError> {
        let existed = path.exists();
        let opened = SqliteStore::open_or_create(path, mode);
        if opened.is_err() && !existed {
            // A store this call began to create and could not finish (a full disk): no empty
            // database, `-wal` or `-shm` file is left behind. (A second process creating the
            // same new store at the same moment is the one case where this could remove its
            // file; both would then fail or retry, never store half a run.)
            remove_new_store_files(path);
        }
        opened
    }

    fn open_or_create(path: &Path, mode: OpenMode) -> Result<SqliteStore, StoreError> {
        let store = describe_path(path);
        let open_err = |source: Box<dyn std::error::Error + Send + Sync>| StoreError::Open {
            store: store.clone(),
            source,
        };
        let missing = |what: &str| StoreError::Missing {
            store: store.clone(),
            what: what.to_string(),
        };
        // No URI filenames: `file:…?mode=memory` would silently keep nothing.
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        match mode {
            OpenMode::Create => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|e| open_err(Box::new(e)))?;
                }
                flags |= OpenFlags::SQLITE_OPEN_CREATE;
            }
            OpenMode::Existing => match std::fs::metadata(path) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(missing("does not exist"));
                }
                Err(e) => return Err(open_err(Box::new(e))),
            },
        }
        // A reader on a read-only mount, or in a directory it may not write: open the file
        // read-only and immutable instead (WAL mode would have to create `-shm`/`-wal` files).
        if mode == OpenMode::Existing && !writable(path) {
            return SqliteStore::open_read_only(path, &store);
        }
        let mut conn =
            Connection::open_with_flags(path, flags).map_err(|e| open_err(Box::new(e)))?;
        // Set first, so every later statement (including switching to WAL) waits for other
        // processes' locks instead of failing with "database is locked".
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| open_err(Box::new(e)))?;
        // The first read of the file: fails here when it is not a SQLite database. Checked
        // before anything is written, so a database from a newer pitwall is left untouched.
        let (version, owner) =
            migrations::version_and_ownership(&conn).map_err(|e| match e.sqlite_error_code() {
                // A file that is not a SQLite database at all (text, random bytes): the wrong
                // path, not a broken machine.
                Some(rusqlite::ErrorCode::NotADatabase) => StoreError::Foreign {
                    store: store.clone(),
                    what: "not a SQLite database file".to_string(),
                },
                _ => open_err(Box::new(e)),
            })?;
        migrations::check_not_too_new(version, &store)?;
        // Someone else's database, or none yet: decided before the first write (WAL included).
        match owner {
            migrations::Ownership::Pitwall => {}
            migrations::Ownership::Empty if mode == OpenMode::Create => {}
            migrations::Ownership::Empty => return Err(missing("is an empty database")),
            migrations::Ownership::Foreign(what) => {
                return Err(StoreError::Foreign { store, what });
            }
        }
        // WAL: readers never block the writer and vice versa, so `pitwall runs` works while a
        // run is being stored. (On filesystems without shared memory SQLite keeps its rollback
        // journal; the busy timeout and BEGIN IMMEDIATE keep writes correct either way.)
        super::sqlite_files::switch_to_wal(&conn, BUSY_TIMEOUT)
            .map_err(|e| open_err(Box::new(e)))?;
        // FULL rather than NORMAL: a run takes minutes of machine time to produce and is stored
        // in one transaction, so one extra fsync per commit costs nothing, and a run reported
        // as stored survives a power loss (NORMAL in WAL mode may drop the last commits).
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(|e| open_err(Box::new(e)))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| open_err(Box::new(e)))?;
        let mut notes = Vec::new();
        migrations::migrate(&mut conn, &store, &mut notes)?;
        Ok(SqliteStore {
            path: path.to_path_buf(),
            conn,
            skips: Skips::default(),
            notes,
        })
    }

    /// Opens a store that cannot be written (read-only mount, no write permission): read-only
    /// and `immutable`, so SQLite creates no files beside it. Nothing is migrated: a store of an
    /// older schema is refused with a hint, since its tables would not be what this pitwall
    /// reads. Changes still sitting in a `-wal` file (a writer that was killed) are not seen.
    fn open_read_only(path: &Path, store: &str) -> Result<SqliteStore, StoreError> {
        let open_err = |source: Box<dyn std::error::Error + Send + Sync>| StoreError::Open {
            store: store.to_string(),
            source,
        };
        let uri = format!("file:{}?immutable=1", percent_encode_path(path));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags).map_err(|e| open_err(Box::new(e)))?;
        let (version, owner) =
            migrations::version_and_ownership(&conn).map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::NotADatabase) => StoreError::Foreign {
                    store: store.to_string(),
                    what: "not a SQLite database file".to_string(),
                },
                _ => open_err(Box::new(e)),
            })?;
        migrations::check_not_too_new(version, store)?;
        match owner {
            migrations::Ownership::Pitwall => {}
            migrations::Ownership::Empty => {
                return Err(StoreError::Missing {
                    store: store.to_string(),
                    what: "is an empty database".to_string(),
                });
            }
            migrations::Ownership::Foreign(what) => {
                return Err(StoreError::Foreign {
                    store: store.to_string(),
                    what,
                });
            }
        }
        if version < migrations::latest_version() {
            return Err(StoreError::Open {
                store: store.to_string(),
                source: format!(
                    "it is read-only and at schema version {version}, older than this pitwall's {} (hint: open it once where it can be written, e.g. `pitwall runs`, to migrate it)",
                    migrations::latest_version()
                )
                .into(),
            });
        }
        Ok(SqliteStore {
            path: path.to_path_buf(),
            conn,
            skips: Skips::default(),
            notes: Vec::new(),
        })
    }

    /// How many migrations the file has had (its `PRAGMA user_version`).
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        migrations::current_version(&self.conn).map_err(backend(&self.describe()))
    }

    /// Ids of stored runs, oldest first (by `started_at`, then id).
    fn run_ids_oldest_first(&self, store: &str) -> Result<Vec<String>, StoreError> {
        let be = backend(store);
        let mut stmt = self
            .conn
            .prepare_cached(&SQLITE.run_ids_oldest_first)
            .map_err(&be)?;
        let ids = stmt
            .query_map([], |r| r.get(0))
            .map_err(&be)?
            .collect::<Result<Vec<String>, _>>()
            .map_err(&be)?;
        Ok(ids)
    }

    /// Resolves `latest`, a full id or a unique prefix to a full id.
    fn resolve_id(&self, store: &str, id: &str) -> Result<String, StoreError> {
        let be = backend(store);
        let not_found = || StoreError::NotFound {
            store: store.to_string(),
            id: id.to_string(),
        };
        if id == "latest" {
            // RFC 3339 UTC timestamps written by pitwall sort as text in time order.
            let mut stmt = self.conn.prepare_cached(&SQLITE.newest_run).map_err(&be)?;
            let mut ids = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(&be)?;
            return ids.next().transpose().map_err(&be)?.ok_or_else(not_found);
        }
        let mut exact = self.conn.prepare_cached(&SQLITE.run_exists).map_err(&be)?;
        let stored = exact.query_row([id], |_| Ok(())).optional().map_err(&be)?;
        if stored.is_some() {
            return Ok(id.to_string());
        }
        if id.chars().count() < MIN_PREFIX {
            return Err(not_found());
        }
        // Every id starting with `id` sorts in [id, id + U+10FFFF), so the primary key index
        // bounds the scan; the substr test makes the match exact.
        let upper = format!("{id}{}", char::MAX);
        let mut stmt = self
            .conn
            .prepare_cached(&SQLITE.runs_with_prefix)
            .map_err(&be)?;
        let matches = stmt
            .query_map(params![id, upper, MAX_CANDIDATES as i64 + 1], |r| r.get(0))
            .map_err(&be)?
            .collect::<Result<Vec<String>, _>>()
            .map_err(&be)?;
        super::shared::pick_one(store, id, matches)
    }
}

fn describe_path(path: &Path) -> String {
    format!("sqlite:{}", path.display())
}

impl Store for SqliteStore {
    fn describe(&self) -> String {
        describe_path(&self.path)
    }

    fn insert_run(&mut self, run: &Run) -> Result<InsertOutcome, StoreError> {
        let mut outcomes = self.insert_runs(std::slice::from_ref(run))?;
        Ok(outcomes.remove(0))
    }

    fn insert_runs(&mut self, runs: &[Run]) -> Result<Vec<InsertOutcome>, StoreError> {
        let store = self.describe();
        super::sqlite_insert::insert_runs(&mut self.conn, &store, runs)
    }

    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>, StoreError> {
        let store = self.describe();
        let be = backend(&store);
        // SQLite reads a negative LIMIT as "no limit".
        let limit = limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let mut stmt = self.conn.prepare_cached(&SQLITE.list_runs).map_err(&be)?;
        let rows = stmt
            .query_map([limit], |r| {
                Ok(SummaryRow {
                    id: r.get(0)?,
                    project: r.get(1)?,
                    commit: r.get(2)?,
                    branch: r.get(3)?,
                    started_at: r.get(4)?,
                    status: r.get(5)?,
                    results: r.get(6)?,
                    failed_results: r.get(7)?,
                    pair_id: r.get(8)?,
                    testbed: r.get(9)?,
                    role: r.get(10)?,
                    excluded: r.get(11)?,
                })
            })
            .map_err(&be)?;
        let mut runs = Vec::new();
        for row in rows {
            runs.extend(self.skips.skip(row.map_err(&be)?.decode(&store))?);
        }
        Ok(runs)
    }

    fn list_pair_runs(&self, testbed: &str) -> Result<Vec<RunSummary>, StoreError> {
        super::pair_runs::sqlite(&self.conn, &self.describe(), &self.skips, testbed)
    }

    fn get_run(&self, id: &str) -> Result<Run, StoreError> {
        let store = self.describe();
        // One read transaction: resolving and loading see the same snapshot.
        let tx = self.conn.unchecked_transaction().map_err(backend(&store))?;
        let full = self.resolve_id(&store, id)?;
        let run = load_run(&tx, &store, &full)?.ok_or_else(|| StoreError::NotFound {
            store: store.clone(),
            id: id.to_string(),
        })?;
        tx.finish().map_err(backend(&store))?;
        Ok(run)
    }

    fn all_runs(&self) -> Result<Vec<Run>, StoreError> {
        let store = self.describe();
        let tx = self.conn.unchecked_transaction().map_err(backend(&store))?;
        let mut runs = Vec::new();
        for id in self.run_ids_oldest_first(&store)? {
            let run = load_run(&tx, &store, &id).and_then(|run| {
                run.ok_or_else(|| StoreError::Corrupt {
                    store: store.clone(),
                    what: format!("run {id} vanished while reading"),
                })
            });
            runs.extend(self.skips.skip(run)?);
        }
        tx.finish().map_err(backend(&store))?;
        Ok(runs)
    }

    fn upsert_alerts(&mut self, alerts: &[Alert]) -> Result<(), StoreError> {
        let store = self.describe();
        sqlite_alerts::upsert(&mut self.conn, &store, alerts)
    }

    fn list_alerts(&self) -> Result<Vec<Alert>, StoreError> {
        sqlite_alerts::list(&self.conn, &self.describe())
    }

    fn update_alert(&mut self, id: &str, change: &AlertUpdate) -> Result<Alert, StoreError> {
        let store = self.describe();
        sqlite_alerts::update(&mut self.conn, &store, id, change)
    }

    fn alert_changes(&self, id: &str) -> Result<Vec<pitwall_schema::AlertChange>, StoreError> {
        sqlite_alerts::changes(&self.conn, &self.describe(), id)
    }

    fn transition_alerts(
        &mut self,
        changes: &[pitwall_schema::AlertTransition],
    ) -> Result<usize, StoreError> {
        let store = self.describe();
        sqlite_alerts::transition(&mut self.conn, &store, changes)
    }

    fn prune_samples(
        &mut self,
        id: &str,
        summaries: &[Option<pitwall_schema::SampleSummary>],
    ) -> Result<usize, StoreError> {
        let store = self.describe();
        super::prune::sqlite_prune_samples(&mut self.conn, &store, id, summaries)
    }

    fn delete_run(&mut self, id: &str) -> Result<bool, StoreError> {
        let store = self.describe();
        super::prune::sqlite_delete_run(&mut self.conn, &store, id)
    }

    fn set_exclusion(
        &mut self,
        id: &str,
        exclusion: Option<&pitwall_schema::Exclusion>,
    ) -> Result<bool, StoreError> {
        let store = self.describe();
        let be = backend(&store);
        let json = exclusion.map(super::rows::to_json);
        let changed = self
            .conn
            .execute(&SQLITE.set_exclusion, params![id, json])
            .map_err(&be)?;
        Ok(changed > 0)
    }

    fn query_runs(&self, query: &super::RunQuery) -> Result<Vec<Run>, StoreError> {
        super::query::sqlite_query_runs(&self.conn, &self.describe(), query, &self.skips)
    }

    fn series_keys(&self) -> Result<Vec<String>, StoreError> {
        super::query::sqlite_series_keys(&self.conn, &self.describe())
    }

    fn on_skipped(&mut self, sink: super::SkipSink) {
        self.skips.set_sink(sink);
    }

    fn migration_notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn forge_comment(&self, target: &str) -> Result<Option<u64>, StoreError> {
        super::forge_comments::sqlite_get(&self.conn, &self.describe(), target)
    }

    fn set_forge_comment(&mut self, target: &str, id: u64) -> Result<(), StoreError> {
        super::forge_comments::sqlite_set(&self.conn, &self.describe(), target, id)
    }

    fn create_token(&mut self, token: &super::StoredToken) -> Result<(), StoreError> {
        super::tokens::sqlite_create(&self.conn, &self.describe(), token)
    }

    fn list_tokens(&self) -> Result<Vec<super::StoredToken>, StoreError> {
        super::tokens::sqlite_list(&self.conn, &self.describe())
    }

    fn revoke_token(&mut self, name: &str, at: &str) -> Result<bool, StoreError> {
        super::tokens::sqlite_revoke(&self.conn, &self.describe(), name, at)
    }

    fn create_session(&mut self, session: &super::StoredSession) -> Result<(), StoreError> {
        super::sessions::sqlite_create(&self.conn, &self.describe(), session)
    }

    fn session(&self, id_sha256: &str) -> Result<Option<super::StoredSession>, StoreError> {
        super::sessions::sqlite_get(&self.conn, &self.describe(), id_sha256)
    }

    fn delete_session(&mut self, id_sha256: &str) -> Result<bool, StoreError> {
        super::sessions::sqlite_delete(&self.conn, &self.describe(), id_sha256)
    }

    fn upsert_series_summaries(&mut self, rows: &[super::StoredSummary]) -> Result<(), StoreError> {
        super::summaries::sqlite_upsert(&self.conn, &self.describe(), rows)
    }

    fn series_summaries(&self, project: &str) -> Result<Vec<super::StoredSummary>, StoreError> {
        super::summaries::sqlite_list(&self.conn, &self.describe(), project)
    }
}

#[cfg(test)]
pub(crate) mod tests;
