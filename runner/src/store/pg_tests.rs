//! Tests of the PostgreSQL store on a real server (`pitwall_e2e::pg_server`: the one named by
//! `PITWALL_TEST_POSTGRES_URL`, or a private one started from the installed binaries), one
//! fresh database per test: the shared store behaviour (`conformance`), plus migrations on
//! reconnect, refusal of a newer schema, all-or-nothing inserts, and clear errors for an
//! unreachable server or a TLS-only URL.

use pitwall_e2e::{TestDb, pg_server};

use super::conformance::{rich_run, store_conformance_tests};
use super::{InsertOutcome, OpenMode, PgStore, Store, StoreError};

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
fn reconnecting_keeps_data_and_does_not_remigrate() {
    let Some((db, mut store)) = fresh() else {
        return;
    };
    assert_eq!(store.schema_version().unwrap(), 1);
    let original = rich_run();
    store.insert_run(&original).unwrap();
    drop(store);
    // Re-running migration 1 would fail ("relation runs already exists").
    let store = PgStore::open(&db.url).unwrap();
    assert_eq!(store.schema_version().unwrap(), 1);
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
        .batch_execute("UPDATE pitwall_schema SET version = 4")
        .unwrap();
    let err = PgStore::open(&db.url).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::TooNew {
                found: 4,
                supported: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("127.0.0.1"), "{err}");
    let v: i32 = admin(&db)
        .query_one("SELECT version FROM pitwall_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(v, 4);
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
             CREATE TRIGGER fail_sample BEFORE INSERT ON samples
               FOR EACH ROW EXECUTE FUNCTION fail_sample();",
        )
        .unwrap();
    let original = rich_run();
    let err = store.insert_run(&original).unwrap_err();
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    let chain = format!("{err}: {:?}", std::error::Error::source(&err));
    assert!(chain.contains("injected failure"), "{chain}");
    for table in ["runs", "results", "samples"] {
        assert_eq!(count(&db, table), 0, "{table}");
    }
    admin(&db)
        .batch_execute("DROP TRIGGER fail_sample ON samples")
        .unwrap();
    assert_eq!(
        store.insert_run(&original).unwrap(),
        InsertOutcome::Inserted
    );
    assert_eq!(store.get_run(&original.id).unwrap(), original);
    assert_eq!(count(&db, "samples"), 9);
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
