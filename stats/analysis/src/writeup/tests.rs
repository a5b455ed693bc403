//! Tests of the write-up's numbers over a planted history: the period's runs, the levels of
//! the first and last segments, the geometric mean and its interval, the ledger with its
//! stored alert, the environment change, pull requests in commit messages and dates.

use super::*;
use crate::history::{HistoryFilter, series};
use pitwall_schema::{
    AlertKind, AlertSeries, AlertStatus, BenchmarkResult, Fingerprint, GpuInfo, ResultStatus,
    RunStatus, Unit,
};
use pitwall_stats::changepoint::DetectConfig;

fn result(name: &str, level: f64, i: usize) -> BenchmarkResult {
    BenchmarkResult {
        suite: "kernel".into(),
        name: name.into(),
        params: BTreeMap::new(),
        measure: "time".into(),
        unit: Unit::new(Unit::NANOSECONDS),
        direction: Direction::LowerIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples: (0..5)
            .map(|k| level * (1.0 + 0.002 * ((i * 7 + k * 3) % 5) as f64))
            .collect(),
        sample_meta: Vec::new(),
        replicates: Vec::new(),
        summary: None,
    }
}

/// Day `i` of 2026 (from January 1st), RFC 3339.
fn day(i: usize) -> String {
    let t = parse_date("2026-01-01").unwrap() + i as f64 * DAY_S;
    let days = (t / DAY_S) as i64 - parse_date("2026-01-01").unwrap() as i64 / 86_400;
    let (m, d) = if days < 31 {
        (1, days + 1)
    } else {
        (2, days - 30)
    };
    format!("2026-{m:02}-{d:02}T12:00:00Z")
}

/// 50 daily runs from 2026-01-01: `gemm` 100 → 110 ns at run 20 (a regression), `reduce`
/// 200 → 160 ns at run 25 (an improvement), `copy` flat at 50 ns; the driver changes at run 30.
pub(super) fn planted() -> Vec<Run> {
    (0..50)
        .map(|i| {
            let gpu = GpuInfo {
                model: "H200".into(),
                uuid: None,
                driver: Some(if i < 30 { "550.54" } else { "560.28" }.into()),
                extra: BTreeMap::new(),
            };
            Run {
                exclusion: None,
                contention: None,
                id: format!("run-{i}"),
                project: "p".into(),
                commit: format!("{i:040x}"),
                branch: Some("main".into()),
                testbed: Some("h200".into()),
                role: None,
                started_at: day(i),
                finished_at: String::new(),
                config_hash: String::new(),
                fingerprint: Fingerprint {
                    gpus: vec![gpu],
                    ..Fingerprint::default()
                },
                status: RunStatus::Complete,
                commit_info: None,
                error: None,
                pair: None,
                results: vec![
                    result("gemm", if i < 20 { 100.0 } else { 110.0 }, i),
                    result("reduce", if i < 25 { 200.0 } else { 160.0 }, i),
                    result("copy", 50.0, i),
                ],
            }
        })
        .collect()
}

fn rules() -> AlertRules {
    AlertRules {
        threshold_pct: 2.0,
        suite_threshold_pct: BTreeMap::new(),
        resamples: 500,
        level: 0.95,
        seed: 7,
        match_window: 3,
    }
}

fn acked(runs: &[Run]) -> Alert {
    let s = AlertSeries {
        project: "p".into(),
        testbed: "h200".into(),
        branch: "main".into(),
        key: "kernel/gemm/time".into(),
        measure: "time".into(),
    };
    Alert {
        id: "a1".into(),
        status: AlertStatus::Acknowledged,
        kind: AlertKind::Regression,
        series: s,
        last_good: runs[19].commit.clone(),
        first_bad: runs[20].commit.clone(),
        first_bad_run: runs[20].id.clone(),
        before: 100.0,
        after: 110.0,
        rel_change: 0.1,
        ci: None,
        note: Some("new <allocator>".into()),
        culprit: None,
        more_points: None,
        label: None,
        created_at: String::new(),
        updated_at: String::new(),
    }
}

pub(super) fn writeup_of(runs: &[Run], from: &str, to: &str) -> Writeup {
    let period = Period::new(from, to).unwrap();
    let series = series(
        runs,
        &HistoryFilter::branch("main"),
        &DetectConfig::default(),
    );
    let alerts = vec![acked(runs)];
    let commits = BTreeMap::new();
    build(&WriteupInput {
        period: &period,
        filter: &HistoryFilter::branch("main"),
        runs,
        series: &series,
        alerts: &alerts,
        commits: &commits,
        rules: &rules(),
        settings: vec![("sampling".into(), "default".into())],
    })
}

#[test]
fn planted_steps_give_the_levels_the_geomean_and_the_ledger() {
    let runs = planted();
    let w = writeup_of(&runs, "2026-01-01", "2026-02-19");
    assert_eq!(w.runs_in_period, 50);
    let s = &w.summaries[0];
    assert_eq!((s.suite.as_str(), s.testbed.as_str()), ("kernel", "h200"));
    let by = |n: &str| s.benchmarks.iter().find(|b| b.label == n).unwrap();
    // The change of the value, last/first − 1: gemm's time 10% up (slower), reduce's 20% down.
    assert!((by("gemm").rel_change - 0.1).abs() < 0.005);
    assert!((by("reduce").rel_change + 0.2).abs() < 0.01);
    assert_eq!(by("copy").rel_change, 0.0, "no change point, no change");
    assert_eq!(by("gemm").direction, Direction::LowerIsBetter);
    // The geomean of the time ratios, − 1: negative is faster.
    let expected = (1.1f64 * 0.8).powf(1.0 / 3.0) - 1.0;
    assert!((s.geomean_change - expected).abs() < 0.005, "{s:?}");
    let (lo, hi) = s.ci.unwrap();
    assert!(lo <= s.geomean_change && s.geomean_change <= hi && lo < hi);
    assert_eq!((s.regressions, s.improvements), (1, 1));
    assert_eq!(s.worst[0].label, "gemm");
    assert_eq!(s.best[0].label, "reduce");
    assert!(s.noise_cv.unwrap() < 0.01);
    let five = SampleCounts {
        median: 5,
        min: 5,
        max: 5,
    };
    assert_eq!(
        s.samples_per_point,
        Some(five),
        "every result has 5 samples"
    );

    assert_eq!(w.ledger.len(), 2, "{:?}", w.ledger);
    let g = &w.ledger[0];
    assert_eq!(g.first_bad, runs[20].commit);
    assert_eq!(g.last_good, runs[19].commit);
    assert_eq!(
        g.date, runs[20].started_at,
        "no commit known: the run's start"
    );
    let e = &g.entries[0];
    assert!((e.rel_change - 0.1).abs() < 0.005);
    assert_eq!(e.direction, Direction::LowerIsBetter);
    assert_eq!(e.standing, StepStanding::Confirmed);
    // The summary and the ledger say the same of gemm's step.
    assert!((e.rel_change - by("gemm").rel_change).abs() < 0.005);
    let (lo, hi) = e.ci.unwrap();
    assert!(lo <= e.rel_change && e.rel_change <= hi);
    let a = e.alert.as_ref().unwrap();
    assert_eq!(a.status, AlertStatus::Acknowledged);
    assert_eq!(a.note.as_deref(), Some("new <allocator>"));
    assert_eq!(w.ledger[1].first_bad, runs[25].commit);
    assert_eq!(w.ledger[1].entries[0].kind, AlertKind::Improvement);

    assert_eq!(w.env_changes.len(), 1);
    let c = &w.env_changes[0];
    assert_eq!(c.field, EnvField::Driver);
    assert_eq!((c.before.as_str(), c.after.as_str()), ("550.54", "560.28"));
    assert_eq!(c.commit, runs[30].commit);
    assert!(c.near.is_empty(), "the nearest step is 5 runs away");
    assert_eq!(w.methodology.runners[0].runs, 50);
}

#[test]
fn a_period_inside_one_segment_shows_no_change() {
    let runs = planted();
    // January 2nd to 10th: runs 1..=9, before any step.
    let w = writeup_of(&runs, "2026-01-02", "2026-01-10");
    assert_eq!(w.runs_in_period, 9);
    assert!(w.ledger.is_empty() && w.env_changes.is_empty());
    let s = &w.summaries[0];
    assert_eq!(s.geomean_change, 0.0);
    assert_eq!((s.regressions, s.improvements), (0, 0));
    assert_eq!(s.trend.len(), 9);
}

#[test]
fn an_empty_period_has_nothing_to_say() {
    let runs = planted();
    let w = writeup_of(&runs, "2025-01-01", "2025-03-31");
    assert_eq!(w.runs_in_period, 0);
    assert!(w.summaries.is_empty() && w.ledger.is_empty() && w.env_changes.is_empty());
    assert!(w.methodology.runners.is_empty());
}

#[test]
fn geomean_interval_is_deterministic_and_degenerate_for_equal_changes() {
    let logs = [0.1f64.ln_1p(), 0.2f64.ln_1p(), (-0.05f64).ln_1p()];
    assert_eq!(geomean_ci(&logs, &rules()), geomean_ci(&logs, &rules()));
    let (lo, hi) = geomean_ci(&[0.1f64.ln_1p(); 4], &rules()).unwrap();
    assert!((lo - 0.1).abs() < 1e-12 && (hi - 0.1).abs() < 1e-12);
    assert_eq!(geomean_ci(&[], &rules()), None);
}

/// The write-up's run count is the pages' (issue 27): a contended run, kept out of the
/// series' points, is not one of the period's history runs.
#[test]
fn a_contended_run_is_not_counted_among_the_periods_runs() {
    let mut runs = planted();
    runs[10].contention = Some(pitwall_schema::Contention {
        samples: 20,
        other_runnable_threads: Some(2.0),
        steal_pct: None,
        psi_some_pct: None,
        psi_cgroup_some_pct: None,
        contended: true,
        reasons: vec!["other runnable threads 2.0 ≥ 0.5".into()],
    });
    let w = writeup_of(&runs, "2026-01-01", "2026-02-19");
    assert_eq!(w.runs_in_period, 49);
}

#[test]
fn suspected_and_contended_steps_are_kept_apart_from_the_confirmed_ones() {
    let runs = planted();
    let mut w = writeup_of(&runs, "2026-01-01", "2026-02-19");
    assert_eq!(w.confirmed(), w.ledger, "every step confirmed by default");
    assert!(w.listed_apart().is_empty());
    w.ledger[0].entries[0].standing = StepStanding::Suspected;
    w.ledger[1].entries[0].standing = StepStanding::Contended;
    assert!(w.confirmed().is_empty());
    let apart = w.listed_apart();
    assert_eq!(apart.len(), 2);
    assert_eq!(apart[0].entries[0].standing, StepStanding::Suspected);
    assert_eq!(apart[1].entries[0].standing.as_str(), "contended");
}

#[test]
fn pull_requests_from_merge_and_squash_messages() {
    let merge = "Merge pull request #123 from org/fast-gemm\n\nFaster GEMM tiles\n";
    assert_eq!(
        pull_request_of(merge),
        Some(PullRequest {
            number: 123,
            title: "Faster GEMM tiles".into()
        })
    );
    assert_eq!(
        pull_request_of("Use cuBLASLt for fp8 (#77)"),
        Some(PullRequest {
            number: 77,
            title: "Use cuBLASLt for fp8".into()
        })
    );
    assert_eq!(pull_request_of("fix (#x)"), None);
    assert_eq!(pull_request_of("plain commit"), None);
}

#[test]
fn dates_are_days_and_periods_ordered() {
    assert!(parse_date("2026-02-28").is_some());
    for bad in [
        "2026-02-30",
        "2026-13-01",
        "26-01-01",
        "2026-01-01T00:00:00Z",
        "",
    ] {
        assert_eq!(parse_date(bad), None, "{bad}");
    }
    let p = Period::new("2026-01-01", "2026-01-01").unwrap();
    assert_eq!(p.end_s - p.start_s, DAY_S, "--to is inclusive");
    assert_eq!(
        Period::new("2026-02-01", "2026-01-01")
            .unwrap_err()
            .to_string(),
        "--from 2026-02-01 is after --to 2026-01-01 (hint: --to is the last day of the period)"
    );
    assert!(
        Period::new("2026-1-01", "2026-01-01")
            .unwrap_err()
            .to_string()
            .starts_with("--from `2026-1-01`")
    );
}

#[test]
fn runs_outside_the_history_do_not_count() {
    let mut runs = planted();
    // A pull request's head on the same testbed, mid-period, on another driver and slower.
    let mut pr = runs[40].clone();
    pr.id = "pr-head".into();
    pr.commit = "f".repeat(40);
    pr.role = Some(pitwall_schema::RunRole::PrHead);
    pr.fingerprint.gpus[0].driver = Some("999.99".into());
    runs.insert(35, pr);
    let w = writeup_of(&runs, "2026-01-01", "2026-02-19");
    assert_eq!(w.runs_in_period, 50);
    assert_eq!(w.env_changes.len(), 1, "{:?}", w.env_changes);
    assert_eq!(w.env_changes[0].after, "560.28");
    assert_eq!(w.methodology.runners[0].runs, 50);
}

#[test]
fn every_followed_part_of_the_environment_is_read_from_the_fingerprint() {
    use pitwall_schema::sections::{Clocks, CudaLibraries};
    let mut run = planted().remove(0);
    run.fingerprint.set_section(&CudaLibraries(BTreeMap::from([
        (
            "cuda_runtime".to_string(),
            "12.4 (libcudart.so.12)".to_string(),
        ),
        ("nccl".to_string(), "2.21.5 (libnccl.so.2)".to_string()),
    ])));
    run.fingerprint.set_section(&Clocks {
        mode: Some("locked".into()),
        locked_sm_mhz: Some(1755),
        ..Clocks::default()
    });
    let s = EnvState::of(&run);
    let get = |f: EnvField| s.0.get(&f).map(String::as_str);
    assert_eq!(get(EnvField::Driver), Some("550.54"));
    assert_eq!(get(EnvField::GpuModel), Some("H200"));
    assert_eq!(get(EnvField::Cuda), Some("12.4 (libcudart.so.12)"));
    assert_eq!(get(EnvField::Nccl), Some("2.21.5 (libnccl.so.2)"));
    assert_eq!(
        get(EnvField::ClockPolicy),
        Some("locked (SM locked at 1755 MHz)")
    );
    let bare = EnvState::of(&Run {
        contention: None,
        fingerprint: Fingerprint::default(),
        ..run
    });
    assert!(
        bare.0.is_empty(),
        "a fingerprint that says nothing: {bare:?}"
    );
}

#[test]
fn a_stored_alert_no_change_point_matches_is_in_the_ledger_on_its_own() {
    let runs = planted();
    let period = Period::new("2026-01-01", "2026-02-19").unwrap();
    let series = series(
        &runs,
        &HistoryFilter::branch("main"),
        &DetectConfig::default(),
    );
    // Stored when the step looked as if it were at run 40, far from any change point now.
    let mut old = acked(&runs);
    old.id = "old".into();
    old.last_good = runs[39].commit.clone();
    old.first_bad = runs[40].commit.clone();
    old.first_bad_run = runs[40].id.clone();
    let w = build(&WriteupInput {
        period: &period,
        filter: &HistoryFilter::branch("main"),
        runs: &runs,
        series: &series,
        alerts: &[old],
        commits: &BTreeMap::new(),
        rules: &rules(),
        settings: Vec::new(),
    });
    assert_eq!(w.ledger.len(), 3, "{:?}", w.ledger);
    let g = w
        .ledger
        .iter()
        .find(|g| g.first_bad == runs[40].commit)
        .unwrap();
    assert_eq!(g.entries[0].alert.as_ref().unwrap().id, "old");
    let step = w
        .ledger
        .iter()
        .find(|g| g.first_bad == runs[20].commit)
        .unwrap();
    assert!(step.entries[0].alert.is_none() && step.entries[0].beyond_threshold);
}

#[test]
fn sample_counts_are_the_median_and_range_of_the_points() {
    assert_eq!(SampleCounts::of(Vec::new()), None);
    let c = SampleCounts::of(vec![30, 10, 20, 40]).unwrap();
    assert_eq!(
        (c.median, c.min, c.max),
        (20, 10, 40),
        "lower middle of an even count"
    );
    let c = SampleCounts::of(vec![7]).unwrap();
    assert_eq!((c.median, c.min, c.max), (7, 7, 7));
}

#[test]
fn a_throughput_changes_time_per_unit_inversely() {
    // 100 → 125 items/s: the value 25% higher, its time per item 20% lower (faster).
    assert!((time_change(Direction::HigherIsBetter, 100.0, 125.0) + 0.2).abs() < 1e-12);
    assert!((time_change(Direction::LowerIsBetter, 10.0, 11.0) - 0.1).abs() < 1e-12);
}

#[test]
fn a_suspected_alert_is_listed_apart_not_in_the_headline() {
    let runs = planted();
    let period = Period::new("2026-01-01", "2026-02-19").unwrap();
    let series = series(
        &runs,
        &HistoryFilter::branch("main"),
        &DetectConfig::default(),
    );
    // A suspected step at the tip of another benchmark: no change point, only the alert.
    let mut suspected = acked(&runs);
    suspected.id = "s1".into();
    suspected.status = AlertStatus::Suspected;
    suspected.series.key = "kernel/other/time".into();
    suspected.more_points = Some(3);
    let alerts = vec![acked(&runs), suspected];
    let commits = BTreeMap::new();
    let w = build(&WriteupInput {
        period: &period,
        filter: &HistoryFilter::branch("main"),
        runs: &runs,
        series: &series,
        alerts: &alerts,
        commits: &commits,
        rules: &rules(),
        settings: Vec::new(),
    });
    let apart = w.listed_apart();
    assert!(
        apart
            .iter()
            .flat_map(|g| &g.entries)
            .any(|e| e.key == "kernel/other/time" && e.standing == StepStanding::Suspected),
        "{apart:?}"
    );
    assert!(
        w.confirmed()
            .iter()
            .flat_map(|g| &g.entries)
            .all(|e| e.key != "kernel/other/time")
    );
}
