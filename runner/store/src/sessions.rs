//! The browser sessions of `pitwall serve` (issue 30), kept in the store the server serves: a
//! person signs in with a token and the browser holds a random session id in a cookie. The
//! store keeps only the id's SHA-256, the SHA-256 of the token secret it was made with, the
//! token's name, and when it was made and ends. The server checks the token behind it on every
//! request, so a session is revoked with its token.

use postgres::Client;
use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::sql::queries::{POSTGRES, SQLITE};

/// A stored session: everything but its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// Lowercase hex SHA-256 of the session id the cookie holds.
    pub id_sha256: String,
    /// Lowercase hex SHA-256 of the secret of the token signed in with.
    pub token_sha256: String,
    /// That token's name (who acts, in the alerts' records).
    pub token_name: String,
    /// RFC 3339, UTC, whole seconds (`…Z`): these compare as text.
    pub created_at: String,
    /// RFC 3339, UTC, whole seconds.
    pub expires_at: String,
}

/// A session row as read: (token hash, token name, created, ends).
type Row = (String, String, String, String);

fn of_row(id_sha256: &str, row: Row) -> StoredSession {
    StoredSession {
        id_sha256: id_sha256.to_string(),
        token_sha256: row.0,
        token_name: row.1,
        created_at: row.2,
        expires_at: row.3,
    }
}

/// Stores `s`, first deleting the sessions that ended by its start.
pub(super) fn sqlite_create(
    conn: &Connection,
    store: &str,
    s: &StoredSession,
) -> Result<(), StoreError> {
    let be = super::sqlite_codec::backend(store);
    let tx = conn.unchecked_transaction().map_err(&be)?;
    tx.execute(&SQLITE.delete_ended_sessions, params![s.created_at])
        .map_err(&be)?;
    tx.execute(
        &SQLITE.insert_session,
        params![
            s.id_sha256,
            s.token_sha256,
            s.token_name,
            s.created_at,
            s.expires_at
        ],
    )
    .map_err(&be)?;
    tx.commit().map_err(&be)
}

pub(super) fn sqlite_get(
    conn: &Connection,
    store: &str,
    id_sha256: &str,
) -> Result<Option<StoredSession>, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let row: Option<Row> = conn
        .prepare_cached(&SQLITE.session)
        .map_err(&be)?
        .query_row(params![id_sha256], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()
        .map_err(&be)?;
    Ok(row.map(|r| of_row(id_sha256, r)))
}

pub(super) fn sqlite_delete(
    conn: &Connection,
    store: &str,
    id_sha256: &str,
) -> Result<bool, StoreError> {
    let be = super::sqlite_codec::backend(store);
    Ok(conn
        .execute(&SQLITE.delete_session, params![id_sha256])
        .map_err(&be)?
        > 0)
}

/// [`sqlite_create`] on PostgreSQL.
pub(super) fn pg_create(
    client: &mut Client,
    store: &str,
    s: &StoredSession,
) -> Result<(), StoreError> {
    let be = super::pg_conn::backend(store);
    let mut tx = client.transaction().map_err(&be)?;
    tx.execute(&POSTGRES.delete_ended_sessions, &[&s.created_at])
        .map_err(&be)?;
    tx.execute(
        &POSTGRES.insert_session,
        &[
            &s.id_sha256,
            &s.token_sha256,
            &s.token_name,
            &s.created_at,
            &s.expires_at,
        ],
    )
    .map_err(&be)?;
    tx.commit().map_err(&be)
}

/// [`sqlite_get`] on PostgreSQL.
pub(super) fn pg_get(
    client: &mut Client,
    store: &str,
    id_sha256: &str,
) -> Result<Option<StoredSession>, StoreError> {
    let be = super::pg_conn::backend(store);
    Ok(client
        .query_opt(&POSTGRES.session, &[&id_sha256])
        .map_err(&be)?
        .map(|r| of_row(id_sha256, (r.get(0), r.get(1), r.get(2), r.get(3)))))
}

/// [`sqlite_delete`] on PostgreSQL.
pub(super) fn pg_delete(
    client: &mut Client,
    store: &str,
    id_sha256: &str,
) -> Result<bool, StoreError> {
    let be = super::pg_conn::backend(store);
    Ok(client
        .execute(&POSTGRES.delete_session, &[&id_sha256])
        .map_err(&be)?
        > 0)
}

/// What every store does with sessions, checked against each backend.
#[cfg(test)]
pub(super) fn conformance(store: &mut dyn super::Store) {
    let session = |id: &str, created: &str, ends: &str| StoredSession {
        id_sha256: id.into(),
        token_sha256: "tt".into(),
        token_name: "alice".into(),
        created_at: created.into(),
        expires_at: ends.into(),
    };
    assert_eq!(store.session("aa").unwrap(), None);
    let a = session("aa", "2026-12-06T00:00:00Z", "2026-12-06T12:00:00Z");
    store.create_session(&a).unwrap();
    assert_eq!(store.session("aa").unwrap(), Some(a.clone()));
    // A later session deletes those ended by its start, and only those.
    let b = session("bb", "2026-12-06T06:00:00Z", "2026-12-06T18:00:00Z");
    store.create_session(&b).unwrap();
    assert_eq!(store.session("aa").unwrap(), Some(a));
    let c = session("cc", "2026-12-06T12:00:00Z", "2026-12-07T00:00:00Z");
    store.create_session(&c).unwrap();
    assert_eq!(store.session("aa").unwrap(), None, "ended at 12:00");
    assert_eq!(store.session("bb").unwrap(), Some(b));
    // The same id twice is an error, never a second row.
    assert!(store.create_session(&c).is_err());
    assert!(store.delete_session("cc").unwrap());
    assert!(!store.delete_session("cc").unwrap());
    assert_eq!(store.session("cc").unwrap(), None);
}
