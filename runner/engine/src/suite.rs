//! Runs one configured suite to results: built-in suites through a backend and the sampler,
//! `command` suites through `run_command` and an output format. Failures become failed
//! results (with the reason) and never stop the other benchmarks.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use pitwall_formats::{self as formats, Input, InputFormat};
use pitwall_schema::backend::SuiteOptions;
use pitwall_schema::schema;
use pitwall_schema::{
    Backend, BackendError, BenchError, Benchmark, BenchmarkResult, Direction, ResultStatus, Unit,
};

use crate::child_env::ChildEnv;
use crate::command::{ExitKind, fmt_secs, run_command, shown_command};
use crate::config::{CommandSuite, OutputFormat, Sampling, SuiteConfig, SuiteSpec};
use crate::device_lost::{not_run, rerun_unfinished};
use crate::meta::SampleMetaSource;
use crate::observer::{RunObserver, Step};
use crate::sampler::sample_benchmark;
use crate::stop::{StopRule, duration_from_secs};
use crate::worker::Isolation;
use crate::worker_parent::{WORKER_GRACE, Worker, run_in_worker};

/// What a suite produced (a suite worker sends it to pitwall as JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SuiteOutcome {
    pub results: Vec<BenchmarkResult>,
    /// Set when the suite could not run here at all (e.g. no GPU): one line saying why.
    pub skipped: Option<String>,
    /// What a tool's output said about the machine, by format name (for the fingerprint).
    pub context: BTreeMap<String, serde_json::Value>,
    /// What a format cannot tell (e.g. summary values only), one line each.
    pub notes: Vec<String>,
    /// Benchmarks not run because an earlier one left the device unusable in this process
    /// (`device_lost`), by display name; each also has a failed result saying so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<String>,
}

/// Which benchmarks of a suite to run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    /// Keep benchmarks whose display name (`name[k=v,…]`) contains this text.
    pub filter: Option<&'a str>,
    /// Only these display names (the later rounds of `--until-decided`); all when `None`.
    pub only: Option<&'a BTreeSet<String>>,
}

/// Runs `suite` in `checkout`; `filter` keeps only benchmarks whose display name (`name[k=v,…]`)
/// contains it: for built-in and wall-time suites before running, for other command suites in
/// the results read from the tool's output. `only` (display names) narrows a built-in suite to
/// those benchmarks (the rounds of `--until-decided` after the first batch); command suites run
/// whole. With `Isolation::Worker`, a built-in suite runs in a fresh worker process started in
/// `checkout`, which builds the backend of the same name (`Backend::name`) itself.
pub fn run_suite(
    suite: &SuiteConfig,
    backend: &dyn Backend,
    checkout: &Path,
    selection: Selection<'_>,
    observer: &dyn RunObserver,
    meta: Option<&dyn SampleMetaSource>,
    isolation: &Isolation,
) -> SuiteOutcome {
    let Selection { filter, only } = selection;
    if let (SuiteSpec::Builtin { .. }, Isolation::Worker { exe }) = (&suite.spec, isolation) {
        let worker = Worker {
            exe,
            backend: backend.name(),
        };
        let first = run_in_worker(
            worker,
            suite,
            checkout,
            selection,
            observer,
            meta,
            WORKER_GRACE,
        );
        return rerun_unfinished(&suite.name, first, observer, |only| {
            let selection = Selection {
                filter,
                only: Some(only),
            };
            run_in_worker(
                worker,
                suite,
                checkout,
                selection,
                observer,
                meta,
                WORKER_GRACE,
            )
        });
    }
    match &suite.spec {
        SuiteSpec::Builtin { kind, options, .. } => match backend.benchmarks(
            *kind,
            &SuiteOptions {
                // The checkout the suite measures: a `cuda-kernels` manifest's sources are in it.
                checkout: Some(checkout.to_path_buf()),
                ..options.clone()
            },
        ) {
            Ok(mut benches) => {
                benches.retain(|b| {
                    let shown = b.id().display();
                    filter.is_none_or(|f| shown.contains(f))
                        && only.is_none_or(|o| o.contains(&shown))
                });
                observer.suite_started(&suite.name, benches.len());
                let ceilings: Vec<_> = benches
                    .iter()
                    .filter_map(|b| b.ceiling().map(|c| (b.id(), c)))
                    .collect();
                let mut guarded = Vec::new();
                // Each benchmark is dropped once measured: its buffers (allocated on its first
                // run) are freed before the next one starts, so a worker peaks at its largest
                // benchmark rather than at the sum of the suite's.
                let mut results: Vec<BenchmarkResult> = Vec::new();
                let mut unfinished = Vec::new();
                let mut lost_by: Option<String> = None;
                for mut b in benches {
                    if let Some(lost_by) = &lost_by {
                        results.push(not_run(&suite.name, b.as_ref(), lost_by));
                        unfinished.push(b.id().display());
                        continue;
                    }
                    let bound = b.plausibility();
                    let (r, median_ns, lost) =
                        run_builtin(&suite.name, b.as_mut(), &suite.sampling, observer, meta);
                    if let (Some(bound), Some(median_ns)) = (bound, median_ns) {
                        guarded.push(crate::plausible::Guarded {
                            id: b.id(),
                            bound,
                            median_ns,
                        });
                    }
                    results.extend(r);
                    lost_by = lost.then(|| format!("benchmark {}", b.id().display()));
                }
                let derived = crate::ceiling::ceiling_results(&results, &ceilings);
                results.extend(derived);
                let implausible = crate::plausible::mark_implausible(&mut results, &guarded);
                observer.suite_finished(&suite.name);
                SuiteOutcome {
                    results,
                    skipped: None,
                    context: BTreeMap::new(),
                    notes: backend
                        .notes(*kind)
                        .into_iter()
                        .chain(
                            implausible
                                .into_iter()
                                .map(|why| format!("implausible: {why}")),
                        )
                        .map(|n| format!("suite `{}`: {n}", suite.name))
                        .collect(),
                    unfinished,
                }
            }
            Err(BackendError::Unavailable { backend, reason }) => {
                let line = format!(
                    "suite `{}` skipped: {backend} backend unavailable: {reason}",
                    suite.name
                );
                observer.suite_skipped(&suite.name, &line);
                SuiteOutcome {
                    results: Vec::new(),
                    skipped: Some(line),
                    context: BTreeMap::new(),
                    notes: Vec::new(),
                    unfinished: Vec::new(),
                }
            }
            Err(e) => {
                let r =
                    BenchmarkResult::failed(&suite.name, "suite", BTreeMap::new(), e.to_string());
                SuiteOutcome {
                    results: vec![r],
                    skipped: None,
                    context: BTreeMap::new(),
                    notes: Vec::new(),
                    unfinished: Vec::new(),
                }
            }
        },
        SuiteSpec::Command(cmd) => {
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
    }
}

/// Samples one built-in benchmark into its results, and the median time per iteration it
/// was measured at (for the `implausible` guard; `None` when it failed).
fn run_builtin(
    suite: &str,
    bench: &mut dyn Benchmark,
    sampling: &Sampling,
    observer: &dyn RunObserver,
    meta: Option<&dyn SampleMetaSource>,
) -> (Vec<BenchmarkResult>, Option<f64>, bool) {
    let id = bench.id();
    let display = id.display();
    observer.benchmark_started(suite, &display);
    let metrics = bench.metrics();
    let rule = StopRule::from_sampling(sampling);
    match sample_benchmark(bench, &rule, sampling.warmup_s, meta) {
        Ok(set) => {
            observer.benchmark_finished(suite, &display, None);
            let mut results: Vec<BenchmarkResult> = metrics
                .iter()
                .map(|m| BenchmarkResult {
                    suite: suite.to_string(),
                    name: id.name.clone(),
                    params: id.params.clone(),
                    measure: m.measure.clone(),
                    unit: m.unit.clone(),
                    direction: m.direction,
                    status: ResultStatus::Ok,
                    error: None,
                    samples: set
                        .ns_per_iter
                        .iter()
                        .map(|ns| m.conversion.apply(*ns))
                        .collect(),
                    sample_meta: set.meta.clone(),
                    replicates: Vec::new(),
                    summary: None,
                })
                .collect();
            results.extend(rank_results(suite, &id, &set));
            (
                results,
                crate::plausible::median_ns(&set.ns_per_iter),
                false,
            )
        }
        Err(e) => {
            let lost = matches!(e, BenchError::DeviceLost(_));
            let msg = format!("benchmark {display}: {e}");
            observer.benchmark_finished(suite, &display, Some(&msg));
            let mut r = BenchmarkResult::failed(suite, &id.name, id.params.clone(), msg);
            if let Some(m) = metrics.first() {
                r.measure = m.measure.clone();
                r.unit = m.unit.clone();
                r.direction = m.direction;
            }
            (vec![r], None, lost)
        }
    }
}

/// The measure of rank `r`'s own time per iteration in a benchmark run by several ranks.
pub fn rank_time_measure(rank: usize) -> String {
    format!("{RANK_TIME_MEASURE_PREFIX}{rank}")
}

/// Prefix of the per-rank measures (`time_rank0`, `time_rank1`, …).
pub const RANK_TIME_MEASURE_PREFIX: &str = "time_rank";

/// One result per rank (ns per iteration, lower is better) when every sample of `set` has
/// every rank's time: a straggler rank shows as its own measure, compared like any other.
fn rank_results(
    suite: &str,
    id: &pitwall_schema::BenchmarkId,
    set: &crate::sampler::SampleSet,
) -> Vec<BenchmarkResult> {
    let ranks = set.rank_ns_per_iter.first().map_or(0, Vec::len);
    if ranks == 0
        || set.rank_ns_per_iter.len() != set.ns_per_iter.len()
        || set.rank_ns_per_iter.iter().any(|r| r.len() != ranks)
    {
        return Vec::new();
    }
    (0..ranks)
        .map(|rank| BenchmarkResult {
            suite: suite.to_string(),
            name: id.name.clone(),
            params: id.params.clone(),
            measure: rank_time_measure(rank),
            unit: Unit::new(Unit::NANOSECONDS),
            direction: Direction::LowerIsBetter,
            status: ResultStatus::Ok,
            error: None,
            samples: set.rank_ns_per_iter.iter().map(|r| r[rank]).collect(),
            sample_meta: set.meta.clone(),
            replicates: Vec::new(),
            summary: None,
        })
        .collect()
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
        let parsed = match &cmd.output {
            None => {
                let text = String::from_utf8_lossy(&outcome.stdout);
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
        };
        let parsed = match parsed {
            Ok(p) => p,
            Err(msg) => return fail(msg),
        };
        if !parsed.context.is_empty() {
            extras.0.insert(
                format.name().to_string(),
                serde_json::to_value(&parsed.context).unwrap_or_default(),
            );
        }
        for note in parsed.notes {
            let line = format!("suite `{suite}` ({}): {note}", format.name());
            if !extras.1.contains(&line) {
                extras.1.push(line);
            }
        }
        // Shown once (the same each run) and kept with the notes, so the stored run says so.
        for warning in parsed.warnings {
            let line = format!("suite `{suite}` ({}): {warning}", format.name());
            if !extras.1.contains(&line) {
                observer.warning(suite, &line);
                extras.1.push(line);
            }
        }
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
