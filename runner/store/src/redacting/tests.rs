//! The redacting store: what it hides before a run is stored.

use std::collections::BTreeMap;

use pitwall_schema::{BenchmarkResult, Fingerprint, RunStatus};

use super::*;
use crate::{OpenMode, SqliteStore};

const SECRET: &str = r#"stored"secret\value-1"#;

fn run_with(text: &str) -> Run {
    let failed = BenchmarkResult::failed(
        "s",
        &format!("bench {text}"),
        BTreeMap::from([("p".to_string(), text.to_string())]),
        format!("stderr tail: {text}"),
    );
    Run {
        exclusion: None,
        contention: None,
        id: "0193a1b2-0000-7000-8000-000000000001".into(),
        project: "p".into(),
        commit: "working tree".into(),
        branch: Some(format!("b-{text}")),
        testbed: None,
        role: None,
        started_at: "2026-12-02T10:00:00.000000Z".into(),
        finished_at: "2026-12-02T10:00:05.000000Z".into(),
        config_hash: "ab".repeat(32),
        fingerprint: Fingerprint::default(),
        status: RunStatus::Failed,
        commit_info: None,
        error: Some(text.to_string()),
        pair: None,
        results: vec![failed],
    }
}

#[test]
fn what_was_stored_before_is_redacted_when_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pw.db");
    // Stored in clear, as an older pitwall or an import would have.
    let mut plain = SqliteStore::open_with(&path, OpenMode::Create).unwrap();
    plain.insert_run(&run_with(SECRET)).unwrap();
    drop(plain);
    let inner = SqliteStore::open_with(&path, OpenMode::Existing).unwrap();
    let store = RedactingStore::wrap(Box::new(inner), Redactor::new([SECRET]));
    let got = store.get_run("latest").unwrap();
    let all = store.all_runs().unwrap();
    let listed = store.list_runs(None).unwrap();
    let queried = store.query_runs(&RunQuery::default()).unwrap();
    let text = serde_json::to_string(&(&got, &all, &listed, &queried)).unwrap();
    assert!(!text.contains("value-1"), "{text}");
    assert_eq!(got.results[0].name, "bench ***");
    assert_eq!(got.error.as_deref(), Some("***"));
}

#[test]
fn what_is_stored_through_it_is_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pw.db");
    let inner = SqliteStore::open_with(&path, OpenMode::Create).unwrap();
    let mut store = RedactingStore::wrap(Box::new(inner), Redactor::new([SECRET]));
    store.insert_run(&run_with(SECRET)).unwrap();
    drop(store);
    let plain = SqliteStore::open_with(&path, OpenMode::Existing).unwrap();
    let text = serde_json::to_string(&plain.all_runs().unwrap()).unwrap();
    assert!(!text.contains("value-1"), "{text}");
}
