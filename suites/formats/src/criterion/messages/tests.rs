//! Tests of the cargo-criterion reader, on the fixture messages and hand-written lines.

use super::*;
use pitwall_schema::schema::Direction;

const MESSAGES: &str = include_str!("../../../../../tests/fixtures/cargo-criterion/messages.jsonl");

#[test]
fn reads_real_cargo_criterion_output() {
    let run = parse(MESSAGES).unwrap();
    let names: Vec<_> = run
        .benchmarks
        .iter()
        .map(|b| format!("{} {}", b.name, b.measure))
        .collect();
    assert_eq!(
        names,
        [
            "sum/fold/100 time",
            "sum/iter_sum/100 time",
            "sum/fold/1000 time",
            "sum/iter_sum/1000 time",
            "bytes/checksum time",
            "bytes/checksum throughput"
        ]
    );
    let fold = &run.benchmarks[0];
    assert_eq!(fold.unit.as_str(), "ns");
    assert_eq!(fold.direction, Direction::LowerIsBetter);
    assert_eq!(fold.samples.len(), 100);
    assert!(fold.params.is_empty());
    // First sample: 122162 ns over 3641 iterations.
    assert!((fold.samples[0] - 122162.0 / 3641.0).abs() < 1e-9);
    let thr = &run.benchmarks[5];
    assert_eq!(thr.unit.as_str(), "B/s");
    assert_eq!(thr.direction, Direction::HigherIsBetter);
    assert_eq!(thr.samples.len(), 100);
    // First sample: 4096 bytes per iteration, 178046 ns over 320 iterations.
    let expected = 4096.0 / (178046.0 / 320.0 * 1e-9);
    assert!((thr.samples[0] - expected).abs() / expected < 1e-12);
    assert!(run.notes.is_empty());
}

#[test]
fn converts_other_time_units_and_keeps_custom_ones() {
    let us = r#"{"reason":"benchmark-complete","id":"a","iteration_count":[2,4],"measured_values":[3.0,8.0],"unit":"us","throughput":[]}"#;
    let run = parse(us).unwrap();
    assert_eq!(run.benchmarks[0].samples, vec![1500.0, 2000.0]);
    let cycles = r#"{"reason":"benchmark-complete","id":"a","iteration_count":[2],"measured_values":[30.0],"unit":"cycles","throughput":[{"per_iteration":8,"unit":"bytes"}]}"#;
    let run = parse(cycles).unwrap();
    assert_eq!(run.benchmarks.len(), 1);
    assert_eq!(run.benchmarks[0].unit.as_str(), "cycles");
    assert_eq!(run.benchmarks[0].samples, vec![15.0]);
}

#[test]
fn looks_like_only_cargo_criterion() {
    assert!(looks_like(MESSAGES));
    for other in [
        include_str!("../../../../../tests/fixtures/bmf/bencher-docs-example.json"),
        include_str!("../../../../../tests/fixtures/nvbench/reduce.json"),
        include_str!("../../../../../tests/fixtures/nccl-tests/all_reduce_perf.json"),
        include_str!("../../../../../tests/fixtures/nccl-tests/all_reduce_perf.txt"),
        include_str!("../../../../../tests/fixtures/mlperf-loadgen/server_invalid.txt"),
        r#"{"reason":"group-complete","group_name":"g","benchmarks":[]}"#,
    ] {
        assert!(!looks_like(other), "{}", &other[..other.len().min(60)]);
    }
}

#[test]
fn bad_input_is_an_error_with_position() {
    // Truncated in the middle of the third message.
    let cut = MESSAGES.lines().take(2).collect::<Vec<_>>().join("\n")
        + "\n"
        + &MESSAGES.lines().nth(2).unwrap()[..200];
    let e = parse(&cut).unwrap_err();
    assert!(e.position.starts_with("line 3, column 200: "), "{e}");
    assert!(e.message.contains("EOF while parsing"), "{e}");
    let e = parse(&format!(
        "{}\n{{\"reason\": 1,,}}\n",
        MESSAGES.lines().next().unwrap()
    ))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "cargo-criterion: line 2, column 14: key must be a string"
    );
    // Pretty-printed messages: say so instead of `line 1: column 1: EOF while parsing`.
    let first: Value = serde_json::from_str(MESSAGES.lines().next().unwrap()).unwrap();
    let pretty = serde_json::to_string_pretty(&first).unwrap();
    let e = parse(&pretty).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cargo-criterion: line 1: not one JSON message per line"),
        "{e}"
    );
    let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[1],"measured_values":["x"],"unit":"ns"}"#).unwrap_err();
    assert_eq!(e.position, "benchmark 0 (a): ");
    assert!(
        e.message
            .contains("measured_values`[0] must be a finite number")
    );
    let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[1],"measured_values":[-5],"unit":"ns"}"#).unwrap_err();
    assert!(e.message.contains("negative time"), "{e}");
    let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[1,2],"measured_values":[5],"unit":"ns"}"#).unwrap_err();
    assert!(e.message.contains("1 measured_values for 2"), "{e}");
    let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[0],"measured_values":[5],"unit":"ns"}"#).unwrap_err();
    assert!(e.message.contains("iteration_count[0] is 0"), "{e}");
    let e = parse(r#"{"reason":"benchmark-complete","id":"a","iteration_count":[],"measured_values":[],"unit":"ns"}"#).unwrap_err();
    assert!(e.message.contains("no samples"), "{e}");
    let e = parse(r#"{"reason":"group-complete","group_name":"g","benchmarks":[]}"#).unwrap_err();
    assert!(e.message.contains("no `benchmark-complete`"), "{e}");
    let e = parse(include_str!("../../../../../tests/fixtures/bmf/multi.json")).unwrap_err();
    assert!(e.position.starts_with("line 1: "), "{e}");
    let e = parse(r#"{"sum":{"latency":{"value":1}}}"#).unwrap_err();
    assert!(e.message.contains("another format"), "{e}");
    assert!(parse("\n\n").unwrap_err().message.contains("empty output"));
}
