//! What every part of the PostgreSQL store shares about its connection: the error mapping,
//! the advisory-lock key and the read snapshot. Below `pg.rs` and the modules it calls
//! (migrations, queries, alerts, retention), so none of them imports the store itself.

use postgres::{Client, IsolationLevel};

use super::StoreError;

/// Advisory-lock key ("pitwall" in ASCII) held, per transaction, while migrating and while
/// inserting a run: the duplicate check and the insert then see the same state everywhere.
const LOCK_KEY: i64 = 0x0070_6974_7761_6c6c;

/// A write transaction holding pitwall's advisory lock until it ends: migrating, inserting
/// and deleting runs are serialized across every process sharing the database.
pub(super) fn locked_transaction(
    client: &mut Client,
) -> Result<postgres::Transaction<'_>, postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])?;
    Ok(tx)
}

/// Maps a PostgreSQL error to `StoreError::Backend` for the store `store`.
pub(super) fn backend(store: &str) -> impl Fn(postgres::Error) -> StoreError + '_ {
    move |e| StoreError::Backend {
        store: store.to_string(),
        source: Box::new(e),
    }
}

/// A read-only transaction on one snapshot of the database.
pub(super) fn snapshot(client: &mut Client) -> Result<postgres::Transaction<'_>, postgres::Error> {
    client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
}
