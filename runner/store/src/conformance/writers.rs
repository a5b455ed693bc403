//! Writers storing at once, each with its own connection: every run lands whole, a run
//! stored by several writers at once is stored once, and writers adding the same new keys
//! never wait for each other for good (the PostgreSQL store's locks, `pg_conn`).

use std::sync::Mutex;

use super::{InsertOutcome, Store, ok_result, run};

/// Two writers, each with its own connection (opened, and racing to migrate, in its thread),
/// insert 20 runs each; every run lands whole.
pub fn concurrent_writers_all_succeed(open: &(dyn Fn() -> Box<dyn Store> + Sync)) {
    std::thread::scope(|scope| {
        for t in 0..2 {
            scope.spawn(move || {
                let mut store = open();
                for i in 0..20 {
                    let samples = (0..500).map(|k| (t * 1000 + i * 10 + k) as f64).collect();
                    let r = run(
                        &format!("t{t}-run{i:02}"),
                        &format!("2026-01-01T10:{i:02}:{t:02}Z"),
                        vec![ok_result("x", samples)],
                    );
                    assert_eq!(store.insert_run(&r).unwrap(), InsertOutcome::Inserted);
                }
            });
        }
    });
    let store = open();
    let runs = store.all_runs().unwrap();
    assert_eq!(runs.len(), 40);
    assert!(runs.iter().all(|r| r.results[0].samples.len() == 500));
    assert_eq!(
        store.get_run("t1-run19").unwrap().results[0].samples[0],
        1190.0
    );
}

/// Four writers store the same run at once (one stores it, the others find it stored), then
/// ten runs each whose results share their new keys with every other writer's, listed in
/// opposite orders by odd and even writers: every run lands, and nothing deadlocks.
pub fn concurrent_writers_store_one_run_once(open: &(dyn Fn() -> Box<dyn Store> + Sync)) {
    let shared = run(
        "shared",
        "2026-01-01T09:00:00Z",
        vec![ok_result("s", vec![1.0, 2.0])],
    );
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for t in 0..4 {
            let (shared, outcomes) = (&shared, &outcomes);
            scope.spawn(move || {
                let mut store = open();
                let outcome = store.insert_run(shared).unwrap();
                outcomes.lock().unwrap().push(outcome);
                for i in 0..10 {
                    let mut results: Vec<_> = (0..8)
                        .map(|k| ok_result(&format!("new{i}_{k}"), vec![f64::from(k)]))
                        .collect();
                    if t % 2 == 1 {
                        results.reverse();
                    }
                    let at = format!("2026-01-01T10:{i:02}:{t:02}Z");
                    let r = run(&format!("w{t}-run{i}"), &at, results);
                    assert_eq!(store.insert_runs(&[r]).unwrap(), [InsertOutcome::Inserted]);
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by_key(|o| *o != InsertOutcome::Inserted);
    assert_eq!(
        outcomes,
        [
            InsertOutcome::Inserted,
            InsertOutcome::AlreadyStored,
            InsertOutcome::AlreadyStored,
            InsertOutcome::AlreadyStored
        ]
    );
    let store = open();
    assert_eq!(store.all_runs().unwrap().len(), 41);
    assert_eq!(store.get_run("shared").unwrap(), shared);
}
