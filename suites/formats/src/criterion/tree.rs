//! criterion.rs directory reader (`format = "criterion"`): the `target/criterion` tree that
//! `cargo bench` leaves behind, one `<group>/<function>/<value>/new/` folder per benchmark with
//! `benchmark.json` (its id) and `sample.json` (`iters[]`, `times[]`).
//!
//! Each benchmark becomes a `time` benchmark named `group/function` (or just the group when the
//! id has no function), with its value (`BenchmarkId::new("f", n)` → `n`) in the `value`
//! parameter; its samples are the per-iteration times `times[i] / iters[i]` in nanoseconds, one
//! per criterion sample (criterion's default wall-clock measurement records nanoseconds; a custom
//! measurement's unit is not recorded in the tree and is read as nanoseconds too). A benchmark
//! with a throughput (`Bytes`, `BytesDecimal`, `Elements`) also gets a higher-is-better
//! `throughput` benchmark in `B/s` or `elements/s`. Only `new/` is read (`base/`, `change/` and
//! `report/` are criterion's own comparison state); `estimates.json` is not needed.
//!
//! The tree accumulates across `cargo bench` invocations, so after a command suite's execution
//! ([`parse_dir_since`]) only the benchmarks whose files were written since it started are read;
//! the others are counted in a warning. `pitwall import` ([`parse_dir`]) reads them all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{push_with_throughput, time_benchmark};
use crate::json_util::{finite_numbers, json_error, per_iteration, value_kind};
use crate::parsed::{FormatError, ParsedBenchmark, ParsedRun};
use crate::side_files::{DirFiles, SideFiles};
use pitwall_schema::schema::Unit;

const FORMAT: &str = "criterion";

/// The files read from each `new` folder; a benchmark is fresh when all of them are.
const READ: [&str; 2] = ["benchmark.json", "sample.json"];

/// How much older than the start of an execution a file may look and still count as written by
/// it: file times come from the kernel's coarse clock (up to a tick behind the clock the start
/// is read from) and are whole seconds on some filesystems.
const MTIME_SLACK: Duration = Duration::from_secs(1);

/// Reads a `target/criterion` directory: every benchmark in it, whenever it was written.
pub fn parse_dir(dir: &Path) -> Result<ParsedRun, FormatError> {
    read_tree(dir, None)
}

/// Reads the benchmarks under `dir` whose files were modified at or after `since` (the start of
/// the execution that should have written them); older ones are left out with a warning, and
/// none left is an error.
pub fn parse_dir_since(dir: &Path, since: SystemTime) -> Result<ParsedRun, FormatError> {
    read_tree(dir, Some(since))
}

fn read_tree(dir: &Path, since: Option<SystemTime>) -> Result<ParsedRun, FormatError> {
    if !dir.is_dir() {
        return Err(err(
            String::new(),
            format!("{} is not a directory", dir.display()),
        ));
    }
    let mut found = Vec::new();
    find_new_dirs(dir, &mut found)
        .map_err(|e| err(String::new(), format!("reading {}: {e}", dir.display())))?;
    found.sort();
    if found.is_empty() {
        return Err(err(
            String::new(),
            format!(
                "no criterion results (<benchmark>/new/benchmark.json) under {}",
                dir.display()
            ),
        ));
    }
    let rel = |new_dir: &Path| {
        new_dir
            .parent()
            .and_then(|p| p.strip_prefix(dir).ok())
            .unwrap_or(new_dir)
            .display()
            .to_string()
    };
    let mut stale = Vec::new();
    if let Some(since) = since {
        let cutoff = since.checked_sub(MTIME_SLACK).unwrap_or(since);
        let mut fresh = Vec::new();
        for new_dir in found {
            if written_since(&new_dir, cutoff).map_err(|m| err(String::new(), m))? {
                fresh.push(new_dir);
            } else {
                stale.push(rel(&new_dir));
            }
        }
        found = fresh;
        if found.is_empty() {
            return Err(err(
                String::new(),
                format!(
                    "no results under {} were written by this execution: all {} there predate \
                     it (left by earlier runs); hint: check that the command writes its criterion \
                     results there (criterion's --discard-baseline and --load-baseline write none) \
                     and that a benchmark filter in it matches a benchmark",
                    dir.display(),
                    stale.len()
                ),
            ));
        }
    }
    let mut out = Vec::new();
    for (index, new_dir) in found.iter().enumerate() {
        read_one(index, dir, new_dir, &rel(new_dir), &mut out)?;
    }
    let mut run = ParsedRun::new(out);
    if !stale.is_empty() {
        run.warnings.push(stale_warning(dir, &stale));
    }
    Ok(run)
}

/// Whether every file in [`READ`] that `new_dir` holds was modified at or after `cutoff` (a
/// missing one is reported when the benchmark is read).
fn written_since(new_dir: &Path, cutoff: SystemTime) -> Result<bool, String> {
    for file in READ {
        let path = new_dir.join(file);
        let modified = match std::fs::metadata(&path).and_then(|m| m.modified()) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(format!(
                    "cannot tell when {} was written: {e}",
                    path.display()
                ));
            }
        };
        if modified < cutoff {
            return Ok(false);
        }
    }
    Ok(true)
}

/// One line on the benchmarks left out for predating the execution, naming the first few.
fn stale_warning(dir: &Path, stale: &[String]) -> String {
    let (n, shown) = (stale.len(), stale.len().min(3));
    let (s, verb, was) = match n {
        1 => ("", "predates", "was"),
        _ => ("s", "predate", "were"),
    };
    let more = (n > shown).then(|| format!(" and {} more", n - shown));
    format!(
        "{n} result{s} under {} {verb} this execution (left by earlier runs) and {was} ignored: {}{}",
        dir.display(),
        stale[..shown].join(", "),
        more.unwrap_or_default()
    )
}

/// Every `new` folder holding a `benchmark.json`, outside criterion's `report` folders.
fn find_new_dirs(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        // A link is not followed: the tree read is the one under `dir`.
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "new" && path.join("benchmark.json").is_file() {
            found.push(path);
        } else if !matches!(name, "report" | "base" | "change" | "new") {
            find_new_dirs(&path, found)?;
        }
    }
    Ok(())
}

fn read_one(
    index: usize,
    root: &Path,
    new_dir: &Path,
    rel: &str,
    out: &mut Vec<ParsedBenchmark>,
) -> Result<(), FormatError> {
    let at = format!("benchmark {index} ({rel}): ");
    let load = |file: &str| -> Result<Value, FormatError> {
        let path = new_dir.join(file);
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        // A regular file of at most SIDE_FILE_MAX_BYTES, as every file beside an output.
        let bytes = DirFiles::new(new_dir)
            .read(Path::new(file))
            .map_err(|e| err(at.clone(), format!("reading {shown}: {e}")))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| err(at.clone(), format!("reading {shown}: {e}")))?;
        serde_json::from_str(&text).map_err(|e| json_error(FORMAT, &e, format!("{shown}: ")))
    };
    let id = load("benchmark.json")?;
    let text_field = |key: &str| -> Result<Option<String>, FormatError> {
        match id.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(err(
                at.clone(),
                format!(
                    "benchmark.json: `{key}` must be a string, got {}",
                    value_kind(v)
                ),
            )),
        }
    };
    let group = text_field("group_id")?
        .ok_or_else(|| err(at.clone(), "benchmark.json: missing `group_id`".into()))?;
    let name = match text_field("function_id")? {
        Some(f) => format!("{group}/{f}"),
        None => group,
    };
    let mut params = BTreeMap::new();
    if let Some(v) = text_field("value_str")? {
        params.insert("value".to_string(), v);
    }
    let at = format!("benchmark {index} ({name}): ");

    let sample = load("sample.json")?;
    let fail = |m: String| err(at.clone(), m);
    let numbers = |key: &str| finite_numbers(&sample, key, "sample.json: ", &fail);
    let iters = numbers("iters")?;
    let times = numbers("times")?;
    if times.is_empty() {
        return Err(err(at, "sample.json: no samples".into()));
    }
    if iters.len() != times.len() {
        return Err(err(
            at,
            format!(
                "sample.json: {} times for {} iteration counts",
                times.len(),
                iters.len()
            ),
        ));
    }
    let samples = per_iteration(&times, &iters, 1.0, true, ("sample.json: ", "iters"), &fail)?;
    let time = time_benchmark(name, params, Unit::new(Unit::NANOSECONDS), samples);
    let throughput = throughput(id.get("throughput")).map_err(|m| err(at.clone(), m))?;
    push_with_throughput(time, throughput, out);
    Ok(())
}

/// Amount per iteration and rate unit of criterion's `throughput` (`{"Bytes": n}`, …).
fn throughput(v: Option<&Value>) -> Result<Option<(f64, &'static str)>, String> {
    let Some(Value::Object(map)) = v else {
        return match v {
            None | Some(Value::Null) => Ok(None),
            Some(other) => Err(format!(
                "benchmark.json: `throughput` must be an object, got {}",
                value_kind(other)
            )),
        };
    };
    let Some((k, n)) = map.iter().next() else {
        return Ok(None);
    };
    let amount = n.as_f64().filter(|x| x.is_finite() && *x >= 0.0);
    match (k.as_str(), amount) {
        ("Bytes" | "BytesDecimal", Some(a)) => Ok(Some((a, "B/s"))),
        ("Elements", Some(a)) => Ok(Some((a, "elements/s"))),
        (_, None) if n.is_number() => Err(format!("benchmark.json: throughput {k} is {n}")),
        // Kinds this reader does not know (e.g. `ElementsAndBytes`) keep only the times.
        _ => Ok(None),
    }
}

fn err(position: String, message: String) -> FormatError {
    FormatError::new(FORMAT, position, message)
}

#[cfg(test)]
mod tests;
