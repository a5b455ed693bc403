//! `pitwall prune` end to end (issue 13, retention): old runs of a real store pruned with
//! `--keep-summaries` stay in their history (the same points and change points through
//! `detect`), export as `pitwall/v4` and import again, refuse a comparison with one clear
//! line, and without the flag are deleted; a dry run changes nothing.

use pitwall_e2e::Sandbox;
use serde_json::{Value, json};

/// Thirty runs of one benchmark, `parse`: fifteen started in 2020 (old for any `--older-than`
/// up to 2,000 days until 2025 + 5 years) and fifteen in 2099 (never old), with a +10% step at
/// run 20.
fn history(sb: &Sandbox) {
    for i in 0..30 {
        let level = if i < 20 { 1000.0 } else { 1100.0 };
        let samples: Vec<f64> = (0..10)
            .map(|k| level * (1.0 + 0.002 * f64::from((k * 7 + i) % 5)))
            .collect();
        let doc =
            json!({"schema": "pitwall/v1", "benchmarks": [{"name": "parse", "samples": samples}]});
        let file = sb.write(&format!("r{i}.json"), &doc.to_string());
        sb.run(&[
            "import",
            "--quiet",
            file.to_str().unwrap(),
            "--commit",
            &format!("{i:040x}"),
            "--branch",
            "main",
            "--testbed",
            "tb",
        ])
        .expect(0);
    }
    // Imports start now; move them to their dates through an export and a fresh store.
    let mut doc = sb.run(&["export"]).expect(0).json();
    let runs = doc["runs"].as_array_mut().unwrap();
    runs.sort_by_key(|r| r["commit"].as_str().unwrap().to_string());
    for (i, run) in runs.iter_mut().enumerate() {
        let year = if i < 15 { 2020 } else { 2099 };
        let at = format!("{year}-03-{:02}T10:00:00Z", i % 15 + 1);
        run["started_at"] = json!(at);
        run["finished_at"] = json!(at);
    }
    sb.write("dated.json", &doc.to_string());
    std::fs::remove_file(sb.db()).unwrap();
    sb.run(&["import", "--quiet", "dated.json"]).expect(0);
}

fn detect(sb: &Sandbox) -> String {
    sb.run(&["detect", "--benchmark", "parse", "--format", "json"])
        .expect(0)
        .stdout()
}

#[test]
fn keep_summaries_keeps_history_and_delete_deletes() {
    let sb = Sandbox::new();
    history(&sb);
    let before = detect(&sb);
    assert!(
        before.contains("\"index\": 20") || before.contains("\"index\":20"),
        "{before}"
    );
    assert_eq!(sb.count("samples"), 300);

    let dry = sb
        .run(&[
            "prune",
            "--older-than",
            "2000",
            "--keep-summaries",
            "--dry-run",
        ])
        .expect(0)
        .stdout();
    assert!(
        dry.starts_with("would prune: 15 run(s) started before "),
        "{dry}"
    );
    assert!(
        dry.contains("15 run(s) summarized, 150 raw sample(s) dropped"),
        "{dry}"
    );
    assert_eq!(sb.count("samples"), 300, "a dry run changes nothing");

    let out = sb
        .run(&[
            "prune",
            "--older-than",
            "2000",
            "--keep-summaries",
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(out["runs_summarized"], 15);
    assert_eq!(out["samples_dropped"], 150);
    assert_eq!(sb.count("samples"), 150);
    assert_eq!(
        detect(&sb),
        before,
        "the pruned history is the same history"
    );

    // A pruned run exports as v4, imports into another store and compares with one line.
    let export = sb.run(&["export"]).expect(0).json();
    assert_eq!(export["schema"], "pitwall/v4");
    let old: Vec<&Value> = export["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["started_at"].as_str().unwrap().starts_with("2020"))
        .collect();
    assert_eq!(old.len(), 15);
    assert!(
        old.iter()
            .all(|r| r["results"][0]["samples"] == json!([])
                && r["results"][0]["summary"]["n"] == 10)
    );
    sb.write("pruned.json", &export.to_string());
    sb.run(&[
        "--store",
        "sqlite:copy.db",
        "import",
        "--quiet",
        "pruned.json",
    ])
    .expect(0);
    let id = old[0]["id"].as_str().unwrap();
    let err = sb
        .run(&["compare", "--baseline", id, "--candidate", "latest"])
        .expect(2)
        .stderr();
    assert!(
        err.contains("was pruned") && err.lines().count() == 1,
        "{err}"
    );
    sb.run(&["report", "--quiet"]).expect(0);

    let again = sb
        .run(&[
            "prune",
            "--older-than",
            "2000",
            "--keep-summaries",
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(
        (
            again["runs_summarized"].clone(),
            again["runs_already_summarized"].clone()
        ),
        (json!(0), json!(15))
    );

    let deleted = sb
        .run(&["prune", "--older-than", "2000"])
        .expect(0)
        .stdout();
    assert!(deleted.contains("15 run(s) deleted"), "{deleted}");
    assert_eq!(sb.count("runs"), 15);
    assert_eq!(sb.count("samples"), 150);
}

#[test]
fn bad_requests_fail_with_one_line() {
    let sb = Sandbox::new();
    let err = sb.run(&["prune", "--older-than", "30"]).expect(2).stderr();
    assert!(err.contains("does not exist"), "{err}");
    let err = sb.run(&["prune", "--older-than", "-3"]).expect(2).stderr();
    assert!(err.contains("--older-than"), "{err}");
    history(&sb);
    let err = sb
        .run(&["prune", "--older-than", "4000000000"])
        .expect(2)
        .stderr();
    assert!(err.contains("--older-than"), "{err}");
    assert_eq!(sb.count("runs"), 30, "nothing was pruned");
}
