//! Tests of the SQLite store against real database files in temporary directories: the shared
//! store behaviour (`conformance`), plus what only a file has: migrations on reopen, refusal of
//! foreign files and newer schemas, WAL, all-or-nothing inserts seen in the tables, and a store
//! written by an older pitwall migrated in place.

use std::path::Path;

use pitwall_schema::Run;
use rusqlite::{Connection, params};

use crate::conformance::{rich_run, store_conformance_tests};
use crate::migrations::{MIGRATIONS, latest_version};
use crate::rows::{RunRow, meta_json, to_json};
use crate::{InsertOutcome, OpenMode, SqliteStore, Store, StoreError};

pub(crate) fn open(dir: &Path) -> SqliteStore {
    SqliteStore::open(&dir.join("pitwall.db")).unwrap()
}

fn table_count(path: &Path, table: &str) -> i64 {
    let conn = Connection::open(path).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

store_conformance_tests!(
    {
        let dir = tempfile::tempdir().unwrap();
        let store: Box<dyn Store> = Box::new(open(dir.path()));
        (dir, store)
    },
    |dir: &tempfile::TempDir| {
        let db = dir.path().join("pitwall.db");
        move || Box::new(SqliteStore::open(&db).unwrap()) as Box<dyn Store>
    }
);

#[test]
fn unsummarisable_results_are_stored_only_as_failed() {
    let dir = tempfile::tempdir().unwrap();
    crate::conformance::skips::unsummarisable_results_are_stored_only_as_failed(&mut open(
        dir.path(),
    ));
}

#[test]
fn forge_comment_ids_are_kept_per_target() {
    let dir = tempfile::tempdir().unwrap();
    crate::forge_comments::conformance(&mut open(dir.path()));
}

#[test]
fn tokens_are_kept_by_name_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    crate::tokens::conformance(&mut open(dir.path()));
}

#[test]
fn sessions_are_kept_by_id_hash_and_end() {
    let dir = tempfile::tempdir().unwrap();
    crate::sessions::conformance(&mut open(dir.path()));
}

#[test]
fn series_summaries_are_kept_per_series_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    crate::summaries::conformance(&mut open(dir.path()));
}

#[test]
fn unreadable_runs_are_named_once_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let db = dir.path().join("pitwall.db");
    crate::conformance::skips::unreadable_runs_are_named_once_and_skipped(&mut store, &|id| {
        Connection::open(&db)
            .unwrap()
            .execute("UPDATE results SET status = 'meh' WHERE run_id = ?1", [id])
            .unwrap();
    });
}

#[test]
fn reopening_keeps_data_and_does_not_remigrate() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nested/deeper/pitwall.db");
    let original = rich_run();
    {
        let mut store = SqliteStore::open(&db).unwrap();
        assert_eq!(store.schema_version().unwrap(), latest_version());
        store.insert_run(&original).unwrap();
    }
    // Re-running migration 1 on this file would fail ("table runs already exists").
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.schema_version().unwrap(), latest_version());
    assert_eq!(store.get_run("latest").unwrap(), original);
    let conn = Connection::open(&db).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn refuses_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pitwall.db");
    drop(SqliteStore::open(&db).unwrap());
    Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", latest_version() + 3)
        .unwrap();
    let err = SqliteStore::open(&db).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found, .. } if found == latest_version() + 3),
        "{err:?}"
    );
    assert!(err.to_string().contains(&db.display().to_string()), "{err}");
}

#[test]
fn refuses_a_file_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    let text = "these are not the tables you are looking for\n".repeat(100);
    std::fs::write(&file, &text).unwrap();
    let err = SqliteStore::open(&file).unwrap_err();
    // A usage error (exit 2: the wrong path), not a failing machine (exit 3).
    assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&file.display().to_string()), "{msg}");
    assert!(
        msg.contains("is not a pitwall store (not a SQLite database file)"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn a_failure_mid_transaction_leaves_no_partial_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pitwall.db");
    let mut store = open(dir.path());
    // Make the second result's insert fail after the run row, the first result and its
    // samples were written in the same transaction.
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER fail_second BEFORE INSERT ON results WHEN NEW.ord = 1
             BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
        )
        .unwrap();
    let original = rich_run();
    let err = store.insert_run(&original).unwrap_err();
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    assert!(err.to_string().contains("injected failure"), "{err}");
    for table in ["runs", "results", "samples"] {
        assert_eq!(table_count(&db, table), 0, "{table}");
    }
    assert!(matches!(
        store.get_run(&original.id),
        Err(StoreError::NotFound { .. })
    ));
    // The store is still usable, and the same run goes in once the fault is gone.
    Connection::open(&db)
        .unwrap()
        .execute_batch("DROP TRIGGER fail_second")
        .unwrap();
    assert_eq!(
        store.insert_run(&original).unwrap(),
        InsertOutcome::Inserted
    );
    assert_eq!(store.get_run(&original.id).unwrap(), original);
}

#[test]
fn a_conflicting_insert_changes_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pitwall.db");
    let mut store = open(dir.path());
    let original = rich_run();
    store.insert_run(&original).unwrap();
    let samples = table_count(&db, "samples");
    assert_eq!(samples, 9);
    assert_eq!(
        store.insert_run(&original.clone()).unwrap(),
        InsertOutcome::AlreadyStored
    );
    let mut changed = original.clone();
    changed.results[0].samples[0] = 0.3;
    let err = store.insert_run(&changed).unwrap_err();
    assert!(
        matches!(&err, StoreError::Conflict { id, .. } if *id == original.id),
        "{err:?}"
    );
    assert_eq!(table_count(&db, "runs"), 1);
    assert_eq!(table_count(&db, "results"), 3);
    assert_eq!(table_count(&db, "samples"), samples);
    assert_eq!(store.get_run(&original.id).unwrap(), original);
}

#[test]
fn opening_an_existing_store_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missing/dir/pitwall.db");
    let err = SqliteStore::open_with(&db, OpenMode::Existing).unwrap_err();
    assert!(matches!(err, StoreError::Missing { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains(&db.display().to_string()) && msg.contains("does not exist"),
        "{msg}"
    );
    assert!(msg.contains("hint: check --store, PITWALL_STORE"), "{msg}");
    assert!(
        !dir.path().join("missing").exists(),
        "no directories created"
    );
    // An empty file is not a store yet either, and stays empty.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, "").unwrap();
    let err = SqliteStore::open_with(&empty, OpenMode::Existing).unwrap_err();
    assert!(err.to_string().contains("is an empty database"), "{err}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // Once created, it opens for reading.
    drop(SqliteStore::open(&db).unwrap());
    let store = SqliteStore::open_with(&db, OpenMode::Existing).unwrap();
    assert!(store.list_runs(None).unwrap().is_empty());
}

#[test]
fn refuses_another_programs_database_without_changing_it() {
    let dir = tempfile::tempdir().unwrap();
    for (name, setup, what) in [
        (
            "plain.db",
            "CREATE TABLE notes (t TEXT);",
            "no pitwall schema version",
        ),
        (
            "versioned.db",
            "CREATE TABLE notes (t TEXT); PRAGMA user_version = 1;",
            "no `runs` table",
        ),
    ] {
        let db = dir.path().join(name);
        Connection::open(&db).unwrap().execute_batch(setup).unwrap();
        let before = std::fs::read(&db).unwrap();
        for mode in [OpenMode::Create, OpenMode::Existing] {
            let err = SqliteStore::open_with(&db, mode).unwrap_err();
            assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
            let msg = err.to_string();
            assert!(
                msg.contains("is not a pitwall store") && msg.contains(what),
                "{msg}"
            );
        }
        assert_eq!(std::fs::read(&db).unwrap(), before, "{name} unchanged");
        assert!(!dir.path().join(format!("{name}-wal")).exists());
    }
}

/// Writes `run` the way pitwall did at schema version 2 (before replicates were stored): the
/// V1 and V2 scripts, `user_version = 2`, and the inserts of that version's `insert_run`.
fn write_schema_2_store(db: &Path, run: &Run) {
    let mut conn = Connection::open(db).unwrap();
    if crate::migrations::current_version(&conn).unwrap() == 0 {
        conn.execute_batch(&MIGRATIONS[0].script).unwrap();
        conn.execute_batch(&MIGRATIONS[1].script).unwrap();
        conn.pragma_update(None, "user_version", 2).unwrap();
    }
    let tx = conn.transaction().unwrap();
    let row = RunRow::of(run);
    tx.execute(
        "INSERT INTO runs (id, project, commit_sha, branch, started_at, finished_at,
                           config_hash, status, fingerprint_json, commit_info_json, error,
                           pair_json, pair_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            run.id,
            row.project,
            row.commit,
            row.branch,
            row.started_at,
            row.finished_at,
            row.config_hash,
            row.status,
            row.fingerprint_json,
            row.commit_info_json,
            row.error,
            row.pair_json,
            run.pair.as_ref().map(|p| p.id.clone()),
        ],
    )
    .unwrap();
    for (ord, r) in run.results.iter().enumerate() {
        tx.execute(
            "INSERT INTO results (run_id, ord, suite, name, params_json, measure, unit,
                                  direction, status, error)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                run.id,
                ord as i64,
                r.suite,
                r.name,
                to_json(&r.params),
                r.measure,
                r.unit.as_str(),
                r.direction.as_str(),
                r.status.as_str(),
                r.error,
            ],
        )
        .unwrap();
        let result_id = tx.last_insert_rowid();
        for (idx, value) in r.samples.iter().enumerate() {
            tx.execute(
                "INSERT INTO samples (result_id, idx, value, meta_json) VALUES (?1, ?2, ?3, ?4)",
                params![result_id, idx as i64, value, meta_json(r, idx)],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

#[test]
fn a_schema_2_store_is_migrated_in_place_and_its_runs_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pitwall.db");
    // Runs of that version had no replicates.
    let mut old = rich_run();
    for r in &mut old.results {
        r.replicates.clear();
    }
    // Nor testbeds and roles: the migration gives them what the fingerprint and pair imply.
    old.testbed = None;
    old.role = None;
    // Nor contention: runs stored before it was sampled have none.
    old.contention = None;
    let mut history = old.clone();
    history.id = "0190f0c0-0000-7000-8000-000000000000".into();
    history.started_at = "2026-12-01T10:00:00Z".into();
    history.finished_at = "2026-12-01T10:05:00Z".into();
    history.pair = None;
    history.fingerprint.hostname = "node07.cluster.example".into();
    write_schema_2_store(&db, &old);
    write_schema_2_store(&db, &history);

    let mut store = SqliteStore::open_with(&db, OpenMode::Existing).unwrap();
    assert_eq!(store.schema_version().unwrap(), latest_version());
    assert_eq!(latest_version(), 18);
    let (old, history) = (labelled(old), labelled(history));
    assert_eq!(store.get_run("latest").unwrap(), old);
    assert_eq!(store.get_run(&history.id).unwrap(), history);
    let nulls: i64 = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM samples WHERE replicate IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(nulls, 18, "the old samples have no replicate");
    // Re-importing the old run is idempotent; a new run with replicates goes in beside it.
    assert_eq!(
        store.insert_run(&old).unwrap(),
        InsertOutcome::AlreadyStored
    );
    let mut new = rich_run();
    new.id = "0190f0c0-0000-7000-8000-000000000002".into();
    new.started_at = "2026-12-03T10:00:00Z".into();
    new.finished_at = "2026-12-03T10:05:00Z".into();
    assert!(!new.results[1].replicates.is_empty());
    store.insert_run(&new).unwrap();
    drop(store);
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.all_runs().unwrap(), vec![history, old, new]);
}

/// What the label migration must have given an old run, spelled out rather than computed with
/// the rule it tests: the pair's head is `pr-head`, anything else `history`; the testbed is the
/// GPU model and short host name.
pub(crate) fn labelled(mut run: Run) -> Run {
    run.role = Some(if run.pair.is_some() {
        pitwall_schema::RunRole::PrHead
    } else {
        pitwall_schema::RunRole::History
    });
    run.testbed = Some(
        match run.fingerprint.hostname.as_str() {
            "box" => "h200-box",
            "node07.cluster.example" => "h200-node07",
            other => panic!("no expected testbed for host {other}"),
        }
        .into(),
    );
    run
}

/// Processes that create the same new store at once must all open it: one migrates, the others
/// see either an empty file or a finished pitwall store, never tables without a version (the
/// version and the tables are read in one snapshot).
#[test]
fn concurrent_first_opens_of_one_new_file_all_succeed() {
    const OPENERS: usize = 6;
    const FILES: usize = 25;
    for n in 0..FILES {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("pitwall.db");
        let start = std::sync::Barrier::new(OPENERS);
        let errors: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..OPENERS)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        SqliteStore::open(&db).err().map(|e| e.to_string())
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap())
                .collect()
        });
        assert!(errors.is_empty(), "file {n}: {errors:?}");
        assert_eq!(
            SqliteStore::open(&db).unwrap().schema_version().unwrap(),
            latest_version()
        );
    }
}

#[test]
fn pairs_stored_before_round_orders_get_explicit_base_first_orders() {
    // Migration 9: every round of a pair stored before the order alternated ran base first.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pitwall.db");
    let mut old = rich_run();
    for r in &mut old.results {
        r.replicates.clear();
    }
    old.pair.as_mut().unwrap().round_orders.clear();
    write_schema_2_store(&db, &old);
    let store = SqliteStore::open_with(&db, OpenMode::Existing).unwrap();
    let pair = store.get_run(&old.id).unwrap().pair.unwrap();
    assert_eq!(
        pair.round_orders,
        vec![pitwall_schema::RoundOrder::BaseHead; pair.rounds as usize]
    );
    // Orders already recorded are kept as they are; text that is not a pair is left alone.
    let kept = r#"{"id":"p","role":"head","rounds":2,"round_orders":["head_base","base_head"]}"#;
    assert_eq!(crate::rows::explicit_round_orders(kept), None);
    assert_eq!(crate::rows::explicit_round_orders("not json"), None);
}

#[test]
fn migration_10_makes_the_measured_working_tree_runs_local_and_leaves_imports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pitwall.db");
    let base = |id: &str, commit: &str| {
        let mut r = rich_run();
        for x in &mut r.results {
            x.replicates.clear();
        }
        r.id = id.into();
        r.commit = commit.into();
        r.commit_info = None;
        r.pair = None;
        r.testbed = None;
        r.role = None;
        r
    };
    let measured = base("0190f0c0-0000-7000-8000-00000000000a", "working tree");
    let mut imported = base("0190f0c0-0000-7000-8000-00000000000b", "working tree");
    imported.fingerprint.extra.insert(
        "imported_from".into(),
        serde_json::json!({"file": "bench.json", "format": "pitwall"}),
    );
    let commit = base("0190f0c0-0000-7000-8000-00000000000c", &"a".repeat(40));
    for r in [&measured, &imported, &commit] {
        write_schema_2_store(&db, r);
    }
    let store = SqliteStore::open_with(&db, OpenMode::Existing).unwrap();
    let role = |id: &str| store.get_run(id).unwrap().role.unwrap();
    assert_eq!(role(&measured.id), pitwall_schema::RunRole::Local);
    assert_eq!(role(&imported.id), pitwall_schema::RunRole::History);
    assert_eq!(role(&commit.id), pitwall_schema::RunRole::History);
    // The migration says which runs it relabelled, once: reopening has nothing to say.
    let notes = store.migration_notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0]
            .starts_with("store migrated: 1 working-tree run stored as history is now role local"),
        "{notes:?}"
    );
    assert!(notes[0].contains(&measured.id), "{notes:?}");
    assert!(!notes[0].contains(&imported.id), "{notes:?}");
    drop(store);
    let again = SqliteStore::open_with(&db, OpenMode::Existing).unwrap();
    assert!(again.migration_notes().is_empty());
}
