//! hyperfine's `--export-json` output: one benchmark per command, each run in `times` one sample.
//!
//! The name is the `command` as hyperfine wrote it (parameters already substituted); a
//! `--parameter-scan`/`-L` value goes into params too. Measures: `time` (wall clock per run, ns)
//! and, where hyperfine records it per run (`memory_usage_byte`, newer versions), `memory` (B).
//! `user` and `system` are only means, so they are not read. A non-zero (or missing: killed by a
//! signal) exit code in `exit_codes` (kept with `-i`) sets `error`. Files without `times` (old
//! versions; which ones was not checked) give the mean as one summary sample and a note.
//!
//! Also home of the JSON helpers the Google Benchmark and pytest-benchmark readers share.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json_util::{bench, kind, quantity_value, read_json, time_value, top_array};
use super::parsed::{FormatError, ParsedRun};
use pitwall_schema::schema::Unit;

const FORMAT: &str = "hyperfine";

/// Reads hyperfine `--export-json` output.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    let doc = read_json(FORMAT, text)?;
    let (_, results) = top_array(FORMAT, &doc, "results")?;
    let mut run = ParsedRun::default();
    let mut summary_only = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let name = r.get("command").and_then(Value::as_str);
        let name = name.ok_or_else(|| {
            err(
                format!("benchmark {i}: "),
                "`command` must be a string".into(),
            )
        })?;
        let at = format!("benchmark {i} ({name}): ");
        let fail = |m: String| err(at.clone(), m);
        let mut params = BTreeMap::new();
        match r.get("parameters") {
            None | Some(Value::Null) => {}
            Some(Value::Object(p)) => {
                for (k, v) in p {
                    params.insert(
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    );
                }
            }
            Some(v) => {
                return Err(fail(format!(
                    "`parameters` must be an object, got {}",
                    kind(v)
                )));
            }
        }
        let has_times = matches!(r.get("times"), Some(Value::Array(_)));
        let samples = match r.get("times") {
            None | Some(Value::Null) => {
                let mean = r
                    .get("mean")
                    .ok_or_else(|| fail("neither `times` nor `mean`".into()))?;
                summary_only.push(name.to_string());
                vec![time_value(mean, "mean").map_err(fail)? * 1e9]
            }
            Some(Value::Array(times)) if times.is_empty() => {
                return Err(fail("`times` is empty".into()));
            }
            Some(Value::Array(times)) => times
                .iter()
                .enumerate()
                .map(|(k, t)| time_value(t, &format!("times[{k}]")).map(|s| s * 1e9))
                .collect::<Result<_, _>>()
                .map_err(fail)?,
            Some(v) => return Err(fail(format!("`times` must be an array, got {}", kind(v)))),
        };
        let error = exit_error(r, has_times, samples.len()).map_err(fail)?;
        let mut measures = vec![("time", Unit::NANOSECONDS, samples)];
        if let Some(mem) = r.get("memory_usage_byte").filter(|m| !m.is_null()) {
            let mem = mem.as_array().ok_or_else(|| {
                fail(format!(
                    "`memory_usage_byte` must be an array, got {}",
                    kind(mem)
                ))
            })?;
            let mem = mem
                .iter()
                .map(|m| quantity_value(m, "memory_usage_byte", "memory"))
                .collect::<Result<_, _>>();
            measures.push(("memory", "B", mem.map_err(fail)?));
        }
        for (measure, unit, samples) in measures {
            run.benchmarks
                .push(bench(name, &params, measure, unit, samples, error.clone()));
        }
    }
    if !summary_only.is_empty() {
        run.notes.push(format!(
            "no per-run `times` (an old hyperfine?) for {}: the mean is used as a single summary sample, so comparisons for them are summary-based",
            summary_only.join(", ")
        ));
    }
    Ok(run)
}

/// The failure a result's `exit_codes` report (`None` when every run exited 0), checked
/// against its `runs` times when it has `times`.
fn exit_error(r: &Value, has_times: bool, runs: usize) -> Result<Option<String>, String> {
    match r.get("exit_codes") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(codes)) => {
            if has_times && codes.len() != runs {
                return Err(format!(
                    "{} `exit_codes` for {} `times` (hyperfine writes one per run)",
                    codes.len(),
                    runs
                ));
            }
            let bad: Vec<&Value> = codes.iter().filter(|c| c.as_i64() != Some(0)).collect();
            if let Some(c) = bad.iter().find(|c| !c.is_null() && !c.is_i64()) {
                return Err(format!(
                    "exit code must be an integer or null, got {}",
                    kind(c)
                ));
            }
            Ok((!bad.is_empty()).then(|| {
                let shown = if bad[0].is_null() {
                    "none (killed by a signal)".into()
                } else {
                    bad[0].to_string()
                };
                format!(
                    "command failed in {} of {} runs (exit code {shown})",
                    bad.len(),
                    codes.len()
                )
            }))
        }
        Some(v) => Err(format!("`exit_codes` must be an array, got {}", kind(v))),
    }
}

/// Whether `text` is hyperfine JSON: a `results` array whose entries have `command` and `mean`.
pub fn looks_like(text: &str) -> bool {
    let Ok(Value::Object(doc)) = read_json(FORMAT, text) else {
        return false;
    };
    doc.get("results")
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter()
                .all(|r| r.get("command").is_some_and(Value::is_string) && r.get("mean").is_some())
        })
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InputFormat, detect};
    use pitwall_schema::schema::Direction;

    const SLEEPS: &str = include_str!("../../../tests/fixtures/hyperfine/sleeps.json");
    const SCAN: &str = include_str!("../../../tests/fixtures/hyperfine/parameter-scan.json");
    const FAILING: &str = include_str!("../../../tests/fixtures/hyperfine/failing-ignored.json");
    const GBENCH: &str = include_str!("../../../tests/fixtures/google-benchmark/repetitions.json");
    const PYTEST: &str = include_str!("../../../tests/fixtures/pytest-benchmark/stats-only.json");

    #[test]
    fn each_run_is_a_sample_in_ns() {
        let r = parse(SLEEPS).unwrap();
        let names: Vec<&str> = r.benchmarks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["sleep 0.01", "sleep 0.02"]);
        for b in &r.benchmarks {
            assert_eq!((b.measure.as_str(), b.unit.as_str()), ("time", "ns"));
            assert_eq!(
                (b.direction, b.samples.len()),
                (Direction::LowerIsBetter, 10)
            );
            assert!(b.params.is_empty() && b.error.is_none() && b.sample_meta.is_empty());
        }
        assert!(
            (r.benchmarks[0].samples[0] - 8628343.58).abs() < 1e-6,
            "0.00862834358 s → ns"
        );
        assert!((r.benchmarks[1].samples[9] - 18902485.58).abs() < 1e-6);
        assert!(r.notes.is_empty() && r.context.is_empty());
        let r = parse(SCAN).unwrap();
        assert_eq!(r.benchmarks.len(), 3);
        for (b, n) in r.benchmarks.iter().zip(["1", "2", "3"]) {
            assert_eq!(b.name, format!("sleep 0.0{n}"));
            assert_eq!(
                b.params.iter().collect::<Vec<_>>(),
                [(&"n".to_string(), &n.to_string())]
            );
            assert_eq!(b.samples.len(), 5);
        }
        assert!((r.benchmarks[2].samples[0] - 31750881.7).abs() < 1e-6);
    }

    #[test]
    fn failures_old_files_and_memory() {
        let r = parse(FAILING).unwrap();
        assert_eq!(r.benchmarks.len(), 1);
        let b = &r.benchmarks[0];
        assert_eq!(b.name, r#"sh -c "sleep 0.01; exit 3""#);
        assert_eq!(
            b.error.as_deref(),
            Some("command failed in 3 of 3 runs (exit code 3)")
        );
        assert_eq!(b.samples.len(), 3);
        // Hand-written: old versions had no `times`; newer ones have `memory_usage_byte` per run.
        let old = r#"{"results":[{"command":"a","mean":0.5,"stddev":0.1},
            {"command":"b","mean":1,"times":[1,2],"exit_codes":[0,null],"memory_usage_byte":[10,12]}]}"#;
        let r = parse(old).unwrap();
        assert_eq!(r.benchmarks[0].samples, [5e8]);
        assert!(r.notes[0].contains("for a: the mean") && r.notes[0].contains("summary-based"));
        let mem = &r.benchmarks[2];
        assert_eq!(
            (mem.measure.as_str(), mem.unit.as_str(), &mem.samples[..]),
            ("memory", "B", &[10.0, 12.0][..])
        );
        assert_eq!(
            mem.error.as_deref(),
            Some("command failed in 1 of 2 runs (exit code none (killed by a signal))")
        );
        let strings =
            r#"{"results":[{"command":"echo NaN \"Infinity\"","mean":NaN,"times":[Infinity, 1]}]}"#;
        let e = parse(strings).unwrap_err();
        assert_eq!(
            e.to_string(),
            "hyperfine: benchmark 0 (echo NaN \"Infinity\"): `times[0]` is not a finite number (NaN, Infinity or null)"
        );
    }

    #[test]
    fn detection() {
        for own in [SLEEPS, SCAN, FAILING] {
            assert!(looks_like(own));
            assert_eq!(detect(own), Some(InputFormat::Hyperfine));
        }
        let export = include_str!("../../../tests/fixtures/export-v1.json");
        for other in [
            GBENCH,
            PYTEST,
            export,
            "",
            "{}",
            r#"{"results":{"a":{"value":1}}}"#,
            &SLEEPS[..200],
        ] {
            assert!(!looks_like(other));
        }
    }

    /// `fields of result 1 (after an ok result 0) => message`; then `document => message`.
    const BAD: &str = r#"
        "times":["fast"] => benchmark 1 (b): `times[0]` must be a number, got the string "fast"
        "times":[0.1,null] => benchmark 1 (b): `times[1]` is not a finite number
        "times":[0.1,NaN] => benchmark 1 (b): `times[1]` is not a finite number
        "times":[-0.1] => benchmark 1 (b): `times[0]` is a negative time (-0.1)
        "times":[1],"memory_usage_byte":[-5] => benchmark 1 (b): `memory_usage_byte` is a negative memory (-5)
        "times":[] => benchmark 1 (b): `times` is empty
        "times":0.1 => benchmark 1 (b): `times` must be an array, got 0.1
        "stddev":0.1 => benchmark 1 (b): neither `times` nor `mean`
        "times":[1],"exit_codes":["x"] => exit code must be an integer or null
        "times":[1],"parameters":[1] => `parameters` must be an object, got an array
        {"results":[]} => no benchmarks in output
        {"results":[{"mean":1}]} => benchmark 0: `command` must be a string
        {"results":[{"command":7}]} => benchmark 0: `command` must be a string
        {"schema":"pitwall/v1","benchmarks":[]} => no `results` in the JSON object
        "results" => expected a JSON object, got the string "results""#;

    #[test]
    fn bad_input_names_the_position() {
        let e = parse(&SLEEPS[..SLEEPS.len() - 40]).unwrap_err();
        assert!(e.to_string().starts_with("hyperfine: line "), "{e}");
        assert!(e.message.contains("EOF while parsing"), "{e}");
        let e = parse("{\"results\": [\n  {\"command\": \"a\",, }]}").unwrap_err();
        assert_eq!(e.position, "line 2, column 19: ");
        let ok = r#"{"command":"a","mean":1,"times":[1]}"#;
        let doc = |t: &str| match t.starts_with('{') || t == "\"results\"" {
            true => t.to_string(),
            false => format!(r#"{{"results":[{ok},{{"command":"b",{t}}}]}}"#),
        };
        let lines = BAD
            .lines()
            .skip(1)
            .map(|l| l.trim().split_once(" => ").unwrap());
        let mut cases: Vec<(String, &str)> = lines.map(|(t, want)| (doc(t), want)).collect();
        // The reader does not guess at other tools' output (registry::parse names it).
        cases.push((GBENCH.into(), "no `results` in the JSON object"));
        cases.push((PYTEST.into(), "no `results` in the JSON object"));
        cases.push(("\n".into(), "empty output"));
        for (text, want) in cases {
            let e = parse(&text).unwrap_err();
            assert_eq!(e.format, "hyperfine");
            assert!(e.to_string().contains(want), "{e}\n  wanted: {want}");
        }
    }

    #[test]
    fn exit_codes_must_match_the_times() {
        let text = r#"{"results":[{"command":"a","mean":1,"times":[1,2,3],"exit_codes":[0,0,0,0,0,0,0,0,0,0]}]}"#;
        let e = parse(text).unwrap_err().to_string();
        assert!(e.contains("10 `exit_codes` for 3 `times`"), "{e}");
        // Without `times` (summary only) the counts are not comparable.
        let summary = r#"{"results":[{"command":"a","mean":1,"exit_codes":[0,0]}]}"#;
        assert!(parse(summary).is_ok());
    }
}
