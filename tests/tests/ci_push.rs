//! `pitwall ci --push` end to end (issue 13): a push job measures the pushed commit of a real
//! git repository as one `history` run of its branch, refreshes the alerts and writes the
//! report; it exits 1 exactly on the push that raised a regression alert, and that alert names
//! the commit of the step. `--push` with `--base` is a usage error.

use pitwall_e2e::{LEVEL_BENCH, Sandbox, git};
use serde_json::Value;

const CONFIG: &str = "[project]\nname = \"repo\"\n\n[testbed]\nname = \"bed\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\nformat = \"pitwall-json\"\n";

#[test]
fn each_push_is_a_history_run_and_the_step_fails_its_job() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "trunk"]);
    sb.write("bench.sh", LEVEL_BENCH);
    sb.write("pitwall.toml", CONFIG);
    sb.write(".gitignore", ".pitwall/\n");
    let mut codes = Vec::new();
    let mut shas = Vec::new();
    for i in 0..18 {
        sb.write(
            "level.txt",
            &format!("{}\n", if i < 12 { 100 } else { 130 }),
        );
        sb.write("NOTES", &format!("change {i}\n"));
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("commit {i}")]);
        let sha = git(dir, &["rev-parse", "HEAD"]);
        // As a push job sees it: the commit in GITHUB_SHA, the branch in GITHUB_REF_NAME.
        let out = sb
            .cmd(&["ci", "--push", "--quiet"])
            .env("GITHUB_SHA", &sha)
            .env("GITHUB_REF_NAME", "trunk")
            .output()
            .unwrap();
        let code = out.status.code().unwrap();
        assert!(matches!(code, 0 | 1), "{out:?}");
        codes.push(code);
        shas.push(sha);
    }
    assert_eq!(
        codes.iter().filter(|c| **c == 1).count(),
        1,
        "one push raises the alert: {codes:?}"
    );
    let runs: Value = sb.run(&["runs", "--format", "json"]).expect(0).json();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 18);
    let labels: Vec<(&Value, &Value)> = runs.iter().map(|r| (&r["role"], &r["branch"])).collect();
    assert!(
        labels
            .iter()
            .all(|(role, branch)| *role == "history" && *branch == "trunk"),
        "{labels:?}"
    );
    let alerts: Value = sb.run(&["alerts", "--format", "json"]).expect(0).json();
    let alerts = alerts["alerts"].as_array().unwrap();
    assert_eq!(alerts.len(), 1, "{}", alerts.len());
    assert_eq!(alerts[0]["first_bad"], shas[12].as_str());
    assert_eq!(alerts[0]["branch"], "trunk");
    assert!(sb.path().join(".pitwall/report/index.html").is_file());
}

#[test]
fn push_with_a_base_is_a_usage_error() {
    let sb = Sandbox::new();
    let err = sb
        .run(&["ci", "--push", "--base", "HEAD~1"])
        .expect(2)
        .stderr();
    assert!(err.contains("--push") && err.contains("--base"), "{err}");
}
