//! Runs one configured suite to results: built-in suites through a backend and the sampler,
//! `command` suites through `command_suite.rs`. Failures become failed results (with the
//! reason) and never stop the other benchmarks.

use std::collections::BTreeMap;
use std::path::Path;

use pitwall_schema::backend::SuiteOptions;

use pitwall_schema::{
    Backend, BackendError, BenchError, Benchmark, BenchmarkResult, Direction, ResultStatus,
    SuiteKind, Unit,
};

use crate::command_suite::run_command_suite;
use crate::config::{Sampling, SuiteConfig, SuiteSpec};
use crate::device_lost::{not_run, rerun_unfinished};
use crate::meta::SampleMetaSource;
use crate::observer::RunObserver;
use crate::outcome::{Selection, SuiteOutcome};
use crate::protocol::Isolation;
use crate::sampler::sample_benchmark;
use crate::stop::StopRule;
use crate::worker_parent::{WORKER_GRACE, Worker, run_in_worker};

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
    let filter = selection.filter;
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
            Ok(benches) => {
                measure_builtins(suite, *kind, benches, backend, selection, observer, meta)
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
        SuiteSpec::Command(cmd) => run_command_suite(suite, cmd, checkout, filter, observer, meta),
    }
}

/// The selected benchmarks of a built-in suite, measured here one after the other, with the
/// results derived from them (ceilings) and the implausible ones marked.
fn measure_builtins(
    suite: &SuiteConfig,
    kind: SuiteKind,
    mut benches: Vec<Box<dyn Benchmark>>,
    backend: &dyn Backend,
    selection: Selection<'_>,
    observer: &dyn RunObserver,
    meta: Option<&dyn SampleMetaSource>,
) -> SuiteOutcome {
    let Selection { filter, only } = selection;
    benches.retain(|b| {
        let shown = b.id().display();
        filter.is_none_or(|f| shown.contains(f)) && only.is_none_or(|o| o.contains(&shown))
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
            .notes(kind)
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
