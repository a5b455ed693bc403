//! Short histories end to end (issue 27): results of a real git repository's commits imported
//! into a real temporary store, then `pitwall detect`. Five runs either side of a clean +13%
//! step (the per-run medians of the C benchmark, about 4.6× the run-to-run noise) are a
//! change point at the right commit; with only two runs after it, the step is printed as
//! suspected with the runs that would settle it; re-measuring commits refines their points
//! instead of adding points.

use std::path::Path;

use pitwall_e2e::{Sandbox, git};
use serde_json::{Value, json};

/// The per-run medians of `sort`, in ms: five before the slowdown, five after.
const MEDIANS_MS: [f64; 10] = [
    10.21, 10.19, 10.15, 10.21, 9.84, 11.35, 11.68, 11.18, 11.14, 12.03,
];

/// A pitwall JSON result file with one benchmark, `sort`, 9 samples within ±0.5% of
/// `median_ms` (in ns).
fn result_file(sb: &Sandbox, name: &str, median_ms: f64) -> String {
    let samples: Vec<f64> = (0..9)
        .map(|i| median_ms * 1e6 * (1.0 + 0.00125 * (i as f64 - 4.0)))
        .collect();
    pitwall_e2e::one_benchmark_file(sb, name, "sort", &samples)
}

/// One commit on the current branch of the repository in `dir`; its sha.
fn commit(dir: &Path, n: usize) -> String {
    std::fs::write(dir.join("sort.c"), format!("/* change {n} */\n")).unwrap();
    git(dir, &["add", "sort.c"]);
    git(dir, &["commit", "-q", "-m", &format!("change {n}")]);
    git(dir, &["rev-parse", "HEAD"])
}

fn import(sb: &Sandbox, i: usize, sha: &str, median_ms: f64, tag: &str) {
    let file = result_file(sb, &format!("r{i}{tag}.json"), median_ms);
    sb.run(&[
        "import", "--quiet", &file, "--commit", sha, "--branch", "main",
    ])
    .expect(0);
}

fn detect_json(sb: &Sandbox) -> Value {
    let out = sb
        .run(&["detect", "--benchmark", "sort", "--format", "json"])
        .expect(0)
        .stdout();
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    lines.into_iter().next().unwrap()
}

#[test]
fn five_runs_either_side_find_the_step_and_two_after_it_are_suspected() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let shas: Vec<String> = (0..MEDIANS_MS.len()).map(|n| commit(dir, n)).collect();

    // Five runs before the slowdown and two after it: too few to confirm, said so.
    for (i, sha) in shas.iter().enumerate().take(7) {
        import(&sb, i, sha, MEDIANS_MS[i], "");
    }
    let d = detect_json(&sb);
    assert_eq!(
        (d["points"].clone(), d["change_points"].clone()),
        (json!(7), json!([])),
        "{d}"
    );
    let s = &d["suspected"];
    assert_eq!(s["index"], 5, "{d}");
    assert_eq!(s["points_after"], 2, "{d}");
    assert_eq!(s["more_points"], 3, "{d}");
    assert_eq!(s["commit_after"], shas[5].as_str(), "{d}");
    assert_eq!(s["commit_before"], shas[4].as_str(), "{d}");
    let table = sb
        .run(&["detect", "--benchmark", "sort"])
        .expect(0)
        .stdout();
    assert!(
        table.contains("no change points: ") && table.contains("sort"),
        "{table}"
    );
    assert!(
        table.contains("2 commits after it; 3 more commits would confirm or clear it"),
        "{table}"
    );
    assert!(table.contains(&shas[5][..12]), "{table}");

    // Five after: a change point at the first slow commit, nothing left suspected.
    for (i, sha) in shas.iter().enumerate().skip(7) {
        import(&sb, i, sha, MEDIANS_MS[i], "");
    }
    let d = detect_json(&sb);
    assert_eq!(d["points"], 10, "{d}");
    let changes = d["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{d}");
    assert_eq!(changes[0]["index"], 5, "{d}");
    assert_eq!(changes[0]["commit_before"], shas[4].as_str(), "{d}");
    assert_eq!(changes[0]["commit_after"], shas[5].as_str(), "{d}");
    let rel = changes[0]["rel_change"].as_f64().unwrap();
    assert!((0.10..0.17).contains(&rel), "{d}");
    assert!(d.get("suspected").is_none(), "{d}");

    // Re-measuring commits (an old one and a slow one, stored last) refines their points:
    // still ten points, the same change point.
    import(&sb, 2, &shas[2], MEDIANS_MS[2] * 1.004, "again");
    import(&sb, 8, &shas[8], MEDIANS_MS[8] * 0.996, "again");
    let d = detect_json(&sb);
    assert_eq!(d["points"], 10, "one point per commit: {d}");
    let changes = d["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{d}");
    assert_eq!(changes[0]["index"], 5, "{d}");
    assert_eq!(changes[0]["commit_after"], shas[5].as_str(), "{d}");
}
