//! Issue 26 end to end, on real temporary git repositories: `pitwall calibrate` stores an A/A
//! pair with role `calibration` and prints each benchmark's noise; later pairs on the testbed
//! borrow that record (and say their budget before they start); `threshold_pct = "auto"` raises
//! only a noisy benchmark's threshold; a record that disagrees with the pair is set aside and
//! said; calibration runs never become history and export as `pitwall/v7`.

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// Prints pitwall JSON for `levels.json`: `{"levels": {name: level}, "noise": {name: sd},
/// "counter": FILE}`; each process draws a lognormal offset of sd `noise[name]` (0.4% when not
/// given), each of its 8 samples 0.2% more. The n-th process (counted in FILE) seeds its draws
/// with n, so the noise is random-looking but the same at every run of the test: a test of a
/// 5% level must not fail one CI run in twenty.
const BENCH: &str = r#"import json, os, random
cfg = json.load(open("levels.json"))
n = int(open(cfg["counter"]).read()) if os.path.exists(cfg["counter"]) else 0
open(cfg["counter"], "w").write(str(n + 1))
rng = random.Random("noise-record-%d" % n)
out = []
for name, level in sorted(cfg["levels"].items()):
    offset = rng.lognormvariate(0.0, cfg.get("noise", {}).get(name, 0.004))
    out.append({"name": name, "samples": [level * offset * rng.lognormvariate(0.0, 0.002) for _ in range(8)]})
print(json.dumps({"schema": "pitwall/v1", "benchmarks": out}))
"#;

const CONFIG: &str = "[project]\nname = \"noise\"\n\n[testbed]\nname = \"bench-box\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"python3 bench.py\"\n";

const LEVELS: &str = r#""levels": {"a": 100.0, "b": 200.0, "c": 400.0, "loud": 800.0}"#;

/// One commit per `levels.json` body; their shas. Processes are counted in a file under
/// `.git`, outside every checkout.
fn repo(sb: &Sandbox, config: &str, bodies: &[String]) -> Vec<String> {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.py", BENCH);
    sb.write("pitwall.toml", config);
    let counter = serde_json::to_string(&dir.join(".git").join("processes")).unwrap();
    let mut shas = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        sb.write(
            "levels.json",
            &format!("{{{body}, \"counter\": {counter}}}"),
        );
        sb.write("NOTES", &format!("change {i}\n"));
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("commit {i}")]);
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    shas
}

fn by_key(v: &Value, key: &str) -> Value {
    v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {v}"))
        .clone()
}

#[test]
fn calibrate_records_the_noise_and_later_pairs_borrow_it() {
    let sb = Sandbox::new();
    let body = format!(r#"{LEVELS}, "noise": {{"loud": 0.05}}"#);
    let shas = repo(&sb, CONFIG, &[body.clone(), body]);
    for _ in 0..2 {
        let out = sb.run(&["calibrate", "--rounds", "4", "-q"]).expect(0);
        let text = out.stdout();
        assert!(
            text.contains("against itself on testbed bench-box: 4 rounds"),
            "{text}"
        );
        assert!(text.contains("toy/loud/time"), "{text}");
    }
    // Eight rounds: six degrees of freedom for this pair's own estimate of each noise.
    let v = sb
        .run(&["calibrate", "--rounds", "8", "-q", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(v["testbed"], "bench-box");
    assert_eq!(v["false_calls"]["pairs"], 3, "{v}");
    let quiet = by_key(&v, "toy/a/time");
    let loud = by_key(&v, "toy/loud/time");
    assert_eq!(quiet["record_pairs"], 3, "{v}");
    // The loud benchmark's noise between processes is ~5%, the quiet one's well under 1%
    // (on six degrees of freedom, below 1% with a chance of about 1e-4).
    assert!(loud["between_cv_pct"].as_f64().unwrap() > 1.0, "{v}");
    assert!(quiet["between_cv_pct"].as_f64().unwrap() < 1.5, "{v}");
    assert!(
        loud["detectable_last_pct"].as_f64().unwrap()
            > quiet["detectable_last_pct"].as_f64().unwrap(),
        "{v}"
    );
    // Calibration runs are stored with their role, never as history.
    let runs = sb.run(&["runs", "--format", "json"]).expect(0).json();
    let roles: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["calibration"; 6], "{runs}");
    // A pair measured until decided says its budget from the record, and borrows it.
    let out = sb
        .run(&[
            "run",
            "--base",
            &shas[0],
            "--head",
            &shas[1],
            "--until-decided",
            "--max-rounds",
            "5",
            "--no-report",
        ])
        .expect(0);
    assert!(
        out.stderr()
            .contains("budget: up to 5 rounds; from the testbed's noise record (3 pairs)"),
        "{}",
        out.stderr()
    );
    let cmp = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(
        by_key(&cmp, "toy/a/time")["noise_record"]["use"],
        "used",
        "{cmp}"
    );
    // The export holds the calibration role, so it is pitwall/v7; it imports into a new store.
    let doc = sb.run(&["export"]).expect(0).stdout();
    assert!(doc.contains("\"schema\": \"pitwall/v7\""));
    let file = sb.write("export.json", &doc);
    let other = Sandbox::new();
    other.run(&["import", file.to_str().unwrap()]).expect(0);
    // A calibration's role is not the user's to choose.
    let out = sb.run(&["calibrate", "--role", "history"]).expect(2);
    assert!(out.stderr().contains("--role"), "{}", out.stderr());
}

#[test]
fn auto_thresholds_rise_only_for_noisy_benchmarks() {
    let sb = Sandbox::new();
    let config = format!("{CONFIG}\n[thresholds]\nthreshold_pct = \"auto\"\n");
    let body = format!(r#"{LEVELS}, "noise": {{"loud": 0.08}}"#);
    let shas = repo(&sb, &config, &[body.clone(), body]);
    // Without a record, "auto" is the 2% floor.
    sb.run(&["run", "--base", &shas[0], "--head", &shas[1], "--no-report"])
        .expect(0);
    let before = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(0)
        .json();
    assert!(by_key(&before, "toy/loud/time")["threshold_raised_from_pct"].is_null());
    for _ in 0..2 {
        sb.run(&["calibrate", "--rounds", "5", "-q"]).expect(0);
    }
    sb.run(&["run", "--base", &shas[0], "--head", &shas[1], "--no-report"])
        .expect(0);
    let cmp = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(0)
        .json();
    let loud = by_key(&cmp, "toy/loud/time");
    assert_eq!(loud["threshold_raised_from_pct"], 2.0, "{loud}");
    assert!(loud["threshold"].as_f64().unwrap() > 0.03, "{loud}");
    let quiet = by_key(&cmp, "toy/a/time");
    assert!(quiet["threshold_raised_from_pct"].is_null(), "{quiet}");
    assert_eq!(quiet["threshold"], 0.02, "{quiet}");
    // Anything else than a number or "auto" is a configuration error naming the key.
    sb.write(
        "pitwall.toml",
        &format!("{CONFIG}\n[thresholds]\nthreshold_pct = \"fast\"\n"),
    );
    let out = sb.run(&["calibrate"]).expect(2);
    assert!(
        out.stderr()
            .contains("[thresholds] threshold_pct can only be \"auto\""),
        "{}",
        out.stderr()
    );
}

#[test]
fn a_record_of_another_noise_is_set_aside_and_said() {
    let sb = Sandbox::new();
    // The calibrated commit is twenty times as quiet as the one the pair measures.
    let quiet =
        format!(r#"{LEVELS}, "noise": {{"a": 0.0002, "b": 0.0002, "c": 0.0002, "loud": 0.0002}}"#);
    let normal = format!(r#"{LEVELS}, "noise": {{"loud": 0.004}}"#);
    let shas = repo(&sb, CONFIG, &[quiet, normal.clone(), normal]);
    for _ in 0..2 {
        sb.run(&["calibrate", "--commit", &shas[0], "--rounds", "6", "-q"])
            .expect(0);
    }
    sb.run(&[
        "run",
        "--base",
        &shas[1],
        "--head",
        &shas[2],
        "--rounds",
        "6",
        "--no-report",
    ])
    .expect(0);
    let cmp = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(0)
        .json();
    for b in cmp["benchmarks"].as_array().unwrap() {
        let used = b["noise_record"]["use"].as_str().unwrap();
        assert!(used.starts_with("ignored"), "{b}");
        assert!(
            b["reason"]
                .as_str()
                .unwrap()
                .contains("the testbed's noise record was ignored"),
            "{b}"
        );
    }
}

#[test]
fn a_calibration_measures_code_that_is_identical_by_construction() {
    let sb = Sandbox::new();
    // The suite's artifacts are the same on both sides of any A/A pair; a calibration
    // measures them anyway (a pull request's pair would not).
    let config = CONFIG.replace(
        "command = \"python3 bench.py\"\n",
        "command = \"python3 bench.py\"\nartifacts = [\"bench.py\"]\n",
    );
    repo(&sb, &config, &[LEVELS.to_string()]);
    let v = sb
        .run(&["calibrate", "--rounds", "2", "-q", "--format", "json"])
        .expect(0)
        .json();
    let lines = v["benchmarks"].as_array().unwrap();
    assert_eq!(lines.len(), 4, "{v}");
    assert!(lines.iter().all(|b| b["between_cv_pct"].is_number()), "{v}");
}
