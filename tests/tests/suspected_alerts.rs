//! Suspected alerts and the "no code changed" label end to end (issue 27): results of a real
//! git repository's commits imported into a real temporary store, as a user would. Five runs
//! before a +13% step and two after make one `suspected` alert that says how many more runs
//! would settle it, which is never posted to the webhook; three more runs promote the same
//! alert to `active`, and only then is it posted. A step at a commit that changed only
//! README.md is labelled "no code changed: environment or noise suspected".

use std::path::Path;

use pitwall_e2e::http::webhook_server;
use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

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

/// One commit changing `file` in the repository in `dir`; its sha.
fn commit(dir: &Path, n: usize, file: &str) -> String {
    std::fs::write(dir.join(file), format!("change {n}\n")).unwrap();
    git(dir, &["add", file]);
    git(dir, &["commit", "-q", "-m", &format!("change {n}")]);
    git(dir, &["rev-parse", "HEAD"])
}

/// Imports run `i` of commit `sha`, with the webhook set; the command's stderr.
fn import(sb: &Sandbox, i: usize, sha: &str, url: &str) -> String {
    let file = result_file(sb, &format!("r{i}.json"), MEDIANS_MS[i]);
    let out = sb
        .cmd(&["import", &file, "--commit", sha, "--branch", "main"])
        .env("PITWALL_ALERT_WEBHOOK", url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn alerts(sb: &Sandbox) -> Vec<Value> {
    let out = sb.run(&["alerts", "--format", "json"]).expect(0).stdout();
    let doc: Value = serde_json::from_str(&out).unwrap();
    doc["alerts"].as_array().unwrap().clone()
}

#[test]
fn a_step_with_two_runs_after_it_is_suspected_unannounced_then_promoted() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let shas: Vec<String> = (0..10).map(|n| commit(dir, n, "sort.c")).collect();
    let (url, bodies) = webhook_server();

    for (i, sha) in shas.iter().enumerate().take(7) {
        let stderr = import(&sb, i, sha, &url);
        assert!(!stderr.contains("new alert"), "{stderr}");
    }
    let all = alerts(&sb);
    assert_eq!(all.len(), 1, "{all:#?}");
    let a = &all[0];
    assert_eq!(a["status"], "suspected", "{a}");
    assert_eq!(a["more_points"], 3, "{a}");
    assert_eq!(a["first_bad"], shas[5].as_str(), "{a}");
    assert_eq!(a["last_good"], shas[4].as_str(), "{a}");
    assert!(
        a.get("label").is_none(),
        "the step's commit changed code: {a}"
    );
    let id = a["id"].as_str().unwrap().to_string();
    let got: Vec<String> = bodies.try_iter().collect();
    assert!(got.is_empty(), "a suspected alert is never posted: {got:?}");
    let table = sb.run(&["alerts"]).expect(0).stdout();
    assert!(table.contains("suspected"), "{table}");
    assert!(
        table.contains(&format!(
            "{id}: suspected: 3 more run(s) confirm or clear it"
        )),
        "{table}"
    );
    let listed = sb
        .run(&["alerts", "--status", "suspected", "--format", "json"])
        .expect(0)
        .stdout();
    assert!(listed.contains(&id), "{listed}");

    // Three more runs confirm the step: the same alert, now active, announced once.
    let mut stderr = String::new();
    for (i, sha) in shas.iter().enumerate().skip(7) {
        stderr.push_str(&import(&sb, i, sha, &url));
    }
    let all = alerts(&sb);
    assert_eq!(all.len(), 1, "{all:#?}");
    let a = &all[0];
    assert_eq!(
        (a["id"].as_str(), a["status"].as_str()),
        (Some(id.as_str()), Some("active"))
    );
    assert!(a.get("more_points").is_none(), "{a}");
    assert_eq!(a["first_bad"], shas[5].as_str(), "{a}");
    assert_eq!(stderr.matches("1 new alert(s)").count(), 1, "{stderr}");
    let got: Vec<String> = bodies.try_iter().collect();
    assert_eq!(got.len(), 1, "posted once, when promoted: {got:?}");
    assert!(got[0].contains(&id), "{got:?}");
}

#[test]
fn a_step_at_a_commit_that_changed_only_the_readme_is_labelled() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let shas: Vec<String> = (0..10)
        .map(|n| commit(dir, n, if n == 5 { "README.md" } else { "sort.c" }))
        .collect();
    let (url, bodies) = webhook_server();
    for (i, sha) in shas.iter().enumerate() {
        import(&sb, i, sha, &url);
    }
    let all = alerts(&sb);
    assert_eq!(all.len(), 1, "{all:#?}");
    let a = &all[0];
    assert_eq!(
        (
            a["status"].as_str(),
            a["first_bad"].as_str(),
            a["label"].as_str()
        ),
        (
            Some("active"),
            Some(shas[5].as_str()),
            Some("no-code-changed")
        ),
        "{a}"
    );
    let table = sb.run(&["alerts"]).expect(0).stdout();
    let id = a["id"].as_str().unwrap();
    assert!(
        table.contains(&format!(
            "{id}: no code changed: environment or noise suspected"
        )),
        "{table}"
    );
    let got: Vec<String> = bodies.try_iter().collect();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("no code changed: environment or noise suspected"),
        "{got:?}"
    );
    sb.run(&["report", "--out", "site"]).expect(0);
    let index = std::fs::read_to_string(dir.join("site/index.html")).unwrap();
    assert!(
        index.contains("no code changed: environment or noise suspected"),
        "{index}"
    );
}
