//! `pitwall compare` and `pitwall detect` end to end: verdicts and exit codes on files and
//! stored runs, change points in series files and in stored history, and bad input.

use pitwall_e2e::Sandbox;
use serde_json::{Value, json};

/// Deterministic noise in [-1, 1).
fn noise(i: usize, salt: usize) -> f64 {
    let x = ((i * 7919 + salt * 104_729) % 1000) as f64 / 500.0;
    x - 1.0
}

fn samples(level: f64, n: usize, salt: usize) -> Vec<f64> {
    (0..n)
        .map(|i| level * (1.0 + 0.01 * noise(i, salt)))
        .collect()
}

fn bench_file(sb: &Sandbox, name: &str, parse_level: f64, rate_level: f64) -> String {
    let doc = json!({
        "schema": "pitwall/v1",
        "benchmarks": [
            {"name": "parse", "params": {"size": 64}, "samples": samples(parse_level, 20, 1)},
            {"name": "rate", "measure": "throughput", "unit": "items/s", "direction": "higher", "samples": samples(rate_level, 20, 2)},
            {"name": "steady", "samples": samples(50.0, 20, 3)}
        ]
    });
    sb.write(name, &doc.to_string())
        .to_str()
        .unwrap()
        .to_string()
}

fn by_name<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing in {v}"))
}

#[test]
fn compare_files_finds_the_regression_and_exits_1() {
    let sb = Sandbox::new();
    let base = bench_file(&sb, "base.json", 100.0, 1000.0);
    let cand = bench_file(&sb, "cand.json", 120.0, 1000.0);
    let out = sb
        .run(&[
            "compare",
            "--baseline",
            &base,
            "--candidate",
            &cand,
            "--format",
            "json",
        ])
        .expect(1);
    let v = out.json();
    let parse = by_name(&v, "parse");
    assert_eq!(parse["verdict"], "regression");
    let ratio = parse["ratio"].as_f64().unwrap();
    assert!((ratio - 1.2).abs() < 0.02, "{ratio}");
    let ci = parse["ci"].as_array().unwrap();
    assert!(
        ci[0].as_f64().unwrap() > 1.1 && ci[1].as_f64().unwrap() < 1.3,
        "{parse}"
    );
    assert!(parse["p_value"].as_f64().unwrap() < 0.001);
    assert_eq!(by_name(&v, "steady")["verdict"], "unchanged");
    assert_eq!(by_name(&v, "rate")["verdict"], "unchanged");
    assert_eq!(v["counts"]["regression"], 1);

    let table = sb
        .run(&["compare", "--baseline", &base, "--candidate", &cand])
        .expect(1)
        .stdout();
    assert!(
        table.contains("parse[size=64]/time") && table.contains("regression"),
        "{table}"
    );
    assert!(
        table.contains("summary: 1 regression, 0 improvements, 2 unchanged"),
        "{table}"
    );
}

#[test]
fn higher_is_better_drop_is_a_regression_and_rise_an_improvement() {
    let sb = Sandbox::new();
    let base = bench_file(&sb, "base.json", 100.0, 1000.0);
    let worse = bench_file(&sb, "worse.json", 100.0, 800.0);
    let better = bench_file(&sb, "better.json", 100.0, 1250.0);
    let v = sb.compare_json(&base, &worse, &[], 1);
    assert_eq!(by_name(&v, "rate")["verdict"], "regression");
    let v = sb.compare_json(&base, &better, &[], 0);
    assert_eq!(by_name(&v, "rate")["verdict"], "improvement");
}

#[test]
fn identical_sides_are_unchanged_and_threshold_is_applied() {
    let sb = Sandbox::new();
    let base = bench_file(&sb, "base.json", 100.0, 1000.0);
    let v = sb.compare_json(&base, &base, &[], 0);
    assert!(
        v["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["verdict"] == "unchanged"),
        "{v}"
    );
    // A 20% slowdown under a 25% threshold is not a regression.
    let cand = bench_file(&sb, "cand.json", 120.0, 1000.0);
    let v = sb.compare_json(&base, &cand, &["--threshold", "25"], 0);
    assert_ne!(by_name(&v, "parse")["verdict"], "regression");
    assert_eq!(by_name(&v, "parse")["threshold"], 0.25);
}

#[test]
fn compare_stored_runs_by_id_and_commit_with_markdown() {
    let sb = Sandbox::new();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/export-v1.json");
    sb.run(&["import", "--quiet", fixture]).expect(0);
    let out = sb.run(&[
        "compare",
        "--baseline",
        "01900000-0000-7000-8000-000000000001",
        "--candidate",
        "0123456789ab",
        "--format",
        "markdown",
    ]);
    let md = out.expect(1).stdout();
    assert!(
        md.contains("1 regression") && md.contains("kernel/gemm_f32[n=256]/throughput"),
        "{md}"
    );
    assert!(
        md.contains("Only in baseline: `inference/mlp_forward[batch=1]/latency`"),
        "{md}"
    );
    assert!(
        md.contains("Failed, not compared") || md.contains("Only in candidate"),
        "{md}"
    );
    assert!(md.contains("commit 0123456789ab"), "{md}");
}

#[test]
fn bad_sources_are_usage_errors() {
    let sb = Sandbox::new();
    let base = bench_file(&sb, "base.json", 100.0, 1000.0);
    // Without a store, a side that is not a file is named with the missing store.
    let e = sb
        .run(&["compare", "--baseline", &base, "--candidate", "nope"])
        .expect(2)
        .stderr();
    assert!(
        e.starts_with("error: --candidate: `nope` is not a file, so it is looked up in the store: store sqlite:.pitwall/pitwall.db does not exist"),
        "{e}"
    );
    assert!(!sb.db().exists(), "compare creates no store");
    sb.run(&["import", "--quiet", &base]).expect(0);
    let e = sb
        .run(&["compare", "--baseline", &base, "--candidate", "nope"])
        .expect(2)
        .stderr();
    assert!(
        e.contains("--candidate")
            && e.contains("`nope` is neither a file, a stored run nor a stored commit"),
        "{e}"
    );
    let garbage = sb.write("garbage.json", "{\"hello\": 1}");
    let e = sb
        .run(&[
            "compare",
            "--baseline",
            garbage.to_str().unwrap(),
            "--candidate",
            &base,
        ])
        .expect(2)
        .stderr();
    assert!(
        e.contains("--baseline")
            && e.contains("garbage.json: cannot read results: format not recognised"),
        "{e}"
    );
    let e = sb
        .run(&[
            "compare",
            "--baseline",
            &base,
            "--candidate",
            &base,
            "--threshold",
            "-1",
        ])
        .expect(2)
        .stderr();
    assert!(e.contains("--threshold"), "{e}");
}

fn step_series(n: usize, at: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i < at { 100.0 } else { 130.0 } * (1.0 + 0.01 * noise(i, 5)))
        .collect()
}

#[test]
fn detect_series_files_csv_and_json() {
    let sb = Sandbox::new();
    let csv: String = std::iter::once("value".to_string())
        .chain(step_series(60, 34).iter().map(|v| v.to_string()))
        .collect::<Vec<_>>()
        .join("\n");
    let csv_path = sb.write("step.csv", &csv);
    let flat = sb.write("flat.json", &json!(samples(100.0, 120, 9)).to_string());
    let out = sb
        .run(&[
            "detect",
            "--series",
            csv_path.to_str().unwrap(),
            flat.to_str().unwrap(),
            "--format",
            "json",
        ])
        .expect(0);
    let lines: Vec<Value> = out
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0]["file"].as_str().unwrap().ends_with("step.csv"));
    let cps = lines[0]["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{}", lines[0]);
    // The index of the first point of the new level, exactly (issue 13, "exact commits"; the
    // E-divisive split alone said 33 for this series).
    assert_eq!(cps[0]["index"], 34, "{}", lines[0]);
    let rel = cps[0]["rel_change"].as_f64().unwrap();
    assert!((rel - 0.3).abs() < 0.03, "{rel}");
    assert!(cps[0]["before"].as_f64().unwrap() < cps[0]["after"].as_f64().unwrap());
    assert!(cps[0]["p_value"].as_f64().is_some());
    assert_eq!(lines[1]["change_points"], json!([]));
    let table = sb
        .run(&["detect", "--series", csv_path.to_str().unwrap()])
        .expect(0)
        .stdout();
    assert!(
        table.contains("step.csv") && ["+29%", "+30%", "+31%"].iter().any(|p| table.contains(p)),
        "{table}"
    );
}

#[test]
fn detect_garbage_names_file_and_line() {
    let sb = Sandbox::new();
    let bad = sb.write("bad.csv", "value\n1\n2\nthree\n");
    let e = sb
        .run(&["detect", "--series", bad.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(
        e.contains("bad.csv:4: `three` is not a finite number"),
        "{e}"
    );
    let e = sb
        .run(&["detect", "--series", "missing.csv"])
        .expect(2)
        .stderr();
    assert!(e.contains("missing.csv: cannot read"), "{e}");
    sb.run(&["detect"]).expect(2);
}

#[test]
fn detect_stored_history_reports_the_commit_range() {
    let sb = Sandbox::new();
    let runs: Vec<Value> = step_series(40, 23)
        .iter()
        .enumerate()
        .map(|(i, level)| {
            json!({
                "id": format!("01900000-0000-7000-8000-{:012}", i),
                "project": "h", "commit": format!("{:040x}", i + 1), "started_at": format!("2026-11-{:02}T00:00:00Z", i % 28 + 1),
                "finished_at": "2026-12-01T00:00:00Z", "config_hash": "x",
                "fingerprint": {"hostname": "h", "os": "linux", "arch": "x86_64"}, "status": "complete",
                "results": [{"suite": "kernel", "name": "gemm_f32", "params": {"n": "64"}, "measure": "time", "unit": "ns",
                              "direction": "lower_is_better", "status": "ok", "samples": samples(*level, 5, i)}]
            })
        })
        .collect();
    // started_at must order the runs: use the index as seconds instead of days.
    let runs: Vec<Value> = runs
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r["started_at"] = json!(format!("2026-11-01T00:{:02}:{:02}Z", i / 60, i % 60));
            r
        })
        .collect();
    let file = sb.write(
        "history.json",
        &json!({"schema": "pitwall/v1", "runs": runs}).to_string(),
    );
    sb.run(&["import", "--quiet", file.to_str().unwrap()])
        .expect(0);
    let out = sb
        .run(&["detect", "--benchmark", "gemm_f32", "--format", "json"])
        .expect(0);
    let line: Value = serde_json::from_str(out.stdout().lines().next().unwrap()).unwrap();
    assert_eq!(line["benchmark"], "kernel/gemm_f32[n=64]/time");
    assert_eq!(line["points"], 40);
    let cp = &line["change_points"][0];
    // The step is at run 23 (commit 24): that commit is named as the first of the new level,
    // the one before it as the last of the old (issue 13, "exact commits"; the E-divisive split
    // alone said 22, naming the last good commit as the first bad one).
    assert_eq!(cp["index"], 23, "{line}");
    assert_eq!(cp["commit_after"], format!("{:040x}", 24));
    assert_eq!(cp["commit_before"], format!("{:040x}", 23));
    assert_eq!(cp["run_after"], "01900000-0000-7000-8000-000000000023");
    let e = sb
        .run(&["detect", "--benchmark", "nothing"])
        .expect(2)
        .stderr();
    assert!(e.contains("no stored benchmark matches `nothing`"), "{e}");
}

/// Two sides whose units or directions differ are not compared (a ratio of ns to ms is not a
/// verdict); when nothing at all can be compared, the lists are printed and the exit is 2.
#[test]
fn different_units_or_directions_are_not_compared() {
    let sb = Sandbox::new();
    let doc = |unit: &str, direction: &str, level: f64| {
        json!({"schema": "pitwall/v1", "benchmarks": [
            {"name": "a", "unit": unit, "direction": direction, "samples": samples(level, 20, 1)},
            {"name": "b", "samples": samples(10.0, 20, 2)}
        ]})
        .to_string()
    };
    let base = sb.write("ns.json", &doc("ns", "lower", 100.0));
    let ms = sb.write("ms.json", &doc("ms", "lower", 100.0));
    let higher = sb.write("higher.json", &doc("ns", "higher", 150.0));
    let (base, ms, higher) = (
        base.to_str().unwrap(),
        ms.to_str().unwrap(),
        higher.to_str().unwrap(),
    );
    let v = sb.compare_json(base, ms, &[], 0);
    assert_eq!(v["incompatible"], json!(["a/time (unit ns vs ms)"]), "{v}");
    assert_eq!(
        v["benchmarks"].as_array().unwrap().len(),
        1,
        "only b compared"
    );
    let table = sb
        .run(&["compare", "--baseline", base, "--candidate", higher])
        .expect(0)
        .stdout();
    assert!(
        table.contains("not compared, units or directions differ: a/time (direction lower_is_better vs higher_is_better)"),
        "{table}"
    );

    // Nothing comparable: one side's only benchmark failed, the other's is different.
    let failed = sb.write(
        "failed.json",
        r#"{"schema":"pitwall/v1","benchmarks":[{"name":"x","samples":[1,2,3]},{"name":"f","error":"oom"}]}"#,
    );
    let other = sb.write(
        "other.json",
        r#"{"schema":"pitwall/v1","benchmarks":[{"name":"y","samples":[1,2,3]}]}"#,
    );
    let out = sb
        .run(&[
            "compare",
            "--baseline",
            failed.to_str().unwrap(),
            "--candidate",
            other.to_str().unwrap(),
        ])
        .expect(2);
    assert!(
        out.stdout().contains("failed, not compared: f/time"),
        "{}",
        out.stdout()
    );
    assert!(
        out.stderr().contains("no benchmark that could be compared"),
        "{}",
        out.stderr()
    );
}

/// A file whose `parse` samples take `level` ns at `mhz`, each with its SM cycles.
fn clocked_file(sb: &Sandbox, name: &str, level: f64, mhz: f64) -> String {
    let s = samples(level, 20, 1);
    let meta: Vec<Value> = s
        .iter()
        .map(|v| json!({"sm_clock_mhz": mhz as u32, "cycles": v * mhz / 1000.0}))
        .collect();
    let doc = json!({
        "schema": "pitwall/v1",
        "benchmarks": [
            {"name": "parse", "params": {"size": 64}, "samples": s, "sample_meta": meta}
        ]
    });
    sb.write(name, &doc.to_string())
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_slowdown_the_clock_explains_is_shown_and_exits_0() {
    let sb = Sandbox::new();
    // 20% slower at a 20% lower clock: the same cycles.
    let base = clocked_file(&sb, "base.json", 100.0, 1980.0);
    let cand = clocked_file(&sb, "cand.json", 120.0, 1650.0);
    let v = sb
        .run(&[
            "compare",
            "--baseline",
            &base,
            "--candidate",
            &cand,
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    let parse = by_name(&v, "parse");
    assert_eq!(parse["verdict"], "regression");
    assert_eq!(parse["cycles_verdict"], "unchanged");
    assert_eq!(v["counts"]["regression"], 0);
    assert_eq!(v["counts"]["clock_explained"], 1);
    let table = sb
        .run(&["compare", "--baseline", &base, "--candidate", &cand])
        .expect(0)
        .stdout();
    assert!(table.contains("regression (clock-explained)"), "{table}");
    // The same slowdown at the same clock is a regression: exit 1.
    let slow = clocked_file(&sb, "slow.json", 120.0, 1980.0);
    sb.run(&["compare", "--baseline", &base, "--candidate", &slow])
        .expect(1);
}
