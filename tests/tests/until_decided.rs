//! `--until-decided` and replicate verdicts end to end, on real temporary git repositories whose
//! benchmark is a small Python program with a known truth: per-process offsets (each execution
//! draws its own), within-process noise and planted shifts. Measuring stops early when every
//! benchmark is clear, a hopeless benchmark is given up before `--max-rounds`, and a bisection
//! that cannot decide a step says `uncertain` instead of naming a culprit as sure.

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// Prints pitwall JSON for the benchmarks in `levels.json`: `{name: [level, process_sd]}`.
/// Each execution (process) draws one lognormal offset per benchmark with sd `process_sd`, then
/// 10 samples with 0.05% noise around `level × offset`. `[level, 0, "FILE"]` instead alternates
/// the offset between ×1.3 and ÷1.3 from one execution to the next (counted in FILE);
/// `[level, sd, "FILE", SEED]` takes the n-th execution's offset from a fixed lognormal
/// sequence (seeded), so that noise is random-looking but the same at every run of the test.
const BENCH: &str = r#"import json, os, random
rng = random.Random(os.urandom(16))
levels = json.load(open("levels.json"))
out = []
for name, spec in sorted(levels.items()):
    level, process_sd = spec[0], spec[1]
    offset = rng.lognormvariate(0.0, process_sd)
    if len(spec) > 2:
        n = int(open(spec[2]).read()) if os.path.exists(spec[2]) else 0
        open(spec[2], "w").write(str(n + 1))
        offset = 1.3 if n % 2 == 0 else 1 / 1.3
        if len(spec) > 3:
            seq = random.Random(spec[3])
            offset = [seq.lognormvariate(0.0, process_sd) for _ in range(n + 1)][n]
    out.append({"name": name, "samples": [level * offset * rng.lognormvariate(0.0, 0.0005) for _ in range(10)]})
print(json.dumps({"schema": "pitwall/v1", "benchmarks": out}))
"#;

const CONFIG: &str = "[project]\nname = \"repo\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"python3 bench.py\"\n";

/// One commit per entry of `commits` (each a `levels.json` body); returns the shas in order.
fn repo(sb: &Sandbox, commits: &[&str]) -> Vec<String> {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.py", BENCH);
    sb.write("pitwall.toml", CONFIG);
    let mut shas = Vec::new();
    for (i, levels) in commits.iter().enumerate() {
        sb.write("levels.json", levels);
        sb.write("NOTES", &format!("change {i}\n"));
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("commit {i}")]);
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    shas
}

fn by_key<'a>(v: &'a Value, key: &str) -> &'a Value {
    v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["key"] == key)
        .unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn until_decided_stops_as_soon_as_everything_is_clear() {
    let sb = Sandbox::new();
    // `slow` is 40% slower at head; `same` is unchanged; both quiet (0.02% between processes).
    let shas = repo(
        &sb,
        &[
            r#"{"slow": [100.0, 0.0002], "same": [50.0, 0.0002]}"#,
            r#"{"slow": [140.0, 0.0002], "same": [50.0, 0.0002]}"#,
        ],
    );
    let out = sb.run(&[
        "run",
        "--base",
        &shas[0],
        "--head",
        &shas[1],
        "--until-decided",
        "--max-rounds",
        "12",
        "--no-report",
    ]);
    let err = out.stderr();
    let out = out.expect(1);
    assert!(
        err.contains("round 3/12: 2 decided, 0 given up, 0 undecided"),
        "{err}"
    );
    assert!(err.contains("every benchmark decided or given up"), "{err}");
    let v = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(1)
        .json();
    assert_eq!(v["rounds"], 3, "stopped at the first look: {v}");
    assert_eq!(v["until_decided_max_rounds"], 12);
    assert_eq!(v["replicates"], 3);
    let slow = by_key(&v, "toy/slow/time");
    assert_eq!(slow["verdict"], "regression", "{slow}");
    assert_eq!(slow["decided_at_round"], 3);
    assert_eq!(slow["method"], "replicates");
    assert_eq!(
        (
            slow["base_replicates"].as_u64(),
            slow["cand_replicates"].as_u64()
        ),
        (Some(3), Some(3))
    );
    let same = by_key(&v, "toy/same/time");
    assert_eq!(same["verdict"], "unchanged", "{same}");
    assert_eq!(same["decided_at_round"], 3);
    // The table says how many rounds were measured.
    assert!(
        out.stdout()
            .contains("rounds:    3 interleaved rounds (until decided, at most 12)"),
        "{}",
        out.stdout()
    );
}

#[test]
fn a_hopeless_benchmark_is_given_up_before_max_rounds() {
    let sb = Sandbox::new();
    // `wild`'s processes are 30% apart (a fixed lognormal sequence per side, counted in its
    // own file) and it shifts 1%: no number of rounds within 15 can call that change or rule
    // it out. (Offsets that alternate in step on both sides, as this test used before, cancel
    // within each round of the cross-over analysis.) `clear` is decided at once.
    let counters = tempfile::tempdir().unwrap();
    let file = |side: &str| counters.path().join(side).display().to_string();
    let base = format!(
        r#"{{"wild": [100.0, 0.3, "{}", 1], "clear": [80.0, 0.0002]}}"#,
        file("base")
    );
    let head = format!(
        r#"{{"wild": [101.0, 0.3, "{}", 2], "clear": [80.0, 0.0002]}}"#,
        file("head")
    );
    let shas = repo(&sb, &[&base, &head]);
    let err = sb
        .run(&[
            "run",
            "--base",
            &shas[0],
            "--head",
            &shas[1],
            "--until-decided",
            "--no-report",
        ])
        .expect(0)
        .stderr();
    let v = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(0)
        .json();
    let rounds = v["rounds"].as_u64().unwrap();
    assert!(
        rounds < 15,
        "given up before --max-rounds, yet {rounds} rounds: {err}"
    );
    let wild = by_key(&v, "toy/wild/time");
    assert_eq!(wild["verdict"], "inconclusive", "{wild}");
    assert!(wild["decided_at_round"].is_null());
    let reason = wild["reason"].as_str().unwrap();
    assert!(reason.starts_with("given up at round "), "{reason}");
    assert_eq!(by_key(&v, "toy/clear/time")["verdict"], "unchanged");
    let table = sb.run(&["compare", "--pair", "latest"]).expect(0).stdout();
    assert!(table.contains("not resolved: between "), "{table}");
    assert!(table.contains("(given up)"), "{table}");
}

#[test]
fn bisect_says_uncertain_instead_of_naming_a_wrong_culprit() {
    let sb = Sandbox::new();
    // good 100 → bad 150 in two steps; commit 2 sits right at the geometric midpoint
    // (√1.5 ≈ 1.2247 × good) and its processes are 30% apart (a fixed lognormal sequence), so
    // its interval always straddles the midpoint: the step must be marked uncertain, and so
    // must the result, rather than a culprit named for sure. (Offsets alternating from one
    // execution to the next, as this test used before, are in step with the alternating
    // order of the rounds and cancel in the cross-over analysis.)
    let counter = tempfile::tempdir().unwrap();
    let file = counter.path().join("n").display().to_string();
    let mid = format!(r#"{{"work": [122.47, 0.3, "{file}", 7]}}"#);
    let shas = repo(
        &sb,
        &[
            r#"{"work": [100.0, 0.001]}"#,
            r#"{"work": [100.0, 0.001]}"#,
            &mid,
            r#"{"work": [150.0, 0.001]}"#,
            r#"{"work": [150.0, 0.001]}"#,
        ],
    );
    let out = sb.run(&[
        "bisect",
        "--good",
        &shas[0],
        "--bad",
        "HEAD",
        "--max-rounds",
        "5",
        "--format",
        "json",
    ]);
    let err = out.stderr();
    let v = out.expect(0).json();
    assert_eq!(v["uncertain"], true, "{v}");
    assert!(err.contains("warning: uncertain:"), "{err}");
    let steps = v["steps"].as_array().unwrap();
    let at_mid = steps
        .iter()
        .find(|s| s["commit"]["sha"] == shas[2].as_str())
        .expect("the midpoint commit is probed");
    assert_eq!(at_mid["uncertain"], true, "{at_mid}");
    assert_eq!(at_mid["rounds"], 5);
    // Every other step was decided for sure.
    assert!(
        steps
            .iter()
            .filter(|s| s["commit"]["sha"] != shas[2].as_str())
            .all(|s| s["uncertain"] == false),
        "{v}"
    );
    let table = sb
        .run(&[
            "bisect",
            "--good",
            &shas[0],
            "--bad",
            "HEAD",
            "--max-rounds",
            "4",
        ])
        .expect(0)
        .stdout();
    assert!(
        table
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("UNCERTAIN: step "),
        "{table}"
    );
}

#[test]
fn bisect_measures_its_endpoints_to_max_rounds_before_saying_no_regression() {
    let sb = Sandbox::new();
    // `wild` moves 1% under 30% noise between processes (seeded sequences): nothing can be
    // decided, so the endpoints run all of --max-rounds (no giving up), and the error says
    // that the round limit stopped it and shows the endpoints' table.
    let counters = tempfile::tempdir().unwrap();
    let file = |side: &str| counters.path().join(side).display().to_string();
    let good = format!(r#"{{"wild": [100.0, 0.3, "{}", 3]}}"#, file("good"));
    let bad = format!(r#"{{"wild": [101.0, 0.3, "{}", 4]}}"#, file("bad"));
    let shas = repo(&sb, &[&good, &bad]);
    let out = sb.run(&[
        "bisect",
        "--good",
        &shas[0],
        "--bad",
        "HEAD",
        "--max-rounds",
        "7",
    ]);
    let e = out.expect(2).stderr();
    assert!(e.contains("no regression between good and bad"), "{e}");
    assert!(
        e.contains("hint: 1 benchmark(s) still not resolved after 7 rounds (--max-rounds)"),
        "{e}"
    );
    assert!(e.contains("round 7/7"), "{e}");
    assert!(e.contains("the endpoints (good vs bad):"), "{e}");
    assert!(e.contains("not resolved: between "), "{e}");
}
