//! Snapshot and unit tests of the run exporters.

use super::*;
use pitwall_schema::{BenchmarkResult, Direction, Fingerprint, RunStatus, Unit};
use std::collections::BTreeMap;

fn sample_run() -> Run {
    let ok = BenchmarkResult {
        suite: "kernel".into(),
        name: "gemm_f32".into(),
        params: BTreeMap::from([("n".to_string(), "256".to_string())]),
        measure: "throughput".into(),
        unit: Unit::new("GFLOP/s"),
        direction: Direction::HigherIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples: (0..20).map(|i| 50.0 + f64::from(i) * 0.1).collect(),
        sample_meta: vec![],
        replicates: Vec::new(),
        summary: None,
    };
    let failed = BenchmarkResult::failed(
        "toy",
        "command",
        BTreeMap::new(),
        "command `./bench` exited with status 2".into(),
    );
    let results = vec![ok, failed];
    Run {
        exclusion: None,
        contention: None,
        id: "0193a1b2-0000-7000-8000-000000000001".into(),
        project: "toy".into(),
        commit: "working tree".into(),
        branch: None,
        testbed: None,
        role: None,
        started_at: "2026-12-02T10:00:00.000000Z".into(),
        finished_at: "2026-12-02T10:00:05.000000Z".into(),
        config_hash: "ab".repeat(32),
        fingerprint: Fingerprint::default(),
        status: RunStatus::from_results(&results),
        commit_info: None,
        error: None,
        pair: None,
        results,
    }
}

#[test]
fn table_snapshot() {
    let out = TableExporter.render(
        &sample_run(),
        &["suite `x` skipped: cuda backend unavailable: no driver".to_string()],
    );
    insta::assert_snapshot!(out);
}

#[test]
fn an_implausible_result_shows_its_numbers_marked_and_its_reason() {
    let mut run = sample_run();
    let mut fast = run.results[0].clone();
    fast.name = "skinny".into();
    fast.status = ResultStatus::Implausible;
    fast.error = Some("implausible: skinny 5.9 TB/s > H200 HBM peak 4.8 TB/s".into());
    run.results.push(fast);
    run.status = RunStatus::from_results(&run.results);
    let out = TableExporter.render(&run, &[]);
    insta::assert_snapshot!(out);
    let json: serde_json::Value = serde_json::from_str(&JsonExporter.render(&run, &[])).unwrap();
    let last = json["benchmarks"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["status"], "implausible");
    assert!(last["median"].is_number(), "{last}");
}

#[test]
fn run_errors_skips_and_repeated_failures_are_shown_once_each() {
    let mut run = sample_run();
    let mut throughput = run.results[1].clone();
    throughput.measure = "throughput".into();
    run.results.push(throughput); // the same failure, second measure
    let mut skipped = run.results[1].clone();
    skipped.name = "gpu_only".into();
    skipped.status = ResultStatus::Skipped;
    skipped.error = Some("no GPU".into());
    run.results.push(skipped);
    run.error = Some("build command `make` failed\nld: cannot find -lcuda".into());
    let out = TableExporter.render(&run, &[]);
    assert!(
        out.contains("error: build command `make` failed\n  | ld: cannot find -lcuda\n"),
        "{out}"
    );
    assert_eq!(
        out.matches("toy/command: command `./bench` exited").count(),
        1,
        "{out}"
    );
    let skips = out
        .split("skipped by the tool:\n")
        .nth(1)
        .unwrap_or_default();
    assert!(skips.contains("toy/gpu_only: no GPU"), "{out}");
    assert!(
        !out.split("skipped by the tool:")
            .next()
            .unwrap()
            .contains("gpu_only: no GPU"),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(&JsonExporter.render(&run, &[])).unwrap();
    assert!(json["run"]["error"].as_str().unwrap().contains("-lcuda"));
}

#[test]
fn the_table_lists_numbers_as_numbers_and_times_in_their_unit() {
    let mut run = sample_run();
    let mut time = run.results[0].clone();
    time.measure = "time".into();
    time.unit = Unit::new(Unit::NANOSECONDS);
    time.direction = Direction::LowerIsBetter;
    time.samples = vec![149_690.0; 5];
    run.results.clear();
    for n in ["16777216", "2097152", "262144"] {
        let mut t = time.clone();
        t.params.insert("n".into(), n.into());
        run.results.push(t);
    }
    let mut other = time.clone();
    other.suite = "another".into();
    run.results.insert(0, other);
    let out = TableExporter.render(&run, &[]);
    let order: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split("n=").nth(1))
        .map(|t| &t[..t.find(']').unwrap()])
        .collect();
    assert_eq!(order, ["256", "262144", "2097152", "16777216"], "{out}");
    assert!(
        out.lines().nth(3).unwrap().starts_with("another"),
        "suites as they ran"
    );
    assert!(out.contains("149.7") && out.contains(" µs "), "{out}");
    assert!(!out.contains("149690"), "{out}");
}

#[test]
fn json_snapshot() {
    let out = JsonExporter.render(&sample_run(), &[]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["benchmarks"][0]["median"], 50.95);
    assert_eq!(v["benchmarks"][1]["status"], "failed");
    insta::with_settings!({filters => vec![(r"[0-9a-f]{64}", "[hash]"), (r"\d{4}-\d\d-\d\dT[0-9:.]+Z", "[time]")]}, {
        insta::assert_snapshot!(out);
    });
}

#[test]
fn a_result_that_missed_its_target_is_flagged_noisy_with_both_numbers() {
    // issue 25: the run recorded a ±1% target for suite `toy`; `sort` spread ±20% missed it,
    // `steady` met it, and `kernel` (no target recorded) is never flagged.
    let mut run = sample_run();
    run.fingerprint
        .set_section(&pitwall_schema::sections::SamplingTargets(BTreeMap::from(
            [("toy".to_string(), 1.0)],
        )));
    let mut sort = run.results[0].clone();
    sort.suite = "toy".into();
    sort.name = "sort".into();
    sort.params.clear();
    sort.measure = "time".into();
    sort.unit = Unit::new("ns");
    sort.direction = Direction::LowerIsBetter;
    sort.samples = (0..20).map(|i| 800.0 + 20.0 * f64::from(i)).collect();
    let mut steady = sort.clone();
    steady.name = "steady".into();
    steady.samples = (0..20).map(|i| 1000.0 + 0.1 * f64::from(i)).collect();
    run.results = vec![run.results[0].clone(), sort, steady];
    run.status = RunStatus::from_results(&run.results);
    let table = TableExporter.render(&run, &[]);
    assert!(
        table.contains("noisy (the interval missed its target_ci_pct):"),
        "{table}"
    );
    assert!(table.contains("toy/sort/time: ±"), "{table}");
    assert!(!table.contains("toy/steady/time: ±"), "{table}");
    let json = JsonExporter.render(&run, &[]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["benchmarks"][0].get("precision").is_none(), "{json}");
    assert_eq!(v["benchmarks"][1]["precision"]["noisy"], true);
    assert_eq!(v["benchmarks"][1]["precision"]["target_ci_pct"], 1.0);
    assert_eq!(v["benchmarks"][2]["precision"]["noisy"], false);
    insta::with_settings!({filters => vec![(r"[0-9a-f]{64}", "[hash]"), (r"\d{4}-\d\d-\d\dT[0-9:.]+Z", "[time]")]}, {
        insta::assert_snapshot!(format!("{table}\n--- json\n{json}"));
    });
}
