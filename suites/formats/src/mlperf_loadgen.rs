//! MLPerf LoadGen reader (`format = "mlperf-loadgen"`): the `mlperf_log_summary.txt` that
//! LoadGen writes after a performance run (mlcommons/inference, `loadgen/results.cc`,
//! `PerformanceSummary::LogSummary`).
//!
//! All results are named after the `SUT name` with the `scenario` as parameter. Measures come
//! from `key : value` lines of the "MLPerf Results Summary" and "Additional Stats" sections:
//! rates (`Samples per second` → `samples_per_second`, `Scheduled samples per second`, `QPS w/
//! loadgen overhead` → `qps_with_loadgen_overhead`, tokens per second…) are higher is better in
//! `samples/s`, `queries/s` or `tokens/s`; every `(ns)` statistic (`Min latency` →
//! `min_latency`, `99.90 percentile latency` → `p99.9_latency`, `90th percentile latency` →
//! `p90_latency`, first-token and time-per-output-token latencies…) is a nanosecond measure,
//! lower is better; the first of equal names wins. Each is one summary value over the whole
//! run, and a note says so. `Result is : INVALID` fails every result, with the unmet
//! constraints and LoadGen's recommendations as the error. `Mode` and the "Test Parameters
//! Used" go into the context.

use std::collections::BTreeMap;

use serde_json::Value;

use super::parsed::{FormatError, ParsedBenchmark, ParsedRun};
use pitwall_schema::schema::{Direction, Unit};

const FORMAT: &str = "mlperf-loadgen";
const HEADER: &str = "MLPerf Results Summary";
const STATS: &str = "Additional Stats";
const PARAMS: &str = "Test Parameters Used";
/// The latency statistics LoadGen writes under "Additional Stats" in every scenario; a summary
/// without one of them was cut off.
const REQUIRED: [&str; 9] = [
    "min_latency",
    "max_latency",
    "mean_latency",
    "p50_latency",
    "p90_latency",
    "p95_latency",
    "p97_latency",
    "p99_latency",
    "p99.9_latency",
];

/// The note every LoadGen run carries.
pub const SUMMARY_NOTE: &str = "mlperf-loadgen: summary values only (one value per statistic \
     over the whole run; per-query data is in mlperf_log_detail.txt, not read): comparisons \
     are summary-based";

/// Reads a LoadGen `mlperf_log_summary.txt`.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    if !text.lines().any(|l| l.trim() == HEADER) {
        return Err(err(
            String::new(),
            format!("not a LoadGen summary: no `{HEADER}` header (is this another format?)"),
        ));
    }
    let mut summary = Summary::default();
    for (n, raw) in text.lines().enumerate() {
        summary.read_line(n, raw)?;
    }
    let Summary {
        sut,
        scenario,
        valid,
        reasons,
        measures,
        params,
        mode,
        sections,
        in_stats,
        ..
    } = summary;
    let mut run = ParsedRun::default();
    if let Some(mode) = mode {
        run.context.insert("mode".into(), Value::String(mode));
    }
    let scenario = scenario.ok_or_else(|| err(String::new(), "no `Scenario` line".into()))?;
    let valid = valid.ok_or_else(|| {
        err(
            String::new(),
            "no `Result is` line (truncated summary?)".into(),
        )
    })?;
    if measures.is_empty() {
        return Err(err(
            String::new(),
            "no performance statistics in the summary".into(),
        ));
    }
    check_complete(text, &sections, &in_stats, params.is_empty())?;
    let error = (!valid).then(|| format!("LoadGen result INVALID: {}", reasons.join("; ")));
    let name = sut
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "loadgen".into());
    let params_of = BTreeMap::from([("scenario".to_string(), scenario)]);
    run.benchmarks = measures
        .into_iter()
        .map(|(measure, unit, direction, x)| ParsedBenchmark {
            name: name.clone(),
            params: params_of.clone(),
            measure,
            unit: Unit::new(unit),
            direction,
            samples: vec![x],
            sample_meta: Vec::new(),
            error: error.clone(),
            skipped: None,
        })
        .collect();
    if !params.is_empty() {
        run.context
            .insert("test_parameters".into(), Value::Object(params));
    }
    run.notes.push(SUMMARY_NOTE.into());
    Ok(run)
}

/// What a summary said, gathered line by line.
#[derive(Default)]
struct Summary {
    sut: Option<String>,
    scenario: Option<String>,
    /// `Result is`: VALID or INVALID.
    valid: Option<bool>,
    /// Why the result is invalid: unmet constraints and recommendations.
    reasons: Vec<String>,
    early_failed: bool,
    /// Inside a bulleted list (recommendations, a failed early-stopping result).
    in_list: bool,
    /// `stats`, `additional` or `params`: the section the line is in.
    section: &'static str,
    measures: Vec<(String, &'static str, Direction, f64)>,
    params: serde_json::Map<String, Value>,
    mode: Option<String>,
    /// The section headers seen, and the measures found under "Additional Stats".
    sections: Vec<String>,
    in_stats: Vec<String>,
}

impl Summary {
    /// Takes in line `n` (from 0).
    fn read_line(&mut self, n: usize, raw: &str) -> Result<(), FormatError> {
        let at = format!("line {}: ", n + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with("====") {
            self.in_list = false;
            return Ok(());
        }
        if matches!(line, HEADER | STATS | PARAMS) {
            self.section = match line {
                PARAMS => "params",
                STATS => "additional",
                _ => "stats",
            };
            self.sections.push(line.to_string());
            return Ok(());
        }
        if line == "Recommendations:" || line.ends_with("Early Stopping Result:") {
            self.in_list = line == "Recommendations:" || self.early_failed;
            return Ok(());
        }
        if self.in_list {
            // Bullets start with `*`; LoadGen wraps long ones onto indented lines.
            match (line.strip_prefix('*'), self.reasons.last_mut()) {
                (Some(b), _) => self.reasons.push(b.trim().to_string()),
                (None, Some(last)) => *last = format!("{last} {line}"),
                (None, None) => {}
            }
            return Ok(());
        }
        let Some((key, value)) = line.split_once(':') else {
            return Ok(());
        };
        let (key, value) = (key.trim(), value.trim());
        if self.section == "params" {
            self.params
                .insert(key.to_string(), Value::String(value.to_string()));
            return Ok(());
        }
        match key {
            "SUT name" => self.sut = Some(value.to_string()),
            "Scenario" => self.scenario = Some(value.to_string()),
            "Mode" => self.mode = Some(value.to_string()),
            "Result is" => match value {
                "VALID" => self.valid = Some(true),
                "INVALID" => self.valid = Some(false),
                other => {
                    return Err(err(
                        at,
                        format!("result `{other}` is neither VALID nor INVALID"),
                    ));
                }
            },
            _ if key.ends_with("satisfied") => {
                if value == "NO" {
                    self.reasons.push(format!("{key}: NO"));
                    self.early_failed |= key.starts_with("Early stopping");
                }
            }
            _ => self.measure(key, value, at)?,
        }
        Ok(())
    }

    /// A statistic line: kept when `key` is a measure pitwall reads, the first time it appears.
    fn measure(&mut self, key: &str, value: &str, at: String) -> Result<(), FormatError> {
        let Some((name, unit, direction)) = measure_of(key) else {
            return Ok(());
        };
        let x = value
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| err(at.clone(), format!("`{key}`: `{value}` is not a number")))?;
        if x < 0.0 {
            return Err(err(at, format!("`{key}` is negative ({x})")));
        }
        if self.section == "additional" {
            self.in_stats.push(name.clone());
        }
        if !self.measures.iter().any(|m| m.0 == name) {
            self.measures.push((name, unit, direction, x));
        }
        Ok(())
    }
}

/// A summary cut off part-way (only its first half copied, a disk full) must not pass with
/// statistics silently missing: LoadGen always writes the "Additional Stats" latencies and the
/// "Test Parameters Used".
fn check_complete(
    text: &str,
    sections: &[String],
    in_stats: &[String],
    no_params: bool,
) -> Result<(), FormatError> {
    let lines = text.lines().count();
    let cut = |what: String| {
        err(
            String::new(),
            format!("the summary ends at line {lines} {what} (truncated summary?)"),
        )
    };
    let without = |section: &str| cut(format!("without its \"{section}\" section"));
    if !sections.iter().any(|s| s == STATS) {
        return Err(without(STATS));
    }
    let missing: Vec<&str> = REQUIRED
        .into_iter()
        .filter(|m| !in_stats.iter().any(|s| s == m))
        .collect();
    if !missing.is_empty() {
        return Err(cut(format!(
            "with no {} in \"{STATS}\"",
            missing.join(", ")
        )));
    }
    if !sections.iter().any(|s| s == PARAMS) {
        return Err(without(PARAMS));
    }
    if no_params {
        return Err(cut(format!("with an empty \"{PARAMS}\" section")));
    }
    Ok(())
}

/// The measure, unit and direction a statistic's key names, if it is one.
fn measure_of(key: &str) -> Option<(String, &'static str, Direction)> {
    if let Some(stat) = key.strip_suffix("(ns)") {
        let stat = stat.trim().to_lowercase();
        let name = match stat.split_once(" percentile ") {
            Some((p, rest)) => {
                let p = p.trim_end_matches("th");
                let p = p.parse::<f64>().ok()?;
                format!("p{p}_{}", slug(rest))
            }
            None => slug(&stat),
        };
        return Some((name, Unit::NANOSECONDS, Direction::LowerIsBetter));
    }
    let lower = key.to_lowercase();
    let unit = if lower.contains("tokens per second") || lower.starts_with("tps ") {
        "tokens/s"
    } else if lower.contains("samples per second") {
        "samples/s"
    } else if lower.starts_with("qps ") {
        "queries/s"
    } else {
        return None;
    };
    let name = slug(&lower.replace("w/o", "without").replace("w/", "with"));
    Some((name, unit, Direction::HigherIsBetter))
}

/// `Min First Token latency` → `min_first_token_latency`.
fn slug(s: &str) -> String {
    let words: Vec<String> = s
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.join("_")
}

/// Whether `text` is a LoadGen summary: the header line and a `Scenario :` line.
pub fn looks_like(text: &str) -> bool {
    text.lines().any(|l| l.trim() == HEADER)
        && text.lines().any(|l| l.trim_start().starts_with("Scenario"))
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFLINE: &str = include_str!("../../../tests/fixtures/mlperf-loadgen/offline_valid.txt");
    const SERVER: &str = include_str!("../../../tests/fixtures/mlperf-loadgen/server_invalid.txt");
    const SINGLE: &str =
        include_str!("../../../tests/fixtures/mlperf-loadgen/singlestream_valid.txt");

    fn get<'a>(run: &'a ParsedRun, m: &str) -> &'a ParsedBenchmark {
        run.benchmarks.iter().find(|b| b.measure == m).unwrap()
    }

    #[test]
    fn reads_an_offline_summary() {
        let run = parse(OFFLINE).unwrap();
        assert_eq!(run.benchmarks.len(), 10);
        let sps = get(&run, "samples_per_second");
        assert_eq!(sps.name, "PySUT");
        assert_eq!(sps.params["scenario"], "Offline");
        assert_eq!(sps.unit.as_str(), "samples/s");
        assert_eq!(sps.direction, Direction::HigherIsBetter);
        assert_eq!(sps.samples, vec![29.4498]);
        let p99 = get(&run, "p99.9_latency");
        assert_eq!(p99.unit.as_str(), "ns");
        assert_eq!(p99.direction, Direction::LowerIsBetter);
        assert_eq!(p99.samples, vec![746311876300.0]);
        for m in [
            "min_latency",
            "max_latency",
            "mean_latency",
            "p50_latency",
            "p97_latency",
        ] {
            assert_eq!(get(&run, m).samples.len(), 1, "{m}");
        }
        assert!(run.benchmarks.iter().all(|b| b.error.is_none()));
        assert_eq!(run.notes, vec![SUMMARY_NOTE.to_string()]);
        assert_eq!(run.context["mode"], "PerformanceOnly");
        assert_eq!(run.context["test_parameters"]["target_qps"], "30");
    }

    #[test]
    fn invalid_server_run_fails_every_result_with_the_reasons() {
        let run = parse(SERVER).unwrap();
        assert_eq!(run.benchmarks.len(), 11);
        assert_eq!(
            get(&run, "scheduled_samples_per_second").samples,
            vec![98.42]
        );
        assert_eq!(
            get(&run, "completed_samples_per_second").samples,
            vec![97.86]
        );
        let e = get(&run, "p99_latency").error.as_deref().unwrap();
        assert!(
            e.starts_with("LoadGen result INVALID: Performance constraints satisfied: NO"),
            "{e}"
        );
        assert!(e.contains("Early stopping satisfied: NO"), "{e}");
        assert!(e.contains("Reduce target QPS to improve latency."), "{e}");
        assert!(
            e.contains("2731 more queries, with the run being successful"),
            "{e}"
        );
        assert!(run.benchmarks.iter().all(|b| b.error.is_some()));
    }

    #[test]
    fn single_stream_headline_percentile_and_qps() {
        let run = parse(SINGLE).unwrap();
        assert_eq!(run.benchmarks[0].measure, "p90_latency");
        assert_eq!(run.benchmarks[0].samples, vec![4421705.0]);
        assert_eq!(
            run.benchmarks
                .iter()
                .filter(|b| b.measure == "p90_latency")
                .count(),
            1
        );
        let qps = get(&run, "qps_without_loadgen_overhead");
        assert_eq!((qps.unit.as_str(), qps.samples[0]), ("queries/s", 227.12));
        assert!(get(&run, "qps_with_loadgen_overhead").error.is_none());
    }

    #[test]
    fn looks_like_only_loadgen() {
        assert!(looks_like(OFFLINE) && looks_like(SERVER) && looks_like(SINGLE));
        for other in [
            include_str!("../../../tests/fixtures/bmf/bencher-docs-example.json"),
            include_str!("../../../tests/fixtures/nvbench/reduce.json"),
            include_str!("../../../tests/fixtures/nccl-tests/all_reduce_perf.txt"),
            include_str!("../../../tests/fixtures/cargo-criterion/messages.jsonl"),
        ] {
            assert!(!looks_like(other));
        }
    }

    #[test]
    fn bad_input_is_an_error_with_position() {
        let cut = &OFFLINE[..OFFLINE.find("Result is").unwrap()];
        assert!(parse(cut).unwrap_err().message.contains("truncated"));
        for (from, to, says) in [
            (
                "Samples per second: 29.4498",
                "Samples per second: fast",
                "not a number",
            ),
            (
                "Samples per second: 29.4498",
                "Samples per second: NaN",
                "not a number",
            ),
            (": 63488300", ": -63488300", "negative"),
            ("Result is : VALID", "Result is : MAYBE", "neither VALID"),
        ] {
            let e = parse(&OFFLINE.replace(from, to)).unwrap_err();
            assert!(e.position.starts_with("line "), "{to}: {e}");
            assert!(e.message.contains(says), "{to}: {e}");
        }
        let e = parse(&OFFLINE.replace("Scenario : Offline\n", "")).unwrap_err();
        assert!(e.message.contains("no `Scenario`"), "{e}");
        let head = "================================================\nMLPerf Results Summary\n";
        let e = parse(&format!("{head}Scenario : Offline\nResult is : VALID\n")).unwrap_err();
        assert!(e.message.contains("no performance statistics"), "{e}");
        let e = parse(include_str!("../../../tests/fixtures/bmf/multi.json")).unwrap_err();
        assert!(e.message.contains("another format"), "{e}");
        assert!(parse("").is_err());
    }

    #[test]
    fn a_summary_cut_off_after_its_result_is_rejected() {
        let half = &OFFLINE[..OFFLINE.len() / 2];
        let e = parse(half).unwrap_err();
        assert!(
            e.message.starts_with("the summary ends at line ")
                && e.message
                    .contains("with no p99_latency, p99.9_latency in \"Additional Stats\"")
                && e.message.ends_with("(truncated summary?)"),
            "{e}"
        );
        let no_params = &OFFLINE[..OFFLINE.find("====\nTest Parameters").unwrap()];
        let e = parse(no_params).unwrap_err();
        assert!(
            e.message
                .contains("without its \"Test Parameters Used\" section"),
            "{e}"
        );
        let empty_params = &OFFLINE[..OFFLINE.find("samples_per_query").unwrap()];
        let e = parse(empty_params).unwrap_err();
        assert!(
            e.message.contains("with an empty \"Test Parameters Used\""),
            "{e}"
        );
        let no_stats = &OFFLINE[..OFFLINE.find("\n\n").unwrap()];
        let e = parse(no_stats).unwrap_err();
        assert!(
            e.message
                .contains("without its \"Additional Stats\" section"),
            "{e}"
        );
    }
}
