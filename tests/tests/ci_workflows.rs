//! The CI templates in `ci/` are safe to copy onto a self-hosted GPU runner (issue 14,
//! problems 3–5), checked by parsing them: what triggers each workflow, which pull requests
//! reach the GPU runner, what each job may write, that actions are pinned to full commit shas
//! with their tag beside them, that no `${{ }}` expression is pasted into a script, and that
//! the default branch's history is measured. zizmor checks the same files in `.ci/run`.

use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn text(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn load(rel: &str) -> Yaml {
    YamlLoader::load_from_str(&text(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .remove(0)
}

fn workflows() -> Vec<(String, Yaml)> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("ci/github"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yml"))
        .collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    names
        .into_iter()
        .map(|n| {
            let rel = format!("ci/github/{n}");
            let y = load(&rel);
            (rel, y)
        })
        .collect()
}

fn jobs(w: &Yaml) -> Vec<(String, &Yaml)> {
    w["jobs"]
        .as_hash()
        .expect("jobs")
        .iter()
        .map(|(k, v)| (k.as_str().unwrap().to_string(), v))
        .collect()
}

fn steps(job: &Yaml) -> Vec<&Yaml> {
    job["steps"]
        .as_vec()
        .map(|v| v.iter().collect())
        .unwrap_or_default()
}

fn triggers(w: &Yaml) -> Vec<String> {
    // yaml-rust2 reads the key `on` as a string (YAML 1.2), not as `true`.
    w["on"]
        .as_hash()
        .expect("on")
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

fn runs_on(job: &Yaml) -> Vec<String> {
    match &job["runs-on"] {
        Yaml::String(s) => vec![s.clone()],
        Yaml::Array(a) => a.iter().map(|v| v.as_str().unwrap().to_string()).collect(),
        other => panic!("runs-on: {other:?}"),
    }
}

/// `(permission, level)` pairs of a job; every job must state its own.
fn permissions(file: &str, name: &str, job: &Yaml) -> Vec<(String, String)> {
    let p = job["permissions"]
        .as_hash()
        .unwrap_or_else(|| panic!("{file}: job {name} states no permissions"));
    p.iter()
        .map(|(k, v)| (k.as_str().unwrap().into(), v.as_str().unwrap().into()))
        .collect()
}

#[test]
fn every_action_is_pinned_to_a_full_sha_with_its_tag() {
    for (file, _) in workflows() {
        for line in text(&file).lines() {
            let Some(rest) = line
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses:")
            else {
                continue;
            };
            let (target, comment) = rest.split_once('#').unwrap_or((rest, ""));
            let (_, sha) = target.trim().split_once('@').expect("uses: owner/repo@ref");
            assert!(
                sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
                "{file}: not pinned to a commit: {line}"
            );
            assert!(
                comment.trim().starts_with('v'),
                "{file}: no tag beside the sha: {line}"
            );
        }
    }
}

#[test]
fn workflows_grant_nothing_by_default_and_runners_that_run_code_hold_no_write_token() {
    for (file, w) in workflows() {
        let top = &w["permissions"];
        assert!(
            top.as_hash().is_some_and(|h| h.is_empty()),
            "{file}: top-level permissions must be {{}}"
        );
        for (name, job) in jobs(&w) {
            let perms = permissions(&file, &name, job);
            let writes: Vec<&String> = perms
                .iter()
                .filter(|(_, l)| l == "write")
                .map(|(p, _)| p)
                .collect();
            if runs_on(job).iter().any(|r| r == "self-hosted") {
                assert!(writes.is_empty(), "{file}: {name} writes {writes:?}");
            }
            for step in steps(job) {
                if step["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/checkout@"))
                {
                    assert_eq!(
                        step["with"]["persist-credentials"].as_bool(),
                        Some(false),
                        "{file}: {name}: checkout keeps the token in .git/config"
                    );
                }
                if let Some(run) = step["run"].as_str() {
                    assert!(
                        !run.contains("${{"),
                        "{file}: {name}: an expression pasted into a script (pass it through env): {run}"
                    );
                }
            }
        }
    }
}

#[test]
fn pull_requests_reach_the_gpu_runner_only_from_this_repository_or_when_labelled() {
    let w = load("ci/github/pitwall-pr.yml");
    assert_eq!(triggers(&w), ["pull_request"]);
    let group = w["concurrency"]["group"].as_str().unwrap();
    assert!(
        group.contains("github.event.pull_request.number"),
        "{group}"
    );
    assert_eq!(w["concurrency"]["cancel-in-progress"].as_bool(), Some(true));
    let (name, job) = jobs(&w).remove(0);
    assert!(runs_on(job).contains(&"self-hosted".to_string()));
    let cond = job["if"]
        .as_str()
        .unwrap_or_else(|| panic!("{name}: no gate"));
    assert!(
        cond.contains("github.event.pull_request.head.repo.full_name == github.repository"),
        "{cond}"
    );
    assert!(cond.contains("'safe-to-bench'"), "{cond}");
    assert_eq!(
        permissions("pitwall-pr", &name, job),
        [("contents".to_string(), "read".to_string())]
    );
    let script: String = steps(job)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(script.contains("pitwall ci "), "{script}");
    assert!(
        script.contains("--dry-run"),
        "measures, never publishes: {script}"
    );
    assert!(
        steps(job).iter().any(|s| s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/upload-artifact@"))),
        "uploads what it measured"
    );
}

#[test]
fn fork_results_are_published_by_a_workflow_run_that_runs_no_pull_request_code() {
    let w = load("ci/github/pitwall-publish.yml");
    assert_eq!(triggers(&w), ["workflow_run"]);
    let on = &w["on"]["workflow_run"];
    assert_eq!(on["workflows"][0].as_str(), Some("pitwall-pr"));
    for (name, job) in jobs(&w) {
        assert!(
            !runs_on(job).iter().any(|r| r == "self-hosted"),
            "{name}: the token-holding job runs on a runner no pull request ran on"
        );
        let mut perms = permissions("pitwall-publish", &name, job);
        perms.sort();
        assert_eq!(
            perms,
            [
                ("actions".to_string(), "read".to_string()),
                ("checks".to_string(), "write".to_string()),
                ("contents".to_string(), "read".to_string()),
                ("pull-requests".to_string(), "write".to_string()),
            ]
        );
        let uses: Vec<&str> = steps(job)
            .iter()
            .filter_map(|s| s["uses"].as_str())
            .collect();
        assert!(
            uses.iter().all(|u| !u.starts_with("actions/checkout@")),
            "{name}: checks nothing out: {uses:?}"
        );
        let script: String = steps(job)
            .iter()
            .filter_map(|s| s["run"].as_str())
            .collect();
        // The artifact is untrusted: its number and sha are checked against GitHub, and so is
        // the gate, before anything is published.
        assert!(script.contains("RUN_HEAD_SHA"), "{script}");
        assert!(script.contains("safe-to-bench"), "{script}");
        assert!(script.contains("pitwall comment"), "{script}");
    }
    // pull_request_target appears only where nothing is checked out or run from the PR.
    for (file, w) in workflows() {
        if triggers(&w).iter().any(|t| t == "pull_request_target") {
            for (name, job) in jobs(&w) {
                for step in steps(job) {
                    assert!(step["uses"].is_badvalue(), "{file}: {name} uses an action");
                    let run = step["run"].as_str().unwrap_or("");
                    assert!(
                        !run.contains("git ") && !run.contains("pitwall"),
                        "{file}: {name}: {run}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_default_branch_is_measured_as_history_on_push_and_nightly() {
    let w = load("ci/github/pitwall-main.yml");
    let mut t = triggers(&w);
    t.sort();
    assert_eq!(t, ["push", "schedule", "workflow_dispatch"]);
    assert_eq!(w["on"]["push"]["branches"][0].as_str(), Some("main"));
    assert!(w["on"]["schedule"][0]["cron"].as_str().is_some());
    assert_eq!(
        w["concurrency"]["cancel-in-progress"].as_bool(),
        Some(false)
    );
    let all: String = jobs(&w)
        .iter()
        .flat_map(|(_, j)| steps(j))
        .filter_map(|s| s["run"].as_str())
        .collect();
    for cmd in ["pitwall ci --push", "pitwall detect", "pitwall report"] {
        assert!(all.contains(cmd), "{cmd}: {all}");
    }
}

#[test]
fn the_gitlab_template_measures_merge_requests_and_history() {
    let y = load("ci/gitlab/.gitlab-ci.yml");
    let mr = &y["pitwall-mr"];
    let rule = mr["rules"][0]["if"].as_str().unwrap();
    assert!(rule.contains("merge_request_event"), "{rule}");
    assert_eq!(mr["interruptible"].as_bool(), Some(true));
    let script = mr["script"][0].as_str().unwrap();
    assert!(script.starts_with("pitwall ci "), "{script}");
    assert!(
        !script.contains("--mr"),
        "the merge request comes from CI_MERGE_REQUEST_IID"
    );
    assert!(
        !script.contains("--base") && !script.contains("--head"),
        "base and head come from CI_MERGE_REQUEST_DIFF_BASE_SHA and CI_COMMIT_SHA: {script}"
    );
    let history = &y["pitwall-history"];
    let rule = history["rules"][0]["if"].as_str().unwrap();
    assert!(
        rule.contains("$CI_DEFAULT_BRANCH") && rule.contains("schedule"),
        "{rule}"
    );
    assert!(
        history["script"][0]
            .as_str()
            .unwrap()
            .starts_with("pitwall ci --push")
    );
}
