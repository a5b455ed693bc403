//! Issue 27 item 5 end to end: "use the testbed's noise record where there is one". Five
//! history runs either side of a 3% step whose run-to-run noise is about 1% (a 3σ step) are
//! too few for the points alone; after `pitwall calibrate` has measured the testbed's noise,
//! the same history shows the step at the right commit, and `detect` says the record was
//! there to use.

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// Prints pitwall JSON for `levels.json`: `{"levels": {name: level}, "counter": FILE}`; each
/// process draws a lognormal offset of sd 1% (the noise between processes), each of its 8
/// samples 0.2% more. The n-th process (counted in FILE) seeds its draws with n, so every run
/// of the test sees the same numbers.
const BENCH: &str = r#"import json, os, random
cfg = json.load(open("levels.json"))
n = int(open(cfg["counter"]).read()) if os.path.exists(cfg["counter"]) else 0
open(cfg["counter"], "w").write(str(n + 1))
rng = random.Random("history-record-b-%d" % n)
out = []
for name, level in sorted(cfg["levels"].items()):
    offset = rng.lognormvariate(0.0, 0.01)
    out.append({"name": name, "samples": [level * offset * rng.lognormvariate(0.0, 0.002) for _ in range(8)]})
print(json.dumps({"schema": "pitwall/v1", "benchmarks": out}))
"#;

const CONFIG: &str = "[project]\nname = \"record\"\n\n[testbed]\nname = \"bench-box\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"python3 bench.py\"\n";

/// Ten commits: `sort` at 100 for the first five, 103 after; `hash` at 50 throughout.
fn repo(sb: &Sandbox) -> Vec<String> {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.py", BENCH);
    sb.write("pitwall.toml", CONFIG);
    sb.write(".gitignore", ".pitwall/\n");
    let counter = serde_json::to_string(&dir.join(".git").join("processes")).unwrap();
    let mut shas = Vec::new();
    for i in 0..10 {
        let level = if i < 5 { 100.0 } else { 103.0 };
        sb.write(
            "levels.json",
            &format!(r#"{{"levels": {{"sort": {level}, "hash": 50.0}}, "counter": {counter}}}"#),
        );
        sb.write("NOTES", &format!("change {i}\n"));
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("change {i}")]);
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    shas
}

fn detect(sb: &Sandbox, pattern: &str) -> Value {
    pitwall_e2e::detect_one(sb, pattern)
}

#[test]
fn the_testbeds_noise_record_finds_a_three_sigma_step_with_five_runs_either_side() {
    let sb = Sandbox::new();
    let shas = repo(&sb);
    let range = format!("{}..{}", shas[0], shas[9]);
    let out = sb
        .run(&["run", "--commit", &shas[0], "--commit", &range])
        .expect(0);
    // Ten commits measured, one report written, after the last (issue 27 item 1).
    let stderr = out.stderr();
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("report: "))
        .collect();
    assert_eq!(reports.len(), 1, "{stderr}");
    let index = std::path::Path::new(reports[0].trim_start_matches("report: "));
    let index = if index.is_absolute() {
        index.to_path_buf()
    } else {
        sb.path().join(index)
    };
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.contains("sort"), "{html}");
    let last = stderr.rfind("report: ").unwrap();
    assert!(
        stderr[..last].contains(&shas[9][..12]),
        "the report follows the last commit: {stderr}"
    );
    // The points alone: ten of them, eight degrees of freedom for their noise. Too few.
    let alone = detect(&sb, "sort");
    assert_eq!(alone["points"], 10, "{alone}");
    assert!(alone["noise_record"].is_null(), "{alone}");
    assert_eq!(alone["change_points"], serde_json::json!([]), "{alone}");
    // The testbed's record: A/A pairs of the same benchmarks on the same testbed.
    for _ in 0..2 {
        sb.run(&["calibrate", "--rounds", "8", "-q"]).expect(0);
    }
    let with = detect(&sb, "sort");
    assert_eq!(with["noise_record"]["pairs"], 2, "{with}");
    let cv = with["noise_record"]["point_cv_pct"].as_f64().unwrap();
    assert!((0.5..2.0).contains(&cv), "{with}");
    let changes = with["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{with}");
    assert_eq!(changes[0]["commit_before"], shas[4].as_str(), "{with}");
    assert_eq!(changes[0]["commit_after"], shas[5].as_str(), "{with}");
    // No step, no alarm, with the record as without.
    assert_eq!(detect(&sb, "hash")["change_points"], serde_json::json!([]));
    // The table says the record was there to use.
    let table = sb.run(&["detect", "--benchmark", "toy"]).expect(0).stdout();
    assert!(
        table.contains("noise record: 2 of 2 series had the testbed's record"),
        "{table}"
    );
    // Calibrating re-detected the history: the step is an active alert at its commit.
    let alerts = sb.run(&["alerts", "--format", "json"]).expect(0).json();
    let all = alerts["alerts"].as_array().unwrap();
    assert_eq!(all.len(), 1, "{alerts}");
    assert_eq!(all[0]["status"], "active", "{alerts}");
    assert_eq!(all[0]["first_bad"], shas[5].as_str(), "{alerts}");
}
