//! Tests of the nccl-tests reader: the table and JSON fixtures it reads, and what it refuses.

use super::*;

const TEXT: &str = include_str!("../../../../tests/fixtures/nccl-tests/all_reduce_perf.txt");
const WRONG: &str = include_str!("../../../../tests/fixtures/nccl-tests/all_reduce_wrong.txt");
const JSON: &str = include_str!("../../../../tests/fixtures/nccl-tests/all_reduce_perf.json");
const OLD: &str = include_str!("../../../../tests/fixtures/nccl-tests/all_reduce_old_error.txt");

fn find<'a>(run: &'a ParsedRun, size: &str, placement: &str, m: &str) -> &'a ParsedBenchmark {
    run.benchmarks
        .iter()
        .find(|b| b.params["size"] == size && b.params["placement"] == placement && b.measure == m)
        .unwrap()
}

#[test]
fn reads_the_text_table() {
    let run = parse(TEXT).unwrap();
    // 8 B … 128 MiB by factors of 2: 25 sizes × 2 placements × 3 measures.
    assert_eq!(run.benchmarks.len(), 150);
    let t = find(&run, "134217728", "out-of-place", "time");
    assert_eq!(t.name, "all_reduce_perf");
    assert_eq!(
        (t.unit.as_str(), t.direction),
        ("ns", Direction::LowerIsBetter)
    );
    assert_eq!([&t.params["type"], &t.params["redop"]], ["float", "sum"]);
    assert!(!t.params.contains_key("root"));
    let busbw = find(&run, "134217728", "in-place", "busbw");
    assert_eq!(
        (busbw.unit.as_str(), busbw.direction),
        ("GB/s", Direction::HigherIsBetter)
    );
    assert_eq!(
        find(&run, "8", "out-of-place", "time").samples,
        vec![19_500.0]
    );
    assert!(
        run.benchmarks
            .iter()
            .all(|b| b.samples.len() == 1 && b.error.is_none())
    );
    assert_eq!(run.notes, vec![SUMMARY_NOTE.to_string()]);
    assert!(run.context["config"].as_str().unwrap().contains("nGpus 8"));
    assert_eq!(run.context["devices"].as_array().unwrap().len(), 8);
}

#[test]
fn wrong_elements_fail_that_placement() {
    let run = parse(WRONG).unwrap();
    assert_eq!(run.benchmarks.len(), 5 * 6);
    let failed: Vec<_> = run
        .benchmarks
        .iter()
        .filter(|b| b.error.is_some())
        .collect();
    assert_eq!(failed.len(), 3);
    assert!(
        failed
            .iter()
            .all(|b| b.params["size"] == "1048576" && b.params["placement"] == "in-place")
    );
    assert_eq!(
        failed[0].error.as_deref(),
        Some("in-place: 3 wrong elements (#wrong)")
    );
    assert!(
        find(&run, "1048576", "out-of-place", "busbw")
            .error
            .is_none()
    );
}

#[test]
fn reads_the_json_output() {
    let run = parse(JSON).unwrap();
    assert_eq!(run.benchmarks.len(), 5 * 6);
    let t = find(&run, "4194304", "out-of-place", "time");
    assert_eq!(t.name, "all_reduce_perf");
    let raw: Value = serde_json::from_str(JSON).unwrap();
    let us = raw["results"][4]["out_of_place"]["time"].as_f64().unwrap();
    assert!((t.samples[0] - us * 1e3).abs() < 1e-9);
    assert_eq!(
        run.benchmarks.iter().filter(|b| b.error.is_some()).count(),
        3
    );
    assert!(run.notes.iter().any(|n| n.contains("out-of-bounds")));
    assert_eq!(run.context["nccl_version"], 22703);
}

#[test]
fn repeated_rows_add_samples_and_na_is_not_a_failure() {
    let row = "        1024           256     float     sum      -1    19.50    0.05    0.09    N/A    19.51    0.05    0.09    N/A";
    let text = format!("# Collective test starting: x\n{row}\n{row}\n");
    let run = parse(&text).unwrap();
    assert_eq!(run.benchmarks.len(), 6);
    assert!(
        run.benchmarks
            .iter()
            .all(|b| b.samples.len() == 2 && b.error.is_none())
    );
    assert_eq!(run.benchmarks[0].name, "x");
    let run = parse(&format!("{row}\n")).unwrap();
    assert_eq!(run.benchmarks[0].name, "nccl");
}

#[test]
fn looks_like_only_nccl_tests() {
    assert!(looks_like(TEXT) && looks_like(WRONG) && looks_like(JSON));
    for other in [
        include_str!("../../../../tests/fixtures/bmf/bencher-docs-example.json"),
        include_str!("../../../../tests/fixtures/nvbench/reduce.json"),
        include_str!("../../../../tests/fixtures/cargo-criterion/messages.jsonl"),
        include_str!("../../../../tests/fixtures/mlperf-loadgen/offline_valid.txt"),
    ] {
        assert!(!looks_like(other), "{}", &other[..other.len().min(60)]);
    }
}

#[test]
fn bad_input_is_an_error_with_position() {
    let cut: String = TEXT
        .lines()
        .take(19)
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        + &TEXT.lines().nth(19).unwrap()[..60];
    let e = parse(&cut).unwrap_err();
    assert_eq!(e.position, "line 20: ", "{e}");
    assert!(e.message.contains("truncated"), "{e}");
    let bad = |cell: &str| {
        format!(
            "          64            16     float     sum      -1    {cell}    0.00    0.01       0    19.50    0.00    0.01       0\n"
        )
    };
    for cell in ["nan", "-19.5", "fast"] {
        let e = parse(&bad(cell)).unwrap_err();
        assert_eq!(e.position, "line 1: ", "{cell}");
        assert!(e.message.contains("not a non-negative number"), "{e}");
    }
    let e = parse(&TEXT[..TEXT.find("#       size").unwrap()]).unwrap_err();
    assert!(e.message.contains("no result rows"), "{e}");
    let e = parse(&JSON[..JSON.len() / 2]).unwrap_err();
    assert!(e.position.starts_with("line "), "{e}");
    let e = parse(include_str!("../../../../tests/fixtures/bmf/multi.json")).unwrap_err();
    assert!(e.message.contains("another format"), "{e}");
    let e = parse(r#"{"results":[{"size":8,"out_of_place":{"time":"x","alg_bw":1,"bus_bw":1}}]}"#)
        .unwrap_err();
    assert_eq!(e.position, "benchmark 0 (nccl size=8): ");
    let e = parse(r#"{"results":[{"size":8,"out_of_place":null,"in_place":null}]}"#).unwrap_err();
    assert!(e.message.contains("neither"), "{e}");
    let e = parse(r#"{"results":[]}"#).unwrap_err();
    assert!(e.message.contains("no results"), "{e}");
    assert!(parse("").unwrap_err().message.contains("no result rows"));
}

#[test]
fn rows_with_an_impossible_size_are_left_out_and_counted() {
    let first = TEXT
        .lines()
        .find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .unwrap();
    let size = first.split_whitespace().next().unwrap();
    let negative = first.replacen(size, "-8", 1);
    let huge = first.replacen(size, "12345678901234567890123456", 1);
    let text = format!("{TEXT}\n{negative}\n{huge}\n");
    let run = parse(&text).unwrap();
    assert_eq!(run.benchmarks.len(), parse(TEXT).unwrap().benchmarks.len());
    assert_eq!(
        run.warnings,
        vec!["2 rows with an impossible size (`-8`, `12345678901234567890123456`) left out"]
    );
    assert!(parse(TEXT).unwrap().warnings.is_empty());
}

#[test]
fn the_older_error_column_is_judged_against_the_types_tolerance() {
    let run = parse(OLD).unwrap();
    // 4 sizes × 2 placements × 3 measures; the log lines between rows are skipped.
    assert_eq!(run.benchmarks.len(), 24);
    let failed: Vec<String> = run
        .benchmarks
        .iter()
        .filter_map(|b| b.error.clone())
        .collect();
    // 5e-07 passes for float; only the 2e-03 in-place row (3 measures) fails.
    assert_eq!(failed.len(), 3, "{failed:?}");
    assert!(
        failed.iter().all(|e| e
            == "in-place: largest relative error 2e-3 above nccl-tests' tolerance 1e-5 for float"),
        "{failed:?}"
    );
    let b = find(&run, "1048576", "out-of-place", "busbw");
    assert!(b.error.is_none() && b.samples == vec![20.63]);
    assert!(!b.params.contains_key("root"));
    // The same value is an error for an integer type and fine for half.
    assert_eq!(error_tolerance("int32"), 0.0);
    assert_eq!(error_tolerance("half"), 1e-2);
}
