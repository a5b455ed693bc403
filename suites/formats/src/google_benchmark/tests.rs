//! Tests of the Google Benchmark reader, on the fixtures and hand-written outputs.

use super::*;
use crate::{InputFormat, detect};

const REPS: &str = include_str!("../../../../tests/fixtures/google-benchmark/repetitions.json");
const SINGLE: &str = include_str!("../../../../tests/fixtures/google-benchmark/single.json");
const AGGS: &str = include_str!("../../../../tests/fixtures/google-benchmark/aggregates-only.json");
const HYPERFINE: &str = include_str!("../../../../tests/fixtures/hyperfine/sleeps.json");
const PYTEST: &str = include_str!("../../../../tests/fixtures/pytest-benchmark/with-data.json");

/// The benchmark `id` (`name k=v…`) with the measure in `want` (`measure unit direction
/// samples`; no unit: two spaces), checked to have that unit, direction and sample count.
fn get<'a>(r: &'a ParsedRun, id: &str, want: &str) -> &'a ParsedBenchmark {
    let (mut words, measure) = (id.split(' '), want.split(' ').next().unwrap());
    let name = words.next().unwrap();
    let params: BTreeMap<String, String> = words
        .map(|w| w.split_once('=').unwrap())
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    let is = |b: &&ParsedBenchmark| b.name == name && b.params == params && b.measure == measure;
    let b = r
        .benchmarks
        .iter()
        .find(is)
        .unwrap_or_else(|| panic!("no {id} {want}"));
    let (unit, direction) = (b.unit.as_str(), b.direction.as_str());
    assert_eq!(
        format!("{measure} {unit} {direction} {}", b.samples.len()),
        want,
        "{id}"
    );
    b
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

#[test]
fn repetitions_are_samples_and_aggregates_are_not() {
    let r = parse(REPS).unwrap();
    // BM_fill ×2 (time, cpu_time), BM_memcpy ×3 (+4 counters), BM_accumulate, BM_fails (time).
    assert_eq!(r.benchmarks.len(), 2 * 2 + 3 * 6 + 2 + 1);
    let fill = get(&r, "BM_fill len=64 step=1", "time ns lower_is_better 5");
    assert_eq!(fill.samples[0], 22.43215563207241);
    get(
        &r,
        "BM_fill len=512 step=8",
        "cpu_time ns lower_is_better 5",
    );
    let acc = get(&r, "BM_accumulate", "time ns lower_is_better 5").samples[0];
    assert!(
        close(acc, 8079.788329116626),
        "8.079788329116626 us → ns: {acc}"
    );
    let bytes = get(
        &r,
        "BM_memcpy arg0=8",
        "bytes_per_second B/s higher_is_better 5",
    );
    assert_eq!(bytes.samples[0], 4244623278.8146176);
    get(
        &r,
        "BM_memcpy arg0=512",
        "items_per_second items/s higher_is_better 5",
    );
    get(&r, "BM_memcpy arg0=64", "rate  higher_is_better 5");
    let chunks = get(&r, "BM_memcpy arg0=64", "chunks  higher_is_better 5");
    assert_eq!(chunks.samples, [1.0; 5]);
    let fails = get(&r, "BM_fails", "time ns lower_is_better 0");
    assert_eq!(fails.error.as_deref(), Some("device not available"));
    assert!(r.benchmarks.iter().all(|b| b.sample_meta.is_empty()));
    assert_eq!(r.benchmarks.iter().filter(|b| b.error.is_some()).count(), 1);
    let ctx = &r.context;
    assert_eq!(
        (ctx["host_name"].as_str(), ctx["num_cpus"].as_u64()),
        (Some("vm"), Some(2))
    );
    assert_eq!(ctx["caches"].as_array().map(Vec::len), Some(4));
    // The file's `NaN` is in a cv aggregate, which is not read.
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

#[test]
fn single_runs_and_aggregates_only() {
    let r = parse(SINGLE).unwrap();
    assert_eq!(r.benchmarks.len(), 25);
    let ok = r.benchmarks.iter().filter(|b| b.error.is_none());
    assert!(ok.clone().count() == 24 && ok.clone().all(|b| b.samples.len() == 1));
    let acc = get(&r, "BM_accumulate", "time ns lower_is_better 1").samples[0];
    assert!(close(acc, 5196.791184191804), "{acc}");
    let b = get(
        &r,
        "BM_memcpy arg0=64",
        "bytes_per_second B/s higher_is_better 1",
    );
    assert_eq!(b.samples, [45269160029.10252]);
    let r = parse(AGGS).unwrap();
    let acc = get(&r, "BM_accumulate", "time ns lower_is_better 1").samples[0];
    assert!(
        close(acc, 6705.481567618541),
        "median 6.705481567618541 us → ns: {acc}"
    );
    let fill = get(&r, "BM_fill len=512 step=8", "time ns lower_is_better 1");
    assert_eq!(fill.samples, [14.500176858857511]);
    let fails = get(&r, "BM_fails", "time ns lower_is_better 0");
    assert_eq!(fails.error.as_deref(), Some("device not available"));
    assert_eq!(r.notes.len(), 1);
    // Each benchmark once, with its params (not `BM_fill, BM_fill, …`).
    let note = &r.notes[0];
    assert!(note.contains("for BM_fill[len=64,step=1], BM_fill[len=512,step=8], "));
    assert_eq!(note.matches("BM_fill").count(), 2, "{note}");
    assert!(
        r.notes[0].contains("BM_accumulate") && r.notes[0].contains("summary-based"),
        "{:?}",
        r.notes
    );
}

#[test]
fn names_old_versions_and_skips() {
    let (name, params) = split_name("BM_x/len:64/8/real_time/repeats:5/16");
    assert_eq!(name, "BM_x/real_time");
    assert_eq!(
        format!("{params:?}"),
        r#"{"arg0": "8", "arg1": "16", "len": "64"}"#
    );
    // Hand-written, as versions without run_type wrote it: aggregates known by name only.
    let old = r#"{"context":{},"benchmarks":[
            {"name":"BM_a/2/repeats:2","iterations":1,"real_time":1,"cpu_time":1,"time_unit":"ms"},
            {"name":"BM_a/2/repeats:2","iterations":1,"real_time":3,"cpu_time":1,"time_unit":"ms"},
            {"name":"BM_a/2/repeats:2_mean","iterations":1,"real_time":2,"cpu_time":1,"time_unit":"ms"},
            {"name":"BM_b","iterations":1,"real_time":1,"time_unit":"s","skipped":true,"skip_message":"no GPU"},
            {"name":"BM_c","iterations":1,"real_time":1,"p99_latency_us":NaN,"max_bytes_used":10}]}"#;
    let r = parse(old).unwrap();
    assert_eq!(
        get(&r, "BM_a arg0=2", "time ns lower_is_better 2").samples,
        [1e6, 3e6]
    );
    let skipped = get(&r, "BM_b", "time ns lower_is_better 0");
    assert_eq!(skipped.error, None);
    assert_eq!(skipped.skipped.as_deref(), Some("no GPU"));
    assert_eq!(
        skipped.status(),
        pitwall_schema::schema::ResultStatus::Skipped
    );
    get(&r, "BM_c", "max_bytes_used B lower_is_better 1");
    assert_eq!(r.notes, ["1 counter values were NaN and were left out"]);
    assert_eq!(
        counter_kind("p99_latency_us"),
        ("", Direction::LowerIsBetter)
    );
}

#[test]
fn detection() {
    for own in [REPS, SINGLE, AGGS] {
        assert!(looks_like(own));
        assert_eq!(detect(own), Some(InputFormat::GoogleBenchmark));
    }
    let export = include_str!("../../../../tests/fixtures/export-v1.json");
    for other in [HYPERFINE, PYTEST, export, "", "[1]", &REPS[..500]] {
        assert!(!looks_like(other));
    }
}

/// `fields of entry 1 (after an ok entry 0) => expected message`, one case a line; then
/// `whole document => expected message`.
const BAD: &str = r#"
        "real_time":"fast" => benchmark 1 (BM_a/8): `real_time` must be a number, got the string "fast"
        "real_time":NaN => benchmark 1 (BM_a/8): `real_time` is not a finite number
        "real_time":-Infinity => benchmark 1 (BM_a/8): `real_time` is not a finite number
        "real_time":-2.5 => benchmark 1 (BM_a/8): `real_time` is a negative time (-2.5)
        "real_time":1,"cpu_time":[1] => benchmark 1 (BM_a/8): `cpu_time` must be a number, got an array
        "real_time":1,"time_unit":"fortnights" => unknown time_unit `fortnights`
        "real_time":1,"custom":"x" => counter `custom` must be a number
        "real_time":1,"error_occurred":"yes" => `error_occurred` must be true or false
        "real_time":1,"run_type":"warmup" => unknown run_type `warmup`
        "cpu_time":1 => benchmark 1 (BM_a/8): no `real_time`
        {"context":{},"benchmarks":[]} => no benchmarks in output
        {"context":{},"benchmarks":{}} => `benchmarks` must be a non-empty array
        {"context":{},"benchmarks":[{"real_time":1}]} => benchmark 0: `name` must be a string
        {"context":{},"benchmarks":[7]} => benchmark 0: expected an object, got 7
        {"context":{}} => no `benchmarks` in the JSON object
        [] => expected a JSON object, got an array"#;

#[test]
fn bad_input_names_the_position() {
    let e = parse(&REPS[..REPS.len() / 2]).unwrap_err();
    assert!(e.to_string().starts_with("google-benchmark: line "), "{e}");
    assert!(e.message.contains("EOF while parsing"), "{e}");
    let e = parse("{\"context\": {},\n \"benchmarks\": [}").unwrap_err();
    assert_eq!(e.position, "line 2, column 17: ");
    let ok = r#"{"name":"BM_ok","iterations":1,"real_time":1}"#;
    let doc = |t: &str| match t.starts_with(['{', '[']) {
        true => t.to_string(),
        false => format!(r#"{{"context":{{}},"benchmarks":[{ok},{{"name":"BM_a/8",{t}}}]}}"#),
    };
    let lines = BAD
        .lines()
        .skip(1)
        .map(|l| l.trim().split_once(" => ").unwrap());
    let mut cases: Vec<(String, &str)> = lines.map(|(t, want)| (doc(t), want)).collect();
    // The reader does not guess at other tools' output (registry::parse names it).
    cases.push((HYPERFINE.into(), "no `benchmarks` in the JSON object"));
    cases.push(("  ".into(), "empty output"));
    for (text, want) in cases {
        let e = parse(&text).unwrap_err();
        assert_eq!(e.format, "google-benchmark");
        assert!(e.to_string().contains(want), "{e}\n  wanted: {want}");
    }
}
