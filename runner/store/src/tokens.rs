//! The API tokens of `pitwall serve` (issue 29), kept in the store the server serves: a name,
//! a role, the SHA-256 of the secret (the secret is shown once, when made, and never stored),
//! an expiry and a revocation time. `pitwall token create|list|revoke` writes them; the server
//! reads them to authenticate each request.

use postgres::Client;
use rusqlite::{Connection, params};
use serde::Serialize;

use super::StoreError;
use super::sql::queries::{POSTGRES, SQLITE};

/// What a token may do: a runner uploads runs, a triager changes alerts, a reader reads. Each
/// role may also do what the roles after it may (a runner and a triager read too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenRole {
    Runner,
    Triage,
    Read,
}

impl TokenRole {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenRole::Runner => "runner",
            TokenRole::Triage => "triage",
            TokenRole::Read => "read",
        }
    }

    pub fn parse(text: &str) -> Option<TokenRole> {
        match text {
            "runner" => Some(TokenRole::Runner),
            "triage" => Some(TokenRole::Triage),
            "read" => Some(TokenRole::Read),
            _ => None,
        }
    }
}

/// A stored token: everything but its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredToken {
    pub name: String,
    pub role: TokenRole,
    /// Lowercase hex SHA-256 of the secret.
    #[serde(skip)]
    pub secret_sha256: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339; `None`: never.
    pub expires_at: Option<String>,
    /// RFC 3339; `None` while it counts.
    pub revoked_at: Option<String>,
}

/// A token row as read: (name, role, hash, created, expires, revoked).
type Row = (
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
);

fn decode(store: &str, row: Row) -> Result<StoredToken, StoreError> {
    let role = TokenRole::parse(&row.1).ok_or_else(|| StoreError::Corrupt {
        store: store.to_string(),
        what: format!("token {} has unknown role {:?}", row.0, row.1),
    })?;
    Ok(StoredToken {
        name: row.0,
        role,
        secret_sha256: row.2,
        created_at: row.3,
        expires_at: row.4,
        revoked_at: row.5,
    })
}

fn exists(store: &str, name: &str) -> StoreError {
    StoreError::TokenExists {
        store: store.to_string(),
        name: name.to_string(),
    }
}

pub(super) fn sqlite_create(
    conn: &Connection,
    store: &str,
    t: &StoredToken,
) -> Result<(), StoreError> {
    let be = super::sqlite_codec::backend(store);
    let changed = conn
        .execute(
            &SQLITE.insert_token,
            params![
                t.name,
                t.role.as_str(),
                t.secret_sha256,
                t.created_at,
                t.expires_at
            ],
        )
        .map_err(&be)?;
    if changed == 0 {
        return Err(exists(store, &t.name));
    }
    Ok(())
}

pub(super) fn sqlite_list(conn: &Connection, store: &str) -> Result<Vec<StoredToken>, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.list_tokens).map_err(&be)?;
    let rows: Vec<Row> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .map_err(&be)?
        .collect::<Result<_, _>>()
        .map_err(&be)?;
    rows.into_iter().map(|r| decode(store, r)).collect()
}

pub(super) fn sqlite_revoke(
    conn: &Connection,
    store: &str,
    name: &str,
    at: &str,
) -> Result<bool, StoreError> {
    let be = super::sqlite_codec::backend(store);
    Ok(conn
        .execute(&SQLITE.revoke_token, params![name, at])
        .map_err(&be)?
        > 0)
}

/// [`sqlite_create`] on PostgreSQL.
pub(super) fn pg_create(
    client: &mut Client,
    store: &str,
    t: &StoredToken,
) -> Result<(), StoreError> {
    let be = super::pg_conn::backend(store);
    let changed = client
        .execute(
            &POSTGRES.insert_token,
            &[
                &t.name,
                &t.role.as_str(),
                &t.secret_sha256,
                &t.created_at,
                &t.expires_at,
            ],
        )
        .map_err(&be)?;
    if changed == 0 {
        return Err(exists(store, &t.name));
    }
    Ok(())
}

/// [`sqlite_list`] on PostgreSQL.
pub(super) fn pg_list(client: &mut Client, store: &str) -> Result<Vec<StoredToken>, StoreError> {
    let be = super::pg_conn::backend(store);
    client
        .query(&POSTGRES.list_tokens, &[])
        .map_err(&be)?
        .iter()
        .map(|r| {
            decode(
                store,
                (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)),
            )
        })
        .collect()
}

/// [`sqlite_revoke`] on PostgreSQL.
pub(super) fn pg_revoke(
    client: &mut Client,
    store: &str,
    name: &str,
    at: &str,
) -> Result<bool, StoreError> {
    let be = super::pg_conn::backend(store);
    Ok(client
        .execute(&POSTGRES.revoke_token, &[&name, &at])
        .map_err(&be)?
        > 0)
}

/// What every store does with tokens, checked against each backend.
#[cfg(test)]
pub(super) fn conformance(store: &mut dyn super::Store) {
    let token = |name: &str, role, hash: &str| StoredToken {
        name: name.into(),
        role,
        secret_sha256: hash.into(),
        created_at: "2026-12-05T09:00:00Z".into(),
        expires_at: Some("2027-03-05T09:00:00Z".into()),
        revoked_at: None,
    };
    assert!(store.list_tokens().unwrap().is_empty());
    let ci = token("ci-runner", TokenRole::Runner, "aa");
    store.create_token(&ci).unwrap();
    store
        .create_token(&StoredToken {
            expires_at: None,
            ..token("alice", TokenRole::Triage, "bb")
        })
        .unwrap();
    let listed = store.list_tokens().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].name, "alice", "by name");
    assert_eq!(listed[0].expires_at, None);
    assert_eq!(listed[1], ci);
    // An unrevoked name cannot be taken again.
    let again = store.create_token(&token("ci-runner", TokenRole::Read, "cc"));
    assert!(
        matches!(again, Err(StoreError::TokenExists { .. })),
        "{again:?}"
    );
    assert_eq!(store.list_tokens().unwrap()[1].secret_sha256, "aa");
    // Revoked once; a revoked name can be made again, with a new secret.
    assert!(
        store
            .revoke_token("ci-runner", "2026-12-06T00:00:00Z")
            .unwrap()
    );
    assert!(
        !store
            .revoke_token("ci-runner", "2026-12-07T00:00:00Z")
            .unwrap()
    );
    assert!(
        !store
            .revoke_token("nobody", "2026-12-07T00:00:00Z")
            .unwrap()
    );
    let revoked = &store.list_tokens().unwrap()[1];
    assert_eq!(revoked.revoked_at.as_deref(), Some("2026-12-06T00:00:00Z"));
    store
        .create_token(&token("ci-runner", TokenRole::Runner, "dd"))
        .unwrap();
    let renewed = &store.list_tokens().unwrap()[1];
    assert_eq!(
        (renewed.secret_sha256.as_str(), renewed.revoked_at.clone()),
        ("dd", None)
    );
}
