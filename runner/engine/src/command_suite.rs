//! `command` suites: the project's own benchmark command run in the checkout (or its
//! `workdir`), its output read in the configured format, or its wall time measured round
//! after round; every failure is a failed result saying why.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use pitwall_formats::{self as formats, Input, InputFormat, ParsedRun};
use pitwall_schema::schema;
use pitwall_schema::{BenchmarkResult, Direction, ResultStatus, SampleMeta, Unit};

use crate::child_env::ChildEnv;
use crate::command::{ExitKind, fmt_secs, run_command, shown_command};
use crate::config::{CommandSuite, OutputFormat, Sampling, SuiteConfig};
use crate::meta::SampleMetaSource;
use crate::observer::{RunObserver, Step};
use crate::outcome::SuiteOutcome;
use crate::stop::{StopRule, duration_from_secs};

/// Runs a `command` suite: a wall-time suite the filter leaves out is not run; a tool's
/// results are filtered once read.
pub(crate) fn run_command_suite(
    suite: &SuiteConfig,
    cmd: &CommandSuite,
    checkout: &Path,
    filter: Option<&str>,
    observer: &dyn RunObserver,
    meta: Option<&dyn SampleMetaSource>,
) -> SuiteOutcome {
    let selected = |name: &str| filter.is_none_or(|f| name.contains(f));
    // A wall-time suite's one result is named after the suite: known before running.
    if cmd.format == OutputFormat::WallTime && !selected(&suite.name) {
        observer.suite_started(&suite.name, 0);
        observer.suite_finished(&suite.name);
        return SuiteOutcome {
            results: Vec::new(),
            skipped: None,
            context: BTreeMap::new(),
            notes: Vec::new(),
            unfinished: Vec::new(),
        };
    }
    observer.suite_started(&suite.name, 0);
    let mut extras = (BTreeMap::new(), Vec::new());
    let results = match cmd.format {
        // The tool's benchmarks are known only from its output: filter them then. A
        // suite that failed as a whole is kept, whatever it would have measured.
        OutputFormat::Parsed(format) => run_parsed_command(
            &suite.name,
            cmd,
            format,
            &suite.sampling,
            checkout,
            observer,
            &mut extras,
        )
        .map_or_else(
            |msg| {
                vec![BenchmarkResult::failed(
                    &suite.name,
                    "command",
                    BTreeMap::new(),
                    msg,
                )]
            },
            |mut results| {
                results.retain(|r| selected(&schema::display_name(&r.name, &r.params)));
                results
            },
        ),
        OutputFormat::WallTime => vec![run_wall_time(
            &suite.name,
            cmd,
            &suite.sampling,
            checkout,
            observer,
            meta,
        )],
    };
    observer.suite_finished(&suite.name);
    SuiteOutcome {
        results,
        skipped: None,
        context: extras.0,
        notes: extras.1,
        unfinished: Vec::new(),
    }
}

/// The directory a command suite runs in: the checkout, or `workdir` joined to it. Checked
/// before spawning, so a bad `workdir` is named instead of the command looking missing.
fn workdir(cmd: &CommandSuite, checkout: &Path) -> Result<PathBuf, String> {
    let Some(w) = &cmd.workdir else {
        return Ok(checkout.to_path_buf());
    };
    let dir = checkout.join(w);
    let hint = "hint: create it (e.g. in the build step) or fix `workdir` in pitwall.toml";
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(dir),
        Ok(_) => Err(format!(
            "workdir `{}` is not a directory: {} ({hint})",
            w.display(),
            dir.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "workdir `{}` does not exist: {} ({hint})",
            w.display(),
            dir.display()
        )),
        Err(e) => Err(format!(
            "workdir `{}` cannot be used: {}: {e}",
            w.display(),
            dir.display()
        )),
    }
}

/// The text of a command suite's `output` file: a regular file of at most the limit that
/// applies to stdout. A FIFO or device (`/dev/zero`, a pipe nobody writes) would hang or grow
/// without bound, so it is refused before it is opened.
fn read_output_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO or device cannot be read as benchmark output; hint: write the output to a file)",
        ));
    }
    let limit = crate::command::STDOUT_MAX_BYTES as u64;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} MiB", limit >> 20),
        ));
    }
    Ok(text)
}

/// A benchmark measure within one tool output: name, parameters, measure.
type BenchKey = (String, BTreeMap<String, String>, String);

/// Runs a command `runs` times and reads its output in `format`, merging the entries of the same
/// benchmark (samples appended in run order). `Err` says why the suite failed as a whole (the
/// command failed, or its output is invalid); it becomes one failed result named `command`.
fn run_parsed_command(
    suite: &str,
    cmd: &CommandSuite,
    format: InputFormat,
    sampling: &Sampling,
    checkout: &Path,
    observer: &dyn RunObserver,
    extras: &mut (BTreeMap<String, serde_json::Value>, Vec<String>),
) -> Result<Vec<BenchmarkResult>, String> {
    // One limit for all runs together.
    let start = Instant::now();
    let timeout = duration_from_secs(sampling.timeout_s);
    let fail = |msg: String| {
        observer.benchmark_finished(suite, "command", Some(&msg));
        Err(msg)
    };
    let mut benchmarks = Vec::new();
    // Each execution is one replicate: (name, params, measure) → (execution, samples) in order.
    let mut executions: HashMap<BenchKey, Vec<(u32, usize)>> = HashMap::new();
    let shown = shown_command(&cmd.command);
    let child_env = ChildEnv::scrubbed(&cmd.env, &cmd.env_pass, &cmd.token_vars);
    for execution in 0..cmd.runs {
        observer.step(&Step::Command {
            suite,
            command: &shown,
            execution: Some((execution + 1, cmd.runs)),
        });
        observer.benchmark_started(suite, "command");
        let dir = match workdir(cmd, checkout) {
            Ok(dir) => dir,
            Err(msg) => return fail(msg),
        };
        let left = timeout.saturating_sub(start.elapsed());
        // A results directory keeps what earlier runs wrote: only what is newer is this run's.
        let started = SystemTime::now();
        let outcome = match run_command(&cmd.command, &dir, &child_env, left) {
            Ok(o) => o,
            Err(e) => {
                return fail(format!(
                    "cannot start command `{}`: {e}",
                    shown_command(&cmd.command)
                ));
            }
        };
        if !outcome.success() {
            return fail(outcome.failure_message(&cmd.command, sampling.timeout_s));
        }
        let parsed = read_output(cmd, format, &dir, started, &outcome.stdout, &child_env);
        let mut parsed = match parsed {
            Ok(p) => p,
            Err(msg) => return fail(msg),
        };
        keep_context_and_notes(suite, format, &mut parsed, observer, extras);
        for b in &parsed.benchmarks {
            executions
                .entry((b.name.clone(), b.params.clone(), b.measure.clone()))
                .or_default()
                .push((execution, b.samples.len()));
        }
        benchmarks.extend(parsed.benchmarks);
        observer.benchmark_finished(suite, "command", None);
    }
    // Each output is merged already; this merges the runs, by the same rule.
    match formats::merge_duplicates(benchmarks) {
        // `merge_duplicates` appends samples in run order, so the executions line up.
        Ok(merged) => Ok(merged
            .into_iter()
            .map(|p| {
                let key = (p.name.clone(), p.params.clone(), p.measure.clone());
                let mut r = p.into_result(suite);
                r.replicates = executions
                    .get(&key)
                    .map(|runs| {
                        runs.iter()
                            .flat_map(|&(e, n)| std::iter::repeat_n(e, n))
                            .collect()
                    })
                    .unwrap_or_default();
                if r.replicates.len() != r.samples.len() {
                    r.replicates.clear();
                }
                r
            })
            .collect()),
        Err(e) => fail(format!(
            "the {} runs of command `{}` disagree: {e}",
            cmd.runs,
            shown_command(&cmd.command)
        )),
    }
}

/// One execution's output read in `format`: its stdout, or the file or directory it wrote
/// (`output`; a directory only what is newer than `started`).
fn read_output(
    cmd: &CommandSuite,
    format: InputFormat,
    dir: &Path,
    started: SystemTime,
    stdout: &[u8],
    child_env: &ChildEnv,
) -> Result<ParsedRun, String> {
    match &cmd.output {
        None => {
            let text = String::from_utf8_lossy(stdout);
            formats::parse(format, Input::Text(&text)).map_err(|e| {
                format!(
                    "output of command `{}` is not valid: {e}",
                    shown_command(&cmd.command)
                )
            })
        }
        Some(out) if format.reads_dir() => {
            formats::parse(format, Input::DirSince(&dir.join(out), started)).map_err(|e| {
                format!(
                    "{} (written by `{}`) is not valid: {e}",
                    out.display(),
                    shown_command(&cmd.command)
                )
            })
        }
        Some(out) => match read_output_file(&dir.join(out)) {
            Ok(mut text) => {
                child_env.redactor.redact_in_place(&mut text);
                // Files the output names beside itself (nvbench's `--jsonbin` samples).
                let beside = formats::DirFiles::beside(&dir.join(out));
                formats::parse(format, Input::TextBeside(&text, &beside)).map_err(|e| {
                    format!(
                        "{} (written by `{}`) is not valid: {e}",
                        out.display(),
                        shown_command(&cmd.command)
                    )
                })
            }
            Err(e) => Err(format!(
                "cannot read {} after `{}`: {e}",
                out.display(),
                shown_command(&cmd.command)
            )),
        },
    }
}

/// What a tool's output says beside its results: its machine context (by format), and its
/// notes and warnings (one line each, warnings shown once).
fn keep_context_and_notes(
    suite: &str,
    format: InputFormat,
    parsed: &mut ParsedRun,
    observer: &dyn RunObserver,
    extras: &mut (BTreeMap<String, serde_json::Value>, Vec<String>),
) {
    if !parsed.context.is_empty() {
        extras.0.insert(
            format.name().to_string(),
            serde_json::to_value(&parsed.context).unwrap_or_default(),
        );
    }
    for note in std::mem::take(&mut parsed.notes) {
        let line = format!("suite `{suite}` ({}): {note}", format.name());
        if !extras.1.contains(&line) {
            extras.1.push(line);
        }
    }
    // Shown once (the same each run) and kept with the notes, so the stored run says so.
    for warning in std::mem::take(&mut parsed.warnings) {
        let line = format!("suite `{suite}` ({}): {warning}", format.name());
        if !extras.1.contains(&line) {
            observer.warning(suite, &line);
            extras.1.push(line);
        }
    }
}

/// Times the whole command, one execution per sample, under the engine's stopping rule.
fn run_wall_time(
    suite: &str,
    cmd: &CommandSuite,
    sampling: &Sampling,
    checkout: &Path,
    observer: &dyn RunObserver,
    meta: Option<&dyn SampleMetaSource>,
) -> BenchmarkResult {
    let name = suite.to_string();
    observer.step(&Step::Command {
        suite,
        command: &shown_command(&cmd.command),
        execution: None,
    });
    observer.benchmark_started(suite, &name);
    let rule = StopRule::from_sampling(sampling);
    let start = Instant::now();
    let timeout = duration_from_secs(sampling.timeout_s);
    // Not a hang: warm-up executions spent the limit (`killed`: one was cut off at it).
    let used_up = |killed: bool| {
        format!(
            "warm-up used up timeout_s ({}s) before any sample was taken{} (warmup_s = {}s; \
             hint: make timeout_s larger than warmup_s)",
            fmt_secs(sampling.timeout_s),
            if killed {
                "; the execution running at the limit was killed with its process group"
            } else {
                ""
            },
            fmt_secs(sampling.warmup_s)
        )
    };
    let executions = std::cell::Cell::new(0u64);
    let child_env = ChildEnv::scrubbed(&cmd.env, &cmd.env_pass, &cmd.token_vars);
    // One execution within what is left of the limit; `None` when nothing is left.
    // `no_sample_yet`: a cut-off here means warm-up spent the limit, unless it is the very
    // first execution (which alone ran past it).
    let exec = |dir: &Path, no_sample_yet: bool| -> Option<Result<f64, String>> {
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return None;
        }
        let first = executions.replace(executions.get() + 1) == 0;
        let o = match run_command(&cmd.command, dir, &child_env, left) {
            Ok(o) => o,
            Err(e) => {
                return Some(Err(format!(
                    "cannot start command `{}`: {e}",
                    shown_command(&cmd.command)
                )));
            }
        };
        Some(if o.success() {
            Ok(o.elapsed_ns)
        } else if no_sample_yet && !first && o.exit == ExitKind::TimedOut {
            Err(used_up(true))
        } else {
            Err(o.failure_message(&cmd.command, sampling.timeout_s))
        })
    };
    let mut sample_meta = Vec::new();
    let outcome = (|| -> Result<Vec<f64>, String> {
        let dir = workdir(cmd, checkout)?;
        if sampling.warmup_s > 0.0 {
            exec(&dir, true).ok_or_else(|| used_up(false))??;
            while start.elapsed().as_secs_f64() < sampling.warmup_s {
                exec(&dir, true).ok_or_else(|| used_up(false))??;
            }
        }
        let sampling_start = Instant::now();
        let mut samples = Vec::new();
        let mut sorted: Vec<f64> = Vec::new();
        loop {
            let t0 = Instant::now();
            let v = match exec(&dir, samples.is_empty()) {
                Some(v) => v?,
                // The limit passed between executions: keep the samples so far.
                None if !samples.is_empty() => return Ok(samples),
                None => return Err(used_up(false)),
            };
            if let Some(source) = meta {
                sample_meta.push(source.meta_between(t0, Instant::now()));
            }
            samples.push(v);
            sorted.insert(sorted.partition_point(|x| *x <= v), v);
            // The hard timeout counts from the first warm-up execution.
            let elapsed = sampling_start.elapsed().as_secs_f64();
            if rule.decide(&sorted, elapsed).is_some() || start.elapsed() >= timeout {
                return Ok(samples);
            }
        }
    })();
    wall_time_result(suite, name, outcome, sample_meta, observer)
}

/// The result of a wall-time suite: its samples, or failed with why.
fn wall_time_result(
    suite: &str,
    name: String,
    outcome: Result<Vec<f64>, String>,
    sample_meta: Vec<SampleMeta>,
    observer: &dyn RunObserver,
) -> BenchmarkResult {
    match outcome {
        Ok(samples) => {
            observer.benchmark_finished(suite, &name, None);
            BenchmarkResult {
                suite: suite.to_string(),
                name,
                params: BTreeMap::new(),
                measure: "time".to_string(),
                unit: Unit::new(Unit::NANOSECONDS),
                direction: Direction::LowerIsBetter,
                status: ResultStatus::Ok,
                error: None,
                // Every execution is its own process: each sample is a replicate.
                replicates: (0..samples.len() as u32).collect(),
                samples,
                sample_meta,
                summary: None,
            }
        }
        Err(msg) => {
            observer.benchmark_finished(suite, &name, Some(&msg));
            BenchmarkResult::failed(suite, &name, BTreeMap::new(), msg)
        }
    }
}
