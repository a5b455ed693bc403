//! Stored garbage in each column is reported as corruption naming what is wrong.

use rusqlite::Connection;

use super::super::conformance::rich_run;
use super::super::{SqliteStore, Store, StoreError};
use crate::sqlite::tests::open;

#[test]
fn stored_garbage_is_reported_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pitwall.db");
    let mut store = open(dir.path());
    let original = rich_run();
    store.insert_run(&original).unwrap();
    let conn = Connection::open(&db).unwrap();
    let corrupt_what = |store: &SqliteStore| match store.get_run("latest").unwrap_err() {
        StoreError::Corrupt { what, .. } => what,
        e => panic!("expected corrupt, got {e:?}"),
    };

    conn.execute("UPDATE results SET status = 'meh' WHERE ord = 2", [])
        .unwrap();
    assert!(corrupt_what(&store).contains("unknown status `meh`"));
    conn.execute("UPDATE results SET status = 'failed' WHERE ord = 2", [])
        .unwrap();

    let params: String = conn
        .query_row("SELECT params_json FROM results WHERE ord = 0", [], |r| {
            r.get(0)
        })
        .unwrap();
    conn.execute("UPDATE results SET params_json = '{oops' WHERE ord = 0", [])
        .unwrap();
    assert!(corrupt_what(&store).contains("result 0: params_json"));
    conn.execute(
        "UPDATE results SET params_json = ?1 WHERE ord = 0",
        [&params],
    )
    .unwrap();

    let fingerprint: String = conn
        .query_row("SELECT fingerprint_json FROM runs", [], |r| r.get(0))
        .unwrap();
    conn.execute("UPDATE runs SET fingerprint_json = '[]'", [])
        .unwrap();
    assert!(corrupt_what(&store).contains("fingerprint_json"));
    conn.execute(
        "UPDATE runs SET fingerprint_json = ?1, status = 'done'",
        [&fingerprint],
    )
    .unwrap();
    assert!(corrupt_what(&store).contains("unknown run status `done`"));
    // A list of runs leaves the unreadable one out (named through `on_skipped`).
    assert!(store.list_runs(None).unwrap().is_empty());
    conn.execute("UPDATE runs SET status = 'partial'", [])
        .unwrap();
    assert_eq!(store.get_run("latest").unwrap(), original);

    conn.execute("UPDATE samples SET meta_json = NULL WHERE idx = 3", [])
        .unwrap();
    let what = corrupt_what(&store);
    assert!(
        what.contains("result 0: 1 of 6 samples lack meta_json"),
        "{what}"
    );
    conn.execute("UPDATE samples SET meta_json = '{}' WHERE idx = 3", [])
        .unwrap();
    assert_eq!(store.get_run("latest").unwrap(), original);

    // Result 1 has replicates [0, 1, 1]: one lost is corrupt, as is one out of range.
    let result_1 = "(SELECT id FROM results WHERE ord = 1)";
    conn.execute(
        &format!("UPDATE samples SET replicate = NULL WHERE idx = 2 AND result_id = {result_1}"),
        [],
    )
    .unwrap();
    let what = corrupt_what(&store);
    assert!(
        what.contains("result 1: 1 of 3 samples lack a replicate"),
        "{what}"
    );
    conn.execute(
        &format!("UPDATE samples SET replicate = -1 WHERE idx = 2 AND result_id = {result_1}"),
        [],
    )
    .unwrap();
    let what = corrupt_what(&store);
    assert!(
        what.contains("result 1 sample 2: replicate -1 is not between 0 and 4294967295"),
        "{what}"
    );
    conn.execute(
        &format!("UPDATE samples SET replicate = 1 WHERE idx = 2 AND result_id = {result_1}"),
        [],
    )
    .unwrap();
    assert_eq!(store.get_run("latest").unwrap(), original);
}
