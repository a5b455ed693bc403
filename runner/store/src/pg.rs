//! The PostgreSQL store, for a history shared by several runners (`--store postgres://…`): the
//! same tables as the SQLite store, written one run (or one batch) per transaction, with
//! numbered migrations, advisory locks under which runners writing at once store different
//! runs side by side and the same run once (`pg_conn`), and lookups that read one consistent
//! snapshot.
//!
//! Connections are plain TCP or Unix sockets: TLS is not built in (`sslmode=require` is
//! refused with a hint), so use it on a trusted network, a local socket or an SSH tunnel.

use std::cell::RefCell;
use std::time::Duration;

use pitwall_schema::{Alert, AlertUpdate, Run};
use postgres::config::SslMode;
use postgres::{Client, Config, GenericClient, NoTls};

use super::pg_codec::load_run;
use super::pg_conn::{backend, snapshot};
use super::pg_migrations::{current_version, migrate};
use super::rows::{SummaryRow, corrupt};
use super::shared::{MAX_CANDIDATES, MIN_PREFIX};
use super::sql::queries::POSTGRES;
use super::{InsertOutcome, OpenMode, RunSummary, Store, StoreError, StoreUrl, pg_alerts};

/// How long connecting may take when the URL does not say (`connect_timeout=`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The PostgreSQL store.
pub struct PgStore {
    described: String,
    client: RefCell<Client>,
    skips: super::shared::Skips,
    /// What migrating on connect had to say (`Store::migration_notes`).
    notes: Vec<String>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("store", &self.described)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to `url` and brings its schema up to date (refusing one from a newer pitwall),
    /// creating pitwall's tables in a database that has none (`OpenMode::Create`).
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        PgStore::open_with(url, OpenMode::Create)
    }

    /// As `open`; with `OpenMode::Existing` a database without pitwall's tables is refused
    /// instead of set up (a reading command given a wrong database must not change it).
    pub fn open_with(url: &str, mode: OpenMode) -> Result<PgStore, StoreError> {
        let described = StoreUrl::redact(url);
        let open_err = |source: Box<dyn std::error::Error + Send + Sync>| StoreError::Open {
            store: described.clone(),
            source,
        };
        let bad_url = |reason: String| StoreError::BadUrl {
            url: described.clone(),
            reason,
        };
        let mut config: Config = url.parse().map_err(|e| bad_url(format!("{e}")))?;
        if config.get_hosts().is_empty() {
            return Err(bad_url(
                "no host (hint: postgres://USER@HOST/DB, or host=/run/postgresql for a Unix socket)"
                    .into(),
            ));
        }
        if config.get_ssl_mode() == SslMode::Require {
            return Err(bad_url(
                "sslmode=require: pitwall connects without TLS (hint: use a trusted network, a \
                 Unix socket or an SSH tunnel, and sslmode=disable)"
                    .into(),
            ));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("pitwall");
        let mut client = config.connect(NoTls).map_err(|e| open_err(Box::new(e)))?;
        let mut notes = Vec::new();
        migrate(&mut client, &described, mode, &mut notes)?;
        Ok(PgStore {
            described,
            client: RefCell::new(client),
            skips: Default::default(),
            notes,
        })
    }

    /// How many migrations the database has had.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        let mut client = self.client.borrow_mut();
        current_version(&mut *client).map_err(backend(&self.described))
    }
}

/// Resolves `latest`, a full id or a unique prefix to a full id.
fn resolve_id(
    client: &mut impl GenericClient,
    store: &str,
    id: &str,
) -> Result<String, StoreError> {
    let be = backend(store);
    let not_found = || StoreError::NotFound {
        store: store.to_string(),
        id: id.to_string(),
    };
    if id == "latest" {
        let row = client.query_opt(&POSTGRES.newest_run, &[]).map_err(&be)?;
        return row.map(|r| r.get(0)).ok_or_else(not_found);
    }
    if client
        .query_opt(&POSTGRES.run_exists, &[&id])
        .map_err(&be)?
        .is_some()
    {
        return Ok(id.to_string());
    }
    if id.chars().count() < MIN_PREFIX {
        return Err(not_found());
    }
    let matches: Vec<String> = client
        .query(
            &POSTGRES.runs_with_prefix,
            &[&id, &(MAX_CANDIDATES as i64 + 1)],
        )
        .map_err(&be)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    super::shared::pick_one(store, id, matches)
}

impl Store for PgStore {
    fn describe(&self) -> String {
        self.described.clone()
    }

    fn insert_run(&mut self, run: &Run) -> Result<InsertOutcome, StoreError> {
        let mut outcomes = self.insert_runs(std::slice::from_ref(run))?;
        Ok(outcomes.remove(0))
    }

    fn insert_runs(&mut self, runs: &[Run]) -> Result<Vec<InsertOutcome>, StoreError> {
        let store = self.describe();
        super::pg_insert::insert_runs(&mut self.client.borrow_mut(), &store, runs)
    }

    fn list_pair_runs(&self, testbed: &str) -> Result<Vec<RunSummary>, StoreError> {
        let store = self.describe();
        super::pair_runs::pg(&mut self.client.borrow_mut(), &store, &self.skips, testbed)
    }

    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>, StoreError> {
        let store = self.describe();
        let be = backend(&store);
        let limit = limit.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        let rows = self
            .client
            .borrow_mut()
            .query(&POSTGRES.list_runs, &[&limit])
            .map_err(&be)?;
        rows.iter()
            .map(|r| {
                SummaryRow {
                    id: r.get(0),
                    project: r.get(1),
                    commit: r.get(2),
                    branch: r.get(3),
                    started_at: r.get(4),
                    status: r.get(5),
                    results: r.get(6),
                    failed_results: r.get(7),
                    pair_id: r.get(8),
                    testbed: r.get(9),
                    role: r.get(10),
                    excluded: r.get(11),
                }
                .decode(&store)
            })
            .filter_map(|summary| self.skips.skip(summary).transpose())
            .collect()
    }

    fn get_run(&self, id: &str) -> Result<Run, StoreError> {
        let store = self.describe();
        let be = backend(&store);
        let mut client = self.client.borrow_mut();
        // One snapshot: resolving and loading see the same data.
        let mut tx = snapshot(&mut client).map_err(&be)?;
        let full = resolve_id(&mut tx, &store, id)?;
        let run = load_run(&mut tx, &store, &full)?.ok_or_else(|| StoreError::NotFound {
            store: store.clone(),
            id: id.to_string(),
        })?;
        tx.commit().map_err(&be)?;
        Ok(run)
    }

    fn all_runs(&self) -> Result<Vec<Run>, StoreError> {
        let store = self.describe();
        let be = backend(&store);
        let mut client = self.client.borrow_mut();
        let mut tx = snapshot(&mut client).map_err(&be)?;
        let ids: Vec<String> = tx
            .query(&POSTGRES.run_ids_oldest_first, &[])
            .map_err(&be)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut runs = Vec::with_capacity(ids.len());
        for id in ids {
            let run = load_run(&mut tx, &store, &id).and_then(|run| {
                run.ok_or_else(|| corrupt(&store, format!("run {id} vanished while reading")))
            });
            runs.extend(self.skips.skip(run)?);
        }
        tx.commit().map_err(&be)?;
        Ok(runs)
    }

    fn upsert_alerts(&mut self, alerts: &[Alert]) -> Result<(), StoreError> {
        let store = self.describe();
        pg_alerts::upsert(self.client.get_mut(), &store, alerts)
    }

    fn list_alerts(&self) -> Result<Vec<Alert>, StoreError> {
        let mut client = self.client.borrow_mut();
        pg_alerts::list(&mut *client, &self.described)
    }

    fn alert_changes(&self, id: &str) -> Result<Vec<pitwall_schema::AlertChange>, StoreError> {
        let store = self.describe();
        pg_alerts::changes(&mut self.client.borrow_mut(), &store, id)
    }

    fn update_alert(&mut self, id: &str, change: &AlertUpdate) -> Result<Alert, StoreError> {
        let store = self.describe();
        pg_alerts::update(self.client.get_mut(), &store, id, change)
    }

    fn transition_alerts(
        &mut self,
        changes: &[pitwall_schema::AlertTransition],
    ) -> Result<usize, StoreError> {
        let store = self.describe();
        pg_alerts::transition(self.client.get_mut(), &store, changes)
    }

    fn prune_samples(
        &mut self,
        id: &str,
        summaries: &[Option<pitwall_schema::SampleSummary>],
    ) -> Result<usize, StoreError> {
        let store = self.describe();
        super::prune::pg_prune_samples(self.client.get_mut(), &store, id, summaries)
    }

    fn delete_run(&mut self, id: &str) -> Result<bool, StoreError> {
        let store = self.describe();
        super::prune::pg_delete_run(self.client.get_mut(), &store, id)
    }

    fn set_exclusion(
        &mut self,
        id: &str,
        exclusion: Option<&pitwall_schema::Exclusion>,
    ) -> Result<bool, StoreError> {
        let store = self.describe();
        let json = exclusion.map(super::rows::to_json);
        let changed = self
            .client
            .get_mut()
            .execute(&POSTGRES.set_exclusion, &[&id, &json])
            .map_err(backend(&store))?;
        Ok(changed > 0)
    }

    fn query_runs(&self, query: &super::RunQuery) -> Result<Vec<Run>, StoreError> {
        let store = self.describe();
        super::pg_query::pg_query_runs(&mut self.client.borrow_mut(), &store, query, &self.skips)
    }

    fn series_keys(&self) -> Result<Vec<String>, StoreError> {
        let store = self.describe();
        super::pg_query::pg_series_keys(&mut self.client.borrow_mut(), &store)
    }

    fn on_skipped(&mut self, sink: super::SkipSink) {
        self.skips.set_sink(sink);
    }

    fn migration_notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn forge_comment(&self, target: &str) -> Result<Option<u64>, StoreError> {
        let store = self.describe();
        super::forge_comments::pg_get(&mut self.client.borrow_mut(), &store, target)
    }

    fn set_forge_comment(&mut self, target: &str, id: u64) -> Result<(), StoreError> {
        let store = self.describe();
        super::forge_comments::pg_set(&mut self.client.borrow_mut(), &store, target, id)
    }

    fn create_token(&mut self, token: &super::StoredToken) -> Result<(), StoreError> {
        let store = self.describe();
        super::tokens::pg_create(&mut self.client.borrow_mut(), &store, token)
    }

    fn list_tokens(&self) -> Result<Vec<super::StoredToken>, StoreError> {
        let store = self.describe();
        super::tokens::pg_list(&mut self.client.borrow_mut(), &store)
    }

    fn revoke_token(&mut self, name: &str, at: &str) -> Result<bool, StoreError> {
        let store = self.describe();
        super::tokens::pg_revoke(&mut self.client.borrow_mut(), &store, name, at)
    }

    fn create_session(&mut self, session: &super::StoredSession) -> Result<(), StoreError> {
        let store = self.describe();
        super::sessions::pg_create(&mut self.client.borrow_mut(), &store, session)
    }

    fn session(&self, id_sha256: &str) -> Result<Option<super::StoredSession>, StoreError> {
        let store = self.describe();
        super::sessions::pg_get(&mut self.client.borrow_mut(), &store, id_sha256)
    }

    fn delete_session(&mut self, id_sha256: &str) -> Result<bool, StoreError> {
        let store = self.describe();
        super::sessions::pg_delete(&mut self.client.borrow_mut(), &store, id_sha256)
    }

    fn upsert_series_summaries(&mut self, rows: &[super::StoredSummary]) -> Result<(), StoreError> {
        let store = self.describe();
        super::summaries::pg_upsert(&mut self.client.borrow_mut(), &store, rows)
    }

    fn series_summaries(&self, project: &str) -> Result<Vec<super::StoredSummary>, StoreError> {
        let store = self.describe();
        super::summaries::pg_list(&mut self.client.borrow_mut(), &store, project)
    }
}

#[cfg(test)]
mod tests;
