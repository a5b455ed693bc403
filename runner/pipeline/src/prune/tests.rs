//! Tests of `prune` on real SQLite files: which runs are old, what a dry run leaves, that a
//! pruned history shows the same points and change points as before, and that pruning twice
//! changes nothing more.

use std::collections::BTreeMap;

use pitwall_analysis::history::{HistoryFilter, series};
use pitwall_schema::{BenchmarkResult, Direction, Fingerprint, ResultStatus, Run, RunStatus, Unit};
use pitwall_stats::changepoint::DetectConfig;
use pitwall_store::{SqliteStore, Store};

use super::{PruneRequest, prune};

const NOW: &str = "2026-12-01T00:00:00Z";

fn result(level: f64) -> BenchmarkResult {
    BenchmarkResult {
        suite: "kernel".into(),
        name: "gemm".into(),
        params: BTreeMap::new(),
        measure: "time".into(),
        unit: Unit::new(Unit::NANOSECONDS),
        direction: Direction::LowerIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples: (0..8).map(|i| level + f64::from(i % 3)).collect(),
        sample_meta: Vec::new(),
        replicates: Vec::new(),
        summary: None,
    }
}

/// A run started `day` days and an hour before NOW, at a level that steps up by 20% in the
/// last ten days.
fn run(day: u32) -> Run {
    let now = pitwall_schema::UnixTime::parse(NOW).unwrap();
    let at = now
        .checked_sub_secs(i64::from(day) * 86_400 + 3_600)
        .unwrap();
    let started = format!("{at}");
    let results = vec![result(if day < 10 { 120.0 } else { 100.0 })];
    Run {
        exclusion: None,
        contention: None,
        id: format!("01900000-0000-7000-8000-{day:012}"),
        project: "p".into(),
        commit: format!("{day:040x}"),
        branch: Some("main".into()),
        testbed: Some("tb".into()),
        role: None,
        finished_at: started.clone(),
        started_at: started,
        config_hash: "c".into(),
        fingerprint: Fingerprint::default(),
        status: RunStatus::from_results(&results),
        commit_info: None,
        error: None,
        pair: None,
        results,
    }
}

fn request(days: u32, keep_summaries: bool, dry_run: bool) -> PruneRequest {
    PruneRequest {
        older_than_days: days,
        keep_summaries,
        dry_run,
        now: NOW.into(),
    }
}

fn store_with(days: &[u32]) -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
    for d in days {
        store.insert_run(&run(*d)).unwrap();
    }
    (dir, store)
}

fn points(store: &SqliteStore) -> Vec<(f64, usize)> {
    let runs = store.all_runs().unwrap();
    let s = series(
        &runs,
        &HistoryFilter::branch("main"),
        &DetectConfig::default(),
    );
    let changes: Vec<usize> = s[0].changes.iter().map(|c| c.index).collect();
    s[0].points
        .iter()
        .map(|p| (p.median, p.n))
        .chain(changes.into_iter().map(|i| (f64::NAN, i)))
        .collect()
}

#[test]
fn keeping_summaries_keeps_the_history() {
    let days: Vec<u32> = (0..40).collect();
    let (_dir, mut store) = store_with(&days);
    let before = points(&store);
    assert!(
        before.iter().any(|p| p.0.is_nan()),
        "the step is found: {before:?}"
    );
    let before_runs = store.all_runs().unwrap();

    let dry = prune(&request(20, true, true), &mut store).unwrap();
    assert_eq!((dry.old_runs, dry.runs_summarized), (20, 20), "{dry:?}");
    assert_eq!(dry.samples_dropped, 20 * 8);
    assert_eq!(
        store.all_runs().unwrap(),
        before_runs,
        "a dry run changes nothing"
    );

    let done = prune(&request(20, true, false), &mut store).unwrap();
    assert_eq!((done.runs_summarized, done.samples_dropped), (20, 20 * 8));
    let after = store.all_runs().unwrap();
    let pruned = after.iter().filter(|r| r.results[0].is_pruned()).count();
    assert_eq!(pruned, 20);
    // The same points and the same change point: NaN != NaN, so compare as text.
    assert_eq!(format!("{:?}", points(&store)), format!("{before:?}"));

    let again = prune(&request(20, true, false), &mut store).unwrap();
    assert_eq!(
        (again.runs_summarized, again.runs_already_summarized),
        (0, 20)
    );
    assert_eq!(store.all_runs().unwrap(), after);
}

#[test]
fn an_implausible_result_keeps_its_samples_and_the_run_still_exports() {
    let mut old = run(30);
    let mut fast = result(1.0);
    fast.name = "skinny".into();
    fast.status = ResultStatus::Implausible;
    fast.error = Some("implausible: skinny 5.9 TB/s > H200 HBM peak 4.8 TB/s".into());
    old.results.push(fast);
    old.status = RunStatus::from_results(&old.results);
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
    store.insert_run(&old).unwrap();
    let done = prune(&request(20, true, false), &mut store).unwrap();
    assert_eq!((done.runs_summarized, done.samples_dropped), (1, 8));
    let after = store.all_runs().unwrap();
    assert!(after[0].results[0].is_pruned());
    assert!(!after[0].results[1].is_pruned());
    assert_eq!(after[0].results[1].samples.len(), 8);
    pitwall_schema::ExportDoc::from_json(&pitwall_schema::ExportDoc::new(after).to_json())
        .expect("a pruned run with an implausible result still exports and imports");
}

#[test]
fn without_summaries_old_runs_are_deleted() {
    let (_dir, mut store) = store_with(&[1, 5, 30, 31]);
    let out = prune(&request(29, false, false), &mut store).unwrap();
    assert_eq!((out.old_runs, out.runs_deleted), (2, 2));
    let left: Vec<String> = store
        .all_runs()
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(left, [run(5).id, run(1).id]);
    assert_eq!(out.cutoff, "2026-11-02T00:00:00Z");
}

#[test]
fn a_bad_now_is_refused() {
    let (_dir, mut store) = store_with(&[1]);
    let mut r = request(1, false, false);
    r.now = "yesterday".into();
    let err = prune(&r, &mut store).unwrap_err().to_string();
    assert!(
        err.starts_with("--older-than: cannot compute 1 days before yesterday"),
        "{err}"
    );
    assert_eq!(store.all_runs().unwrap().len(), 1);
}

/// The point the store keeps beside each result is the one the history makes of its samples.
#[test]
fn the_stored_point_is_the_history_point() {
    use pitwall_schema::SampleMeta;
    let throttled = SampleMeta {
        throttled: true,
        ..SampleMeta::default()
    };
    let mut cases = vec![
        result(100.0),
        BenchmarkResult {
            samples: vec![3.0, f64::NAN, 1.0, 2.0],
            ..result(0.0)
        },
        BenchmarkResult {
            samples: vec![f64::NAN],
            ..result(0.0)
        },
        BenchmarkResult {
            samples: (0..40).map(f64::from).collect(),
            sample_meta: (0..40)
                .map(|i| {
                    if i % 3 == 0 {
                        throttled.clone()
                    } else {
                        SampleMeta::default()
                    }
                })
                .collect(),
            ..result(0.0)
        },
    ];
    let mut pruned = result(0.0);
    pruned.summary = pitwall_analysis::history::summarize(&cases[3]);
    pruned.samples.clear();
    cases.push(pruned);
    for r in &cases {
        assert_eq!(
            pitwall_store::point_of(r),
            pitwall_analysis::history::summarize(r),
            "{:?}",
            r.samples
        );
    }
    assert_eq!(pitwall_store::point_of(&cases[3]).unwrap().throttled, 14);
}
