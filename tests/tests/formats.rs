//! Other tools' results end to end: a `command` suite in every format runs from pitwall.toml,
//! Google Benchmark files with repetitions compare without naming the format, foreign results
//! import as runs, and bad input is exit 2 naming file, format and position with nothing stored.

use pitwall_e2e::Sandbox;
use serde_json::Value;

fn fixture(rel: &str) -> String {
    format!("{}/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// (format, fixture printed by the command, minimum number of stored results)
const CASES: [(&str, &str, usize); 9] = [
    ("google-benchmark", "google-benchmark/repetitions.json", 8),
    ("cargo-criterion", "cargo-criterion/messages.jsonl", 5),
    ("nvbench", "nvbench/reduce.json", 4),
    ("nccl-tests", "nccl-tests/all_reduce_perf.txt", 50),
    ("hyperfine", "hyperfine/sleeps.json", 2),
    ("pytest-benchmark", "pytest-benchmark/with-data.json", 3),
    ("mlperf-loadgen", "mlperf-loadgen/offline_valid.txt", 3),
    ("bmf", "bmf/multi.json", 2),
    ("pitwall-json", "../fixtures/export-v1.json", 0),
];

#[test]
fn a_command_suite_in_every_format_runs_from_pitwall_toml() {
    let sb = Sandbox::new();
    let mut toml = String::from("[project]\nname = \"formats\"\n");
    for (format, file, _) in CASES.iter().filter(|c| c.0 != "pitwall-json") {
        toml.push_str(&format!(
            "\n[[suite]]\nname = \"{format}\"\nkind = \"command\"\ncommand = \"cat '{}'\"\nformat = \"{format}\"\n",
            fixture(file)
        ));
    }
    // criterion writes a directory; the command here stands for `cargo bench` (results it did
    // not write are not read, so it writes them: `cp` dates the copies now).
    toml.push_str(&format!(
        "\n[[suite]]\nname = \"criterion\"\nkind = \"command\"\ncommand = \"rm -rf crit && cp -R '{}' crit\"\nformat = \"criterion\"\noutput = \"crit\"\n",
        fixture("criterion")
    ));
    sb.write("pitwall.toml", &toml);
    // Failures the tools themselves report are recorded as failed, so the run exits 3: Google
    // Benchmark's BM_fails (SkipWithError). nvbench's skipped state is recorded as skipped.
    let v = sb.run(&["run", "--format", "json"]).expect(3).json();
    let benches = v["benchmarks"].as_array().unwrap();
    for (format, _, min) in CASES
        .iter()
        .filter(|c| c.0 != "pitwall-json")
        .chain(std::iter::once(&("criterion", "", 5)))
    {
        let ours: Vec<&Value> = benches.iter().filter(|b| b["suite"] == *format).collect();
        assert!(
            ours.len() >= *min,
            "{format}: {} results, expected ≥ {min}",
            ours.len()
        );
        let failed: Vec<&&Value> = ours.iter().filter(|b| b["status"] != "ok").collect();
        if *format == "google-benchmark" {
            assert_eq!(failed.len(), 1, "{failed:?}");
            assert_eq!(failed[0]["name"], "BM_fails");
            assert_eq!(failed[0]["status"], "failed");
            assert_eq!(failed[0]["error"], "device not available");
        } else if *format == "nvbench" {
            assert!(!failed.is_empty(), "{ours:?}");
            assert!(
                failed.iter().all(|b| b["status"] == "skipped"
                    && b["error"]
                        .as_str()
                        .unwrap()
                        .starts_with("skipped by nvbench")),
                "{failed:?}"
            );
        } else {
            assert!(failed.is_empty(), "{format}: {failed:?}");
        }
    }
    // Repetitions are samples: 5 repetitions of Google Benchmark's BM_accumulate.
    let acc = benches
        .iter()
        .find(|b| {
            b["suite"] == "google-benchmark"
                && b["name"] == "BM_accumulate"
                && b["measure"] == "time"
        })
        .unwrap();
    assert_eq!(acc["n"], 5, "{acc}");
    assert_eq!(acc["unit"], "ns");
    // The tools' own context lands in the fingerprint; summary-only formats say so.
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let extra = &doc["runs"][0]["fingerprint"]["extra"];
    assert_eq!(
        extra["tool_context"]["google-benchmark"]["num_cpus"], 2,
        "{extra}"
    );
    let notes = extra["format_notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("suite `bmf` (bmf):")),
        "{notes:?}"
    );
}

#[test]
fn a_real_hyperfine_run_is_read() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        "[[suite]]\nname = \"cli\"\nkind = \"command\"\ncommand = \"hyperfine --style none --export-json out.json --runs 5 'sleep 0.01' 'sleep 0.02'\"\nformat = \"hyperfine\"\noutput = \"out.json\"\n",
    );
    let v = sb.run(&["run", "--format", "json"]).expect(0).json();
    let b = v["benchmarks"].as_array().unwrap();
    assert_eq!(b.len(), 2, "{v}");
    assert_eq!(b[0]["name"], "sleep 0.01");
    assert_eq!(b[0]["n"], 5);
    let (m1, m2) = (
        b[0]["median"].as_f64().unwrap(),
        b[1]["median"].as_f64().unwrap(),
    );
    // hyperfine subtracts the shell's start-up, so a loaded machine reads `sleep 0.01` a little
    // under 10 ms; a unit slip would be off by a thousand.
    assert!(
        (5e6..1e8).contains(&m1) && m2 > m1,
        "10 ms then 20 ms sleeps, in ns: {m1} {m2}"
    );
}

/// The repetitions fixture with each repetition also repeated once more (times × 1.001), so
/// every benchmark has 10 samples, and `BM_accumulate` times multiplied by `slowdown`.
fn ten_repetitions(slowdown: f64) -> String {
    let text = std::fs::read_to_string(fixture("google-benchmark/repetitions.json"))
        .unwrap()
        .replace("NaN", "null");
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let mut extra = Vec::new();
    for b in doc["benchmarks"].as_array_mut().unwrap() {
        let accumulate = b["name"].as_str().unwrap().starts_with("BM_accumulate");
        for key in ["real_time", "cpu_time"] {
            if accumulate {
                b[key] = serde_json::json!(b[key].as_f64().unwrap() * slowdown);
            }
        }
        if b["run_type"] == "iteration" {
            let mut again = b.clone();
            for key in ["real_time", "cpu_time"] {
                again[key] = serde_json::json!(b[key].as_f64().unwrap() * 1.001);
            }
            extra.push(again);
        }
    }
    doc["benchmarks"].as_array_mut().unwrap().extend(extra);
    doc.to_string()
}

#[test]
fn google_benchmark_files_with_repetitions_compare_without_naming_the_format() {
    let sb = Sandbox::new();
    let base = sb.write("base.json", &ten_repetitions(1.0));
    let cand = sb.write("cand.json", &ten_repetitions(1.3));
    let v = sb.compare_json(&base, &cand, &[], 1);
    let benches = v["benchmarks"].as_array().unwrap();
    let acc = benches
        .iter()
        .find(|b| b["name"] == "BM_accumulate" && b["measure"] == "time")
        .unwrap();
    assert_eq!(acc["verdict"], "regression", "{acc}");
    assert_eq!(acc["base_n"], 10);
    assert!((acc["ratio"].as_f64().unwrap() - 1.3).abs() < 0.01);
    assert!(
        benches
            .iter()
            .filter(|b| b["name"] != "BM_accumulate")
            .all(|b| b["verdict"] != "regression"),
        "{v}"
    );
    assert!(
        v["baseline"]
            .as_str()
            .unwrap()
            .contains("(google-benchmark)")
    );
    // The committed fixture itself (5 repetitions) against itself: nothing regressed.
    let f = fixture("google-benchmark/repetitions.json");
    sb.run(&["compare", "--baseline", &f, "--candidate", &f])
        .expect(0);
}

#[test]
fn foreign_results_import_as_runs() {
    let sb = Sandbox::new();
    sb.run(&[
        "import",
        &fixture("google-benchmark/repetitions.json"),
        "--suite",
        "gb",
        "--commit",
        "0123456789abcdef0123456789abcdef01234567",
    ])
    .expect(0);
    sb.run(&["import", &fixture("criterion")]).expect(0);
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        runs[0]["commit"],
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert!(
        runs[0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["suite"] == "gb")
    );
    assert_eq!(
        runs[0]["fingerprint"]["extra"]["imported_from"]["format"],
        "google-benchmark"
    );
    assert!(
        runs[1]["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["suite"] == "criterion")
    );
    assert_eq!(
        runs[1]["results"][0]["samples"].as_array().unwrap().len(),
        100
    );
}

#[test]
fn bad_input_names_file_format_and_position_and_stores_nothing() {
    let sb = Sandbox::new();
    let wrong = fixture("hyperfine/sleeps.json");
    let e = sb
        .run(&["import", &wrong, "--input-format", "google-benchmark"])
        .expect(2)
        .stderr();
    assert!(
        e.contains("sleeps.json")
            && e.contains("google-benchmark:")
            && e.contains("this is hyperfine output"),
        "{e}"
    );
    // nccl-tests JSON has `results` too; it is named by detection, not by that key.
    let nccl = fixture("nccl-tests/all_reduce_perf.json");
    let e = sb
        .run(&[
            "compare",
            "--baseline",
            &nccl,
            "--candidate",
            &nccl,
            "--input-format",
            "google-benchmark",
        ])
        .expect(2)
        .stderr();
    assert!(
        e.contains("google-benchmark: this is nccl-tests output, not google-benchmark (hint: read it as nccl-tests"),
        "{e}"
    );
    let text = std::fs::read_to_string(fixture("google-benchmark/repetitions.json")).unwrap();
    let truncated = sb.write("truncated.json", &text[..text.len() / 3]);
    let e = sb
        .run(&[
            "import",
            truncated.to_str().unwrap(),
            "--input-format",
            "google-benchmark",
        ])
        .expect(2)
        .stderr();
    assert!(
        e.contains("truncated.json") && e.contains("google-benchmark: line "),
        "{e}"
    );
    let neg = sb.write(
        "neg.json",
        &text.replacen("\"real_time\": ", "\"real_time\": -", 1),
    );
    let e = sb
        .run(&["import", neg.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(e.contains("neg.json") && e.contains("negative"), "{e}");
    let e = sb
        .run(&[
            "import",
            sb.write("empty.json", "{\"benchmarks\": []}")
                .to_str()
                .unwrap(),
        ])
        .expect(2)
        .stderr();
    assert!(e.contains("empty.json"), "{e}");
    assert!(!sb.db().exists() || sb.count("runs") == 0, "nothing stored");
    let e = sb
        .run(&["import", &wrong, "--input-format", "nope"])
        .expect(2)
        .stderr();
    assert!(e.contains("unknown format `nope`"), "{e}");
}

#[test]
fn a_time_that_overflows_in_conversion_fails_only_its_suite() {
    let sb = Sandbox::new();
    // 1e300 s is finite, but infinite in ns.
    sb.write(
        "huge.json",
        r#"{"results":[{"command":"a","mean":1,"times":[1,1e300]}]}"#,
    );
    sb.write(
        "pitwall.toml",
        r#"[[suite]]
name = "good"
kind = "command"
command = '''printf '{"schema":"pitwall/v1","benchmarks":[{"name":"parse","samples":[1,2,3]}]}' '''

[[suite]]
name = "huge"
kind = "command"
command = "cat huge.json"
format = "hyperfine"
"#,
    );
    let v = sb.run(&["run", "--format", "json"]).expect(3).json();
    assert_eq!(v["run"]["status"], "partial", "{v}");
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(
        (&results[0]["name"], &results[0]["samples"]),
        (&Value::from("parse"), &serde_json::json!([1.0, 2.0, 3.0]))
    );
    assert_eq!(
        (&results[1]["suite"], &results[1]["name"]),
        (&Value::from("huge"), &Value::from("command"))
    );
    let e = results[1]["error"].as_str().unwrap();
    assert!(
        e.contains(
            "hyperfine: benchmark 0 (a): sample 1 is not a finite number after conversion to ns"
        ),
        "{e}"
    );
    // Given to import with a good file, nothing is stored; compare refuses it.
    let good = fixture("hyperfine/sleeps.json");
    let huge = sb.path().join("huge.json");
    let e = sb
        .run(&["import", &good, huge.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(
        e.contains("huge.json") && e.contains("not a finite number"),
        "{e}"
    );
    assert_eq!(sb.count("runs"), 1, "only the run of `pitwall run`");
    let e = sb
        .run(&[
            "compare",
            "--baseline",
            &good,
            "--candidate",
            huge.to_str().unwrap(),
        ])
        .expect(2)
        .stderr();
    assert!(e.contains("not a finite number"), "{e}");
}

/// A tool output that lists one benchmark twice (same name, params and measure) gives one result
/// with the samples of both, for `compare` and `import` as for `run`.
#[test]
fn duplicate_entries_are_merged_for_compare_and_import() {
    let sb = Sandbox::new();
    let doc = |level: f64| {
        let s = |k: usize| -> Vec<f64> { (0..5).map(|i| level + (i + k) as f64 * 0.01).collect() };
        serde_json::json!({"schema": "pitwall/v1", "benchmarks": [
            {"name": "a", "params": {"n": 1}, "samples": s(0)},
            {"name": "b", "samples": s(0)},
            {"name": "a", "params": {"n": "1"}, "samples": s(5)},
        ]})
        .to_string()
    };
    let base = sb.write("base.json", &doc(10.0));
    let cand = sb.write("cand.json", &doc(10.0));
    let v = sb.compare_json(&base, &cand, &[], 0);
    let benches = v["benchmarks"].as_array().unwrap();
    assert_eq!(benches.len(), 2, "{v}");
    assert_eq!(
        (&benches[0]["base_n"], &benches[0]["cand_n"]),
        (&10.into(), &10.into()),
        "{v}"
    );
    assert_eq!(v["only_candidate"], serde_json::json!([]), "{v}");
    assert_eq!(v["only_baseline"], serde_json::json!([]), "{v}");
    sb.run(&[
        "import",
        base.to_str().unwrap(),
        "--input-format",
        "pitwall-json",
    ])
    .expect(0);
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0]["samples"].as_array().unwrap().len(), 10);
}

/// A leading UTF-8 byte order mark (Windows tools write one) is dropped before any reader, the
/// detection and the export reader look at the text.
#[test]
fn a_byte_order_mark_is_accepted_everywhere() {
    let sb = Sandbox::new();
    let gb = std::fs::read_to_string(fixture("google-benchmark/repetitions.json")).unwrap();
    let gb = sb.write("gb.json", &format!("\u{feff}{gb}"));
    sb.run(&["import", gb.to_str().unwrap()]).expect(0);
    let export = sb.run(&["export"]).expect(0).stdout();
    let export = sb.write("export.json", &format!("\u{feff}{export}"));
    let other = Sandbox::new();
    other.run(&["import", export.to_str().unwrap()]).expect(0);
    assert_eq!(other.count("runs"), 1);
}
