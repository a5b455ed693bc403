//! Tests of the PostgreSQL store on a real server (`pitwall_e2e::pg_server`: the one named by
//! `PITWALL_TEST_POSTGRES_URL`, or a private one started from the installed binaries), one
//! fresh database per test: the shared store behaviour (`conformance`), plus migrations on
//! reconnect (and in place, from version 1), refusal of a newer schema, all-or-nothing inserts,
//! and clear errors for an unreachable server or a TLS-only URL.

use pitwall_e2e::{TestDb, pg_server};

use crate::conformance::{ok_result, rich_run, store_conformance_tests};
use crate::pg_migrations::MIGRATIONS;
use crate::rows::{RunRow, meta_json, to_json};
use crate::{InsertOutcome, OpenMode, PgStore, Store, StoreError};

/// The schema version this pitwall writes.
fn latest() -> i64 {
    MIGRATIONS.len() as i64
}

/// A fresh database and a store on it, or `None` (said once) without PostgreSQL.
fn fresh() -> Option<(TestDb, PgStore)> {
    let db = pg_server()?.database();
    let store = PgStore::open(&db.url).unwrap();
    Some((db, store))
}

fn admin(db: &TestDb) -> postgres::Client {
    postgres::Client::connect(&db.url, postgres::NoTls).unwrap()
}

fn count(db: &TestDb, table: &str) -> i64 {
    admin(db)
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .unwrap()
        .get(0)
}

store_conformance_tests!(
    {
        let Some((db, store)) = fresh() else {
            return;
        };
        let store: Box<dyn Store> = Box::new(store);
        (db, store)
    },
    |db: &TestDb| {
        let url = db.url.clone();
        move || Box::new(PgStore::open(&url).unwrap()) as Box<dyn Store>
    }
);

#[test]
fn unsummarisable_results_are_stored_only_as_failed() {
    let Some((_db, mut store)) = fresh() else {
        return;
    };
    crate::conformance::skips::unsummarisable_results_are_stored_only_as_failed(&mut store);
}

#[test]
fn forge_comment_ids_are_kept_per_target() {
    let Some((_db, mut store)) = fresh() else {
        return;
    };
    crate::forge_comments::conformance(&mut store);
}

#[test]
fn tokens_are_kept_by_name_and_revoked() {
    let Some((_db, mut store)) = fresh() else {
        return;
    };
    crate::tokens::conformance(&mut store);
}

#[test]
fn sessions_are_kept_by_id_hash_and_end() {
    let Some((_db, mut store)) = fresh() else {
        return;
    };
    crate::sessions::conformance(&mut store);
}

#[test]
fn series_summaries_are_kept_per_series_and_replaced() {
    let Some((_db, mut store)) = fresh() else {
        return;
    };
    crate::summaries::conformance(&mut store);
}

#[test]
fn unreadable_runs_are_named_once_and_skipped() {
    let Some((db, mut store)) = fresh() else {
        return;
    };
    crate::conformance::skips::unreadable_runs_are_named_once_and_skipped(&mut store, &|id| {
        admin(&db)
            .execute(
                "UPDATE results SET status = 'meh' WHERE run_id = $1",
                &[&id],
            )
            .unwrap();
    });
}

#[test]
fn reconnecting_keeps_data_and_does_not_remigrate() {
    let Some((db, mut store)) = fresh() else {
        return;
    };
    assert_eq!(store.schema_version().unwrap(), latest());
    let original = rich_run();
    store.insert_run(&original).unwrap();
    drop(store);
    // Re-running migration 1 would fail ("relation runs already exists").
    let store = PgStore::open(&db.url).unwrap();
    assert_eq!(store.schema_version().unwrap(), latest());
    assert_eq!(store.get_run("latest").unwrap(), original);
    assert!(
        store
            .describe()
            .starts_with("postgres://postgres@127.0.0.1:")
    );
}

#[test]
fn refuses_a_newer_schema_and_leaves_it_alone() {
    let Some((db, store)) = fresh() else {
        return;
    };
    drop(store);
    admin(&db)
        .batch_execute(&format!(
            "UPDATE pitwall_schema SET version = {}",
            latest() + 1
        ))
        .unwrap();
    let err = PgStore::open(&db.url).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::TooNew {
                found,
                supported,
                ..
            } if supported == latest() && found == latest() + 1
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("127.0.0.1"), "{err}");
    let v: i32 = admin(&db)
        .query_one("SELECT version FROM pitwall_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(i64::from(v), latest() + 1);
}

#[test]
fn a_run_waits_only_for_inserts_of_its_own_id() {
    let Some((db, mut store)) = fresh() else {
        return;
    };
    let run_of = |id: &str| {
        crate::conformance::run(id, "2026-01-01T10:00:00Z", vec![ok_result("x", vec![1.0])])
    };
    // An admin session holds run `held`'s own lock, as a writer storing it would.
    let lock = format!(
        "pg_advisory_lock({}, hashtext('held'))",
        crate::pg_conn::RUN_LOCK_KEY
    );
    let mut holder = admin(&db);
    holder.execute(&format!("SELECT {lock}"), &[]).unwrap();
    let url = db.url.clone();
    let held = run_of("held");
    let waiting = std::thread::spawn(move || PgStore::open(&url).unwrap().insert_run(&held));
    // Another run is stored meanwhile, while `held` waits.
    assert_eq!(
        store.insert_run(&run_of("free")).unwrap(),
        InsertOutcome::Inserted
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !waiting.is_finished(),
        "`held` was stored under another writer's lock"
    );
    holder
        .execute(
            &format!("SELECT {}", lock.replace("_lock(", "_unlock(")),
            &[],
        )
        .unwrap();
    assert_eq!(waiting.join().unwrap().unwrap(), InsertOutcome::Inserted);
    assert_eq!(count(&db, "runs"), 2);
}

#[test]
fn a_failure_mid_transaction_leaves_no_partial_run() {
    let Some((db, mut store)) = fresh() else {
        return;
    };
    // Samples are written after the run row and every result: failing there leaves all of
    // those written inside the transaction.
    admin(&db)
        .batch_execute(
            "CREATE FUNCTION fail_sample() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;
             CREATE TRIGGER fail_sample BEFORE INSERT ON sample_sets
               FOR EACH ROW EXECUTE FUNCTION fail_sample();",
        )
        .unwrap();
    let original = rich_run();
    let err = store.insert_run(&original).unwrap_err();
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    let chain = format!("{err}: {:?}", std::error::Error::source(&err));
    assert!(chain.contains("injected failure"), "{chain}");
    for table in ["runs", "results", "sample_sets"] {
        assert_eq!(count(&db, table), 0, "{table}");
    }
    admin(&db)
        .batch_execute("DROP TRIGGER fail_sample ON sample_sets")
        .unwrap();
    assert_eq!(
        store.insert_run(&original).unwrap(),
        InsertOutcome::Inserted
    );
    assert_eq!(store.get_run(&original.id).unwrap(), original);
    assert_eq!(count(&db, "sample_sets, unnest(vals)"), 9);
}

#[test]
fn an_unreachable_server_is_a_prompt_open_error() {
    // A port nothing listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://bob:secret@127.0.0.1:{port}/pw?connect_timeout=5");
    let t = std::time::Instant::now();
    let err = PgStore::open(&url).unwrap_err();
    assert!(t.elapsed() < std::time::Duration::from_secs(10));
    let msg = err.to_string();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
    assert!(!msg.contains("secret"), "{msg}");
}

#[test]
fn tls_only_urls_are_refused_with_a_hint() {
    let err = PgStore::open("postgres://u@db.example/pw?sslmode=require").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("sslmode=require") && msg.contains("hint:"),
        "{msg}"
    );
    assert!(matches!(err, StoreError::BadUrl { .. }), "{err:?}");
    let err = PgStore::open("postgres://u@db.example/pw?sslmode=bogus").unwrap_err();
    assert!(matches!(err, StoreError::BadUrl { .. }), "{err:?}");
}

#[test]
fn a_url_without_a_host_is_a_bad_url() {
    let err = PgStore::open("postgres://").unwrap_err();
    assert!(matches!(err, StoreError::BadUrl { .. }), "{err:?}");
    assert!(err.to_string().contains("no host"), "{err}");
}

#[test]
fn reading_commands_do_not_set_up_a_database_and_foreign_tables_are_left_alone() {
    let Some(server) = pg_server() else {
        return;
    };
    // An empty database: a reading command refuses it and creates nothing.
    let empty = server.database();
    let err = PgStore::open_with(&empty.url, OpenMode::Existing).unwrap_err();
    assert!(matches!(err, StoreError::Missing { .. }), "{err:?}");
    assert!(err.to_string().contains("has no pitwall tables"), "{err}");
    let tables: i64 = admin(&empty)
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0);
    // Another application's `runs` table: refused by every mode, untouched.
    admin(&empty)
        .batch_execute("CREATE TABLE runs (x INTEGER); INSERT INTO runs VALUES (7)")
        .unwrap();
    for mode in [OpenMode::Create, OpenMode::Existing] {
        let err = PgStore::open_with(&empty.url, mode).unwrap_err();
        assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
    }
    assert_eq!(count(&empty, "runs"), 1);
    // A pitwall database opens either way.
    let Some((db, store)) = fresh() else {
        return;
    };
    drop(store);
    PgStore::open_with(&db.url, OpenMode::Existing).unwrap();
}

/// Writes `run` the way pitwall did at schema version 1 (before replicates were stored): the
/// V1 script, `pitwall_schema` at 1, and rows without a replicate.
fn write_schema_1_database(db: &TestDb, runs: &[&pitwall_schema::Run]) {
    let mut client = admin(db);
    let mut tx = client.transaction().unwrap();
    tx.batch_execute(&MIGRATIONS[0].script).unwrap();
    tx.batch_execute(
        "CREATE TABLE pitwall_schema (version INTEGER NOT NULL);
         INSERT INTO pitwall_schema (version) VALUES (1);",
    )
    .unwrap();
    for run in runs {
        let row = RunRow::of(run);
        tx.execute(
            "INSERT INTO runs (id, project, commit_sha, branch, started_at, finished_at,
                           config_hash, status, fingerprint_json, commit_info_json, error,
                           pair_json, pair_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            &[
                &run.id,
                &row.project,
                &row.commit,
                &row.branch,
                &row.started_at,
                &row.finished_at,
                &row.config_hash,
                &row.status,
                &row.fingerprint_json,
                &row.commit_info_json,
                &row.error,
                &row.pair_json,
                &run.pair.as_ref().map(|p| p.id.clone()),
            ],
        )
        .unwrap();
        for (ord, r) in run.results.iter().enumerate() {
            let id: i64 = tx
                .query_one(
                    "INSERT INTO results (run_id, ord, suite, name, params_json, measure, unit,
                                      direction, status, error)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
                    &[
                        &run.id,
                        &(ord as i32),
                        &r.suite,
                        &r.name,
                        &to_json(&r.params),
                        &r.measure,
                        &r.unit.as_str(),
                        &r.direction.as_str(),
                        &r.status.as_str(),
                        &r.error,
                    ],
                )
                .unwrap()
                .get(0);
            for (idx, value) in r.samples.iter().enumerate() {
                tx.execute(
                "INSERT INTO samples (result_id, idx, value, meta_json) VALUES ($1, $2, $3, $4)",
                &[&id, &(idx as i32), value, &meta_json(r, idx)],
            )
            .unwrap();
            }
        }
    }
    tx.commit().unwrap();
}

#[test]
fn a_schema_1_database_is_migrated_in_place_and_its_runs_read_back() {
    let Some(server) = pg_server() else {
        return;
    };
    let db = server.database();
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
    write_schema_1_database(&db, &[&history, &old]);
    let mut store = PgStore::open_with(&db.url, OpenMode::Existing).unwrap();
    assert_eq!(store.schema_version().unwrap(), latest());
    assert_eq!(latest(), 17);
    let (old, history) = (
        crate::sqlite::tests::labelled(old),
        crate::sqlite::tests::labelled(history),
    );
    assert_eq!(store.get_run("latest").unwrap(), old);
    assert_eq!(store.get_run(&history.id).unwrap(), history);
    assert_eq!(
        count(&db, "samples WHERE replicate IS NULL"),
        18,
        "the old samples have no replicate"
    );
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
    let store = PgStore::open(&db.url).unwrap();
    assert_eq!(store.all_runs().unwrap(), vec![history, old, new]);
}

#[test]
fn migration_10_makes_the_measured_working_tree_runs_local_and_says_which() {
    // The PostgreSQL side of the SQLite test of the same name: the relabelled runs are named
    // once, in the note the migration leaves.
    let Some(server) = pg_server() else {
        return;
    };
    let db = server.database();
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
        r.contention = None;
        r
    };
    let measured = base("0190f0c0-0000-7000-8000-00000000000a", "working tree");
    let mut imported = base("0190f0c0-0000-7000-8000-00000000000b", "working tree");
    imported.fingerprint.extra.insert(
        "imported_from".into(),
        serde_json::json!({"file": "bench.json", "format": "pitwall"}),
    );
    let commit = base("0190f0c0-0000-7000-8000-00000000000c", &"a".repeat(40));
    write_schema_1_database(&db, &[&measured, &imported, &commit]);
    let store = PgStore::open_with(&db.url, OpenMode::Existing).unwrap();
    let role = |id: &str| store.get_run(id).unwrap().role.unwrap();
    assert_eq!(role(&measured.id), pitwall_schema::RunRole::Local);
    assert_eq!(role(&imported.id), pitwall_schema::RunRole::History);
    assert_eq!(role(&commit.id), pitwall_schema::RunRole::History);
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
    let again = PgStore::open_with(&db.url, OpenMode::Existing).unwrap();
    assert!(again.migration_notes().is_empty());
}
