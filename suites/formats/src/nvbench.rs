//! nvbench reader (`format = "nvbench"`): the JSON that an nvbench executable writes with
//! `--json <file>` or `--jsonbin <file>` (nvbench's `nvbench/json_printer.cu`, file version 1.x):
//! `benchmarks[]`, each with `states[]` (one per point of its axes), each with `axis_values`
//! and tagged `summaries`.
//!
//! Every state becomes benchmarks named after its nvbench benchmark, with the axis values (and
//! the device index, `device`) as parameters, one per summary it has:
//!
//! | summary tag                            | measure          | unit         | better |
//! |----------------------------------------|------------------|--------------|--------|
//! | `nv/cold/time/gpu/mean`                | `gpu_time`       | ns (from s)  | lower  |
//! | `nv/cold/time/cpu/mean`                | `cpu_time`       | ns (from s)  | lower  |
//! | `nv/cpu_only/time/cpu/mean`            | `cpu_time`       | ns (from s)  | lower  |
//! | `nv/batch/time/gpu/mean`               | `batch_gpu_time` | ns (from s)  | lower  |
//! | `nv/cold/bw/global/bytes_per_second`   | `bandwidth`      | B/s          | higher |
//! | `nv/cold/bw/item_rate`                 | `item_rate`      | items/s      | higher |
//!
//! Each is a single summary sample (a mean over the state's samples), except where nvbench
//! wrote the state's sample times to a binary file (`--jsonbin`: summary
//! `nv/json/bin:nv/cold/sample_times`, or `nv/json/bin:nv/cpu_only/sample_times` for CPU-only
//! benchmarks) and the reader is given the files beside the output ([`SideFiles`]): then
//! `gpu_time` (`cpu_time`) holds every sample of the file. The file is little-endian float32
//! seconds, one per sample, `size` of them (`write_jsonbin_sidecar` in `json_printer.cu`);
//! its `filename` is relative to the JSON file's directory since nvbench #405, and was the
//! `--jsonbin` path plus `-bin/N.bin`, relative to nvbench's working directory, before: both
//! are found as nvbench's own `scripts/nvbench_compare_robust.py` finds them
//! (`resolve_binary_filename`). A missing, short or odd-sized file rejects the output. A
//! skipped state becomes a skipped `gpu_time` result carrying the skip reason. The `devices`
//! section goes into the context.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json_util::{parse_json, value_kind};
use super::nvbench_samples::{SAMPLE_FILES, read_samples};
use super::parsed::{FormatError, ParsedBenchmark, ParsedRun};
use super::side_files::SideFiles;
use pitwall_schema::schema::{Direction, Unit};

const FORMAT: &str = "nvbench";

/// (summary tag, measure, unit, factor to the unit, direction).
const MEASURES: [(&str, &str, &str, f64, Direction); 6] = [
    (
        "nv/cold/time/gpu/mean",
        "gpu_time",
        Unit::NANOSECONDS,
        1e9,
        Direction::LowerIsBetter,
    ),
    (
        "nv/cold/time/cpu/mean",
        "cpu_time",
        Unit::NANOSECONDS,
        1e9,
        Direction::LowerIsBetter,
    ),
    (
        "nv/cpu_only/time/cpu/mean",
        "cpu_time",
        Unit::NANOSECONDS,
        1e9,
        Direction::LowerIsBetter,
    ),
    (
        "nv/batch/time/gpu/mean",
        "batch_gpu_time",
        Unit::NANOSECONDS,
        1e9,
        Direction::LowerIsBetter,
    ),
    (
        "nv/cold/bw/global/bytes_per_second",
        "bandwidth",
        "B/s",
        1.0,
        Direction::HigherIsBetter,
    ),
    (
        "nv/cold/bw/item_rate",
        "item_rate",
        Unit::ITEMS_PER_S,
        1.0,
        Direction::HigherIsBetter,
    ),
];

/// The note of an nvbench run whose states gave no sample files.
pub const SUMMARY_NOTE: &str = "nvbench: summary values only (one mean per state and measure): \
     comparisons are summary-based";

/// What the states of one output gave.
#[derive(Default)]
struct Counts {
    /// States that were measured (not skipped).
    measured: usize,
    /// States whose summaries name a sample-times file (`SAMPLE_FILES`).
    bin_named: usize,
    /// States whose sample times were read from their file.
    sampled: usize,
}

/// Reads nvbench JSON output without its files: every value is a summary.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    parse_with(text, None)
}

/// Reads nvbench JSON output; with `files` (the files beside the output), the per-sample times
/// of the `--jsonbin` files it names.
pub fn parse_with(text: &str, files: Option<&dyn SideFiles>) -> Result<ParsedRun, FormatError> {
    let root = parse_json(FORMAT, text)?;
    let Some(benches) = root.get("benchmarks").and_then(Value::as_array) else {
        return Err(err(
            String::new(),
            "not nvbench JSON: no `benchmarks` list (is this another format?)".into(),
        ));
    };
    if benches.is_empty() {
        return Err(err(String::new(), "no benchmarks in output".into()));
    }
    let mut run = ParsedRun::default();
    let mut counts = Counts::default();
    for (index, bench) in benches.iter().enumerate() {
        let name = bench.get("name").and_then(Value::as_str).unwrap_or("");
        if name.trim().is_empty() {
            return Err(err(
                format!("benchmark {index}: "),
                "missing or empty `name`".into(),
            ));
        }
        let at = format!("benchmark {index} ({name}): ");
        let states = match bench.get("states") {
            Some(Value::Array(s)) if !s.is_empty() => s,
            Some(Value::Array(_)) | Some(Value::Null) | None => {
                return Err(err(at, "no states".into()));
            }
            Some(other) => {
                return Err(err(
                    at,
                    format!("`states` must be a list, got {}", value_kind(other)),
                ));
            }
        };
        for state in states {
            read_state(&at, name, state, files, &mut run.benchmarks, &mut counts)?;
        }
    }
    if let Some(devices) = root.get("devices") {
        run.context.insert("devices".into(), devices.clone());
    }
    if let Some(v) = root.pointer("/meta/version") {
        run.context.insert("version".into(), v.clone());
    }
    let Counts {
        measured,
        bin_named,
        sampled,
    } = counts;
    if sampled == 0 {
        run.notes.push(SUMMARY_NOTE.into());
    } else {
        run.notes.push(format!(
            "nvbench: per-sample times of {sampled} of {measured} measured state(s) read from \
             their --jsonbin files; the other values are summaries (one mean per state and \
             measure)"
        ));
    }
    if bin_named > sampled {
        run.notes.push(format!(
            "nvbench: {} state(s) wrote raw sample times to binary files (--jsonbin); \
             they are not read from stdout (hint: read the JSON from its file, its -bin \
             directory beside it: output = \"FILE\" in a suite, or pitwall import FILE)",
            bin_named - sampled
        ));
    }
    Ok(run)
}

/// Adds the benchmarks of one state, with the sample times of its binary file when `files`
/// are given.
fn read_state(
    at: &str,
    name: &str,
    state: &Value,
    files: Option<&dyn SideFiles>,
    out: &mut Vec<ParsedBenchmark>,
    counts: &mut Counts,
) -> Result<(), FormatError> {
    let desc = state.get("name").and_then(Value::as_str).unwrap_or("?");
    let at = format!("{at}state `{desc}`: ");
    let params = state_params(state, &at)?;
    let make = |measure: &str, unit: &str, direction, samples, skipped| ParsedBenchmark {
        name: name.to_string(),
        params: params.clone(),
        measure: measure.to_string(),
        unit: Unit::new(unit),
        direction,
        samples,
        sample_meta: Vec::new(),
        error: None,
        skipped,
    };
    if state.get("is_skipped").and_then(Value::as_bool) == Some(true) {
        let reason = state
            .get("skip_reason")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        out.push(make(
            "gpu_time",
            Unit::NANOSECONDS,
            Direction::LowerIsBetter,
            vec![],
            Some(format!("skipped by nvbench: {reason}")),
        ));
        return Ok(());
    }
    counts.measured += 1;
    let summaries = list(state, "summaries", &at)?;
    let first = out.len();
    let mut found = 0;
    let mut sample_files = Vec::new();
    for summ in summaries {
        let tag = summ.get("tag").and_then(Value::as_str).ok_or_else(|| {
            err(
                at.clone(),
                "summaries need a `tag` (nvbench JSON before 1.0 is not read)".into(),
            )
        })?;
        if let Some((_, measure)) = SAMPLE_FILES.iter().find(|(t, _)| *t == tag) {
            sample_files.push((tag, *measure, summ));
        }
        let Some((_, measure, unit, factor, direction)) = MEASURES.iter().find(|(t, ..)| *t == tag)
        else {
            continue;
        };
        let value = summary_value(summ).map_err(|m| err(at.clone(), format!("`{tag}`: {m}")))?;
        if value < 0.0 {
            return Err(err(at, format!("`{tag}` is negative ({value})")));
        }
        out.push(make(measure, unit, *direction, vec![value * factor], None));
        found += 1;
    }
    // A state with only a sample file still gives its times, when the file can be read.
    if found == 0 && (sample_files.is_empty() || files.is_none()) {
        return Err(err(at, "no time or bandwidth summaries".into()));
    }
    counts.bin_named += usize::from(!sample_files.is_empty());
    let Some(files) = files else {
        return Ok(());
    };
    for (tag, measure, summ) in &sample_files {
        let samples = read_samples(files, tag, summ).map_err(|m| err(at.clone(), m))?;
        // The file's samples replace the state's mean of the same measure.
        match out[first..].iter_mut().find(|b| b.measure == *measure) {
            Some(b) => b.samples = samples,
            None => out.push(make(
                measure,
                Unit::NANOSECONDS,
                Direction::LowerIsBetter,
                samples,
                None,
            )),
        }
    }
    counts.sampled += usize::from(!sample_files.is_empty());
    Ok(())
}

/// A state's parameters: its device, and the value of each axis.
fn state_params(state: &Value, at: &str) -> Result<BTreeMap<String, String>, FormatError> {
    let mut params = BTreeMap::new();
    if let Some(d) = state.get("device") {
        let d = d
            .as_i64()
            .ok_or_else(|| err(at.to_string(), format!("`device` is {d}")))?;
        params.insert("device".to_string(), d.to_string());
    }
    for v in list(state, "axis_values", at)? {
        let (Some(k), Some(val)) = (v.get("name").and_then(Value::as_str), v.get("value")) else {
            return Err(err(
                at.to_string(),
                "axis values need `name` and `value`".into(),
            ));
        };
        let text = match val {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => {
                return Err(err(
                    at.to_string(),
                    format!("axis `{k}` value is {}", value_kind(other)),
                ));
            }
        };
        params.insert(k.to_string(), text);
    }
    Ok(params)
}

/// A list member that nvbench may write as `null` when empty.
fn list<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a [Value], FormatError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(err(
            at.to_string(),
            format!("`{key}` must be a list, got {}", value_kind(other)),
        )),
    }
}

/// The `value` datum of a summary: a number, or a number written as a string (nvbench ≥ 1.0).
fn summary_value(summ: &Value) -> Result<f64, String> {
    let data = summ
        .get("data")
        .and_then(Value::as_array)
        .ok_or("no `data` list")?;
    let v = data
        .iter()
        .find(|d| d.get("name").and_then(Value::as_str) == Some("value"))
        .and_then(|d| d.get("value"))
        .ok_or("no `value` datum")?;
    let x = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    x.filter(|x| x.is_finite())
        .ok_or_else(|| format!("value {v} is not a finite number"))
}

/// Whether `text` is nvbench JSON: an object with `devices` and a `benchmarks` list whose
/// entries have `states` and `axes`.
pub fn looks_like(text: &str) -> bool {
    let Ok(root) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    root.get("devices").is_some_and(Value::is_array)
        && root
            .get("benchmarks")
            .and_then(Value::as_array)
            .is_some_and(|b| {
                !b.is_empty()
                    && b.iter()
                        .all(|b| b.get("states").is_some() && b.get("axes").is_some())
            })
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests;
