//! Exact commits end to end on a real temporary git repository: `--commit` stores each run
//! under its sha with author and subject, reuses worktrees and cached builds, names the commit
//! of a failing build or a bad revision, and `--base/--head` stores an interleaved, linked pair.

use std::process::Command;

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// The benchmark prints pitwall JSON whose samples sit around the level in `level.txt`.
const BENCH: &str = r#"level=$(cat level.txt)
printf '{"schema":"pitwall/v1","benchmarks":[{"name":"work","samples":['
i=0; sep=""
while [ $i -lt 12 ]; do printf '%s%s.%s' "$sep" "$level" "$i"; sep=","; i=$((i+1)); done
printf ']}]}'
"#;

const CONFIG: &str = "[project]\nname = \"repo\"\nbuild = \"sh build.sh\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n";

/// A repository with three commits at levels 100, 100 and 150; returns their shas.
fn repo(sb: &Sandbox) -> Vec<String> {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.sh", BENCH);
    sb.write("build.sh", "echo building; date +%s%N >> builds.log\n");
    sb.write("pitwall.toml", CONFIG);
    sb.write(".gitignore", "builds.log\n");
    let mut shas = Vec::new();
    for (level, subject) in [
        (100, "first"),
        (100, "second: docs only"),
        (150, "third: slower"),
    ] {
        sb.write("level.txt", &format!("{level}\n"));
        sb.write("NOTES", subject);
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", subject]);
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    shas
}

fn runs(sb: &Sandbox) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    doc["runs"].as_array().unwrap().clone()
}

#[test]
fn three_commits_are_stored_under_their_shas_and_worktrees_are_reused() {
    let sb = Sandbox::new();
    let shas = repo(&sb);
    let out = sb
        .run(&[
            "run", "--commit", "HEAD~2", "--commit", "HEAD~1", "--commit", "main",
        ])
        .expect(0);
    assert_eq!(
        out.stdout().matches("status complete").count(),
        3,
        "{}",
        out.stdout()
    );
    let stored = runs(&sb);
    assert_eq!(stored.len(), 3);
    let commits: Vec<&str> = stored
        .iter()
        .map(|r| r["commit"].as_str().unwrap())
        .collect();
    assert_eq!(commits, shas.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(stored[2]["branch"], "main");
    assert_eq!(stored[2]["commit_info"]["subject"], "third: slower");
    assert_eq!(stored[2]["commit_info"]["author"], "Ada <ada@example.com>");
    let first = stored[0]["results"][0]["samples"][0].as_f64().unwrap();
    let third = stored[2]["results"][0]["samples"][0].as_f64().unwrap();
    assert_eq!(
        (first, third),
        (100.0, 150.0),
        "each run measured its own commit"
    );
    for sha in &shas {
        let wt = sb.path().join(".pitwall/worktrees").join(sha);
        assert_eq!(
            std::fs::read_to_string(wt.join("level.txt"))
                .unwrap()
                .trim(),
            if sha == &shas[2] { "150" } else { "100" }
        );
        assert_eq!(
            std::fs::read_to_string(wt.join("builds.log"))
                .unwrap()
                .lines()
                .count(),
            1
        );
    }
    // The user's checkout is untouched and clean.
    assert_eq!(git(sb.path(), &["status", "--porcelain"]), "");

    // Second run: worktrees and builds are reused.
    let out = sb.run(&["run", "--commit", &shas[0]]).expect(0);
    assert!(out.stderr().contains("build cached"), "{}", out.stderr());
    let wt = sb.path().join(".pitwall/worktrees").join(&shas[0]);
    assert_eq!(
        std::fs::read_to_string(wt.join("builds.log"))
            .unwrap()
            .lines()
            .count(),
        1,
        "not rebuilt"
    );
    // --rebuild recreates the worktree and builds again.
    sb.run(&["run", "--commit", &shas[0], "--rebuild"])
        .expect(0);
    assert_eq!(
        std::fs::read_to_string(wt.join("builds.log"))
            .unwrap()
            .lines()
            .count(),
        1,
        "fresh worktree, one new build"
    );
    assert_eq!(runs(&sb).len(), 5);
}

#[test]
fn bad_revision_is_a_usage_error_naming_it() {
    let sb = Sandbox::new();
    repo(&sb);
    let e = sb
        .run(&["run", "--commit", "HEAD", "--commit", "no-such-branch"])
        .expect(2)
        .stderr();
    assert!(e.contains("unknown revision `no-such-branch`"), "{e}");
    assert!(
        !sb.db().exists() || sb.count("runs") == 0,
        "nothing measured when any revision is bad"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let out = Command::new(pitwall_e2e::pitwall_bin())
        .args(["run", "--commit", "HEAD"])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not inside a git repository"));
}

#[test]
fn failing_build_is_stored_with_its_log_and_named() {
    let sb = Sandbox::new();
    let shas = repo(&sb);
    sb.write(
        "build.sh",
        "echo compiling kernels; echo 'error: nvcc exploded' >&2; exit 1\n",
    );
    git(sb.path(), &["commit", "-q", "-am", "break the build"]);
    let broken = git(sb.path(), &["rev-parse", "HEAD"]);
    let out = sb
        .run(&["run", "--commit", &shas[0], "--commit", "HEAD"])
        .expect(3);
    let e = out.stderr();
    assert!(
        e.contains(&format!(
            "commit {}: build command `sh build.sh` failed",
            &broken[..12]
        )),
        "{e}"
    );
    // The error is one line; the log tail follows as indented context lines.
    let lines: Vec<&str> = e.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("build command"))
        .unwrap();
    assert_eq!(
        lines[at],
        format!(
            "error: commit {}: build command `sh build.sh` failed: command `sh build.sh` exited with status 1",
            &broken[..12]
        )
    );
    assert_eq!(
        lines[at + 1..at + 3],
        ["  | compiling kernels", "  | error: nvcc exploded"],
        "{e}"
    );
    let stored = runs(&sb);
    assert_eq!(
        stored.len(),
        2,
        "the good commit is measured, the broken one recorded"
    );
    let failed = stored
        .iter()
        .find(|r| r["commit"] == broken.as_str())
        .unwrap();
    assert_eq!(failed["status"], "failed");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .ends_with("exited with status 1; log tail:\ncompiling kernels\nerror: nvcc exploded"),
        "{failed}"
    );
    assert_eq!(failed["results"], serde_json::json!([]));
    // `show` prints the stored error, one line then the log tail.
    let shown = sb
        .run(&["show", failed["id"].as_str().unwrap()])
        .expect(0)
        .stdout();
    assert!(
        shown.contains("error: commit ") && shown.contains("  | compiling kernels"),
        "{shown}"
    );

    // A later failed build of the good commit does not hide its measured run: the commit
    // resolves to its latest run with results.
    sb.write("pitwall.toml", &CONFIG.replace("sh build.sh", "exit 7"));
    sb.run(&["run", "--commit", &shas[0], "--rebuild"])
        .expect(3);
    let out = sb
        .run(&[
            "compare",
            "--baseline",
            &shas[0][..10],
            "--candidate",
            &shas[0][..10],
        ])
        .expect(0);
    assert!(out.stdout().contains("toy/"), "{}", out.stdout());
}

#[test]
fn interleaved_base_head_is_a_linked_pair_and_compare_uses_it() {
    let sb = Sandbox::new();
    let shas = repo(&sb);
    let out = sb
        .run(&["run", "--base", "HEAD~1", "--head", "HEAD", "--rounds", "2"])
        .expect(1);
    assert!(out.stdout().contains("regression"), "{}", out.stdout());
    assert!(out.stderr().contains("2 rounds"), "{}", out.stderr());
    let stored = runs(&sb);
    assert_eq!(stored.len(), 2);
    let (base, head) = (&stored[0], &stored[1]);
    assert_eq!(base["commit"], shas[1].as_str());
    assert_eq!(head["commit"], shas[2].as_str());
    assert_eq!(base["pair"]["id"], head["pair"]["id"]);
    assert_eq!(base["pair"]["role"], "base");
    assert_eq!(head["pair"]["role"], "head");
    assert_eq!(head["pair"]["rounds"], 2);
    // Two rounds of a 12-sample command: 24 samples per side.
    assert_eq!(head["results"][0]["samples"].as_array().unwrap().len(), 24);
    let v = sb.run(&["compare", "--format", "json"]).expect(1).json();
    assert_eq!(v["benchmarks"][0]["verdict"], "regression");
    assert!(v["baseline"].as_str().unwrap().starts_with("base "), "{v}");
    let pair = base["pair"]["id"].as_str().unwrap();
    sb.run(&["compare", "--pair", &pair[..13]]).expect(1);
}

#[test]
fn a_dirty_cached_worktree_is_refused_with_a_hint() {
    let sb = Sandbox::new();
    let shas = repo(&sb);
    sb.run(&["run", "--quiet", "--commit", &shas[0]]).expect(0);
    let wt = sb.path().join(".pitwall/worktrees").join(&shas[0]);
    std::fs::write(wt.join("level.txt"), "999\n").unwrap();
    let e = sb.run(&["run", "--commit", &shas[0]]).expect(3).stderr();
    assert!(
        e.contains(&format!("worktree for commit {}", shas[0]))
            && e.contains("level.txt")
            && e.contains("--rebuild"),
        "{e}"
    );
    sb.run(&["run", "--quiet", "--commit", &shas[0], "--rebuild"])
        .expect(0);
    assert_eq!(
        std::fs::read_to_string(wt.join("level.txt"))
            .unwrap()
            .trim(),
        "100",
        "recreated clean"
    );
}
