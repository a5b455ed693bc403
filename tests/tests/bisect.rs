//! `pitwall bisect` end to end on a real temporary git repository: the first bad commit of a
//! planted slowdown is found in at most ⌈log2 n⌉ probes, an unbuildable commit is skipped and
//! named as a possible culprit, nothing is stored, and bad endpoints are usage errors.

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// Two benchmarks: `work` sits around the level in `level.txt` (±0.5%), `steady` never moves.
const BENCH: &str = r#"level=$(cat level.txt)
printf '{"schema":"pitwall/v1","benchmarks":[{"name":"work","samples":['
i=0; sep=""
while [ $i -lt 10 ]; do printf '%s%s.%s' "$sep" "$level" "$i"; sep=","; i=$((i+1)); done
printf ']},{"name":"steady","samples":[50.1,50.3,50.2,50.4,50.0,50.2,50.1,50.3]}]}'
"#;

const CONFIG: &str = "[project]\nname = \"repo\"\nbuild = \"sh build.sh\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n";

/// Commit 0 (good) at level 100, then commits 1..=levels.len() with the given levels; the
/// commits listed in `broken` do not build. Returns every sha, good first.
fn repo(sb: &Sandbox, levels: &[u32], broken: &[usize]) -> Vec<String> {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.sh", BENCH);
    sb.write("pitwall.toml", CONFIG);
    let mut shas = Vec::new();
    for (i, level) in std::iter::once(&100).chain(levels).enumerate() {
        sb.write("level.txt", &format!("{level}\n"));
        let build = if broken.contains(&i) {
            "echo 'error: does not compile' >&2; exit 1\n"
        } else {
            "true\n"
        };
        sb.write("build.sh", build);
        sb.write("NOTES", &format!("change {i}\n"));
        git(dir, &["add", "-A"]);
        git(
            dir,
            &["commit", "-q", "-m", &format!("commit {i} at {level}")],
        );
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    shas
}

#[test]
fn finds_the_first_slow_commit_in_log2_probes_and_stores_nothing() {
    let sb = Sandbox::new();
    // 9 commits after good; commit 6 makes `work` 40% slower.
    let shas = repo(&sb, &[100, 101, 100, 100, 101, 140, 141, 140, 140], &[]);
    let out = sb
        .run(&[
            "bisect", "--good", &shas[0], "--bad", "HEAD", "--format", "json",
        ])
        .expect(0);
    let v: Value = out.json();
    assert_eq!(v["key"], "toy/work/time", "{v}");
    assert_eq!(v["first_bad"]["sha"], shas[6].as_str(), "{v}");
    assert_eq!(v["first_bad"]["subject"], "commit 6 at 140");
    assert_eq!(v["commits"], 9);
    let steps = v["steps"].as_array().unwrap();
    assert!(
        steps.len() <= v["max_steps"].as_u64().unwrap() as usize,
        "{} probes",
        steps.len()
    );
    assert!(steps.iter().all(|s| s["class"] != "untestable"));
    assert!((v["ratio"].as_f64().unwrap() - 1.4).abs() < 0.02, "{v}");
    // Probes are not stored: old commits would read as new points in the history.
    assert!(!sb.db().exists(), "bisect created no store");

    let table = sb
        .run(&[
            "bisect", "--good", &shas[0], "--bad", &shas[9], "--bench", "work",
        ])
        .expect(0)
        .stdout();
    assert!(
        table.contains(&format!("first bad commit: {} commit 6 at 140", shas[6])),
        "{table}"
    );
}

#[test]
fn an_unbuildable_commit_is_skipped_and_named() {
    let sb = Sandbox::new();
    // Commit 4 does not build; commit 5 is the first slow one.
    let shas = repo(&sb, &[100, 100, 100, 100, 150, 150, 150, 150], &[4]);
    let v = sb
        .run(&[
            "bisect", "--good", &shas[0], "--bad", "HEAD", "--format", "json",
        ])
        .expect(0)
        .json();
    assert_eq!(v["first_bad"]["sha"], shas[5].as_str(), "{v}");
    let steps = v["steps"].as_array().unwrap();
    let skipped = steps
        .iter()
        .find(|s| s["class"] == "untestable")
        .expect("commit 4 probed");
    assert_eq!(skipped["commit"]["sha"], shas[4].as_str());
    assert!(
        skipped["note"]
            .as_str()
            .unwrap()
            .contains("build command `sh build.sh` failed")
    );
    assert_eq!(v["also_possible"][0]["sha"], shas[4].as_str(), "{v}");
}

#[test]
fn endpoints_without_a_regression_or_in_the_wrong_order_are_usage_errors() {
    let sb = Sandbox::new();
    let shas = repo(&sb, &[100, 100, 101], &[]);
    let e = sb
        .run(&["bisect", "--good", &shas[0], "--bad", "HEAD"])
        .expect(2)
        .stderr();
    assert!(e.contains("no regression between good and bad"), "{e}");
    // The hint names what stopped it (not the round limit here: everything was decided), and
    // the endpoints' table is shown.
    assert!(
        e.contains("hint: every benchmark was decided within"),
        "{e}"
    );
    assert!(!e.contains("more --rounds"), "{e}");
    assert!(e.contains("the endpoints (good vs bad):"), "{e}");
    assert!(e.contains("toy/steady/time"), "{e}");
    let e = sb
        .run(&["bisect", "--good", "HEAD", "--bad", &shas[0]])
        .expect(2)
        .stderr();
    assert!(e.contains("is not an ancestor of bad"), "{e}");
    let e = sb
        .run(&["bisect", "--good", "nope", "--bad", "HEAD"])
        .expect(2)
        .stderr();
    assert!(e.contains("unknown revision `nope`"), "{e}");
}
