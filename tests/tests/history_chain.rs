//! Issue 27 item 1 end to end, on real temporary git repositories: a branch's history is its
//! first-parent chain, so a commit of a branch merged with `--no-ff` is stored when measured
//! (`run --commit`, `ci --push`) but as a `local` run outside main's history, with a warning;
//! and `import --commit` in a checkout records the commit's first-parent position, so results
//! imported out of order still make a history in git's order.

use std::path::Path;

use pitwall_e2e::{LEVEL_BENCH, Sandbox, git};
use serde_json::Value;

const CONFIG: &str = "[project]\nname = \"chain\"\n\n[testbed]\nname = \"bed\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\nformat = \"pitwall-json\"\n";

/// One author and committer date for every commit, as scripted commits have.
const DATE: &str = "2026-11-02T10:00:00+00:00";

/// A commit of everything in `dir` with message `msg` at [`DATE`]; its sha.
fn commit(dir: &Path, msg: &str) -> String {
    pitwall_e2e::commit_dated(dir, msg, DATE)
}

/// A commit whose benchmark `work` runs at `level`.
fn level_commit(sb: &Sandbox, level: u32, msg: &str) -> String {
    sb.write("level.txt", &format!("{level}\n"));
    // A file of its own per commit: the branches merge without conflicts.
    sb.write(&format!("notes/{msg}"), "\n");
    commit(sb.path(), msg)
}

fn runs(sb: &Sandbox) -> Vec<Value> {
    pitwall_e2e::listed_runs(sb)
}

fn run_of<'a>(runs: &'a [Value], sha: &str) -> Vec<&'a Value> {
    runs.iter().filter(|r| r["commit"] == sha).collect()
}

#[test]
fn a_merged_branchs_commit_is_stored_but_not_in_mains_history() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.sh", LEVEL_BENCH);
    sb.write("pitwall.toml", CONFIG);
    sb.write(".gitignore", ".pitwall/\n");
    let mut main: Vec<String> = (0..6)
        .map(|i| level_commit(&sb, 100, &format!("m{i}")))
        .collect();
    git(dir, &["checkout", "-q", "-b", "feature"]);
    // The feature branch is twice as slow until its last commit puts it right.
    let f1 = level_commit(&sb, 200, "f1");
    let f2 = level_commit(&sb, 200, "f2");
    level_commit(&sb, 100, "f3");
    git(dir, &["checkout", "-q", "main"]);
    main.push(level_commit(&sb, 100, "m6"));
    git(
        dir,
        &["merge", "-q", "--no-ff", "-m", "merge feature", "feature"],
    );
    main.push(git(dir, &["rev-parse", "HEAD"]));
    main.extend((7..10).map(|i| level_commit(&sb, 100, &format!("m{i}"))));
    let range = format!("{}..{}", main[0], main[10]);
    sb.run(&[
        "run",
        "-q",
        "--no-report",
        "--commit",
        &main[0],
        "--commit",
        &range,
    ])
    .expect(0);
    assert_eq!(runs(&sb).len(), main.len());

    // f2 is reachable from main, but not on its first-parent chain.
    let out = sb.run(&["run", "--no-report", "--commit", &f2]).expect(0);
    let warning = format!(
        "warning: commit {} is not on main's first-parent history",
        &f2[..12]
    );
    assert_eq!(
        out.stderr().matches(&warning).count(),
        1,
        "{}",
        out.stderr()
    );
    let listed = runs(&sb);
    assert_eq!(listed.len(), main.len() + 1);
    let off = run_of(&listed, &f2);
    assert_eq!(off.len(), 1, "stored and listed: {listed:?}");
    assert_eq!(off[0]["role"], "local", "{off:?}");
    assert_eq!(off[0]["branch"], Value::Null, "{off:?}");
    let table = sb.run(&["runs"]).expect(0).stdout();
    let row = table.lines().find(|l| l.contains(&f2[..12])).unwrap();
    assert!(!row.contains("main") && row.contains("local"), "{table}");
    // main's history has its own eleven commits and no step.
    let d = pitwall_e2e::detect_one(&sb, "work");
    assert_eq!(d["points"], main.len(), "{d}");
    assert!(d["change_points"].as_array().unwrap().is_empty(), "{d}");

    // Named for the branch whose first-parent chain has it, it is that branch's history.
    let out = sb
        .run(&["run", "--no-report", "--commit", &f2, "--branch", "feature"])
        .expect(0);
    assert!(!out.stderr().contains("first-parent"), "{}", out.stderr());
    let listed = runs(&sb);
    let on_feature = run_of(&listed, &f2);
    assert!(
        on_feature
            .iter()
            .any(|r| r["role"] == "history" && r["branch"] == "feature"),
        "{on_feature:?}"
    );

    // A push job handed the same kind of commit for main stores it the same way.
    let out = sb
        .cmd(&["ci", "--push"])
        .env("GITHUB_SHA", &f1)
        .env("GITHUB_REF_NAME", "main")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("commit {} is not on main's", &f1[..12])),
        "{stderr}"
    );
    let listed = runs(&sb);
    let pushed = run_of(&listed, &f1);
    assert_eq!(pushed.len(), 1, "{listed:?}");
    assert_eq!(pushed[0]["role"], "local", "{pushed:?}");
    assert_eq!(
        pitwall_e2e::detect_one(&sb, "work")["points"],
        main.len(),
        "still main's eleven commits"
    );
    // Two result files imported for that commit: both `local`, the commit warned about once.
    let files = [
        result_file(&sb, "a.json", 100.0, 1),
        result_file(&sb, "b.json", 100.0, 2),
    ];
    let out = sb
        .run(&["import", &files[0], &files[1], "--commit", &f1])
        .expect(0);
    assert_eq!(
        out.stderr()
            .matches(&format!("commit {} is not on main's", &f1[..12]))
            .count(),
        1,
        "{}",
        out.stderr()
    );
    let imported: Vec<Value> = runs(&sb)
        .into_iter()
        .filter(|r| r["commit"] == f1 && r["role"] == "local")
        .collect();
    assert_eq!(imported.len(), 3, "the push's run and the two files' runs");
    // The tip of main, pushed, is main's history as before.
    let out = sb
        .cmd(&["ci", "--push"])
        .env("GITHUB_SHA", &main[10])
        .env("GITHUB_REF_NAME", "main")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("first-parent"));
    assert!(
        run_of(&runs(&sb), &main[10])
            .iter()
            .all(|r| r["role"] == "history")
    );
}

/// A pitwall JSON result file with one benchmark, `parse`, at `level` ns (±0.3%).
fn result_file(sb: &Sandbox, name: &str, level: f64, salt: usize) -> String {
    let samples = pitwall_e2e::spread_samples(level, 0.003, salt, 15);
    pitwall_e2e::one_benchmark_file(sb, name, "parse", &samples)
}

#[test]
fn results_imported_out_of_order_in_a_checkout_follow_first_parent_order() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("pitwall.toml", CONFIG);
    sb.write(".gitignore", ".pitwall/\n*.json\n");
    let shas: Vec<String> = (0..12)
        .map(|i| {
            sb.write("NOTES", &format!("change {i}\n"));
            commit(dir, &format!("change {i}"))
        })
        .collect();
    // Newest first: without the commits' positions, import time would reverse the history.
    for (i, sha) in shas.iter().enumerate().rev() {
        let level = if i < 6 { 100.0 } else { 130.0 };
        let file = result_file(&sb, &format!("r{i}.json"), level, i);
        sb.run(&["import", "--quiet", &file, "--commit", sha])
            .expect(0);
    }
    let d = pitwall_e2e::detect_one(&sb, "parse");
    assert_eq!(d["points"], 12, "{d}");
    let changes = d["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{d}");
    assert_eq!(changes[0]["commit_before"], shas[5].as_str(), "{d}");
    assert_eq!(changes[0]["commit_after"], shas[6].as_str(), "{d}");
    assert!(changes[0]["rel_change"].as_f64().unwrap() > 0.25, "{d}");
    let doc = sb.run(&["export"]).expect(0).stdout();
    assert!(doc.contains("\"first_parent_position\": 12"), "{doc:.2000}");
    assert!(doc.contains("\"subject\": \"change 11\""), "{doc:.2000}");

    // Outside any repository the runs keep date order, as before: nothing is recorded.
    let bare = Sandbox::new();
    bare.write("pitwall.toml", CONFIG);
    let file = result_file(&bare, "r.json", 100.0, 0);
    bare.run(&["import", "--quiet", &file, "--commit", &shas[0]])
        .expect(0);
    let doc = bare.run(&["export"]).expect(0).stdout();
    assert!(!doc.contains("first_parent_position"), "{doc:.2000}");
}
