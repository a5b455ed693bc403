//! The forge comment pitwall keeps on each pull or merge request: the id of its sticky
//! comment (GitHub) or note (GitLab) per target, so the next publish edits it directly instead
//! of searching the comments (issue 28). A stored id is only a hint: the publisher still
//! checks the comment is pitwall's before it edits it.

use postgres::Client;
use rusqlite::{Connection, params};

use super::StoreError;
use super::sql::queries::{POSTGRES, SQLITE};

/// The id stored for `target` (`github:OWNER/NAME#PR`, `gitlab:PROJECT!IID`).
pub(super) fn sqlite_get(
    conn: &Connection,
    store: &str,
    target: &str,
) -> Result<Option<u64>, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.forge_comment).map_err(&be)?;
    let mut rows = stmt.query(params![target]).map_err(&be)?;
    match rows.next().map_err(&be)? {
        Some(row) => Ok(Some(row.get::<_, i64>(0).map_err(&be)? as u64)),
        None => Ok(None),
    }
}

/// Keeps `id` as `target`'s comment, replacing an earlier one.
pub(super) fn sqlite_set(
    conn: &Connection,
    store: &str,
    target: &str,
    id: u64,
) -> Result<(), StoreError> {
    let be = super::sqlite_codec::backend(store);
    conn.execute(&SQLITE.set_forge_comment, params![target, id as i64])
        .map_err(&be)?;
    Ok(())
}

/// [`sqlite_get`] on PostgreSQL.
pub(super) fn pg_get(
    client: &mut Client,
    store: &str,
    target: &str,
) -> Result<Option<u64>, StoreError> {
    let be = super::pg_conn::backend(store);
    let row = client
        .query_opt(&POSTGRES.forge_comment, &[&target])
        .map_err(&be)?;
    Ok(row.map(|r| r.get::<_, i64>(0) as u64))
}

/// [`sqlite_set`] on PostgreSQL.
pub(super) fn pg_set(
    client: &mut Client,
    store: &str,
    target: &str,
    id: u64,
) -> Result<(), StoreError> {
    let be = super::pg_conn::backend(store);
    client
        .execute(&POSTGRES.set_forge_comment, &[&target, &(id as i64)])
        .map_err(&be)?;
    Ok(())
}

/// What every store does with forge comment ids, checked against each backend.
#[cfg(test)]
pub(super) fn conformance(store: &mut dyn super::Store) {
    let pr = "github:octo/bench#7";
    assert_eq!(store.forge_comment(pr).unwrap(), None);
    store.set_forge_comment(pr, 4_000_000_001).unwrap();
    store.set_forge_comment("gitlab:55!12", 9).unwrap();
    assert_eq!(store.forge_comment(pr).unwrap(), Some(4_000_000_001));
    store.set_forge_comment(pr, 12).unwrap();
    assert_eq!(store.forge_comment(pr).unwrap(), Some(12), "replaced");
    assert_eq!(store.forge_comment("gitlab:55!12").unwrap(), Some(9));
    assert_eq!(store.forge_comment("github:octo/bench#8").unwrap(), None);
}
