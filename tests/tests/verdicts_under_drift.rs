//! Issue 25 end to end, on real temporary git repositories: the rounds of a pair alternate
//! their order and record it (pair JSON, store, export `pitwall/v6`, `pitwall/v7` with the pair's time); a drift shared by both
//! sides (every execution slower than the one before, whichever side it measures) is not
//! called a change, while a planted one under the same drift is; every answer carries its
//! resolution; and a single run flags a result whose interval missed its sampling target.

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// Prints pitwall JSON for `levels.json`: `{"counter": FILE, "drift": D, "levels": {name:
/// level}}`. The k-th execution (counted in FILE, outside the repository, shared by both
/// sides) takes `(1 + D·k)` × its level, with 0.4% noise per process and 0.3% per sample.
const BENCH: &str = r#"import fcntl, json, os, random
rng = random.Random(os.urandom(16))
cfg = json.load(open("levels.json"))
with open(cfg["counter"], "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    text = f.read().strip()
    k = int(text) if text else 0
    f.seek(0)
    f.truncate()
    f.write(str(k + 1))
out = []
for name, level in sorted(cfg["levels"].items()):
    offset = rng.lognormvariate(0.0, 0.004) * (1.0 + cfg["drift"] * k)
    out.append({"name": name, "samples": [level * offset * rng.lognormvariate(0.0, 0.003) for _ in range(10)]})
print(json.dumps({"schema": "pitwall/v1", "benchmarks": out}))
"#;

const CONFIG: &str = "[project]\nname = \"drift\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"python3 bench.py\"\n";

/// Two commits: `base` then `head` levels (`{name: level}` bodies), sharing one counter.
fn repo(sb: &Sandbox, counter: &std::path::Path, base: &str, head: &str) -> Vec<String> {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.py", BENCH);
    sb.write("pitwall.toml", CONFIG);
    let mut shas = Vec::new();
    for (i, levels) in [base, head].iter().enumerate() {
        sb.write(
            "levels.json",
            &format!(
                r#"{{"counter": "{}", "drift": 0.025, "levels": {levels}}}"#,
                counter.display()
            ),
        );
        sb.write("NOTES", &format!("change {i}\n"));
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("commit {i}")]);
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    shas
}

fn verdicts(v: &Value) -> Vec<(String, String)> {
    v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["key"].as_str().unwrap().to_string(),
                b["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_shared_drift_is_not_a_change_and_the_rounds_record_their_order() {
    let sb = Sandbox::new();
    let counter = tempfile::tempdir().unwrap();
    let levels = r#"{"a": 100.0, "b": 200.0, "c": 400.0, "d": 800.0}"#;
    let shas = repo(&sb, &counter.path().join("n"), levels, levels);
    sb.run(&[
        "run",
        "--base",
        &shas[0],
        "--head",
        &shas[1],
        "--rounds",
        "6",
        "--no-report",
    ])
    .expect(0);
    let v = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(0)
        .json();
    // 2.5% more per execution: 10 executions later the head would be 25% slower if every round
    // ran base first. Balanced, each benchmark is unchanged, with its resolution.
    for (key, verdict) in verdicts(&v) {
        assert_eq!(verdict, "unchanged", "{key}: {v}");
    }
    for b in v["benchmarks"].as_array().unwrap() {
        let r = b["resolution_pct"].as_f64().unwrap();
        assert!(r > 0.0 && r <= 2.0, "{b}");
    }
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .contains("no other change beyond ±"),
        "{v}"
    );
    // The order of every round is kept with the pair and exported (as pitwall/v8: the pair
    // also records the time it measured, issue 26, and its commits' first-parent positions,
    // issue 27).
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    assert_eq!(doc["schema"], "pitwall/v8");
    assert!(
        doc["runs"][0]["pair"]["measured_ms"].as_u64().is_some(),
        "{doc}"
    );
    let orders: Vec<&str> = doc["runs"][0]["pair"]["round_orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert_eq!(
        orders,
        [
            "base_head",
            "head_base",
            "base_head",
            "head_base",
            "base_head",
            "head_base"
        ]
    );
}

#[test]
fn a_planted_change_under_the_same_drift_is_found_and_nothing_else() {
    let sb = Sandbox::new();
    let counter = tempfile::tempdir().unwrap();
    let shas = repo(
        &sb,
        &counter.path().join("n"),
        r#"{"slowed": 100.0, "same": 200.0}"#,
        r#"{"slowed": 105.0, "same": 200.0}"#,
    );
    let out = sb.run(&[
        "run",
        "--base",
        &shas[0],
        "--head",
        &shas[1],
        "--until-decided",
        "--max-rounds",
        "15",
        "--no-report",
    ]);
    assert_eq!(out.code(), 1, "a regression exits 1: {}", out.stderr());
    let v = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(1)
        .json();
    let got = verdicts(&v);
    assert!(
        got.contains(&("toy/slowed/time".to_string(), "regression".to_string())),
        "{v}"
    );
    assert!(
        got.contains(&("toy/same/time".to_string(), "unchanged".to_string())),
        "{v}"
    );
}

#[test]
fn a_run_flags_a_result_whose_interval_missed_its_target() {
    let sb = Sandbox::new();
    // `wide` spreads its samples ±20%; the suite asks for ±1%.
    sb.write(
        "pitwall.toml",
        "[project]\nname = \"noisy\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"python3 bench.py\"\ntarget_ci_pct = 1.0\n",
    );
    sb.write(
        "bench.py",
        r#"import json
wide = [80.0 + 2.0 * i for i in range(20)]
tight = [100.0 + 0.01 * i for i in range(20)]
print(json.dumps({"schema": "pitwall/v1", "benchmarks": [{"name": "wide", "samples": wide}, {"name": "tight", "samples": tight}]}))
"#,
    );
    let table = sb.run(&["run", "--no-report"]).expect(0).stdout();
    assert!(
        table.contains("noisy (the interval missed its target_ci_pct):"),
        "{table}"
    );
    assert!(table.contains("toy/wide/time: ±"), "{table}");
    assert!(table.contains("reached, target ±1"), "{table}");
    assert!(!table.contains("toy/tight/time: ±"), "{table}");
    let v = sb
        .run(&["show", "latest", "--format", "json"])
        .expect(0)
        .json();
    let by_name = |n: &str| {
        v["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("wide")["precision"]["noisy"], true);
    assert_eq!(by_name("wide")["precision"]["target_ci_pct"], 1.0);
    assert_eq!(by_name("tight")["precision"]["noisy"], false);
}
