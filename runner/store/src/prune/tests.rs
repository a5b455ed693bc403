//! Tests of the retention writes (`Store::prune_samples`, `Store::delete_run`) on both stores:
//! SQLite files and a real PostgreSQL server. A pruned run reads back with its summaries and no
//! samples, exports as `pitwall/v4`, and a mismatched or unknown request changes nothing.

use pitwall_e2e::pg_server;
use pitwall_schema::{ExportDoc, SCHEMA_V3, SCHEMA_V4, SampleSummary};

use crate::conformance::{ok_result, rich_run, run};
use crate::{PgStore, SqliteStore, Store, StoreError};

fn summary(median: f64) -> SampleSummary {
    SampleSummary {
        n: 3,
        median,
        median_ci: None,
        min: median - 1.0,
        max: median + 1.0,
        throttled: 0,
    }
}

fn prunes_samples_and_keeps_summaries(store: &mut dyn Store) {
    let r = run(
        "01900000-0000-7000-8000-00000000aa01",
        "2026-01-01T10:00:00Z",
        vec![
            ok_result("a", vec![1.0, 2.0, 3.0]),
            ok_result("b", vec![4.0, 5.0]),
        ],
    );
    store.insert_run(&r).unwrap();
    let dropped = store
        .prune_samples(&r.id, &[Some(summary(2.0)), None])
        .unwrap();
    assert_eq!(dropped, 3);
    let back = store.get_run(&r.id).unwrap();
    assert!(back.results[0].samples.is_empty());
    assert_eq!(back.results[0].summary, Some(summary(2.0)));
    assert_eq!(
        back.results[1], r.results[1],
        "a result without a summary is kept"
    );
    // The pruned run is still a valid run, and exports as v4 (v3 before pruning).
    back.validate().unwrap();
    assert_eq!(ExportDoc::new(vec![r.clone()]).schema, SCHEMA_V3);
    let doc = ExportDoc::new(vec![back.clone()]);
    assert_eq!(doc.schema, SCHEMA_V4);
    assert_eq!(ExportDoc::from_json(&doc.to_json()).unwrap(), doc);
}

fn refuses_misaligned_and_unknown_requests(store: &mut dyn Store) {
    let r = rich_run();
    store.insert_run(&r).unwrap();
    let err = store
        .prune_samples(&r.id, &[Some(summary(1.0))])
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
    assert_eq!(store.get_run(&r.id).unwrap(), r, "nothing changed");
    let err = store
        .prune_samples("01900000-0000-7000-8000-00000000ffff", &[])
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
}

fn deletes_runs_whole(store: &mut dyn Store) {
    let keep = run(
        "01900000-0000-7000-8000-00000000bb01",
        "2026-01-01T10:00:00Z",
        vec![ok_result("a", vec![1.0])],
    );
    let gone = run(
        "01900000-0000-7000-8000-00000000bb02",
        "2026-01-02T10:00:00Z",
        vec![ok_result("a", vec![2.0, 3.0])],
    );
    store.insert_run(&keep).unwrap();
    store.insert_run(&gone).unwrap();
    assert!(store.delete_run(&gone.id).unwrap());
    assert!(
        !store.delete_run(&gone.id).unwrap(),
        "a second delete finds nothing"
    );
    assert_eq!(store.all_runs().unwrap(), vec![keep]);
    // The id is free again: the same run can be stored anew.
    store.insert_run(&gone).unwrap();
}

#[test]
fn sqlite_prune_samples_keeps_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("p.db")).unwrap();
    prunes_samples_and_keeps_summaries(&mut store);
}

#[test]
fn sqlite_prune_refuses_misaligned_and_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("p.db")).unwrap();
    refuses_misaligned_and_unknown_requests(&mut store);
}

#[test]
fn sqlite_delete_run_removes_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("p.db")).unwrap();
    deletes_runs_whole(&mut store);
    let conn = rusqlite::Connection::open(dir.path().join("p.db")).unwrap();
    let samples: i64 = conn
        .query_row("SELECT count(*) FROM samples", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        samples, 3,
        "the kept run's sample and the re-stored run's two, none left over"
    );
}

fn pg() -> Option<(pitwall_e2e::TestDb, PgStore)> {
    let db = pg_server()?.database();
    let store = PgStore::open(&db.url).unwrap();
    Some((db, store))
}

#[test]
fn pg_prune_samples_keeps_summaries() {
    let Some((_db, mut store)) = pg() else { return };
    prunes_samples_and_keeps_summaries(&mut store);
}

#[test]
fn pg_prune_refuses_misaligned_and_unknown() {
    let Some((_db, mut store)) = pg() else { return };
    refuses_misaligned_and_unknown_requests(&mut store);
}

#[test]
fn pg_delete_run_removes_it_whole() {
    let Some((db, mut store)) = pg() else { return };
    deletes_runs_whole(&mut store);
    // Samples have no foreign key on PostgreSQL (schema step 17): none is left behind in
    // either table (rows of before step 18, sets since), and the run stored anew has its own.
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let orphans: i64 = client
        .query_one(
            "SELECT (SELECT count(*) FROM samples s
                     WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.id = s.result_id))
                  + (SELECT count(*) FROM sample_sets s
                     WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.id = s.result_id))",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(orphans, 0);
    let samples: i64 = client
        .query_one(
            "SELECT (SELECT count(*) FROM samples)
                  + (SELECT coalesce(sum(cardinality(vals)), 0) FROM sample_sets)",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(samples, 3, "1 of the run kept, 2 of the run stored anew");
}
