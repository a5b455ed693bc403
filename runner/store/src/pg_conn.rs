//! What every part of the PostgreSQL store shares about its connection: the error mapping,
//! the advisory-lock key and the read snapshot. Below `pg.rs` and the modules it calls
//! (migrations, queries, alerts, retention), so none of them imports the store itself.

use postgres::{Client, IsolationLevel};

use super::StoreError;

/// Advisory-lock key ("pitwall" in ASCII) held, per transaction, while migrating and while
/// inserting a run: the duplicate check and the insert then see the same state everywhere.
const LOCK_KEY: i64 = 0x0070_6974_7761_6c6c;

/// The first key of the advisory lock each run id gets while it is inserted ("pitw"; the
/// second is the id's `hashtext`). PostgreSQL keeps two-key locks apart from one-key ones.
pub(crate) const RUN_LOCK_KEY: i32 = 0x7069_7477;

/// A write transaction holding pitwall's advisory lock alone until it ends: migrating and
/// deleting runs are serialized with each other and with every insert, across every process
/// sharing the database.
pub(super) fn locked_transaction(
    client: &mut Client,
) -> Result<postgres::Transaction<'_>, postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])?;
    Ok(tx)
}

/// A transaction that inserts the runs `ids`: pitwall's advisory lock shared, so inserts of
/// different runs go on at once (the server's writers, runners uploading together) while a
/// migration or a deletion waits for them; then each run id's own lock, so the check whether a
/// run is already stored and its insert see the same state everywhere. The id locks are taken
/// in order of their hash, so two transactions never wait for each other (a hash shared by two
/// ids only makes their inserts wait in turn).
pub(super) fn insert_transaction<'a>(
    client: &'a mut Client,
    ids: &[&str],
) -> Result<postgres::Transaction<'a>, postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock_shared($1)", &[&LOCK_KEY])?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, h)
         FROM (SELECT DISTINCT hashtext(id) AS h FROM unnest($2::text[]) AS id ORDER BY h) AS l",
        &[&RUN_LOCK_KEY, &ids],
    )?;
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
