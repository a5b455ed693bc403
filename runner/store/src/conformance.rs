//! The behaviour every store must have, written once and run against each backend (SQLite on
//! temporary files, PostgreSQL on a real server): exact round trips, id lookup, idempotent
//! imports, refusal of invalid runs, ordering, big runs and concurrent writers.

use pitwall_schema::{ExportDoc, ResultStatus, RunStatus, SampleMeta};

use super::{InsertOutcome, Store, StoreError};

pub mod alerts;
mod fixtures;
pub mod skips;
mod writers;

pub use fixtures::{ok_result, rich_run, run};
pub use writers::{concurrent_writers_all_succeed, concurrent_writers_store_one_run_once};

pub fn round_trips_a_run_exactly(store: &mut dyn Store) {
    let mut original = rich_run();
    // Faster than the hardware can be: its samples kept, its reason in `error` (no migration:
    // the stores check status values on read).
    let mut implausible = ok_result("skinny", vec![5900.0, 5910.0]);
    implausible.status = ResultStatus::Implausible;
    implausible.error = Some("implausible: skinny 5.9 TB/s > H200 HBM peak 4.8 TB/s".into());
    original.results.push(implausible);
    assert_eq!(
        store.insert_run(&original).unwrap(),
        InsertOutcome::Inserted
    );
    let got = store.get_run(&original.id).unwrap();
    assert_eq!(got, original);
    assert_eq!(got.results[0].samples[1].to_bits(), (-0.0f64).to_bits());
    assert_eq!(
        ExportDoc::new(vec![got]).to_json(),
        ExportDoc::new(vec![original.clone()]).to_json()
    );
    // A result without metadata comes back with an empty vec, not a vec of empty entries.
    assert!(
        store.get_run("latest").unwrap().results[1]
            .sample_meta
            .is_empty()
    );
    assert_eq!(store.all_runs().unwrap(), vec![original]);
}

/// Replicates come back exactly, including the extremes of `u32`, beside metadata or without
/// it; a result without them comes back without them (not with zeros); and they are part of
/// what makes a run identical on re-insert.
pub fn round_trips_replicates(store: &mut dyn Store) {
    let mut per_process = ok_result("per_process", vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    per_process.replicates = vec![0, 0, 1, 1, 2, u32::MAX];
    let mut with_meta = ok_result("with_meta", vec![7.0, 8.0]);
    with_meta.replicates = vec![3, 0];
    with_meta.sample_meta = vec![
        SampleMeta {
            sm_clock_mhz: Some(1410),
            ..SampleMeta::default()
        },
        SampleMeta::default(),
    ];
    let unknown = ok_result("unknown", vec![9.0, 10.0]);
    let original = run(
        "repl-1",
        "2026-03-01T10:00:00Z",
        vec![per_process, with_meta, unknown],
    );
    assert_eq!(
        store.insert_run(&original).unwrap(),
        InsertOutcome::Inserted
    );
    let got = store.get_run("repl-1").unwrap();
    assert_eq!(got, original);
    assert_eq!(got.results[0].replicates, [0, 0, 1, 1, 2, u32::MAX]);
    assert_eq!(got.results[1].replicates, [3, 0]);
    assert!(got.results[2].replicates.is_empty());
    assert_eq!(store.all_runs().unwrap(), vec![original.clone()]);
    assert_eq!(
        store.insert_run(&original).unwrap(),
        InsertOutcome::AlreadyStored
    );
    let mut changed = original.clone();
    changed.results[0].replicates[1] = 1;
    assert!(matches!(
        store.insert_run(&changed),
        Err(StoreError::Conflict { .. })
    ));
    // Replicates that are not parallel to the samples are refused before writing.
    let mut bad = run(
        "repl-2",
        "2026-03-02T10:00:00Z",
        vec![ok_result("x", vec![1.0, 2.0])],
    );
    bad.results[0].replicates = vec![0];
    let err = store.insert_run(&bad).unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("1 replicates entries for 2 samples"),
        "{err}"
    );
    assert_eq!(store.list_runs(None).unwrap().len(), 1);
}

/// A batch (`insert_runs`, a server's group commit) is stored whole or not at all: a
/// conflicting or invalid run in it leaves every other run of it unstored.
pub fn a_batch_is_stored_whole_or_not_at_all(store: &mut dyn Store) {
    let one = |id: &str, at: &str| run(id, at, vec![ok_result("x", vec![1.0, 2.0])]);
    let (a, b) = (
        one("batch-a", "2026-04-01T10:00:00Z"),
        one("batch-b", "2026-04-02T10:00:00Z"),
    );
    assert_eq!(
        store.insert_runs(&[a.clone(), b]).unwrap(),
        [InsertOutcome::Inserted, InsertOutcome::Inserted]
    );
    let c = one("batch-c", "2026-04-03T10:00:00Z");
    assert_eq!(
        store.insert_runs(&[a.clone(), c]).unwrap(),
        [InsertOutcome::AlreadyStored, InsertOutcome::Inserted]
    );
    let mut changed = a.clone();
    changed.commit = "f".repeat(40);
    let d = one("batch-d", "2026-04-04T10:00:00Z");
    let err = store.insert_runs(&[d.clone(), changed]).unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let mut bad = one("batch-e", "2026-04-05T10:00:00Z");
    bad.results[0].replicates = vec![0];
    let err = store.insert_runs(&[d, bad]).unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    let mut ids: Vec<String> = store
        .list_runs(None)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    ids.sort();
    assert_eq!(ids, ["batch-a", "batch-b", "batch-c"]);
    assert_eq!(store.get_run("batch-a").unwrap(), a);
}

pub fn result_with_all_empty_metadata_keeps_it(store: &mut dyn Store) {
    let mut r = ok_result("x", vec![1.0, 2.0]);
    r.sample_meta = vec![SampleMeta::default(); 2];
    let original = run("aaaa-1", "2026-01-01T10:00:00Z", vec![r]);
    store.insert_run(&original).unwrap();
    assert_eq!(store.get_run("aaaa-1").unwrap(), original);
}

pub fn finds_runs_by_prefix_and_latest(store: &mut dyn Store) {
    for (id, at) in [
        ("abcd1111", "2026-01-01T10:00:00Z"),
        ("abcd2222", "2026-01-03T10:00:00Z"),
        ("abce3333", "2026-01-02T10:00:00Z"),
    ] {
        store
            .insert_run(&run(id, at, vec![ok_result("x", vec![1.0])]))
            .unwrap();
    }
    assert_eq!(store.get_run("abcd2222").unwrap().id, "abcd2222");
    assert_eq!(store.get_run("abce").unwrap().id, "abce3333");
    assert_eq!(store.get_run("abcd1").unwrap().id, "abcd1111");
    assert_eq!(store.get_run("latest").unwrap().id, "abcd2222");
    match store.get_run("abcd").unwrap_err() {
        StoreError::Ambiguous { id, candidates, .. } => {
            assert_eq!(id, "abcd");
            assert_eq!(candidates, "abcd1111, abcd2222");
        }
        e => panic!("expected ambiguous, got {e:?}"),
    }
    // Too short to be a prefix, and unknown ids.
    let err = store.get_run("abc").unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    assert!(
        err.to_string().contains("needs at least 4 characters"),
        "{err}"
    );
    let err = store.get_run("ffff").unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains(&store.describe()), "{err}");
    assert!(err.to_string().contains("`ffff`"), "{err}");
}

pub fn ambiguity_lists_at_most_five_candidates(store: &mut dyn Store) {
    for i in 0..7 {
        let r = run(&format!("beef{i}"), "2026-01-01T10:00:00Z", vec![]);
        store.insert_run(&r).unwrap();
    }
    match store.get_run("beef").unwrap_err() {
        StoreError::Ambiguous { candidates, .. } => {
            assert_eq!(candidates, "beef0, beef1, beef2, beef3, beef4, …")
        }
        e => panic!("expected ambiguous, got {e:?}"),
    }
}

pub fn latest_on_an_empty_store_is_not_found(store: &mut dyn Store) {
    assert!(matches!(
        store.get_run("latest"),
        Err(StoreError::NotFound { id, .. }) if id == "latest"
    ));
    assert!(store.list_runs(None).unwrap().is_empty());
    assert!(store.all_runs().unwrap().is_empty());
}

pub fn duplicate_inserts_are_idempotent_and_conflicts_change_nothing(store: &mut dyn Store) {
    let original = rich_run();
    assert_eq!(
        store.insert_run(&original).unwrap(),
        InsertOutcome::Inserted
    );
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
    assert_eq!(store.all_runs().unwrap(), vec![original]);
}

pub fn lists_newest_first_with_counts(store: &mut dyn Store) {
    let old = run(
        "run-old",
        "2026-01-01T10:00:00Z",
        vec![ok_result("x", vec![1.0])],
    );
    let rich = rich_run(); // 2026-12-02, one failed result of three
    let mut mid = run("run-mid", "2026-06-01T10:00:00Z", vec![]);
    mid.branch = None;
    for r in [&rich, &old, &mid] {
        store.insert_run(r).unwrap();
    }
    let list = store.list_runs(None).unwrap();
    let ids: Vec<&str> = list.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, [rich.id.as_str(), "run-mid", "run-old"]);
    assert_eq!((list[0].results, list[0].failed_results), (3, 1));
    assert_eq!(list[0].status, RunStatus::Partial);
    assert_eq!((list[1].results, list[1].failed_results), (0, 0));
    assert_eq!(list[1].branch, None);
    assert_eq!(list[1].status, RunStatus::Failed);
    assert_eq!((list[2].results, list[2].failed_results), (1, 0));
    assert_eq!(list[2].commit, old.commit);
    assert_eq!(store.list_runs(Some(2)).unwrap(), list[..2].to_vec());
    let all: Vec<String> = store
        .all_runs()
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(all, ["run-old", "run-mid", rich.id.as_str()]);
}

pub fn exclusions_keep_the_run_and_round_trip(store: &mut dyn Store) {
    let r = run(
        "run-excluded",
        "2026-01-01T10:00:00Z",
        vec![ok_result("x", vec![1.0, 2.0])],
    );
    store.insert_run(&r).unwrap();
    let why = pitwall_schema::Exclusion {
        note: "taken while the tests compiled".into(),
        at: "2026-12-05T08:00:00Z".into(),
    };
    assert!(store.set_exclusion(&r.id, Some(&why)).unwrap());
    let stored = store.get_run(&r.id).unwrap();
    assert_eq!(stored.exclusion.as_ref(), Some(&why));
    assert_eq!(
        stored.results, r.results,
        "an excluded run keeps its results"
    );
    assert!(store.list_runs(None).unwrap()[0].excluded);
    let queried = store.query_runs(&crate::RunQuery::default()).unwrap();
    assert_eq!(queried[0].exclusion.as_ref(), Some(&why));
    assert!(store.set_exclusion(&r.id, None).unwrap());
    assert_eq!(store.get_run(&r.id).unwrap(), r);
    assert!(!store.list_runs(None).unwrap()[0].excluded);
    assert!(!store.set_exclusion("no-such-run", Some(&why)).unwrap());
}

/// Pair runs are listed by testbed, and only they (the noise book's read).
pub fn lists_pair_runs_by_testbed(store: &mut dyn Store) {
    let paired = rich_run(); // on testbed h200-box, one side of a pair
    let mut alone = run(
        "run-alone",
        "2026-06-01T10:00:00Z",
        vec![ok_result("x", vec![1.0])],
    );
    alone.testbed = Some("h200-box".into());
    for r in [&paired, &alone] {
        store.insert_run(r).unwrap();
    }
    let listed = store.list_pair_runs("h200-box").unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0], store.list_runs(None).unwrap()[0]);
    assert!(store.list_pair_runs("other-box").unwrap().is_empty());
}

pub fn invalid_runs_are_refused_before_writing(store: &mut dyn Store) {
    let bad = run(
        "nan-run",
        "2026-01-01T10:00:00Z",
        vec![ok_result("x", vec![1.0, f64::NAN])],
    );
    let err = store.insert_run(&bad).unwrap_err();
    assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    assert!(
        err.to_string().contains("sample 1 is not a finite number"),
        "{err}"
    );
    assert!(store.list_runs(None).unwrap().is_empty());
}

pub fn stores_a_hundred_thousand_samples_in_one_run(store: &mut dyn Store) {
    let samples: Vec<f64> = (0..100_000)
        .map(|i| f64::from(i) * 1.000_001 + 0.1)
        .collect();
    let mut r = ok_result("big", samples);
    r.sample_meta = (0..100_000)
        .map(|i| SampleMeta {
            sm_clock_mhz: Some(1000 + i % 7),
            ..SampleMeta::default()
        })
        .collect();
    let original = run("big-run", "2026-01-01T10:00:00Z", vec![r]);
    let t = std::time::Instant::now();
    store.insert_run(&original).unwrap();
    let inserted = t.elapsed();
    assert_eq!(store.get_run("big-").unwrap(), original);
    eprintln!(
        "100k samples: insert {inserted:?}, insert+read {:?}",
        t.elapsed()
    );
}

/// One `#[test]` per check above, for the store `$open` makes: an expression giving
/// `(guard, Box<dyn Store>)` for a fresh, empty store (the guard keeps it alive), or returning
/// from the test when the backend is unavailable. `$opener` gives a closure that opens the
/// same store again (for the concurrency check).
#[cfg(test)]
macro_rules! store_conformance_tests {
    ($open:expr, $opener:expr) => {
        #[test]
        fn conformance_round_trips_a_run_exactly() {
            let (_guard, mut store) = $open;
            crate::conformance::round_trips_a_run_exactly(&mut *store);
        }
        #[test]
        fn conformance_lists_pair_runs_by_testbed() {
            let (_guard, mut store) = $open;
            crate::conformance::lists_pair_runs_by_testbed(&mut *store);
        }
        #[test]
        fn conformance_round_trips_replicates() {
            let (_guard, mut store) = $open;
            crate::conformance::round_trips_replicates(&mut *store);
        }
        #[test]
        fn conformance_a_batch_is_stored_whole_or_not_at_all() {
            let (_guard, mut store) = $open;
            crate::conformance::a_batch_is_stored_whole_or_not_at_all(&mut *store);
        }
        #[test]
        fn conformance_result_with_all_empty_metadata_keeps_it() {
            let (_guard, mut store) = $open;
            crate::conformance::result_with_all_empty_metadata_keeps_it(&mut *store);
        }
        #[test]
        fn conformance_finds_runs_by_prefix_and_latest() {
            let (_guard, mut store) = $open;
            crate::conformance::finds_runs_by_prefix_and_latest(&mut *store);
        }
        #[test]
        fn conformance_ambiguity_lists_at_most_five_candidates() {
            let (_guard, mut store) = $open;
            crate::conformance::ambiguity_lists_at_most_five_candidates(&mut *store);
        }
        #[test]
        fn conformance_latest_on_an_empty_store_is_not_found() {
            let (_guard, mut store) = $open;
            crate::conformance::latest_on_an_empty_store_is_not_found(&mut *store);
        }
        #[test]
        fn conformance_duplicate_inserts_are_idempotent() {
            let (_guard, mut store) = $open;
            crate::conformance::duplicate_inserts_are_idempotent_and_conflicts_change_nothing(
                &mut *store,
            );
        }
        #[test]
        fn conformance_lists_newest_first_with_counts() {
            let (_guard, mut store) = $open;
            crate::conformance::lists_newest_first_with_counts(&mut *store);
        }
        #[test]
        fn conformance_invalid_runs_are_refused_before_writing() {
            let (_guard, mut store) = $open;
            crate::conformance::invalid_runs_are_refused_before_writing(&mut *store);
        }
        #[test]
        fn conformance_stores_a_hundred_thousand_samples_in_one_run() {
            let (_guard, mut store) = $open;
            crate::conformance::stores_a_hundred_thousand_samples_in_one_run(&mut *store);
        }
        #[test]
        fn conformance_exclusions_keep_the_run_and_round_trip() {
            let (_guard, mut store) = $open;
            crate::conformance::exclusions_keep_the_run_and_round_trip(&mut *store);
        }
        #[test]
        fn conformance_round_trips_alerts() {
            let (_guard, mut store) = $open;
            crate::conformance::alerts::round_trips_alerts(&mut *store);
        }
        #[test]
        fn conformance_alert_upserts_keep_status_and_note() {
            let (_guard, mut store) = $open;
            crate::conformance::alerts::upserts_keep_status_and_note(&mut *store);
        }
        #[test]
        fn conformance_alert_transitions_yield_to_triage() {
            let (_guard, mut store) = $open;
            crate::conformance::alerts::transitions_yield_to_triage(&mut *store);
        }
        #[test]
        fn conformance_alert_changes_are_recorded_with_who_and_when() {
            let (_guard, mut store) = $open;
            crate::conformance::alerts::changes_are_recorded_with_who_and_when(&mut *store);
        }
        #[test]
        fn conformance_unknown_alert_ids_are_refused() {
            let (_guard, mut store) = $open;
            crate::conformance::alerts::unknown_alert_ids_are_refused(&mut *store);
        }
        #[test]
        fn conformance_concurrent_writers_all_succeed() {
            let (guard, store) = $open;
            drop(store);
            let open = $opener(&guard);
            crate::conformance::concurrent_writers_all_succeed(&open);
        }
        #[test]
        fn conformance_concurrent_writers_store_one_run_once() {
            let (guard, store) = $open;
            drop(store);
            let open = $opener(&guard);
            crate::conformance::concurrent_writers_store_one_run_once(&open);
        }
    };
}
#[cfg(test)]
pub(crate) use store_conformance_tests;
