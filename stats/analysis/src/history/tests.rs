//! Tests of the history series: which runs count, commit order, duplicate keys, pruned
//! results, and the change points found.

use super::*;
use pitwall_schema::RunRole;
use pitwall_schema::{BenchmarkResult, Fingerprint, RunStatus, Unit};

pub(super) fn result(name: &str, samples: Vec<f64>) -> BenchmarkResult {
    BenchmarkResult {
        suite: "kernel".into(),
        name: name.into(),
        params: BTreeMap::new(),
        measure: "time".into(),
        unit: Unit::new(Unit::NANOSECONDS),
        direction: Direction::LowerIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples,
        sample_meta: Vec::new(),
        replicates: Vec::new(),
        summary: None,
    }
}

pub(super) fn main() -> HistoryFilter {
    HistoryFilter::branch("main")
}

pub(super) fn run(i: usize, results: Vec<BenchmarkResult>) -> Run {
    Run {
        exclusion: None,
        contention: None,
        id: format!("run-{i}"),
        project: "p".into(),
        commit: format!("{i:040x}"),
        branch: None,
        testbed: None,
        role: None,
        started_at: format!("2026-01-01T00:00:{i:02}Z"),
        finished_at: String::new(),
        config_hash: String::new(),
        fingerprint: Fingerprint::default(),
        status: RunStatus::Complete,
        commit_info: None,
        error: None,
        pair: None,
        results,
    }
}

/// 40 runs stepping from 100 to 130 at run 25; runs 10 to 19 also hold the key a second
/// time at the stepped level.
fn stepped_with_duplicates() -> Vec<Run> {
    (0..40)
        .map(|i| {
            let level = if i < 25 { 100.0 } else { 130.0 };
            let wobble = |k: usize| level * (1.0 + 0.001 * ((i * 7 + k * 3) % 5) as f64);
            let mut results = vec![result("gemm", (0..5).map(wobble).collect())];
            if (10..20).contains(&i) {
                results.push(result("gemm", vec![130.0; 5]));
            }
            run(i, results)
        })
        .collect()
}

#[test]
fn the_first_result_of_a_duplicate_key_counts() {
    let runs = stepped_with_duplicates();
    let s = series(&runs, &main(), &DetectConfig::default());
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].points.len(), 40, "one point per run");
    assert!(s[0].points.iter().enumerate().all(|(i, p)| p.run == i));
    assert!(s[0].points[15].median < 101.0, "{:?}", s[0].points[15]);
    assert_eq!(
        s[0].changes.iter().map(|c| c.index).collect::<Vec<_>>(),
        vec![25]
    );
}

#[test]
fn detection_names_the_commits_around_each_change() {
    let runs = stepped_with_duplicates();
    let d = detect_history(
        &runs,
        "gemm",
        &main(),
        &DetectConfig::default(),
        &HistoryNoise::none(),
    );
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].points, 40);
    let c = &d[0].changes[0];
    assert_eq!(c.commit_before.as_deref(), Some(runs[24].commit.as_str()));
    assert_eq!(c.commit_after.as_deref(), Some(runs[25].commit.as_str()));
    assert_eq!(c.run_after.as_deref(), Some("run-25"));
    assert!(
        detect_history(
            &runs,
            "nothing",
            &main(),
            &DetectConfig::default(),
            &HistoryNoise::none()
        )
        .is_empty()
    );
}

#[test]
fn failed_empty_and_non_finite_results_add_no_point() {
    let mut failed = result("gemm", vec![1e9; 5]);
    failed.status = ResultStatus::Failed;
    let runs = vec![
        run(0, vec![failed, result("gemm", vec![1.0, f64::NAN, 3.0])]),
        run(
            1,
            vec![result("gemm", vec![]), result("gemm", vec![f64::NAN])],
        ),
        run(2, vec![result("other", vec![f64::INFINITY])]),
    ];
    let s = series(&runs, &main(), &DetectConfig::default());
    assert_eq!(s.len(), 1, "`other` has no finite sample, so no series");
    assert_eq!(s[0].points.len(), 1);
    assert_eq!((s[0].points[0].median, s[0].points[0].n), (2.0, 2));
}

#[test]
fn an_implausible_result_adds_no_point_so_no_alert() {
    let mut implausible = result("skinny", vec![5900.0; 5]);
    implausible.status = ResultStatus::Implausible;
    let runs = vec![
        run(0, vec![result("skinny", vec![4000.0; 5])]),
        run(1, vec![implausible]),
        run(2, vec![result("skinny", vec![4010.0; 5])]),
    ];
    let s = series(&runs, &main(), &DetectConfig::default());
    assert_eq!(s.len(), 1);
    let medians: Vec<f64> = s[0].points.iter().map(|p| p.median).collect();
    assert_eq!(medians, [4000.0, 4010.0]);
}

fn dated(i: usize, date: &str, results: Vec<BenchmarkResult>) -> Run {
    let mut r = run(i, results);
    r.commit_info = Some(pitwall_schema::CommitInfo {
        first_parent_position: None,
        author: "a <a@x>".into(),
        date: date.into(),
        subject: format!("change {i}"),
    });
    r
}

#[test]
fn points_follow_commit_order_not_stored_order() {
    // Commits 1..=4 measured in order, then a pair of commit 1 (base, stored after 4) and
    // commit 4 (head); a working-tree run started after all of them; commit dates carry
    // offsets (commit 3 at 10:03+02:00 is 08:03Z, before commit 1 at 09:01Z).
    let at = |i: usize, date: &str| dated(i, date, vec![result("gemm", vec![i as f64; 3])]);
    let mut runs = vec![
        at(1, "2026-01-01T09:01:00Z"),
        at(2, "2026-01-01T09:02:00Z"),
        at(3, "2026-01-01T10:03:00+02:00"),
        at(4, "2026-01-01T09:04:00Z"),
        at(1, "2026-01-01T09:01:00Z"),
        at(4, "2026-01-01T09:04:00Z"),
    ];
    let mut wt = run(9, vec![result("gemm", vec![9.0; 3])]);
    wt.commit = "working tree".into();
    wt.started_at = "2026-01-01T12:00:00.5Z".into();
    runs.push(wt);
    let s = &series(&runs, &main(), &DetectConfig::default())[0];
    // Commits 1 and 4, each measured twice, are one point each (issue 27).
    let order: Vec<usize> = s.points.iter().map(|p| p.run).collect();
    assert_eq!(order, vec![2, 0, 1, 3, 6]);
    let pooled: Vec<Vec<usize>> = s.points.iter().map(|p| p.runs.clone()).collect();
    assert_eq!(
        pooled,
        vec![vec![2], vec![0, 4], vec![1], vec![3, 5], vec![6]]
    );
    let medians: Vec<f64> = s.points.iter().map(|p| p.median).collect();
    assert_eq!(medians, vec![3.0, 1.0, 2.0, 4.0, 9.0]);
}

#[test]
fn points_follow_first_parent_positions_when_dates_tie() {
    // Six scripted commits share one second; commits 5, 2 and 4 were re-measured after 6, and
    // an import without a repository (no position) is dated later than all of them.
    let at = |i: usize| {
        let mut r = dated(
            i,
            "2026-01-01T09:00:00Z",
            vec![result("gemm", vec![i as f64; 3])],
        );
        r.commit_info.as_mut().unwrap().first_parent_position = Some(10 + i as u64);
        r
    };
    let mut runs: Vec<Run> = [3, 1, 2, 6, 4, 5, 5, 2, 4].into_iter().map(at).collect();
    let mut imported = dated(
        7,
        "2026-01-02T09:00:00Z",
        vec![result("gemm", vec![7.0; 3])],
    );
    imported.commit = format!("{:040x}", 77);
    runs.push(imported);
    let s = &series(&runs, &main(), &DetectConfig::default())[0];
    let medians: Vec<f64> = s.points.iter().map(|p| p.median.round()).collect();
    assert_eq!(medians, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    let pooled: Vec<usize> = s.points.iter().map(|p| p.runs.len()).collect();
    assert_eq!(pooled, vec![1, 2, 1, 2, 2, 1, 1]);
    // Without positions the equal dates keep the stored order: a sawtooth.
    for r in &mut runs {
        r.commit_info.as_mut().unwrap().first_parent_position = None;
    }
    let s = &series(&runs, &main(), &DetectConfig::default())[0];
    let medians: Vec<f64> = s.points.iter().map(|p| p.median.round()).collect();
    assert_eq!(medians, vec![3.0, 1.0, 2.0, 6.0, 4.0, 5.0, 7.0]);
}

#[test]
fn excluded_local_and_calibration_runs_are_not_history() {
    let mut runs: Vec<Run> = (0..4)
        .map(|i| run(i, vec![result("gemm", vec![i as f64; 3])]))
        .collect();
    runs[1].exclusion = Some(pitwall_schema::Exclusion {
        note: "busy".into(),
        at: "2026-12-05T00:00:00Z".into(),
    });
    runs[2].role = Some(RunRole::Local);
    runs[3].role = Some(RunRole::Calibration);
    let s = &series(&runs, &main(), &DetectConfig::default())[0];
    let medians: Vec<f64> = s.points.iter().map(|p| p.median).collect();
    assert_eq!(medians, vec![0.0]);
}

#[test]
fn series_list_numbers_as_numbers() {
    let with = |bytes: &str| {
        let mut r = result("all_reduce", vec![1.0]);
        r.params.insert("bytes".into(), bytes.into());
        r
    };
    let runs = vec![run(
        0,
        vec![
            with("16777216"),
            with("2097152"),
            with("262144"),
            with("1M"),
        ],
    )];
    let s = series(&runs, &main(), &DetectConfig::default());
    let bytes: Vec<&str> = s.iter().map(|s| s.params["bytes"].as_str()).collect();
    assert_eq!(bytes, vec!["262144", "1M", "2097152", "16777216"]);
}

#[test]
fn a_series_is_one_testbed_on_the_history_branch() {
    // Two testbeds at different levels, interleaved; slower runs on a feature branch and
    // a pull request's head: none of them may make a step in main's history.
    let mut runs = Vec::new();
    for i in 0..30 {
        for (bed, level) in [("h200-a", 100.0), ("cpu-b", 300.0)] {
            let mut r = run(runs.len(), vec![result("gemm", vec![level; 3])]);
            r.testbed = Some(bed.into());
            r.branch = Some("main".into());
            runs.push(r);
        }
        if i % 3 == 0 {
            let mut slow = run(runs.len(), vec![result("gemm", vec![150.0; 3])]);
            slow.testbed = Some("h200-a".into());
            slow.branch = Some("feature".into());
            runs.push(slow);
            let mut head = run(runs.len(), vec![result("gemm", vec![170.0; 3])]);
            head.testbed = Some("h200-a".into());
            head.role = Some(RunRole::PrHead);
            runs.push(head);
        }
    }
    let all = series(&runs, &main(), &DetectConfig::default());
    let beds: Vec<(&str, usize)> = all
        .iter()
        .map(|s| (s.testbed.as_str(), s.points.len()))
        .collect();
    assert_eq!(beds, vec![("cpu-b", 30), ("h200-a", 30)]);
    assert!(all.iter().all(|s| s.changes.is_empty()), "{all:?}");
    let one = HistoryFilter {
        branch: "main".into(),
        testbed: Some("h200-a".into()),
    };
    let s = series(&runs, &one, &DetectConfig::default());
    assert!(s.len() == 1 && s[0].points.iter().all(|p| p.median == 100.0));
    let feature = series(
        &runs,
        &HistoryFilter::branch("feature"),
        &DetectConfig::default(),
    );
    assert_eq!((feature.len(), feature[0].points.len()), (1, 10));
    // Without labels, every run is one testbed's history of main: one series of them all.
    let mut mixed = runs.clone();
    mixed.iter_mut().for_each(|r| {
        r.testbed = Some("one".into());
        r.branch = None;
        r.role = None;
    });
    let s = series(&mixed, &main(), &DetectConfig::default());
    assert_eq!((s.len(), s[0].points.len()), (1, runs.len()));
}

#[test]
fn a_pruned_result_keeps_its_point() {
    let samples = vec![10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, f64::NAN];
    let full = result("a", samples.clone());
    let mut pruned = result("a", Vec::new());
    pruned.summary = summarize(&full);
    let runs = vec![run(0, vec![full]), run(1, vec![pruned])];
    let s = series(&runs, &main(), &DetectConfig::default());
    assert_eq!(s.len(), 1);
    let [a, b] = &s[0].points[..] else {
        panic!("two points expected: {:?}", s[0].points)
    };
    assert_eq!(
        (a.median, a.ci, a.min, a.max, a.n),
        (13.0, a.ci, 10.0, 16.0, 7)
    );
    assert!(a.ci.is_some());
    assert_eq!(
        (b.median, b.ci, b.min, b.max, b.n, b.throttled),
        (a.median, a.ci, a.min, a.max, a.n, a.throttled)
    );
    // A result with neither samples nor a summary has no point.
    assert_eq!(summarize(&result("a", vec![f64::NAN])), None);
}

#[test]
fn series_by_key_is_series_over_all_runs() {
    let runs: Vec<Run> = (0..12)
        .map(|i| {
            let level = if i < 6 { 100.0 } else { 120.0 };
            run(
                i,
                vec![
                    result("b10", vec![level, level + 1.0]),
                    result("b9", vec![level * 2.0]),
                    result("b10", vec![5.0]),
                ],
            )
        })
        .collect();
    let config = DetectConfig::default();
    let whole = series(&runs, &main(), &config);
    let mut keys: Vec<String> = runs[0].results.iter().map(|r| r.key()).collect();
    keys.sort();
    keys.dedup();
    let by_key = series_by_key(
        &keys,
        |k| {
            Ok::<_, ()>(
                runs.iter()
                    .map(|r| {
                        let mut r = r.clone();
                        r.results.retain(|x| x.key() == k);
                        r
                    })
                    .collect(),
            )
        },
        &main(),
        &config,
        &HistoryNoise::none(),
    )
    .unwrap();
    assert_eq!(by_key, whole);
    assert_eq!(whole.len(), 2);
    assert_eq!(whole[0].name, "b9", "numbers in names sort as numbers");
}

/// Issue 27: the per-run medians of a real C benchmark, five runs either side of a clean +13%
/// step (about 4.6× the run-to-run noise): no change point while the step test fitted a
/// common trend on ten points.
#[test]
fn a_clear_step_with_five_runs_either_side_is_detected() {
    let medians = [
        10.21, 10.19, 10.15, 10.21, 9.84, 11.35, 11.68, 11.18, 11.14, 12.03,
    ];
    let runs: Vec<Run> = medians
        .iter()
        .enumerate()
        .map(|(i, &m)| run(i, vec![result("sort", vec![m * 0.99, m, m * 1.02])]))
        .collect();
    let s = series(&runs, &main(), &DetectConfig::default());
    let found: Vec<usize> = s[0].changes.iter().map(|c| c.index).collect();
    assert_eq!(found, vec![5], "{:?}", s[0].changes);
    let d = s[0].detection(&runs);
    assert_eq!(
        d.changes[0].commit_after.as_deref(),
        Some(runs[5].commit.as_str())
    );
    assert!((d.changes[0].change.rel_change - 0.13).abs() < 0.03);
}

/// Issue 27: several runs of one commit are one point, the geometric mean of their
/// replicates (processes) with an interval from the spread between them; re-measuring a
/// commit refines its point instead of adding one.
#[test]
fn runs_of_one_commit_are_one_point_from_their_replicates() {
    // Commit A measured once with two processes (replicates 0 and 1), commit B once, then A
    // again with one process, stored last.
    let mut a1 = result("gemm", vec![10.0, 10.0, 10.0, 40.0, 40.0, 40.0]);
    a1.replicates = vec![0, 0, 0, 1, 1, 1];
    let b = result("gemm", vec![7.0, 7.0, 7.0]);
    let a2 = result("gemm", vec![20.0, 20.0, 20.0]);
    let mut runs = vec![run(0, vec![a1]), run(1, vec![b]), run(2, vec![a2])];
    runs[2].commit = runs[0].commit.clone();
    runs[2].started_at = runs[0].started_at.clone();
    let s = &series(&runs, &main(), &DetectConfig::default())[0];
    assert_eq!(s.points.len(), 2, "{:?}", s.points);
    let a = &s.points[0];
    assert_eq!(
        (a.run, a.runs.clone(), a.replicates, a.n),
        (0, vec![0, 2], 3, 9)
    );
    // Geometric mean of 10, 40 and 20 is 20.
    assert!((a.median - 20.0).abs() < 1e-9, "{a:?}");
    let (lo, hi) = a.ci.expect("an interval from three replicates");
    assert!(lo < 20.0 && hi > 20.0 && lo > 0.0, "{lo} {hi}");
    assert_eq!((a.min, a.max), (10.0, 40.0));
    assert_eq!((s.points[1].median, s.points[1].replicates), (7.0, 1));
}

fn contended(mut r: Run, threads: f64) -> Run {
    r.contention = Some(pitwall_schema::Contention::classified(
        20,
        Some(threads),
        Some(0.0),
        None,
        None,
        &pitwall_schema::ContentionLimits {
            runnable_threads: 0.5,
            steal_pct: 2.0,
            psi_some_pct: 10.0,
        },
    ));
    r
}

#[test]
fn a_false_step_made_only_of_contended_runs_is_no_change_point() {
    // 30 runs at 100; runs 20 to 29 were measured on a loaded machine and read 57 (a false
    // −43% "improvement"). Runs 0 to 19 also carry a contention that is below the limits.
    let runs: Vec<Run> = (0..30)
        .map(|i| {
            let level = if i < 20 { 100.0 } else { 57.0 };
            let wobble = |k: usize| level * (1.0 + 0.001 * ((i * 7 + k * 3) % 5) as f64);
            let r = run(i, vec![result("matmul", (0..5).map(wobble).collect())]);
            contended(r, if i < 20 { 0.1 } else { 1.8 })
        })
        .collect();
    let s = series(&runs, &main(), &DetectConfig::default());
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].points.len(), 20, "clean runs only");
    assert!(s[0].changes.is_empty(), "{:?}", s[0].changes);
    assert!(s[0].suspected.is_none());
    assert_eq!(s[0].contended.len(), 10, "kept apart, not dropped");
    let first = &s[0].contended[0];
    assert_eq!((first.point.run, first.after), (20, 20));
    assert_eq!(first.reasons, vec!["other runnable threads 1.8 ≥ 0.5"]);
    let d = s[0].detection(&runs);
    assert_eq!((d.points, d.contended, d.changes.len()), (20, 10, 0));
    // Without the contention the same values are a step.
    let bare: Vec<Run> = runs
        .into_iter()
        .map(|mut r| {
            r.contention = None;
            r
        })
        .collect();
    let s = series(&bare, &main(), &DetectConfig::default());
    assert_eq!(s[0].changes.len(), 1);
    assert!(s[0].contended.is_empty());
}

#[test]
fn a_contended_rerun_of_a_commit_does_not_move_its_point() {
    let mut runs: Vec<Run> = (0..3)
        .map(|i| run(i, vec![result("matmul", vec![100.0; 5])]))
        .collect();
    let mut again = contended(run(1, vec![result("matmul", vec![40.0; 5])]), 2.0);
    again.id = "run-1-again".into();
    runs.push(again);
    let s = series(&runs, &main(), &DetectConfig::default());
    assert_eq!(s[0].points.len(), 3);
    assert_eq!(s[0].points[1].median, 100.0);
    assert_eq!(s[0].points[1].runs, vec![1]);
    assert_eq!(s[0].contended.len(), 1);
    assert_eq!(s[0].contended[0].point.median, 40.0);
    assert_eq!(
        s[0].contended[0].after, 2,
        "drawn just after its commit's clean point"
    );
}
