//! Google Benchmark's JSON output (`--benchmark_format=json`, `--benchmark_out_format=json`).
//!
//! Each repetition (`run_type: "iteration"`) is one sample; aggregates (`_mean`, `_median`,
//! `_stddev`, `_cv`, by `run_type: "aggregate"` or, in old versions, by name suffix) are not
//! samples, except that a benchmark with only aggregates gets its median as one summary sample.
//! `BM_x/len:64/8` becomes name `BM_x` with params `len=64, arg0=8`; `repeats:N` is dropped and
//! any other segment (`real_time`, a custom name part) stays in the name. Measures: `time`
//! (`real_time`, ns), `cpu_time` (ns), `bytes_per_second` (B/s), `items_per_second` (items/s),
//! the memory manager's fields (lower is better), and one measure per user counter. A counter's
//! JSON does not say what it means, so user counters are assumed higher-is-better with unit ""
//! unless the name says it is a time (`time`, `latency`, `duration`, `_ns`/`_us`/`_ms`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::json_util::{bench, kind, read_json, time_value, top_array};
use super::parsed::{FormatError, ParsedBenchmark, ParsedRun};
use pitwall_schema::schema::{Direction, Unit, display_name};

const FORMAT: &str = "google-benchmark";
const AGGREGATES: [&str; 6] = ["mean", "median", "stddev", "cv", "BigO", "RMS"];
/// Entry fields that are not counters (space-separated).
const NOT_COUNTERS: &str = "name family_index per_family_instance_index run_name run_type \
    repetitions repetition_index threads iterations real_time cpu_time time_unit aggregate_name \
    aggregate_unit error_occurred error_message skipped skip_message label cpu_coefficient \
    real_coefficient";

/// Reads Google Benchmark JSON.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    let doc = read_json(FORMAT, text)?;
    let (obj, entries) = top_array(FORMAT, &doc, "benchmarks")?;
    let mut run = ParsedRun::default();
    if let Some(Value::Object(c)) = obj.get("context") {
        run.context.extend(c.clone());
    }
    let groups = group_entries(entries)?;
    let (mut summary_only, mut nan_counters) = (Vec::new(), 0);
    for Group(key, runs, aggregates) in groups {
        let (name, params) = split_name(&key.2);
        let median = ["median", "mean"]
            .iter()
            .find_map(|want| aggregates.iter().find(|(a, _)| a == want));
        let chosen = match (runs.is_empty(), median) {
            (false, _) => runs,
            (true, Some((_, r))) => {
                let shown = display_name(&name, &params);
                if !summary_only.contains(&shown) {
                    summary_only.push(shown);
                }
                vec![r.clone()]
            }
            (true, None) => continue, // only spread or complexity (BigO/RMS) aggregates
        };
        let mut error: Option<(String, bool)> = None;
        let mut measures: Vec<(String, &str, Direction, Vec<f64>)> = Vec::new();
        for (at, e) in chosen {
            if let Some(message) = run_error(e).map_err(|m| err(at.clone(), m))? {
                error.get_or_insert(message);
                continue;
            }
            for (m, unit, dir, v) in read_run(e, &mut nan_counters).map_err(|m| err(at, m))? {
                match measures.iter_mut().find(|x| x.0 == m) {
                    Some(x) => x.3.push(v),
                    None => measures.push((m, unit, dir, vec![v])),
                }
            }
        }
        // A skip marks the benchmark skipped only when no repetition has timings.
        let (failed, skipped) = match error {
            Some((m, true)) if measures.is_empty() => (None, Some(m)),
            Some((m, true)) => (Some(format!("skipped: {m}")), None),
            Some((m, false)) => (Some(m), None),
            None => (None, None),
        };
        if measures.is_empty() {
            let b = bench(
                &name,
                &params,
                "time",
                Unit::NANOSECONDS,
                Vec::new(),
                failed,
            );
            run.benchmarks.push(ParsedBenchmark { skipped, ..b });
            continue;
        }
        for (measure, unit, direction, samples) in measures {
            let b = bench(&name, &params, &measure, unit, samples, failed.clone());
            run.benchmarks.push(ParsedBenchmark { direction, ..b });
        }
    }
    if !summary_only.is_empty() {
        run.notes.push(format!(
            "only aggregates (no repetitions) for {}: the median is used as a single summary sample, so comparisons for them are summary-based",
            summary_only.join(", ")
        ));
    }
    if nan_counters > 0 {
        run.notes.push(format!(
            "{nan_counters} counter values were NaN and were left out"
        ));
    }
    if run.benchmarks.is_empty() {
        return Err(err(
            "",
            "no benchmark has repetitions or a mean/median aggregate",
        ));
    }
    Ok(run)
}

/// The entries grouped by benchmark instance, in order of first appearance: each instance's
/// repetitions and aggregates.
fn group_entries(entries: &[Value]) -> Result<Vec<Group<'_>>, FormatError> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let name = e.get("name").and_then(Value::as_str);
        let (Some(e), Some(name)) = (e.as_object(), name) else {
            let what = if e.is_object() {
                "`name` must be a string".into()
            } else {
                format!("expected an object, got {}", kind(e))
            };
            return Err(err(format!("benchmark {i}: "), what));
        };
        let at = format!("benchmark {i} ({name}): ");
        let suffix = AGGREGATES.iter().find(|a| name.ends_with(&format!("_{a}")));
        let aggregate = match (
            e.get("run_type").and_then(Value::as_str),
            e.get("aggregate_name"),
        ) {
            (Some("aggregate"), Some(Value::String(a))) => Some(a.clone()),
            (Some("aggregate"), _) => Some(suffix.map_or("unknown", |s| s).to_string()),
            (Some("iteration"), _) => None,
            (Some(t), _) => return Err(err(at, format!("unknown run_type `{t}`"))),
            (None, _) => suffix.map(|s| s.to_string()),
        };
        let run_name = match (e.get("run_name").and_then(Value::as_str), &aggregate) {
            (Some(r), _) => r,
            (None, Some(a)) => name.strip_suffix(&format!("_{a}")).unwrap_or(name),
            (None, None) => name,
        };
        let index = |k| e.get(k).and_then(Value::as_u64);
        let key = (
            index("family_index"),
            index("per_family_instance_index"),
            run_name.to_string(),
        );
        let g = groups.iter().position(|g| g.0 == key).unwrap_or_else(|| {
            groups.push(Group(key, Vec::new(), Vec::new()));
            groups.len() - 1
        });
        match aggregate {
            None => groups[g].1.push((at, e)),
            Some(a) => groups[g].2.push((a, (at, e))),
        }
    }
    Ok(groups)
}

/// Whether `text` is Google Benchmark JSON: a `context` object and `benchmarks` entries with
/// `name`, `iterations` and `real_time`.
pub fn looks_like(text: &str) -> bool {
    let Ok(Value::Object(doc)) = read_json(FORMAT, text) else {
        return false;
    };
    let entry = |e: &Value| {
        ["name", "iterations", "real_time"]
            .iter()
            .all(|k| e.get(k).is_some())
    };
    doc.get("context").is_some_and(Value::is_object)
        && !doc.contains_key("machine_info")
        && doc
            .get("benchmarks")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().all(entry))
}

type Run<'a> = (String, &'a Map<String, Value>);
/// (family_index, per_family_instance_index, run_name), repetitions, (aggregate name, entry);
/// an entry comes with its position for messages.
struct Group<'a>(
    (Option<u64>, Option<u64>, String),
    Vec<Run<'a>>,
    Vec<(String, Run<'a>)>,
);

/// `BM_x/len:64/8/real_time/repeats:5` → (`BM_x/real_time`, {len: 64, arg0: 8}).
fn split_name(run_name: &str) -> (String, BTreeMap<String, String>) {
    let mut parts = run_name.split('/');
    let mut name = parts.next().unwrap_or_default().to_string();
    let (mut params, mut positional) = (BTreeMap::new(), 0);
    for p in parts {
        let named = p
            .split_once(':')
            .filter(|(k, v)| !k.is_empty() && !v.is_empty());
        if p.parse::<i64>().is_ok() {
            params.insert(format!("arg{positional}"), p.to_string());
            positional += 1;
        } else if let Some((k, v)) = named {
            if k != "repeats" {
                params.insert(k.to_string(), v.to_string());
            }
        } else {
            name = format!("{name}/{p}");
        }
    }
    (name, params)
}

/// One run's values: (measure, unit, direction, value), times in ns.
fn read_run(
    e: &Map<String, Value>,
    nans: &mut usize,
) -> Result<Vec<(String, &'static str, Direction, f64)>, String> {
    let unit = e.get("time_unit").map_or(Ok("ns"), |u| {
        u.as_str()
            .ok_or_else(|| format!("`time_unit` must be a string, got {}", kind(u)))
    })?;
    let scale = ["ns", "us", "ms", "s"]
        .iter()
        .position(|u| *u == unit)
        .map(|p| 1e3f64.powi(p as i32));
    let scale =
        scale.ok_or_else(|| format!("unknown time_unit `{unit}` (expected ns, us, ms or s)"))?;
    let (ns, lower) = (Unit::NANOSECONDS, Direction::LowerIsBetter);
    let real = time_value(e.get("real_time").ok_or("no `real_time`")?, "real_time")?;
    let mut out = vec![("time".to_string(), ns, lower, real * scale)];
    if let Some(cpu) = e.get("cpu_time") {
        out.push((
            "cpu_time".into(),
            ns,
            lower,
            time_value(cpu, "cpu_time")? * scale,
        ));
    }
    for (k, v) in e
        .iter()
        .filter(|(k, _)| !NOT_COUNTERS.split_whitespace().any(|n| n == *k))
    {
        match v {
            Value::Number(n) => {
                let (unit, dir) = counter_kind(k);
                out.push((k.clone(), unit, dir, n.as_f64().unwrap_or(f64::NAN)));
            }
            Value::Null => *nans += 1, // NaN in the file
            _ => return Err(format!("counter `{k}` must be a number, got {}", kind(v))),
        }
    }
    Ok(out)
}

/// Why a run has no timings: `(message, false)` for `SkipWithError` (`error_occurred`),
/// `(message, true)` for `SkipWithMessage` (`skipped`, Google Benchmark 1.8+).
fn run_error(e: &Map<String, Value>) -> Result<Option<(String, bool)>, String> {
    for (flag, message, skipped) in [
        ("error_occurred", "error_message", false),
        ("skipped", "skip_message", true),
    ] {
        match e.get(flag) {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                let m = e
                    .get(message)
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)");
                return Ok(Some((m.to_string(), skipped)));
            }
            Some(v) => return Err(format!("`{flag}` must be true or false, got {}", kind(v))),
        }
    }
    Ok(None)
}

fn counter_kind(name: &str) -> (&'static str, Direction) {
    let lower = name.to_ascii_lowercase();
    let timeish = ["time", "latency", "duration"]
        .iter()
        .any(|w| lower.contains(w))
        || ["_ns", "_us", "_ms"].iter().any(|s| lower.ends_with(s));
    match name {
        "bytes_per_second" => ("B/s", Direction::HigherIsBetter),
        "items_per_second" => (Unit::ITEMS_PER_S, Direction::HigherIsBetter),
        "max_bytes_used" | "total_allocated_bytes" | "net_heap_growth" => {
            ("B", Direction::LowerIsBetter)
        }
        "allocs_per_iter" => ("", Direction::LowerIsBetter),
        _ if timeish => ("", Direction::LowerIsBetter),
        _ => ("", Direction::HigherIsBetter),
    }
}

fn err(position: impl Into<String>, message: impl Into<String>) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests;
