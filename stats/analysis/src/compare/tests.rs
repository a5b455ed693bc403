//! Tests of `compare` for what a GPU run adds: a time that moved with the SM clock while its
//! cycles did not (`clock-explained`), and implausible results kept out of every verdict.

use pitwall_schema::{SampleMeta, Unit};
use pitwall_stats::ab::Verdict;

use super::*;

/// 5 replicates × 8 samples around `ns` at `mhz` (±0.2% noise), with their cycles when `mhz`
/// is given.
fn timed(name: &str, ns: f64, mhz: Option<f64>) -> BenchmarkResult {
    let mut samples = Vec::new();
    let mut meta = Vec::new();
    let mut replicates = Vec::new();
    for rep in 0..5u32 {
        for i in 0..8 {
            let v = ns * (1.0 + 0.002 * (((rep * 8 + i) % 5) as f64 - 2.0) / 2.0);
            samples.push(v);
            replicates.push(rep);
            meta.push(SampleMeta {
                sm_clock_mhz: mhz.map(|m| m as u32),
                cycles: mhz.map(|m| v * m / 1000.0),
                ..SampleMeta::default()
            });
        }
    }
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
        sample_meta: if mhz.is_some() { meta } else { Vec::new() },
        replicates,
        summary: None,
    }
}

fn side(label: &str, results: Vec<BenchmarkResult>) -> Side {
    Side {
        label: label.into(),
        run: None,
        results,
    }
}

fn run_compare(base: Vec<BenchmarkResult>, cand: Vec<BenchmarkResult>) -> ComparisonReport {
    compare(
        &side("a", base),
        &side("b", cand),
        &|_| ThresholdRule::Fixed(2.0),
        Vec::new(),
        &AbConfig::default(),
        CompareOptions::default(),
        &NoiseBook::empty(),
    )
}

#[test]
fn a_time_the_clock_moved_is_clock_explained_and_no_regression() {
    // 10% slower at a 10% lower clock: the same cycles.
    let report = run_compare(
        vec![
            timed("gemm", 1000.0, Some(1980.0)),
            timed("copy", 1000.0, Some(1980.0)),
        ],
        vec![
            timed("gemm", 1100.0, Some(1800.0)),
            timed("copy", 1100.0, Some(1980.0)),
        ],
    );
    let by = |n: &str| report.benchmarks.iter().find(|b| b.name == n).unwrap();
    let gemm = by("gemm");
    assert_eq!(gemm.comparison.verdict, Verdict::Regression);
    assert_eq!(gemm.cycles_verdict, Some(Verdict::Unchanged));
    assert!(gemm.clock_explained());
    // The same slowdown at the same clock: more cycles, a real regression.
    let copy = by("copy");
    assert_eq!(copy.cycles_verdict, Some(Verdict::Regression));
    assert!(!copy.clock_explained());
    let c = report.counts();
    assert_eq!((c.regression, c.clock_explained), (1, 1));
    assert!(report.has_regression());
    assert_eq!(
        report.worst_regression().map(|b| b.name.as_str()),
        Some("copy")
    );
    assert!(
        report.summary_line().starts_with("1 regression, 0 improvements, 0 unchanged, 0 inconclusive, 1 clock-explained; worst: kernel/copy/time"),
        "{}",
        report.summary_line()
    );
    // Only the clock-explained one: no regression to fail on.
    let only = run_compare(
        vec![timed("gemm", 1000.0, Some(1980.0))],
        vec![timed("gemm", 1100.0, Some(1800.0))],
    );
    assert!(!only.has_regression());
}

#[test]
fn without_cycles_on_both_sides_there_is_no_cycles_verdict() {
    let report = run_compare(
        vec![timed("gemm", 1000.0, None)],
        vec![timed("gemm", 1100.0, Some(1800.0))],
    );
    assert_eq!(report.benchmarks[0].cycles_verdict, None);
    assert!(report.has_regression());
}

#[test]
fn implausible_results_are_listed_with_why_and_never_compared() {
    let mut fast = timed("skinny", 500.0, None);
    fast.status = ResultStatus::Implausible;
    fast.error = Some("implausible: skinny 5.9 TB/s > H200 HBM peak 4.8 TB/s".into());
    let report = run_compare(
        vec![timed("skinny", 1000.0, None), timed("only_a", 1.0, None)],
        vec![fast.clone(), timed("only_a", 1.0, None)],
    );
    assert_eq!(
        report.implausible,
        ["kernel/skinny/time (implausible: skinny 5.9 TB/s > H200 HBM peak 4.8 TB/s)"]
    );
    assert!(report.benchmarks.iter().all(|b| b.name != "skinny"));
    assert!(!report.has_regression());
    assert!(
        report.summary_line().contains(", 1 implausible"),
        "{}",
        report.summary_line()
    );
    // On one side only, it is still implausible rather than "only in candidate".
    let one_sided = run_compare(Vec::new(), vec![fast]);
    assert_eq!(one_sided.implausible.len(), 1);
    assert!(one_sided.only_candidate.is_empty());
}

#[test]
fn contended_sides_are_named_with_why() {
    let limits = pitwall_schema::ContentionLimits {
        runnable_threads: 0.5,
        steal_pct: 2.0,
        psi_some_pct: 10.0,
    };
    let contended_side = |label: &str, threads: f64| {
        let mut run: pitwall_schema::Run = serde_json::from_value(serde_json::json!({
            "id": "0190f0c0-0000-7000-8000-000000000001",
            "project": "p",
            "commit": "working tree",
            "started_at": "2026-12-02T10:00:00Z",
            "finished_at": "2026-12-02T10:01:00Z",
            "config_hash": "c",
            "fingerprint": {"hostname": "h", "os": "linux", "arch": "x86_64"},
            "status": "complete",
            "results": []
        }))
        .unwrap();
        run.contention = Some(pitwall_schema::Contention::classified(
            10,
            Some(threads),
            None,
            None,
            None,
            &limits,
        ));
        Side {
            label: label.into(),
            run: Some(run),
            results: vec![timed("gemm", 1000.0, None)],
        }
    };
    let r = compare(
        &contended_side("run 1", 0.0),
        &contended_side("run 2", 1.75),
        &|_| ThresholdRule::Fixed(2.0),
        Vec::new(),
        &AbConfig::default(),
        CompareOptions::default(),
        &NoiseBook::empty(),
    );
    assert_eq!(
        r.contended,
        vec!["candidate (run 2): other runnable threads 1.8 ≥ 0.5"]
    );
    assert!(
        r.contended_line()
            .unwrap()
            .starts_with("warning: measured on a contended machine: candidate (run 2)")
    );
}
