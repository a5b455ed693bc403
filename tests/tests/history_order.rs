//! Issue 27 items 1 and 3 end to end, on real temporary git repositories whose commits all
//! share one timestamp (to the second, as scripted commits do): `run --commit A..B` measures
//! the first-parent range oldest first, history is in git's first-parent order (recorded with
//! each run, so re-measuring commits out of order refines their points instead of scrambling
//! the series), the working tree's run is `local` (never history unless `--role history`), and
//! `runs exclude`/`include` take a bad run out of history and put it back, re-detecting.

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// Prints pitwall JSON for `levels.json`: `{"levels": {name: level}, "counter": FILE,
/// "spike": FILE}`; the n-th process (counted in FILE) seeds its 0.3% noise with n, so every
/// run of the test sees the same numbers; while the file `spike` exists every level is ×1.4
/// (a run taken while the machine was busy).
const BENCH: &str = r#"import json, os, random
cfg = json.load(open("levels.json"))
n = int(open(cfg["counter"]).read()) if os.path.exists(cfg["counter"]) else 0
open(cfg["counter"], "w").write(str(n + 1))
rng = random.Random("history-order-%d" % n)
spike = 1.4 if os.path.exists(cfg["spike"]) else 1.0
out = []
for name, level in sorted(cfg["levels"].items()):
    offset = rng.lognormvariate(0.0, 0.003)
    out.append({"name": name, "samples": [level * spike * offset * rng.lognormvariate(0.0, 0.001) for _ in range(8)]})
print(json.dumps({"schema": "pitwall/v1", "benchmarks": out}))
"#;

const CONFIG: &str = "[project]\nname = \"order\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"python3 bench.py\"\n";

/// One author and committer date for every commit.
const DATE: &str = "2026-11-02T10:00:00+00:00";

/// `levels[i]` is commit i's level of `sort` (`hash` stays at 50); every commit has the same
/// timestamp. Returns the shas, oldest first.
fn repo(sb: &Sandbox, levels: &[f64]) -> Vec<String> {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.py", BENCH);
    sb.write("pitwall.toml", CONFIG);
    sb.write(".gitignore", ".pitwall/\n");
    let counter = serde_json::to_string(&dir.join(".git").join("processes")).unwrap();
    let spike = serde_json::to_string(&dir.join(".git").join("spike")).unwrap();
    let mut shas = Vec::new();
    for (i, level) in levels.iter().enumerate() {
        sb.write(
            "levels.json",
            &format!(
                r#"{{"levels": {{"sort": {level}, "hash": 50.0}}, "counter": {counter}, "spike": {spike}}}"#
            ),
        );
        sb.write("NOTES", &format!("change {i}\n"));
        shas.push(pitwall_e2e::commit_dated(dir, &format!("change {i}"), DATE));
    }
    shas
}

/// Every stored alert (`pitwall alerts --format json`), and those of `sort`.
fn sort_alerts(sb: &Sandbox) -> (Value, Vec<Value>) {
    let alerts = sb.run(&["alerts", "--format", "json"]).expect(0).json()["alerts"].clone();
    let sort = alerts
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["key"].as_str().unwrap().contains("sort"))
        .cloned()
        .collect();
    (alerts, sort)
}

fn detect(sb: &Sandbox, pattern: &str) -> Value {
    pitwall_e2e::detect_one(sb, pattern)
}

fn runs(sb: &Sandbox) -> Vec<Value> {
    pitwall_e2e::listed_runs(sb)
}

#[test]
fn history_follows_first_parent_order_when_commits_share_a_timestamp() {
    let sb = Sandbox::new();
    let levels: Vec<f64> = (0..12).map(|i| if i < 6 { 100.0 } else { 130.0 }).collect();
    let shas = repo(&sb, &levels);
    let range = format!("{}..{}", shas[0], shas[11]);
    sb.run(&[
        "run",
        "-q",
        "--no-report",
        "--commit",
        &shas[0],
        "--commit",
        &range,
    ])
    .expect(0);
    // The range is measured oldest first: commit i is the i-th run stored.
    let stored: Vec<String> = runs(&sb)
        .iter()
        .rev()
        .map(|r| r["commit"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(stored, shas);
    // Re-measured out of order: each refines its commit's point.
    sb.run(&[
        "run",
        "-q",
        "--no-report",
        "--commit",
        &shas[8],
        "--commit",
        &shas[2],
        "--commit",
        &shas[5],
    ])
    .expect(0);
    let d = detect(&sb, "sort");
    assert_eq!(d["points"], 12, "{d}");
    let changes = d["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{d}");
    assert_eq!(changes[0]["commit_before"], shas[5].as_str(), "{d}");
    assert_eq!(changes[0]["commit_after"], shas[6].as_str(), "{d}");
    assert!(
        detect(&sb, "hash")["change_points"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // The commit's place is stored with the run, so an export keeps the order: pitwall/v8.
    let doc = sb.run(&["export"]).expect(0).stdout();
    assert!(doc.contains("\"schema\": \"pitwall/v8\""), "{doc:.300}");
    assert!(doc.contains("\"first_parent_position\": 12"));
    let other = Sandbox::new();
    let file = other.write("export.json", &doc);
    other
        .run(&["import", "-q", file.to_str().unwrap()])
        .expect(0);
    let d = detect(&other, "sort");
    assert_eq!(
        d["change_points"][0]["commit_after"],
        shas[6].as_str(),
        "an imported store orders by the recorded positions: {d}"
    );
}

#[test]
fn the_working_tree_is_local_and_excluded_runs_leave_history() {
    let sb = Sandbox::new();
    let shas = repo(&sb, &[100.0; 10]);
    // The working tree: stored as `local`, shown in the first report, in no history.
    let out = sb.run(&["run"]).expect(0);
    assert!(out.stderr().contains("report: "), "{}", out.stderr());
    let index = std::fs::read_to_string(sb.path().join(".pitwall/report/index.html"))
        .or_else(|_| {
            let dir = out
                .stderr()
                .lines()
                .find_map(|l| l.strip_prefix("report: ").map(str::to_string))
                .unwrap();
            std::fs::read_to_string(dir)
        })
        .unwrap();
    assert!(index.contains("Latest local run"), "{index:.2000}");
    let listed = runs(&sb);
    assert_eq!(listed[0]["role"], "local", "{listed:?}");
    // The table's BRANCH is the branch a run counts for: none, for a local run.
    let table = sb.run(&["runs"]).expect(0).stdout();
    let row = table.lines().find(|l| l.contains(" local ")).unwrap();
    assert!(
        row.contains("working tree  -  ") && !row.contains(" main "),
        "{table}"
    );
    let out = sb.run(&["detect", "--benchmark", "sort"]).expect(2);
    assert!(
        out.stderr().contains("local runs are never history"),
        "{}",
        out.stderr()
    );
    // `--role history` makes it history on purpose.
    sb.run(&["run", "-q", "--no-report", "--role", "history"])
        .expect(0);
    assert_eq!(runs(&sb)[0]["role"], "history");

    // Five commits measured normally, five while the machine was busy: a false +40% step.
    let spike = sb.path().join(".git").join("spike");
    for (i, sha) in shas.iter().enumerate() {
        if i == 5 {
            std::fs::write(&spike, "").unwrap();
        }
        sb.run(&["run", "-q", "--no-report", "--commit", sha])
            .expect(0);
    }
    std::fs::remove_file(&spike).unwrap();
    let d = detect(&sb, "sort");
    assert_eq!(d["change_points"].as_array().unwrap().len(), 1, "{d}");
    let alerts = sb.run(&["alerts", "--format", "json"]).expect(0).json()["alerts"].clone();
    assert!(
        alerts
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["status"] == "active"),
        "{alerts}"
    );
    // Excluding the busy runs keeps them stored and listed, and takes the step away.
    let busy: Vec<String> = runs(&sb)
        .iter()
        .take(5)
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    for id in &busy {
        let out = sb
            .run(&[
                "runs",
                "exclude",
                id,
                "--note",
                "the tests compiled meanwhile",
            ])
            .expect(0);
        assert!(
            out.stderr().contains("excluded from history"),
            "{}",
            out.stderr()
        );
    }
    let listed = runs(&sb);
    assert!(
        listed.iter().take(5).all(|r| r["excluded"] == true),
        "{listed:?}"
    );
    let table = sb.run(&["runs"]).expect(0).stdout();
    assert!(table.contains("history (excluded)"), "{table}");
    let shown = sb
        .run(&["show", &busy[0], "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(
        shown["run"]["exclusion"]["note"],
        "the tests compiled meanwhile"
    );
    let d = detect(&sb, "sort");
    assert!(d["change_points"].as_array().unwrap().is_empty(), "{d}");
    // The alert that step raised was nobody's yet: re-detection dismissed it.
    let (alerts, sort) = sort_alerts(&sb);
    assert_eq!(sort.len(), 1, "{alerts}");
    assert_eq!(sort[0]["status"], "dismissed", "{alerts}");
    assert_eq!(sort[0]["note"], "no longer detected", "{alerts}");
    // The report still draws the excluded runs, greyed, with the note.
    sb.run(&["report", "--out", "site"]).expect(0);
    let pages: String = std::fs::read_dir(sb.path().join("site/bench"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .filter(|page| page.contains("sort"))
        .collect();
    assert!(
        pages.contains(
            "excluded from history: the tests compiled meanwhile; left out of change detection"
        ),
        "{pages:.3000}"
    );
    // Put back, the step is there again.
    for id in &busy {
        sb.run(&["runs", "include", id]).expect(0);
    }
    assert_eq!(
        detect(&sb, "sort")["change_points"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // …and so is its alert: detection had dismissed it, so detection takes that back. (Runs
    // put back one at a time can show the step at another commit on the way; such an alert is
    // dismissed by detection again once the step is back at its place.)
    let (alerts, again) = sort_alerts(&sb);
    let open: Vec<&Value> = again.iter().filter(|a| a["status"] == "active").collect();
    assert_eq!(open.len(), 1, "{alerts}");
    assert_eq!(open[0]["id"], sort[0]["id"], "{alerts}");
    assert_eq!(open[0]["note"], "detected again", "{alerts}");
    assert!(
        again
            .iter()
            .all(|a| a["status"] == "active" || a["note"] == "no longer detected"),
        "{alerts}"
    );
    // Only history runs can be excluded; an unknown run is a usage error naming it.
    let local = runs(&sb).iter().find(|r| r["role"] == "local").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = sb
        .run(&["runs", "exclude", &local, "--note", "x"])
        .expect(2);
    assert!(out.stderr().contains("role `local`"), "{}", out.stderr());
    let out = sb.run(&["runs", "include", "ffffffff"]).expect(2);
    assert!(out.stderr().contains("ffffffff"), "{}", out.stderr());
}

#[test]
fn a_shallow_clone_records_no_position_and_says_so_once() {
    let origin = Sandbox::new();
    let shas = repo(&origin, &[100.0; 4]);
    let sb = Sandbox::new();
    let url = format!("file://{}", origin.path().display());
    let clone = sb.path().join("clone");
    git(
        sb.path(),
        &["clone", "-q", "--depth", "2", &url, clone.to_str().unwrap()],
    );
    let out = std::process::Command::new(pitwall_e2e::pitwall_bin())
        .args([
            "run",
            "--no-report",
            "--commit",
            "HEAD~1",
            "--commit",
            "HEAD",
        ])
        .current_dir(&clone)
        .env("PITWALL_FAKE_CONTENTION", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("shallow clone").count(), 1, "{stderr}");
    let export = std::process::Command::new(pitwall_e2e::pitwall_bin())
        .args(["export"])
        .current_dir(&clone)
        .output()
        .unwrap();
    let doc = String::from_utf8_lossy(&export.stdout);
    assert!(doc.contains(&shas[3]), "{doc:.400}");
    assert!(!doc.contains("first_parent_position"), "{doc:.2000}");
}
