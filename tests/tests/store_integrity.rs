//! No input corrupts the store or makes it unreadable: a result whose samples cannot be
//! summarised is stored as failed (the run partial) and every command goes on reading the
//! store; a row that cannot be read (a store written by an older pitwall) is named and
//! skipped, never the end of `report`, `detect`, `export` or the next `run`; an import is held
//! to the checks of a fresh run (issue 22, items 5 and 8).

use pitwall_e2e::Sandbox;
use serde_json::{Value, json};

const GOOD: &str = r#"printf '{"schema":"pitwall/v1","benchmarks":[{"name":"parse","samples":[10.5,11.0,10.75]}]}'"#;

/// Ten throughput samples alternating between -1.7e308 and 1.7e308: each finite, their
/// median not.
fn huge_command() -> String {
    let samples: Vec<String> = (0..10)
        .map(|i| if i % 2 == 0 { "-1.7e308" } else { "1.7e308" }.to_string())
        .collect();
    format!(
        r#"printf '{{"schema":"pitwall/v1","benchmarks":[{{"name":"rate","measure":"throughput","unit":"items/s","direction":"higher","samples":[{}]}}]}}'"#,
        samples.join(",")
    )
}

fn config(with_huge: bool) -> String {
    let mut text = format!(
        "[project]\nname = \"toy\"\n\n[[suite]]\nname = \"good\"\nkind = \"command\"\ncommand = '''{GOOD}'''\n"
    );
    if with_huge {
        text.push_str(&format!(
            "\n[[suite]]\nname = \"huge\"\nkind = \"command\"\ncommand = '''{}'''\n",
            huge_command()
        ));
    }
    text
}

fn export(sb: &Sandbox) -> Value {
    sb.run(&["export"]).expect(0).json()
}

#[test]
fn unsummarisable_samples_fail_their_result_and_the_store_stays_readable() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", &config(true));
    let out = sb.run(&["run", "--role", "history"]).expect(3);
    assert!(!out.stderr().contains("cannot store"), "{}", out.stderr());
    sb.run(&["run", "--role", "history"]).expect(3);
    let doc = export(&sb);
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        assert_eq!(run["status"], "partial", "{run}");
        let results = run["results"].as_array().unwrap();
        let good = results.iter().find(|r| r["suite"] == "good").unwrap();
        assert_eq!(good["status"], "ok");
        let huge = results.iter().find(|r| r["suite"] == "huge").unwrap();
        assert_eq!(huge["status"], "failed", "{huge}");
        assert!(
            huge["error"]
                .as_str()
                .unwrap()
                .contains("span more than a 64-bit float holds"),
            "{huge}"
        );
        assert_eq!(huge["samples"].as_array().unwrap().len(), 10, "kept");
    }
    // Every reader of the store still reads it.
    sb.run(&["report", "--out", "site"]).expect(0);
    sb.run(&["detect", "--benchmark", "parse", "--format", "json"])
        .expect(0);
    sb.run(&["alerts"]).expect(0);
    sb.run(&["prune", "--older-than", "0", "--keep-summaries"])
        .expect(0);
    let doc = export(&sb);
    for run in doc["runs"].as_array().unwrap() {
        let huge = run["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["suite"] == "huge")
            .unwrap();
        assert_eq!(huge["status"], "failed");
        assert!(
            huge.get("summary").is_none(),
            "a failed result keeps no summary: {huge}"
        );
    }
    // The export imports again into a fresh store.
    sb.write("all.json", &doc.to_string());
    std::fs::remove_file(sb.db()).unwrap();
    sb.run(&["import", "all.json"]).expect(0);
    // The same tool output imported is a fresh run read elsewhere: failed, not refused.
    let samples: Vec<f64> = (0..10)
        .map(|i| if i % 2 == 0 { -1.7e308 } else { 1.7e308 })
        .collect();
    let tool = json!({"schema": "pitwall/v1", "benchmarks": [
        {"name": "rate", "measure": "throughput", "unit": "items/s", "direction": "higher", "samples": samples},
        {"name": "parse", "samples": [1.0, 2.0]}
    ]});
    sb.write("tool.json", &tool.to_string());
    sb.run(&["import", "--input-format", "pitwall-json", "tool.json"])
        .expect(0);
    let doc = export(&sb);
    let last = doc["runs"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["status"], "partial", "{last}");
    assert_eq!(last["results"][0]["status"], "failed", "{last}");
    // An export claiming such a result ok is refused: pitwall never writes one.
    let mut claimed = last.clone();
    claimed["id"] = json!("claimed-ok");
    claimed["status"] = json!("complete");
    claimed["results"][0]["status"] = json!("ok");
    claimed["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("error");
    sb.write(
        "claimed.json",
        &json!({"schema": doc["schema"], "runs": [claimed]}).to_string(),
    );
    let e = sb.run(&["import", "claimed.json"]).expect(2).stderr();
    assert!(
        e.contains("claimed.json") && e.contains("claimed-ok") && e.contains("span more than"),
        "{e}"
    );
}

#[test]
fn a_run_with_an_unreadable_row_is_named_and_skipped() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", &config(false));
    for _ in 0..3 {
        sb.run(&["run", "--role", "history"]).expect(0);
    }
    let ids: Vec<String> = {
        let db = sb.sqlite();
        let mut stmt = db
            .prepare("SELECT id FROM runs ORDER BY started_at, id")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let db = sb.sqlite();
    // Run 0 as an older pitwall stored the unsummarisable result: a history point whose
    // median was written as null. Run 1 with a status no pitwall knows.
    db.execute(
        "UPDATE results SET point_json = '{\"n\":10,\"median\":null,\"min\":-1.7e308,\"max\":1.7e308}' WHERE run_id = ?1",
        [&ids[0]],
    )
    .unwrap();
    db.execute(
        "UPDATE results SET status = 'meh' WHERE run_id = ?1",
        [&ids[1]],
    )
    .unwrap();
    drop(db);
    let out = sb.run(&["report", "--out", "site"]).expect(0);
    let e = out.stderr();
    let skipped = |id: &str| {
        e.lines()
            .filter(|l| l.starts_with("warning: store sqlite:") && l.contains(id))
            .filter(|l| l.ends_with("; run skipped"))
            .count()
    };
    assert_eq!(skipped(&ids[0]), 1, "said once: {e}");
    assert_eq!(skipped(&ids[1]), 1, "said once: {e}");
    assert!(
        e.contains(&format!("run {} result 0: unknown status `meh`", ids[1])),
        "{e}"
    );
    let out = sb
        .run(&["detect", "--benchmark", "parse", "--format", "json"])
        .expect(0);
    assert!(out.stderr().contains(&ids[0]), "{}", out.stderr());
    // The next run stores and updates the alerts of its series.
    sb.run(&["run", "--role", "history"]).expect(0);
    let out = sb.run(&["export"]).expect(0);
    assert!(out.stderr().contains(&ids[1]), "{}", out.stderr());
    let doc = out.json();
    let exported: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(exported.len(), 3, "{exported:?}");
    assert!(!exported.contains(&ids[1].as_str()));
    let listed = sb.run(&["runs"]).expect(0).stdout();
    assert!(listed.contains(&ids[2][..8]), "{listed}");
    // Asked for by id, the bad run is still an error naming what is wrong.
    let e = sb.run(&["show", &ids[1]]).expect(3).stderr();
    assert!(e.contains("unknown status `meh`"), "{e}");
}

/// A valid export of one run with one result, as JSON to edit.
fn one_run(id: &str) -> Value {
    json!({
        "schema": "pitwall/v4",
        "runs": [{
            "id": id,
            "project": "toy",
            "commit": "working tree",
            "testbed": "tb",
            "role": "history",
            "branch": "main",
            "started_at": "2026-12-02T10:00:00Z",
            "finished_at": "2026-12-02T10:00:01Z",
            "config_hash": "x",
            "fingerprint": {"hostname": "h", "os": "linux", "arch": "x86_64"},
            "status": "complete",
            "results": [{
                "suite": "s",
                "name": "parse",
                "measure": "time",
                "unit": "ns",
                "direction": "lower_is_better",
                "status": "ok",
                "samples": [],
                "summary": {"n": 10, "median": 5.0, "median_ci": [4.0, 6.0], "min": 3.0, "max": 7.0}
            }]
        }]
    })
}

#[test]
fn inconsistent_imports_are_refused_naming_file_and_run() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", "[project]\nname = \"toy\"\n");
    let ok = one_run("good-run");
    sb.write("ok.json", &ok.to_string());
    sb.run(&["import", "ok.json"]).expect(0);
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 10] = [
        (
            "negative-median",
            |r| {
                r["results"][0]["summary"] =
                    json!({"n": 10, "median": -5.0, "min": -7.0, "max": -3.0})
            },
            "negative time",
        ),
        (
            "huge-n",
            |r| r["results"][0]["summary"]["n"] = json!(u64::MAX),
            "samples, more than",
        ),
        (
            "reversed-ci",
            |r| r["results"][0]["summary"]["median_ci"] = json!([6.0, 4.0]),
            "reversed or not around the median",
        ),
        (
            "ci-outside",
            |r| r["results"][0]["summary"]["median_ci"] = json!([1.0, 6.0]),
            "reversed or not around the median",
        ),
        (
            "newline-testbed",
            |r| r["testbed"] = json!("a\nb"),
            "is not a testbed name",
        ),
        (
            "dots-testbed",
            |r| r["testbed"] = json!("../x"),
            "is not a testbed name",
        ),
        (
            "script-testbed",
            |r| r["testbed"] = json!("<script>"),
            "is not a testbed name",
        ),
        (
            "slashes-testbed",
            |r| r["testbed"] = json!("///"),
            "is not a testbed name",
        ),
        (
            "empties-testbed",
            |r| r["testbed"] = json!("∅∅∅"),
            "is not a testbed name",
        ),
        (
            "dots-kernel",
            |r| r["results"][0]["name"] = json!(".."),
            "name \"..\" is not a name",
        ),
    ];
    for (id, edit, says) in cases {
        let mut doc = one_run(id);
        edit(&mut doc["runs"][0]);
        let file = format!("{id}.json");
        sb.write(&file, &doc.to_string());
        let e = sb.run(&["import", &file]).expect(2).stderr();
        assert!(
            e.contains(&file) && e.contains(id) && e.contains(says),
            "{id}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    assert_eq!(sb.count("runs"), 1, "nothing else was stored");
}

#[test]
fn a_testbed_that_names_a_stored_series_differently_is_refused() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", "[project]\nname = \"toy\"\n");
    sb.write("ok.json", &one_run("first-run").to_string());
    sb.run(&["import", "ok.json"]).expect(0);
    // A store an older pitwall wrote, with a testbed not in its written form.
    sb.sqlite()
        .execute("UPDATE runs SET testbed = 'H200 Node'", [])
        .unwrap();
    let mut doc = one_run("second-run");
    doc["runs"][0]["testbed"] = json!("h200-node");
    sb.write("second.json", &doc.to_string());
    let e = sb.run(&["import", "second.json"]).expect(2).stderr();
    assert!(
        e.contains("second.json") && e.contains("second-run") && e.contains("H200 Node"),
        "{e}"
    );
    assert_eq!(sb.count("runs"), 1);
    // A name with no letter or digit would be the series `unknown` of unnamed machines.
    for name in ["///", "∅∅∅"] {
        let e = sb
            .run(&["import", "second.json", "--testbed", name])
            .expect(2)
            .stderr();
        assert!(e.contains("has no letter or digit"), "{e}");
        sb.write(
            "pitwall.toml",
            &format!("[project]\nname = \"toy\"\n\n[testbed]\nname = \"{name}\"\n"),
        );
        let e = sb.run(&["runs"]).expect(2).stderr();
        assert!(
            e.contains("pitwall.toml:5:") && e.contains("has no letter or digit"),
            "{e}"
        );
    }
    assert_eq!(sb.count("runs"), 1);
}
