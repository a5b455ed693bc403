//! Numbered schema migrations of the PostgreSQL store, applied under an advisory lock so that
//! runners opening a fresh or older database at once migrate it once, and a database that is
//! not pitwall's (or is from a newer pitwall) is refused before anything is written.
//!
//! The version lives in the one row of `pitwall_schema`: version N means `MIGRATIONS[..N]` have
//! been applied. The scripts come from the one schema both stores share (`sql::schema`), where
//! PostgreSQL's migration 1 is SQLite's 1 and 2, so the numbers differ by one after it.

use std::sync::LazyLock;

use postgres::{Client, GenericClient};

use super::pg_conn::{backend, locked_transaction};
use super::sql::Dialect;
use super::sql::queries::POSTGRES;
use super::sql::schema::{Backfill, Migration, local_role_note, migrations};
use super::{OpenMode, StoreError};

/// Every migration, in order (`sql::schema`); never edit a released one, append a step.
pub(super) static MIGRATIONS: LazyLock<Vec<Migration>> =
    LazyLock::new(|| migrations(Dialect::Postgres));

/// Gives every result without a key the key and the point its columns and samples make, and
/// records the keys.
fn backfill_keys(client: &mut impl GenericClient) -> Result<(), postgres::Error> {
    let rows = client.query(&POSTGRES.keys_to_fill, &[])?;
    for r in rows {
        let id: i64 = r.get(0);
        let key = super::rows::key_of(r.get(1), r.get(2), r.get(3), r.get(4));
        let values: Vec<(f64, Option<String>)> = client
            .query(&POSTGRES.samples_of_result, &[&id])?
            .iter()
            .map(|s| (s.get(0), s.get(1)))
            .collect();
        let summary: Option<String> = r.get(5);
        let point = super::rows::point_json_of_rows(&values, summary.as_deref());
        client.execute(&POSTGRES.set_key, &[&id, &key, &point])?;
        client.execute(&POSTGRES.record_key, &[&key])?;
    }
    Ok(())
}

/// Gives every run without a testbed or role the ones it implies (see
/// `rows::implied_labels`).
fn backfill_labels(client: &mut impl GenericClient) -> Result<(), postgres::Error> {
    let rows = client.query(&POSTGRES.labels_to_fill, &[])?;
    for r in rows {
        let id: String = r.get(0);
        let fingerprint: String = r.get(1);
        let pair: Option<String> = r.get(2);
        let (testbed, role) = super::rows::implied_labels(&fingerprint, pair.as_deref());
        client.execute(&POSTGRES.set_labels, &[&id, &testbed, &role])?;
    }
    Ok(())
}

/// Makes the order of every pair stored before rounds alternated explicit.
fn backfill_round_orders(client: &mut impl GenericClient) -> Result<(), postgres::Error> {
    let rows = client.query(&POSTGRES.pairs_to_fill, &[])?;
    for r in rows {
        let id: String = r.get(0);
        let pair: String = r.get(1);
        if let Some(explicit) = super::rows::explicit_round_orders(&pair) {
            client.execute(&POSTGRES.set_pair, &[&id, &explicit])?;
        }
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
/// What a migration has to tell the user (the runs it relabelled) goes into `notes`.
pub(super) fn migrate(
    client: &mut Client,
    store: &str,
    mode: OpenMode,
    notes: &mut Vec<String>,
) -> Result<(), StoreError> {
    let be = backend(store);
    let mut tx = locked_transaction(client).map_err(&be)?;
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
    for (n, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let fail = |e: postgres::Error| StoreError::Backend {
            store: store.to_string(),
            source: format!("applying schema migration {}: {e}", n + 1).into(),
        };
        tx.batch_execute(&migration.script).map_err(fail)?;
        for backfill in &migration.backfills {
            match backfill {
                Backfill::Labels => backfill_labels(&mut tx).map_err(fail)?,
                Backfill::Keys => backfill_keys(&mut tx).map_err(fail)?,
                Backfill::RoundOrders => backfill_round_orders(&mut tx).map_err(fail)?,
                Backfill::LocalRole => {
                    let relabelled: Vec<(String, String)> = tx
                        .query(&POSTGRES.local_to_relabel, &[])
                        .map_err(fail)?
                        .iter()
                        .map(|r| (r.get(0), r.get(1)))
                        .collect();
                    tx.execute(&POSTGRES.relabel_local, &[]).map_err(fail)?;
                    notes.extend(local_role_note(&relabelled));
                }
            }
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
