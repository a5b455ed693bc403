//! What every store does with what it cannot summarise or read, checked against each backend:
//! a result with status ok whose samples have no finite median is refused (nothing written),
//! the same result failed is stored and read back, and a run with a row that cannot be read
//! is named once and left out of every read of many runs, never the end of the read.

use std::sync::{Arc, Mutex};

use pitwall_schema::{ResultStatus, Run};

use super::{ok_result, run};
use crate::{RunQuery, Store, StoreError};

/// `-1.7e308` and `1.7e308` alternating: each finite, their median not.
fn huge_samples() -> Vec<f64> {
    (0..10)
        .map(|i| if i % 2 == 0 { -1.7e308 } else { 1.7e308 })
        .collect()
}

pub fn unsummarisable_results_are_stored_only_as_failed(store: &mut dyn Store) {
    let huge = || ok_result("huge", huge_samples());
    let refused = run(
        "run-huge-ok",
        "2026-12-01T10:00:00Z",
        vec![ok_result("fine", vec![1.0, 2.0]), huge()],
    );
    match store.insert_run(&refused).unwrap_err() {
        StoreError::Invalid { source, .. } => {
            assert!(source.to_string().contains("span more than"), "{source}")
        }
        e => panic!("expected invalid, got {e:?}"),
    }
    assert!(store.list_runs(None).unwrap().is_empty(), "nothing written");
    let mut failed = huge();
    failed.status = ResultStatus::Failed;
    failed.error = Some("no median".into());
    let stored = run(
        "run-huge-failed",
        "2026-12-01T10:00:00Z",
        vec![ok_result("fine", vec![1.0, 2.0]), failed],
    );
    store.insert_run(&stored).unwrap();
    assert_eq!(store.get_run("run-huge-failed").unwrap(), stored);
    assert_eq!(store.all_runs().unwrap(), vec![stored.clone()]);
    // A history reads it (the failed result without a point) without a word of corruption.
    let read = store.query_runs(&RunQuery::default()).unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].results[1].summary, None);
}

/// `corrupt(id)` breaks run `id`'s first result with the backend's own SQL (an unknown
/// status).
pub fn unreadable_runs_are_named_once_and_skipped(store: &mut dyn Store, corrupt: &dyn Fn(&str)) {
    let said = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&said);
    store.on_skipped(Box::new(move |line| {
        sink.lock().unwrap().push(line.to_string())
    }));
    let runs: Vec<Run> = ["run-a", "run-b", "run-c"]
        .iter()
        .enumerate()
        .map(|(i, id)| {
            run(
                id,
                &format!("2026-12-0{}T10:00:00Z", i + 1),
                vec![ok_result("x", vec![1.0, 2.0, 3.0])],
            )
        })
        .collect();
    for r in &runs {
        store.insert_run(r).unwrap();
    }
    corrupt("run-b");
    let ids = |runs: Vec<Run>| runs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(store.all_runs().unwrap()), ["run-a", "run-c"]);
    for samples in [false, true] {
        let q = RunQuery {
            samples,
            ..RunQuery::default()
        };
        assert_eq!(ids(store.query_runs(&q).unwrap()), ["run-a", "run-c"]);
    }
    assert_eq!(store.list_runs(None).unwrap().len(), 3, "its run row reads");
    let said = said.lock().unwrap().clone();
    assert_eq!(said.len(), 1, "said once: {said:?}");
    assert!(
        said[0].contains("stored data is corrupt: run run-b result 0: unknown status `meh`"),
        "{said:?}"
    );
    assert!(matches!(
        store.get_run("run-b"),
        Err(StoreError::Corrupt { .. })
    ));
}
