//! Branches, testbeds and roles end to end (issue 13, the foundation): results imported into a
//! real git repository's history with `--branch`/`--testbed`/`--role`, two testbeds at
//! different levels, a slower feature branch and a pull request's runs, and `detect` finding
//! on main, per testbed, only the step that is really there.

use std::path::Path;

use pitwall_e2e::{Sandbox, git};
use serde_json::{Value, json};

/// A pitwall JSON result file with one benchmark, `parse`, at `level` ns (±1%).
fn result_file(sb: &Sandbox, name: &str, level: f64, salt: usize) -> String {
    let samples = pitwall_e2e::spread_samples(level, 0.01, salt, 15);
    pitwall_e2e::one_benchmark_file(sb, name, "parse", &samples)
}

/// One commit on the current branch of the repository in `dir`; its sha.
fn commit(dir: &Path, n: usize) -> String {
    std::fs::write(dir.join("src.txt"), format!("change {n}\n")).unwrap();
    git(dir, &["add", "src.txt"]);
    git(dir, &["commit", "-q", "-m", &format!("change {n}")]);
    git(dir, &["rev-parse", "HEAD"])
}

fn import(sb: &Sandbox, file: &str, sha: &str, labels: &[&str]) {
    let mut args = vec!["import", "--quiet", file, "--commit", sha];
    args.extend_from_slice(labels);
    sb.run(&args).expect(0);
}

fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The step on testbed `h200-a` is at main's commit 20 (+8%); `cpu-b` is three times slower
/// and flat; the feature branch and a pull request's head are slower still.
#[test]
fn detect_on_main_finds_only_the_real_step_per_testbed() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let mut main = Vec::new();
    for n in 0..30 {
        main.push(commit(dir, n));
    }
    git(dir, &["checkout", "-q", "-b", "feature", &main[15]]);
    let feature: Vec<String> = (100..106).map(|n| commit(dir, n)).collect();

    for (i, sha) in main.iter().enumerate() {
        let a_level = if i < 20 { 1000.0 } else { 1080.0 };
        let a = result_file(&sb, &format!("a{i}.json"), a_level, i);
        import(&sb, &a, sha, &["--branch", "main", "--testbed", "h200-a"]);
        let b = result_file(&sb, &format!("b{i}.json"), 3000.0, i + 50);
        import(&sb, &b, sha, &["--branch", "main", "--testbed", "CPU B"]);
    }
    for (i, sha) in feature.iter().enumerate() {
        let f = result_file(&sb, &format!("f{i}.json"), 1400.0, i + 90);
        import(
            &sb,
            &f,
            sha,
            &["--branch", "feature", "--testbed", "h200-a"],
        );
        // A pull request measured on main's testbed: stored, never history.
        let h = result_file(&sb, &format!("h{i}.json"), 1500.0, i + 95);
        import(
            &sb,
            &h,
            sha,
            &[
                "--branch",
                "main",
                "--testbed",
                "h200-a",
                "--role",
                "pr-head",
            ],
        );
    }

    let out = sb
        .run(&["detect", "--benchmark", "parse", "--format", "json"])
        .expect(0)
        .stdout();
    let found = lines(&out);
    assert_eq!(found.len(), 2, "one series per testbed: {out}");
    // Testbed names are sanitized: `CPU B` is stored as `cpu-b`.
    let by_bed = |bed: &str| {
        found
            .iter()
            .find(|l| l["testbed"] == bed)
            .unwrap_or_else(|| panic!("no series for {bed}: {out}"))
    };
    let (a, b) = (by_bed("h200-a"), by_bed("cpu-b"));
    assert_eq!(a["points"], 30, "{a}");
    assert_eq!(b["points"], 30, "{b}");
    assert_eq!(b["change_points"], json!([]), "{b}");
    let changes = a["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{a}");
    assert_eq!(changes[0]["index"], 20, "{a}");
    assert_eq!(changes[0]["commit_after"], main[20].as_str());
    assert_eq!(changes[0]["commit_before"], main[19].as_str());

    // One testbed, one branch on request; the table names testbeds when it shows several.
    let out = sb
        .run(&[
            "detect",
            "--benchmark",
            "parse",
            "--testbed",
            "h200-a",
            "--branch",
            "feature",
            "--format",
            "json",
        ])
        .expect(0)
        .stdout();
    let feature_only = lines(&out);
    assert_eq!(feature_only.len(), 1, "{out}");
    assert_eq!(feature_only[0]["points"], 6, "{out}");
    let table = sb
        .run(&["detect", "--benchmark", "parse"])
        .expect(0)
        .stdout();
    assert!(
        table.contains("pitwall-json/parse/time @ h200-a"),
        "{table}"
    );
    assert!(
        table.contains("no change points: pitwall-json/parse/time @ cpu-b"),
        "{table}"
    );
    let e = sb
        .run(&["detect", "--benchmark", "parse", "--testbed", "nowhere"])
        .expect(2)
        .stderr();
    assert!(
        e.contains("in the history of branch `main` on testbed `nowhere`"),
        "{e}"
    );

    // Every stored run says what it is part of.
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 72);
    let labelled = |branch: &str, bed: &str, role: &str| {
        runs.iter()
            .filter(|r| r["branch"] == branch && r["testbed"] == bed && r["role"] == role)
            .count()
    };
    assert_eq!(labelled("main", "h200-a", "history"), 30);
    assert_eq!(labelled("main", "cpu-b", "history"), 30);
    assert_eq!(labelled("feature", "h200-a", "history"), 6);
    assert_eq!(labelled("main", "h200-a", "pr-head"), 6);
}

/// Without flags, other tools' results take their branch from the CI job's variables and an
/// unknown testbed; `[testbed] name` names this machine; flags are checked.
#[test]
fn import_defaults_come_from_ci_variables_and_the_config() {
    let sb = Sandbox::new();
    let file = result_file(&sb, "r.json", 100.0, 1);
    let out = sb
        .cmd(&["import", "--quiet", &file])
        .env("GITHUB_HEAD_REF", "")
        .env("GITHUB_REF_NAME", "release-7")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    sb.write("pitwall.toml", "[testbed]\nname = \"Rack 4 / H200\"\n");
    let out = sb
        .cmd(&["import", "--quiet", &file])
        .env("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "topic")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[0]["branch"], "release-7");
    assert_eq!(runs[0]["testbed"], "unknown");
    assert_eq!(runs[0]["role"], "history");
    assert_eq!(runs[1]["branch"], "topic");
    assert_eq!(runs[1]["testbed"], "rack-4-h200");

    let e = sb
        .run(&["import", &file, "--role", "nightly"])
        .expect(2)
        .stderr();
    assert!(e.contains("unknown role `nightly`"), "{e}");
    sb.write("pitwall.toml", "[testbed]\nname = \" \"\n");
    let e = sb.run(&["import", &file]).expect(2).stderr();
    assert!(e.contains("[testbed] name must not be empty"), "{e}");
    // Re-importing an export is idempotent: its runs keep the labels they record.
    sb.write("pitwall.toml", "");
    let export = sb.write("all.json", &doc.to_string());
    let out = sb
        .run(&["import", export.to_str().unwrap(), "--testbed", "other"])
        .expect(0)
        .stderr();
    assert!(out.contains("imported 0 run(s), 2 already stored"), "{out}");
}

/// A command suite that measures `true`, quickly.
const TINY: &str = "[project]\nname = \"tiny\"\n\n[[suite]]\nname = \"t\"\nkind = \"command\"\nformat = \"wall-time\"\ncommand = \"true\"\nwarmup_s = 0\nmax_time_s = 0.05\nmin_samples = 5\n";

/// `run` stores history on the branch checked out and this host's testbed; the sides of
/// `run --base/--head` are a pull request's; the flags override each.
#[test]
fn run_labels_its_runs() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "trunk"]);
    sb.write("pitwall.toml", TINY);
    std::fs::write(dir.join(".gitignore"), ".pitwall/\n").unwrap();
    git(dir, &["add", "pitwall.toml", ".gitignore"]);
    git(dir, &["commit", "-q", "-m", "bench"]);
    commit(dir, 1);
    sb.run(&["run", "--quiet", "--no-report"]).expect(0);
    sb.run(&[
        "run",
        "--quiet",
        "--no-report",
        "--branch",
        "nightly",
        "--testbed",
        "Lab 3",
        "--role",
        "pr-head",
    ])
    .expect(0);
    // Timing `true` on a busy machine may well give a "regression" (exit 1); only the labels
    // of the stored pair are checked here.
    let pair = sb.run(&[
        "run",
        "--quiet",
        "--no-report",
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--rounds",
        "1",
    ]);
    assert!(matches!(pair.code(), 0 | 1), "{}", pair.stderr());
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    let mut labels: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["branch"].as_str().unwrap_or("-"),
                r["role"].as_str().unwrap(),
            )
        })
        .collect();
    // The pair's two runs may be stored in either order; the first two runs are not.
    labels[2..].sort_unstable();
    assert_eq!(
        labels,
        [
            ("trunk", "local"),
            ("nightly", "pr-head"),
            ("-", "pr-base"),
            ("trunk", "pr-head"),
        ],
        "{doc}"
    );
    let host = runs[0]["fingerprint"]["hostname"].as_str().unwrap();
    let short = host.split('.').next().unwrap().to_lowercase();
    assert!(
        runs[0]["testbed"].as_str().unwrap().ends_with(&short),
        "{} for host {host}",
        runs[0]["testbed"]
    );
    assert_eq!(runs[1]["testbed"], "lab-3");
}
