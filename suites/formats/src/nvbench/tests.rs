//! Tests of the nvbench reader: states, axes and summaries, the `--jsonbin` sample files
//! through `MemFiles`, and bad input.

use super::*;
use crate::side_files::MemFiles;

const REDUCE: &str = include_str!("../../../../tests/fixtures/nvbench/reduce.json");

#[test]
fn reads_states_axes_and_summaries() {
    let run = parse(REDUCE).unwrap();
    // reduce: 4 states × 5 measures; copy: 1 state × 4 measures (no item rate) + 1 skipped.
    assert_eq!(run.benchmarks.len(), 25);
    let reduce: Vec<_> = run
        .benchmarks
        .iter()
        .filter(|b| b.name == "reduce")
        .collect();
    assert_eq!(reduce.len(), 20);
    let first = reduce[0];
    assert_eq!(first.params["T"], "F32");
    assert_eq!(first.params["Elements"], "1048576");
    assert_eq!(first.params["device"], "0");
    let gpu = reduce
        .iter()
        .find(|b| {
            b.measure == "gpu_time" && b.params["T"] == "F64" && b.params["Elements"] == "16777216"
        })
        .unwrap();
    assert_eq!(gpu.unit.as_str(), "ns");
    assert_eq!(gpu.direction, Direction::LowerIsBetter);
    assert_eq!(gpu.samples.len(), 1);
    // 8 µs + 2^24 × 8 B / 3.2 TB/s, written in seconds.
    let expected = (8.0e-6 + 16777216.0 * 8.0 / 3.2e12) * 1e9;
    assert!(
        (gpu.samples[0] - expected).abs() / expected < 1e-5,
        "{}",
        gpu.samples[0]
    );
    let bw = reduce.iter().find(|b| b.measure == "bandwidth").unwrap();
    assert_eq!(bw.unit.as_str(), "B/s");
    assert_eq!(bw.direction, Direction::HigherIsBetter);
    for m in ["cpu_time", "batch_gpu_time", "item_rate"] {
        assert_eq!(reduce.iter().filter(|b| b.measure == m).count(), 4, "{m}");
    }
    assert!(run.benchmarks.iter().all(|b| b.error.is_none()));
    let skipped = run.benchmarks.iter().find(|b| b.skipped.is_some()).unwrap();
    assert_eq!(skipped.name, "copy");
    assert_eq!(skipped.params["BlockSize"], "2048");
    assert!(skipped.samples.is_empty());
    assert_eq!(
        skipped.status(),
        pitwall_schema::schema::ResultStatus::Skipped
    );
    assert!(
        skipped
            .skipped
            .as_deref()
            .unwrap()
            .contains("exceeds the device")
    );
    assert_eq!(run.notes[0], SUMMARY_NOTE);
    assert!(run.notes[1].contains("2 state(s)"), "{:?}", run.notes);
    assert_eq!(run.context["devices"][0]["name"], "NVIDIA H200");
}

fn f32s(xs: impl Iterator<Item = f32>) -> Vec<u8> {
    xs.flat_map(f32::to_le_bytes).collect()
}

/// The two sample files `reduce.json` names: 1000 and 1037 times around its means.
fn reduce_files() -> MemFiles {
    MemFiles::default()
        .with(
            "reduce.json-bin/0.bin",
            f32s((0..1000).map(|i| 9.0e-6 + (i % 7) as f32 * 1e-7)),
        )
        .with(
            "reduce.json-bin/1.bin",
            f32s((0..1037).map(|i| 2.9e-5 - (i % 5) as f32 * 1e-7)),
        )
}

#[test]
fn jsonbin_sample_times_become_the_gpu_time_samples_of_their_state() {
    let files = reduce_files();
    let run = parse_with(REDUCE, Some(&files)).unwrap();
    assert_eq!(run.benchmarks.len(), 25);
    let gpu = |t: &str, n: &str| {
        run.benchmarks
            .iter()
            .find(|b| {
                b.name == "reduce"
                    && b.measure == "gpu_time"
                    && b.params["T"] == t
                    && b.params["Elements"] == n
            })
            .unwrap()
    };
    let first = gpu("F32", "1048576");
    assert_eq!(first.samples.len(), 1000);
    assert_eq!(first.samples[3], f64::from(9.0e-6f32 + 3.0 * 1e-7) * 1e9);
    assert_eq!(first.unit.as_str(), "ns");
    assert_eq!(gpu("F32", "16777216").samples.len(), 1037);
    // States without a file keep their mean; so do the other measures of a state with one.
    assert_eq!(gpu("F64", "1048576").samples.len(), 1);
    assert!(
        run.benchmarks
            .iter()
            .filter(|b| b.measure != "gpu_time")
            .all(|b| b.samples.len() <= 1)
    );
    assert_eq!(
        run.notes,
        vec![
            "nvbench: per-sample times of 2 of 5 measured state(s) read from their --jsonbin \
             files; the other values are summaries (one mean per state and measure)"
                .to_string()
        ]
    );
}

#[test]
fn a_missing_or_short_sample_file_rejects_the_output_naming_state_and_file() {
    let files = MemFiles::default().with("reduce.json-bin/0.bin", f32s((0..1000).map(|_| 1e-5)));
    let e = parse_with(REDUCE, Some(&files)).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "nvbench: benchmark 0 (reduce): state `Device=0 T=F32 Elements=2^24`: sample \
             file reduce.json-bin/1.bin not found (looked for reduce.json-bin/1.bin)"
        ),
        "{e}"
    );
    let files = reduce_files().with("reduce.json-bin/1.bin", f32s((0..1036).map(|_| 1e-5)));
    let e = parse_with(REDUCE, Some(&files)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "nvbench: benchmark 0 (reduce): state `Device=0 T=F32 Elements=2^24`: sample file \
         reduce.json-bin/1.bin holds 1036 samples, but `nv/json/bin:nv/cold/sample_times` \
         says 1037 (truncated, or left by another run?)"
    );
    // Through the registry, text alone reads no files and says so.
    let run = crate::parse(crate::InputFormat::Nvbench, crate::Input::Text(REDUCE)).unwrap();
    assert!(run.benchmarks.iter().all(|b| b.samples.len() <= 1));
    let run = crate::parse(
        crate::InputFormat::Nvbench,
        crate::Input::TextBeside(REDUCE, &reduce_files()),
    )
    .unwrap();
    assert!(run.benchmarks.iter().any(|b| b.samples.len() == 1037));
}

#[test]
fn cpu_only_states_give_cpu_time_with_their_sample_times() {
    let doc = r#"{"devices":[],"benchmarks":[{"name":"host","axes":[],"states":[{"name":"Device=0","axis_values":null,"is_skipped":false,"summaries":[
        {"tag":"nv/cpu_only/time/cpu/mean","data":[{"name":"value","type":"float64","value":"2e-06"}]},
        {"tag":"nv/json/bin:nv/cpu_only/sample_times","data":[{"name":"filename","type":"string","value":"h.json-bin/0.bin"},{"name":"size","type":"int64","value":"3"}]}]}]}]}"#;
    let run = parse(doc).unwrap();
    assert_eq!(run.benchmarks.len(), 1);
    assert_eq!(run.benchmarks[0].measure, "cpu_time");
    assert_eq!(run.benchmarks[0].samples, vec![2000.0]);
    assert_eq!(run.notes[0], SUMMARY_NOTE);
    assert!(run.notes[1].contains("1 state(s)"), "{:?}", run.notes);
    let files = MemFiles::default().with("h.json-bin/0.bin", f32s([1.0f32, 2.0, 3.0].into_iter()));
    let run = parse_with(doc, Some(&files)).unwrap();
    assert_eq!(run.benchmarks[0].samples, vec![1e9, 2e9, 3e9]);
    assert_eq!(run.benchmarks[0].direction, Direction::LowerIsBetter);
    // Only the sample file, no mean: its times with the files, an error without them.
    let bare = doc.replace(
        r#"{"tag":"nv/cpu_only/time/cpu/mean","data":[{"name":"value","type":"float64","value":"2e-06"}]},"#,
        "",
    );
    assert_ne!(bare, doc);
    let run = parse_with(&bare, Some(&files)).unwrap();
    assert_eq!(run.benchmarks.len(), 1);
    assert_eq!(run.benchmarks[0].measure, "cpu_time");
    assert_eq!(run.benchmarks[0].unit.as_str(), "ns");
    assert_eq!(run.benchmarks[0].samples, vec![1e9, 2e9, 3e9]);
    let e = parse(&bare).unwrap_err();
    assert!(e.message.contains("no time or bandwidth summaries"), "{e}");
}

#[test]
fn looks_like_only_nvbench() {
    assert!(looks_like(REDUCE));
    for other in [
        include_str!("../../../../tests/fixtures/bmf/bencher-docs-example.json"),
        include_str!("../../../../tests/fixtures/nccl-tests/all_reduce_perf.json"),
        include_str!("../../../../tests/fixtures/cargo-criterion/messages.jsonl"),
        include_str!("../../../../tests/fixtures/mlperf-loadgen/offline_valid.txt"),
        r#"{"schema":"pitwall/v1","benchmarks":[{"name":"a","samples":[1]}]}"#,
    ] {
        assert!(!looks_like(other), "{}", &other[..other.len().min(60)]);
    }
}

#[test]
fn bad_input_is_an_error_with_position() {
    let e = parse(&REDUCE[..REDUCE.len() / 3]).unwrap_err();
    assert!(e.position.starts_with("line "), "{e}");
    assert!(e.position.contains(", column "), "{e}");
    let e = parse(include_str!("../../../../tests/fixtures/bmf/multi.json")).unwrap_err();
    assert!(e.message.contains("another format"), "{e}");
    let e = parse(r#"{"devices":[],"benchmarks":[]}"#).unwrap_err();
    assert!(e.message.contains("no benchmarks"), "{e}");
    let doc = |summ: &str| {
        format!(
            r#"{{"devices":[],"benchmarks":[{{"name":"k","axes":[],"states":[{{"name":"Device=0","device":0,"axis_values":null,"summaries":[{summ}],"is_skipped":false}}]}}]}}"#
        )
    };
    let time = |v: &str| {
        doc(&format!(
            r#"{{"tag":"nv/cold/time/gpu/mean","data":[{{"name":"value","type":"float64","value":{v}}}]}}"#
        ))
    };
    let run = parse(&time("\"2.5e-06\"")).unwrap();
    assert_eq!(run.benchmarks[0].samples, vec![2500.0]);
    for (bad, says) in [
        ("\"nan\"", "not a finite number"),
        ("\"fast\"", "not a finite number"),
        ("true", "not a finite number"),
        ("\"-1e-06\"", "negative"),
    ] {
        let e = parse(&time(bad)).unwrap_err();
        assert_eq!(e.position, "benchmark 0 (k): state `Device=0`: ", "{bad}");
        assert!(e.message.contains(says), "{bad}: {e}");
    }
    let e = parse(&doc("")).unwrap_err();
    assert!(e.message.contains("no time or bandwidth summaries"), "{e}");
    let e = parse(&doc(r#"{"name":"GPU Time"}"#)).unwrap_err();
    assert!(e.message.contains("need a `tag`"), "{e}");
    let e =
        parse(r#"{"devices":[],"benchmarks":[{"name":"k","axes":[],"states":[]}]}"#).unwrap_err();
    assert_eq!(e.to_string(), "nvbench: benchmark 0 (k): no states");
    let e = parse(r#"{"devices":[],"benchmarks":[{"name":"k","states":{"a":1}}]}"#).unwrap_err();
    assert!(e.message.contains("must be a list"), "{e}");
}
