//! Tests of `Store::query_runs` and `Store::series_keys` on both stores against the plain
//! reading they replace (`all_runs`, filtered in Rust), and of the key backfill of SQLite
//! migration 6 on a store written before it.

use pitwall_e2e::pg_server;
use pitwall_schema::{Fingerprint, Run, RunRole};

use crate::conformance::{ok_result, rich_run, run};
use crate::{PgStore, RunQuery, SqliteStore, Store};

/// Runs of every kind a history query must tell apart, each with results `a` and `b`.
fn runs() -> Vec<Run> {
    let mk = |i: u32, branch: Option<&str>, testbed: Option<&str>, role: RunRole| {
        let mut r = run(
            &format!("01900000-0000-7000-8000-0000000000{i:02}"),
            &format!("2026-01-{:02}T10:00:00Z", 28 - i),
            vec![
                ok_result("a", vec![f64::from(i)]),
                ok_result("b", vec![1.0, 2.0]),
                long_parameter(f64::from(i)),
                failed(),
            ],
        );
        r.branch = branch.map(str::to_string);
        r.testbed = testbed.map(str::to_string);
        r.role = Some(role);
        r.fingerprint.hostname = format!("host{i}");
        r
    };
    vec![
        mk(1, Some("main"), Some("tb-a"), RunRole::History),
        mk(2, Some("feature"), Some("tb-a"), RunRole::History),
        mk(3, Some("main"), Some("tb-a"), RunRole::PrBase),
        mk(4, Some("main"), Some("tb-b"), RunRole::History),
        mk(5, None, Some("tb-a"), RunRole::History),
        rich_run(),
    ]
}

/// A result whose parameter is too long for PostgreSQL's covering index of history points
/// (schema step 17): read from the other index.
fn long_parameter(v: f64) -> pitwall_schema::BenchmarkResult {
    let mut r = ok_result("c", vec![v, v + 1.0]);
    r.params.insert("shape".into(), "x".repeat(2100));
    r
}

/// A failed result with a long error: never in the covering index.
fn failed() -> pitwall_schema::BenchmarkResult {
    let mut r = ok_result("d", Vec::new());
    r.status = pitwall_schema::ResultStatus::Failed;
    r.error = Some("e".repeat(3000));
    r
}

/// What `query_runs` must return, from `all_runs`.
fn expected(store: &dyn Store, q: &RunQuery) -> Vec<Run> {
    let selected: Vec<Run> = store
        .all_runs()
        .unwrap()
        .into_iter()
        .filter(|r| {
            q.history_branch.as_deref().is_none_or(|b| {
                r.role_or_implied() == RunRole::History
                    && r.branch.as_deref().is_none_or(|rb| rb == b)
            }) && q
                .testbed
                .as_deref()
                .is_none_or(|t| r.testbed.as_deref().is_none_or(|rt| rt == t))
        })
        .collect();
    // `all_runs` is oldest first (start time, then id): the newest N are the last N.
    let skip = q.newest.map_or(0, |n| selected.len().saturating_sub(n));
    selected
        .into_iter()
        .skip(skip)
        .map(|mut r| {
            if let Some(keys) = &q.keys {
                r.results.retain(|x| keys.contains(&x.key()));
            }
            if !q.fingerprints && r.testbed.is_some() {
                r.fingerprint = Fingerprint::default();
            }
            if !q.samples {
                for x in &mut r.results {
                    x.summary = crate::point_of(x);
                    x.samples.clear();
                    x.sample_meta.clear();
                    x.replicates.clear();
                }
            }
            r
        })
        .collect()
}

fn reads_what_all_runs_reads(store: &mut dyn Store) {
    for r in runs() {
        store.insert_run(&r).unwrap();
    }
    let key_a = runs()[0].results[0].key();
    let mut keys = runs()[0]
        .results
        .iter()
        .chain(&rich_run().results)
        .map(|r| r.key())
        .collect::<Vec<_>>();
    keys.sort();
    keys.dedup();
    assert_eq!(store.series_keys().unwrap(), keys);
    let branches = [None, Some("main".to_string()), Some("feature".to_string())];
    let testbeds = [None, Some("tb-a".to_string()), Some("nowhere".to_string())];
    let key_sets = [
        None,
        Some(vec![]),
        Some(vec![key_a.clone()]),
        Some(keys.clone()),
    ];
    for history_branch in &branches {
        for testbed in &testbeds {
            for keys in &key_sets {
                for (fingerprints, samples, newest) in [
                    (false, false, None),
                    (true, false, Some(2)),
                    (true, true, None),
                    (false, true, Some(1)),
                    (false, false, Some(50)),
                ] {
                    let q = RunQuery {
                        history_branch: history_branch.clone(),
                        testbed: testbed.clone(),
                        keys: keys.clone(),
                        newest,
                        samples,
                        fingerprints,
                    };
                    assert_eq!(store.query_runs(&q).unwrap(), expected(store, &q), "{q:?}");
                }
            }
        }
    }
    // The main history of tb-a: runs 5 (no branch) and 1, oldest first, with `a` only.
    let q = RunQuery {
        history_branch: Some("main".into()),
        testbed: Some("tb-a".into()),
        keys: Some(vec![key_a]),
        newest: None,
        samples: true,
        fingerprints: false,
    };
    let got = store.query_runs(&q).unwrap();
    let ids: Vec<&str> = got.iter().map(|r| &r.id[r.id.len() - 2..]).collect();
    assert_eq!(ids, ["05", "01"]);
    assert!(
        got.iter()
            .all(|r| r.results.len() == 1 && r.results[0].name == "a")
    );
}

#[test]
fn sqlite_query_runs_reads_what_all_runs_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("q.db")).unwrap();
    reads_what_all_runs_reads(&mut store);
}

#[test]
fn pg_query_runs_reads_what_all_runs_reads() {
    let Some(server) = pg_server() else { return };
    let db = server.database();
    let mut store = PgStore::open(&db.url).unwrap();
    reads_what_all_runs_reads(&mut store);
}

/// A store written before migration 6 (no keys) gets them on the next open.
#[test]
fn sqlite_keys_are_backfilled_by_migration_6() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    let original = rich_run();
    SqliteStore::open(&db)
        .unwrap()
        .insert_run(&original)
        .unwrap();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "DROP TABLE series_summaries; DROP TABLE sessions; DROP TABLE alert_changes; DROP TABLE tokens; DROP TABLE forge_comments; DROP TABLE alerts; DROP INDEX results_by_key; DROP TABLE series_keys;
             ALTER TABLE results DROP COLUMN bench_key; ALTER TABLE results DROP COLUMN point_json;
             ALTER TABLE runs DROP COLUMN exclusion_json;
             ALTER TABLE runs DROP COLUMN contention_json;
             PRAGMA user_version = 5;",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&db).unwrap();
    assert_eq!(store.schema_version().unwrap(), 18);
    let keys: Vec<String> = original.results.iter().map(|r| r.key()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(store.series_keys().unwrap(), sorted);
    let got = store
        .query_runs(&RunQuery {
            keys: Some(vec![keys[0].clone()]),
            samples: true,
            fingerprints: true,
            ..RunQuery::default()
        })
        .unwrap();
    let mut want = original;
    // The dropped column comes back empty: the contention is unknown.
    want.contention = None;
    let first = want.results[0].key();
    want.results.retain(|r| r.key() == first);
    assert_eq!(got, vec![want.clone()]);
    // And the points the backfill computed are those a new insert stores.
    let thin = store
        .query_runs(&RunQuery {
            keys: Some(vec![keys[0].clone()]),
            ..RunQuery::default()
        })
        .unwrap();
    assert_eq!(
        thin[0].results[0].summary,
        crate::point_of(&want.results[0])
    );
    assert!(thin[0].results[0].summary.is_some());
}
