//! Contended runs in a history end to end (issue 27): a false −43% step made only of runs
//! measured on a contended machine is no change point and raises no alert; the runs stay
//! stored, are counted as left out by `pitwall detect`, and keep their contention through
//! export and import.

use std::path::Path;

use pitwall_e2e::{Sandbox, git};
use serde_json::{Value, json};

/// Six commits at 10 ms, then six whose runs read 5.7 ms because a loaded machine made them
/// so (the false "improvement" of `matmul`).
const MEDIANS_MS: [f64; 12] = [
    10.0, 10.05, 9.97, 10.02, 9.99, 10.03, 5.7, 5.72, 5.69, 5.71, 5.7, 5.73,
];

fn result_file(sb: &Sandbox, name: &str, median_ms: f64) -> String {
    let samples: Vec<f64> = (0..9)
        .map(|i| median_ms * 1e6 * (1.0 + 0.00125 * (i as f64 - 4.0)))
        .collect();
    pitwall_e2e::one_benchmark_file(sb, name, "matmul", &samples)
}

fn commit(dir: &Path, n: usize) -> String {
    std::fs::write(dir.join("LICENSE"), format!("licence, take {n}\n")).unwrap();
    git(dir, &["add", "LICENSE"]);
    git(dir, &["commit", "-q", "-m", &format!("licence {n}")]);
    git(dir, &["rev-parse", "HEAD"])
}

fn detect_json(sb: &Sandbox) -> Value {
    let out = sb
        .run(&["detect", "--benchmark", "matmul", "--format", "json"])
        .expect(0)
        .stdout();
    serde_json::from_str(out.lines().next().unwrap()).unwrap()
}

/// What a run measured under two spinning threads records.
fn loaded() -> Value {
    json!({
        "samples": 31,
        "other_runnable_threads": 1.9,
        "steal_pct": 0.0,
        "psi_some_pct": 48.5,
        "contended": true,
        "reasons": ["other runnable threads 1.9 ≥ 0.5", "cpu pressure 48.5% ≥ 10%"]
    })
}

#[test]
fn a_false_step_made_only_of_contended_runs_is_no_change_point() {
    // The history as measured, without contention: the false step is a change point.
    let measured = Sandbox::new();
    git(measured.path(), &["init", "-q", "-b", "main"]);
    let shas: Vec<String> = (0..MEDIANS_MS.len())
        .map(|n| commit(measured.path(), n))
        .collect();
    for (i, sha) in shas.iter().enumerate() {
        let file = result_file(&measured, &format!("r{i}.json"), MEDIANS_MS[i]);
        measured
            .run(&[
                "import", "--quiet", &file, "--commit", sha, "--branch", "main",
            ])
            .expect(0);
    }
    let d = detect_json(&measured);
    assert_eq!(d["change_points"].as_array().unwrap().len(), 1, "{d}");

    // The same runs, the slow ones recorded as contended.
    let mut doc = measured.run(&["export"]).expect(0).json();
    let slow: Vec<&str> = shas[6..].iter().map(String::as_str).collect();
    for run in doc["runs"].as_array_mut().unwrap() {
        if slow.contains(&run["commit"].as_str().unwrap()) {
            run["contention"] = loaded();
        } else {
            run["contention"] =
                json!({"samples": 30, "other_runnable_threads": 0.0, "contended": false});
        }
    }
    // Contention is pitwall/v8 content: the edited document declares it.
    doc["schema"] = json!("pitwall/v8");
    let sb = Sandbox::new();
    git(sb.path(), &["init", "-q", "-b", "main"]);
    let file = sb.write("export.json", &doc.to_string());
    sb.run(&["import", "--quiet", file.to_str().unwrap()])
        .expect(0);

    let d = detect_json(&sb);
    assert_eq!(d["points"], 6, "{d}");
    assert_eq!(d["change_points"], json!([]), "{d}");
    assert!(d.get("suspected").is_none(), "{d}");
    assert_eq!(d["contended_points"], 6, "{d}");
    let table = sb
        .run(&["detect", "--benchmark", "matmul"])
        .expect(0)
        .stdout();
    assert!(
        table.contains("6 points of contended runs left out of detection"),
        "{table}"
    );
    let alerts = sb.run(&["alerts", "--format", "json"]).expect(0).stdout();
    assert!(!alerts.contains("matmul"), "{alerts}");

    // Kept, with their contention, through export.
    let again = sb.run(&["export"]).expect(0).json();
    let runs = again["runs"].as_array().unwrap();
    assert_eq!(runs.len(), MEDIANS_MS.len());
    for run in runs {
        let want = if slow.contains(&run["commit"].as_str().unwrap()) {
            loaded()
        } else {
            json!({"samples": 30, "other_runnable_threads": 0.0, "contended": false})
        };
        assert_eq!(run["contention"], want, "{run}");
    }
}
