//! nccl-tests reader (`format = "nccl-tests"`): the table that `all_reduce_perf` and the other
//! nccl-tests binaries print, or the JSON they write with `-J <file>` (nccl-tests' `src/util.cu`:
//! `writeResultHeader`, `writeBenchmarkLinePreamble`, `writeBenchmarkLineBody`).
//!
//! Each row (one message size) gives, for `placement` = `out-of-place` and `in-place`, three
//! benchmarks named after the test (`# Collective test starting: <name>`, or the first JSON
//! argument's file name; `nccl` when neither is there) with parameters `size` (bytes), `type`,
//! `redop`, `root` (only when a root applies) and `placement`: `time` (µs → ns, lower is
//! better; `cpu_time` under `-C`), `algbw` and `busbw` (GB/s, higher is better). A `#wrong` count above zero fails that placement's results; `N/A` (validation
//! off) does not. Each value is nccl-tests' own average over `iters` runs, so results are one
//! summary sample each, and a note says so; rows repeated for the same key (`-N` cycles) add
//! samples, and so does a command suite's `runs = N` (the engine merges the N outputs, each
//! run a replicate). The header's `nThread …` line and the devices go into the context.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json_util::{parse_json, value_kind};
use super::parsed::{FormatError, ParsedBenchmark, ParsedRun};
use pitwall_schema::schema::{Direction, Unit};

const FORMAT: &str = "nccl-tests";

pub const SUMMARY_NOTE: &str = "nccl-tests: summary values only (each an average over the \
     test's iterations): comparisons are summary-based unless the suite repeats the test \
     (`runs = N`: one sample per run, each run a replicate)";

/// One placement of one row: time (µs), algbw, busbw (GB/s), and its validation.
struct Perf {
    time_us: f64,
    algbw: f64,
    busbw: f64,
    check: Check,
}

/// A placement's validation column, in the layout of the nccl-tests that wrote it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Check {
    /// `N/A`: validation off (`-c 0`).
    Off,
    /// Current nccl-tests: `#wrong`, the count of wrong elements.
    Wrong(f64),
    /// Older nccl-tests: `error`, the largest relative error, to be judged against the
    /// tolerance nccl-tests itself used for the data type.
    MaxError(f64),
}

/// nccl-tests' own tolerance for the `error` column of older versions (`DeltaMaxValue` in
/// its `common.cu`): 1e-2 for half and bfloat16, 1e-5 for float, 1e-12 for double, exact for
/// integers. An unknown type is judged like float.
fn error_tolerance(ty: &str) -> f64 {
    match ty.to_ascii_lowercase().as_str() {
        "half" | "float16" | "fp16" | "bfloat16" | "bf16" => 1e-2,
        "double" | "float64" | "fp64" => 1e-12,
        "int8" | "uint8" | "char" | "int" | "int32" | "uint32" | "int64" | "uint64" => 0.0,
        _ => 1e-5,
    }
}

/// Reads nccl-tests output, text or `-J` JSON.
pub fn parse(text: &str) -> Result<ParsedRun, FormatError> {
    if text.trim_start().starts_with('{') {
        parse_json_output(text)
    } else {
        parse_text(text)
    }
}

fn parse_text(text: &str) -> Result<ParsedRun, FormatError> {
    let mut run = ParsedRun::default();
    let mut name = "nccl".to_string();
    let mut time_measure = "time";
    let mut keys = 5;
    let mut rows = 0;
    let mut devices = Vec::new();
    let mut impossible: Vec<String> = Vec::new();
    // Older nccl-tests print the largest relative error instead of `#wrong`.
    let mut error_column = false;
    for (n, line) in text.lines().enumerate() {
        let at = format!("line {}: ", n + 1);
        if let Some(h) = line.strip_prefix('#') {
            let h = h.trim();
            if let Some(t) = h.strip_prefix("Collective test starting:") {
                name = t.trim().to_string();
            } else if h.starts_with("nThread ") {
                run.context.insert("config".into(), Value::String(h.into()));
            } else if h.starts_with("nccl-tests version") {
                run.context
                    .insert("version".into(), Value::String(h.into()));
            } else if h.starts_with("Rank ") {
                devices.push(Value::String(h.into()));
            } else if h.starts_with("size ") {
                (keys, error_column) = columns(h);
                if h.split_whitespace().any(|c| c == "cputime") {
                    time_measure = "cpu_time";
                }
            }
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        // A row whose size is a number but not a byte count (`-8`, 26 digits): left out, and
        // counted so that the run says so.
        if let Some(first) = tokens.first().filter(|f| impossible_size(f)) {
            impossible.push(first.to_string());
            continue;
        }
        // Data rows start with the size in bytes; NCCL's own log lines and blanks do not.
        if tokens.first().is_none_or(|t| t.parse::<u64>().is_err()) {
            if line.contains("NCCL failure") || line.contains("CUDA failure") {
                run.notes.push(format!("nccl-tests: {}", line.trim()));
            }
            continue;
        }
        if tokens.len() < keys + 4 {
            return Err(err(
                at,
                format!("row has {} columns (truncated?)", tokens.len()),
            ));
        }
        let perf = |i: usize| row_perf(&tokens, i, error_column, &at);
        let size = tokens[0].to_string();
        let col = |i: usize| tokens.get(i).copied().unwrap_or("").to_string();
        let (ty, redop, root) = (
            col(2),
            col(3),
            if keys >= 5 { col(4) } else { String::new() },
        );
        // Trace replay leaves out-of-place blank: only the in-place columns follow the keys.
        let (oop, ip) = if tokens.len() < keys + 8 {
            (None, perf(keys)?)
        } else {
            (Some(perf(keys)?), perf(keys + 4)?)
        };
        let key = Key {
            name: &name,
            size: &size,
            ty: &ty,
            redop: &redop,
            root: &root,
        };
        for (placement, p) in [("out-of-place", oop.as_ref()), ("in-place", Some(&ip))] {
            if let Some(p) = p {
                add(&mut run.benchmarks, &key, time_measure, placement, p);
            }
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(err(
            String::new(),
            "no result rows (not nccl-tests output, or the test stopped before its first size)"
                .into(),
        ));
    }
    if !devices.is_empty() {
        run.context.insert("devices".into(), Value::Array(devices));
    }
    if !impossible.is_empty() {
        run.warnings.push(impossible_warning(&impossible));
    }
    run.notes.insert(0, SUMMARY_NOTE.into());
    Ok(run)
}

/// From the table's `size …` header: how many key columns precede the first placement's time,
/// and whether validation is older nccl-tests' `error` column rather than `#wrong`.
fn columns(header: &str) -> (usize, bool) {
    let cols: Vec<&str> = header.split_whitespace().collect();
    let first = cols.iter().position(|c| *c == "time" || *c == "cputime");
    let error_column = cols.contains(&"error") && !cols.contains(&"#wrong");
    (first.unwrap_or(5), error_column)
}

/// Whether a row's first token is a number that is no byte count (`-8`, 26 digits).
fn impossible_size(first: &str) -> bool {
    let digits = first.strip_prefix('-').unwrap_or(first);
    !digits.is_empty()
        && digits.bytes().all(|c| c.is_ascii_digit())
        && first.parse::<u64>().is_err()
}

/// One placement's columns of a table row, from column `i`: time, algbw, busbw and the
/// validation column (`error` in older nccl-tests' tables).
fn row_perf(tokens: &[&str], i: usize, error_column: bool, at: &str) -> Result<Perf, FormatError> {
    let num = |i: usize, what: &str| -> Result<f64, FormatError> {
        let v = tokens[i].parse::<f64>().ok().filter(|x| x.is_finite());
        match v {
            Some(x) if x >= 0.0 => Ok(x),
            _ => Err(err(
                at.to_string(),
                format!("{what} `{}` is not a non-negative number", tokens[i]),
            )),
        }
    };
    let check = match (tokens[i + 3], error_column) {
        ("N/A", _) => Check::Off,
        (_, true) => Check::MaxError(num(i + 3, "error")?),
        (_, false) => Check::Wrong(num(i + 3, "#wrong")?),
    };
    Ok(Perf {
        time_us: num(i, "time")?,
        algbw: num(i + 1, "algbw")?,
        busbw: num(i + 2, "busbw")?,
        check,
    })
}

/// The warning for rows left out for a size that is no byte count, naming the first three.
fn impossible_warning(impossible: &[String]) -> String {
    let shown: Vec<String> = impossible
        .iter()
        .take(3)
        .map(|s| format!("`{}`", s.chars().take(40).collect::<String>()))
        .collect();
    format!(
        "{} row{} with an impossible size ({}{}) left out",
        impossible.len(),
        if impossible.len() == 1 { "" } else { "s" },
        shown.join(", "),
        if impossible.len() > 3 { ", …" } else { "" }
    )
}

fn parse_json_output(text: &str) -> Result<ParsedRun, FormatError> {
    let root = parse_json(FORMAT, text)?;
    let Some(results) = root.get("results").and_then(Value::as_array) else {
        return Err(err(
            String::new(),
            "not nccl-tests JSON: no `results` list (is this another format?)".into(),
        ));
    };
    let name = root
        .pointer("/args/0")
        .and_then(Value::as_str)
        .and_then(|a| a.rsplit('/').next())
        .filter(|a| !a.is_empty())
        .unwrap_or("nccl")
        .to_string();
    let mut run = ParsedRun::default();
    for (index, r) in results.iter().enumerate() {
        let size = r.get("size").and_then(Value::as_u64);
        let at = format!(
            "benchmark {index} ({name} size={}): ",
            size.map_or("?".into(), |s| s.to_string())
        );
        let size = size.ok_or_else(|| err(at.clone(), "`size` must be a whole number".into()))?;
        let text = |k: &str| {
            r.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let (ty, redop, root_s) = (text("type"), text("redop"), text("root"));
        let size = size.to_string();
        let key = Key {
            name: &name,
            size: &size,
            ty: &ty,
            redop: &redop,
            root: &root_s,
        };
        let mut any = false;
        for (field, placement) in [("out_of_place", "out-of-place"), ("in_place", "in-place")] {
            let p = match r.get(field) {
                None | Some(Value::Null) => continue,
                Some(p) => p,
            };
            let (time_measure, perf) = json_perf(p, field, &at)?;
            add(&mut run.benchmarks, &key, time_measure, placement, &perf);
            any = true;
        }
        if !any {
            return Err(err(
                at,
                "neither `out_of_place` nor `in_place` results".into(),
            ));
        }
    }
    if run.benchmarks.is_empty() {
        return Err(err(String::new(), "no results in output".into()));
    }
    for key in ["config", "nccl_version", "version"] {
        if let Some(v) = root.get(key) {
            run.context.insert(key.into(), v.clone());
        }
    }
    run.notes.push(SUMMARY_NOTE.into());
    run.notes.extend(json_problems(&root));
    Ok(run)
}

/// One placement of a JSON result (`out_of_place` or `in_place`, named `field`): its time
/// measure (`cpu_time` under `-C`) and numbers.
fn json_perf(p: &Value, field: &str, at: &str) -> Result<(&'static str, Perf), FormatError> {
    let time_measure = if p.get("cpu_time").is_some() {
        "cpu_time"
    } else {
        "time"
    };
    let num = |k: &str| -> Result<f64, FormatError> {
        let v = p
            .get(k)
            .ok_or_else(|| err(at.to_string(), format!("{field}: missing `{k}`")))?;
        v.as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| {
                err(
                    at.to_string(),
                    format!(
                        "{field}: `{k}` must be a non-negative number, got {}",
                        value_kind(v)
                    ),
                )
            })
    };
    let check = match p.get("nwrong") {
        None | Some(Value::Null) => Check::Off,
        Some(_) => Check::Wrong(num("nwrong")?),
    };
    let perf = Perf {
        time_us: num(time_measure)?,
        algbw: num("alg_bw")?,
        busbw: num("bus_bw")?,
        check,
    };
    Ok((time_measure, perf))
}

/// Notes on what the JSON output itself reports as wrong: out-of-bounds values, errors.
fn json_problems(root: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    if root.pointer("/out_of_bounds/okay").and_then(Value::as_bool) == Some(false) {
        notes.push("nccl-tests: out-of-bounds values reported (see failed results)".into());
    }
    for e in root
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(e) = e.as_str().filter(|e| !e.is_empty()) {
            notes.push(format!("nccl-tests: error: {e}"));
        }
    }
    notes
}

struct Key<'a> {
    name: &'a str,
    size: &'a str,
    ty: &'a str,
    redop: &'a str,
    root: &'a str,
}

/// Adds one placement's three measures, as new benchmarks or as further samples of equal keys.
fn add(out: &mut Vec<ParsedBenchmark>, key: &Key<'_>, time: &str, placement: &str, p: &Perf) {
    let mut params = BTreeMap::new();
    params.insert("size".to_string(), key.size.to_string());
    params.insert("type".to_string(), key.ty.to_string());
    params.insert("redop".to_string(), key.redop.to_string());
    if !key.root.is_empty() && key.root != "-1" {
        params.insert("root".to_string(), key.root.to_string());
    }
    params.insert("placement".to_string(), placement.to_string());
    let error = match p.check {
        Check::Wrong(w) if w > 0.0 => Some(format!("{placement}: {w} wrong elements (#wrong)")),
        Check::MaxError(e) if e > error_tolerance(key.ty) => Some(format!(
            "{placement}: largest relative error {e:e} above nccl-tests' tolerance {:e} for {}",
            error_tolerance(key.ty),
            key.ty
        )),
        _ => None,
    };
    for (measure, unit, direction, value) in [
        (
            time,
            Unit::NANOSECONDS,
            Direction::LowerIsBetter,
            p.time_us * 1e3,
        ),
        ("algbw", Unit::GB_PER_S, Direction::HigherIsBetter, p.algbw),
        ("busbw", Unit::GB_PER_S, Direction::HigherIsBetter, p.busbw),
    ] {
        if let Some(b) = out
            .iter_mut()
            .find(|b| b.measure == measure && b.params == params)
        {
            b.samples.push(value);
            if b.error.is_none() {
                b.error.clone_from(&error);
            }
            continue;
        }
        out.push(ParsedBenchmark {
            name: key.name.to_string(),
            params: params.clone(),
            measure: measure.to_string(),
            unit: Unit::new(unit),
            direction,
            samples: vec![value],
            sample_meta: Vec::new(),
            error: error.clone(),
            skipped: None,
        });
    }
}

/// Whether `text` is nccl-tests output: its table header (`# … size … algbw … busbw`) or its
/// `-J` JSON (`results` with `nccl_version` or `config.ngpus`).
pub fn looks_like(text: &str) -> bool {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str::<Value>(text).is_ok_and(|v| {
            v.get("results").is_some_and(Value::is_array)
                && (v.get("nccl_version").is_some() || v.pointer("/config/ngpus").is_some())
        });
    }
    text.lines().any(|l| {
        l.starts_with('#') && l.contains(" size ") && l.contains("algbw") && l.contains("busbw")
    })
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests;
