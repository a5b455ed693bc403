//! Migrating a SQLite store: a fresh file once, a newer one refused.

use super::*;

#[test]
fn migrates_a_fresh_database_once() {
    let mut conn = Connection::open_in_memory().unwrap();
    assert_eq!(current_version(&conn).unwrap(), 0);
    assert_eq!(
        migrate(&mut conn, "mem", &mut Vec::new()).unwrap(),
        MIGRATIONS.len()
    );
    assert_eq!(current_version(&conn).unwrap(), latest_version());
    assert_eq!(migrate(&mut conn, "mem", &mut Vec::new()).unwrap(), 0);
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        tables,
        [
            "alert_changes",
            "alerts",
            "forge_comments",
            "results",
            "runs",
            "samples",
            "series_keys",
            "series_summaries",
            "sessions",
            "tokens"
        ]
    );
}

#[test]
fn refuses_newer_versions() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "user_version", latest_version() + 1)
        .unwrap();
    let err = migrate(&mut conn, "mem", &mut Vec::new()).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found, supported, .. }
            if found == latest_version() + 1 && supported == latest_version()),
        "{err:?}"
    );
}
