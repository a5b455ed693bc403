//! Alerts end to end (issue 13's done-when): a real git repository with 30 commits on main and
//! a feature branch, results imported with `--branch`/`--testbed` for two testbeds at different
//! levels, a +8% step on main on one testbed and slower runs on the feature branch. Exactly one
//! active alert names the step's commit; once acknowledged with a note it stays acknowledged,
//! with its note, however many runs are imported after. Run on SQLite and, where a server is
//! available, on PostgreSQL.

use std::path::Path;

use pitwall_e2e::http::webhook_server;
use pitwall_e2e::{LEVEL_BENCH, Sandbox, git, pg_server};
use serde_json::Value;

/// A pitwall JSON result file with one benchmark, `parse`, at `level` ns (±1%).
fn result_file(sb: &Sandbox, name: &str, level: f64, salt: usize) -> String {
    bench_file(sb, name, "parse", level, salt)
}

/// A pitwall JSON result file with one benchmark, `bench`, at `level` ns (±1%).
fn bench_file(sb: &Sandbox, name: &str, bench: &str, level: f64, salt: usize) -> String {
    let samples = pitwall_e2e::spread_samples(level, 0.01, salt, 15);
    pitwall_e2e::one_benchmark_file(sb, name, bench, &samples)
}

/// One commit on the current branch of the repository in `dir`; its sha.
fn commit(dir: &Path, n: usize) -> String {
    std::fs::write(dir.join("src.txt"), format!("change {n}\n")).unwrap();
    git(dir, &["add", "src.txt"]);
    git(dir, &["commit", "-q", "-m", &format!("change {n}")]);
    git(dir, &["rev-parse", "HEAD"])
}

/// `pitwall [--store URL] ARGS`, expecting `code`; its stdout.
fn pw(sb: &Sandbox, store: &[&str], args: &[&str], code: i32) -> String {
    let mut all: Vec<&str> = store.to_vec();
    all.extend_from_slice(args);
    sb.run(&all).expect(code).stdout()
}

fn import(sb: &Sandbox, store: &[&str], file: &str, sha: &str, labels: &[&str]) {
    let mut args = vec!["import", "--quiet", file, "--commit", sha];
    args.extend_from_slice(labels);
    pw(sb, store, &args, 0);
}

fn alerts(sb: &Sandbox, store: &[&str], filter: &[&str]) -> Vec<Value> {
    let mut args = vec!["alerts", "--format", "json"];
    args.extend_from_slice(filter);
    let out = pw(sb, store, &args, 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    doc["alerts"].as_array().unwrap().clone()
}

/// The whole scenario against the store `store` names (empty: the sandbox's SQLite file).
fn scenario(sb: &Sandbox, store: &[&str]) {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let main: Vec<String> = (0..30).map(|n| commit(dir, n)).collect();
    git(dir, &["checkout", "-q", "-b", "feature", &main[15]]);
    let feature: Vec<String> = (100..106).map(|n| commit(dir, n)).collect();

    for (i, sha) in main.iter().enumerate() {
        let a_level = if i < 20 { 1000.0 } else { 1080.0 };
        let a = result_file(sb, &format!("a{i}.json"), a_level, i);
        import(
            sb,
            store,
            &a,
            sha,
            &["--branch", "main", "--testbed", "h200-a"],
        );
        let b = result_file(sb, &format!("b{i}.json"), 3000.0, i + 50);
        import(
            sb,
            store,
            &b,
            sha,
            &["--branch", "main", "--testbed", "cpu-b"],
        );
    }
    for (i, sha) in feature.iter().enumerate() {
        let f = result_file(sb, &format!("f{i}.json"), 1400.0, i + 90);
        let labels = ["--branch", "feature", "--testbed", "h200-a"];
        import(sb, store, &f, sha, &labels);
        // A pull request's head on main's testbed, slower still: never an alert.
        let h = result_file(sb, &format!("h{i}.json"), 1500.0, i + 95);
        let labels = [
            "--branch",
            "main",
            "--testbed",
            "h200-a",
            "--role",
            "pr-head",
        ];
        import(sb, store, &h, sha, &labels);
    }

    let all = alerts(sb, store, &[]);
    assert_eq!(all.len(), 1, "exactly one alert: {all:?}");
    let a = &all[0];
    assert_eq!(a["status"], "active", "{a}");
    assert_eq!(a["first_bad"], main[20].as_str(), "{a}");
    assert_eq!(a["last_good"], main[19].as_str(), "{a}");
    assert_eq!(
        (a["testbed"].as_str(), a["branch"].as_str()),
        (Some("h200-a"), Some("main"))
    );
    let rel = a["rel_change"].as_f64().unwrap();
    assert!((rel - 0.08).abs() < 0.01, "{a}");
    let ci = a["ci"].as_array().unwrap();
    assert!(
        ci[0].as_f64().unwrap() <= rel && rel <= ci[1].as_f64().unwrap(),
        "{a}"
    );
    let id = a["id"].as_str().unwrap().to_string();

    // The table shows it; filters select it or not.
    let table = pw(sb, store, &["alerts"], 0);
    assert!(table.contains(&id) && table.contains("+8"), "{table}");
    assert_eq!(alerts(sb, store, &["--testbed", "cpu-b"]).len(), 0);
    assert_eq!(
        alerts(sb, store, &["--status", "active", "--branch", "main"]).len(),
        1
    );

    let out = pw(
        sb,
        store,
        &[
            "alert",
            "ack",
            &id,
            "--note",
            "new allocator, tracked in #42",
        ],
        0,
    );
    assert!(out.contains("acknowledged"), "{out}");
    // The change is recorded: by this command line's user, from active to acknowledged.
    let shown = pw(sb, store, &["alert", "show", &id, "--format", "json"], 0);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    let last = shown["changes"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["by"].as_str().unwrap().starts_with("local:"),
        "{shown}"
    );
    assert_eq!(
        (&last["from"], &last["to"], &last["note"]),
        (
            &Value::from("active"),
            &Value::from("acknowledged"),
            &Value::from("new allocator, tracked in #42")
        ),
        "{shown}"
    );
    let table = pw(sb, store, &["alert", "show", &id], 0);
    assert!(table.contains("active -> acknowledged"), "{table}");
    pw(sb, store, &["alert", "show", "nope"], 2);

    // More history: the step moves nowhere, the alert keeps its triage and stays alone.
    git(dir, &["checkout", "-q", "main"]);
    for n in 30..36 {
        let sha = commit(dir, n);
        let a = result_file(sb, &format!("a{n}.json"), 1080.0, n);
        import(
            sb,
            store,
            &a,
            &sha,
            &["--branch", "main", "--testbed", "h200-a"],
        );
    }
    let all = alerts(sb, store, &[]);
    assert_eq!(all.len(), 1, "still exactly one alert: {all:?}");
    assert_eq!(all[0]["id"], id.as_str());
    assert_eq!(all[0]["status"], "acknowledged");
    assert_eq!(all[0]["note"], "new allocator, tracked in #42");
    assert_eq!(all[0]["first_bad"], main[20].as_str());
    assert!(alerts(sb, store, &["--status", "active"]).is_empty());

    // A note longer than 1000 characters: refused with exit 2, the stored note unchanged.
    let long = "x".repeat(1001);
    let err = {
        let mut args: Vec<&str> = store.to_vec();
        args.extend_from_slice(&["alert", "dismiss", &id, "--note", &long]);
        sb.run(&args).expect(2).stderr()
    };
    assert!(
        err.contains("--note: 1001 characters, more than the 1000"),
        "{err}"
    );
    let all = alerts(sb, store, &[]);
    assert_eq!(all[0]["status"], "acknowledged");
    assert_eq!(all[0]["note"], "new allocator, tracked in #42");

    // An unknown id: one line naming it, exit 2.
    let err = {
        let mut args: Vec<&str> = store.to_vec();
        args.extend_from_slice(&["alert", "fix", "deadbeef0000"]);
        sb.run(&args).expect(2).stderr()
    };
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no alert `deadbeef0000`"), "{err}");
}

#[test]
fn one_alert_for_a_step_on_main_kept_through_triage_and_more_runs() {
    let sb = Sandbox::new();
    scenario(&sb, &[]);
}

#[test]
fn the_same_on_postgresql() {
    let Some(server) = pg_server() else {
        return;
    };
    let db = server.database();
    let sb = Sandbox::new();
    scenario(&sb, &["--store", db.url.as_str()]);
}

const CONFIG: &str = "[project]\nname = \"repo\"\nbuild = \"true\"\n\n[testbed]\nname = \"bed\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n";

/// History measured at every second commit of 40, the step (+40%) at commit 21: the alert's
/// range is commits 20..22, and `alert bisect` finds commit 21 inside it and keeps it.
#[test]
fn alert_bisect_finds_and_keeps_the_culprit_inside_the_range() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.sh", LEVEL_BENCH);
    sb.write("pitwall.toml", CONFIG);
    let mut shas = Vec::new();
    for i in 0..40 {
        sb.write(
            "level.txt",
            &format!("{}\n", if i < 21 { 100 } else { 140 }),
        );
        sb.write("NOTES", &format!("change {i}\n"));
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("commit {i}")]);
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    for i in (0..40).step_by(2) {
        let level = if i < 21 { 100.0 } else { 140.0 };
        let f = bench_file(&sb, &format!("r{i}.json"), "work", level, i);
        import(
            &sb,
            &[],
            &f,
            &shas[i],
            &["--suite", "toy", "--branch", "main"],
        );
    }
    let all = alerts(&sb, &[], &[]);
    assert_eq!(all.len(), 1, "{all:?}");
    let a = &all[0];
    assert_eq!(
        (a["last_good"].as_str(), a["first_bad"].as_str()),
        (Some(shas[20].as_str()), Some(shas[22].as_str())),
        "{a}"
    );
    assert_eq!(a["testbed"], "bed");
    let id = a["id"].as_str().unwrap();
    let v: Value = sb
        .run(&["alert", "bisect", id, "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(v["first_bad"]["sha"], shas[21].as_str(), "{v}");
    let all = alerts(&sb, &[], &[]);
    assert_eq!(all[0]["culprit"], shas[21].as_str());
    assert_eq!(all[0]["status"], "active", "bisecting does not triage");
}

/// New regressions are posted once, as Slack-compatible `{"text": …}`, to the webhook
/// `PITWALL_ALERT_WEBHOOK` names; imports that raise no new alert post nothing, and the URL
/// (a secret) is never printed.
#[test]
fn new_regressions_are_posted_to_the_webhook_once() {
    let sb = Sandbox::new();
    let (url, bodies) = webhook_server();
    for i in 0..30 {
        let level = if i < 20 { 1000.0 } else { 1080.0 };
        let f = result_file(&sb, &format!("a{i}.json"), level, i);
        let sha = format!("{i:040x}");
        let out = sb
            .cmd(&[
                "import",
                &f,
                "--commit",
                &sha,
                "--branch",
                "main",
                "--testbed",
                "h200-a",
            ])
            .env("PITWALL_ALERT_WEBHOOK", &url)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("SECRET"), "{stderr}");
    }
    let got: Vec<String> = bodies.try_iter().collect();
    assert_eq!(got.len(), 1, "one post for the one new alert: {got:?}");
    let (line, body) = got[0].split_once('\n').unwrap();
    assert_eq!(line, "POST /hooks/T000/SECRET");
    let body: Value = serde_json::from_str(body).unwrap();
    let text = body["text"].as_str().unwrap();
    let all = alerts(&sb, &[], &[]);
    assert_eq!(all.len(), 1);
    assert!(
        text.contains("regression `pitwall-json/parse/time` on `h200-a` (`main`): +"),
        "{text}"
    );
    assert!(
        text.contains(all[0]["id"].as_str().unwrap()),
        "{text} {all:?}"
    );
}

/// With `[github] publish = ["issue"]`, each new regression opens one GitHub issue, labelled
/// and marked, and only that is published; a second store of the same history (re-detecting
/// the same step) updates that issue instead of opening another.
#[test]
fn new_regressions_open_one_github_issue_each() {
    use pitwall_e2e::github::{REPO, Server};
    let server = Server::start();
    let run_all = |sb: &Sandbox| -> String {
        sb.write(
            "pitwall.toml",
            &format!(
                "[project]\nname = \"demo\"\n\n[github]\nrepo = \"{REPO}\"\npublish = [\"issue\"]\n",
            ),
        );
        let mut stderr_all = String::new();
        for i in 0..30 {
            let level = if i < 20 { 1000.0 } else { 1080.0 };
            let f = result_file(sb, &format!("a{i}.json"), level, i);
            let sha = format!("{i:040x}");
            let out = sb
                .cmd(&[
                    "import",
                    &f,
                    "--commit",
                    &sha,
                    "--branch",
                    "main",
                    "--testbed",
                    "h200-a",
                ])
                .env("GITHUB_TOKEN", "ghp_not_a_real_token_0123456789")
                // The job names the API; pitwall.toml never does (docs/CI.md).
                .env("PITWALL_GITHUB_API_URL", &server.url)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            stderr_all.push_str(&String::from_utf8_lossy(&out.stderr));
        }
        stderr_all
    };
    let sb = Sandbox::new();
    let stderr_all = run_all(&sb);
    let issues = server.issues();
    assert_eq!(issues.len(), 1, "{issues:?}");
    let id = alerts(&sb, &[], &[])[0]["id"].as_str().unwrap().to_string();
    assert!(
        issues[0]
            .title
            .starts_with("pitwall: pitwall-json/parse/time +"),
        "{}",
        issues[0].title
    );
    assert!(
        issues[0]
            .body
            .starts_with(&format!("<!-- pitwall-alert {id} -->"))
    );
    assert_eq!(issues[0].labels, ["pitwall-alert"]);
    assert!(
        stderr_all.contains("alert issue(s) #1 opened"),
        "{stderr_all}"
    );
    assert!(!stderr_all.contains("ghp_not_a_real_token"), "{stderr_all}");
    // Nothing but the identity, the issue listing and the one issue was requested.
    let paths: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path.split('?').next().unwrap()))
        .collect();
    assert!(
        paths
            .iter()
            .all(|p| p == "GET /user" || p.ends_with("/issues")),
        "{paths:?}"
    );
    // The same project's history stored again elsewhere finds the step again: the same alert
    // id, so the same issue.
    let again = Sandbox::new();
    let stderr_again = run_all(&again);
    assert_eq!(server.issues().len(), 1);
    assert_eq!(server.issues()[0].updates, 1);
    assert!(
        stderr_again.contains("alert issue(s) #1 updated"),
        "{stderr_again}"
    );
}
