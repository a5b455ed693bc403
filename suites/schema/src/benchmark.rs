//! The contract between a suite and the measurement engine: a benchmark times `iters`
//! iterations of its work and says how a time per iteration becomes its reported measures.

pub use crate::schema::BenchmarkId;
use crate::schema::{Direction, Unit};

/// How the engine should sample a benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplingHint {
    /// Small, steady work: the engine batches iterations so one sample lasts long enough to
    /// time precisely, and records the mean time per iteration of each batch.
    Batched,
    /// Latency-critical work whose distribution matters (p99, p99.9): one iteration per sample.
    PerIteration,
}

/// How a measured time per iteration becomes a reported value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Conversion {
    /// The time per iteration itself, in nanoseconds.
    TimeNs,
    /// `work_per_iter` units of work (flops, bytes, items) per iteration, reported per second
    /// divided by `scale` (1e9 for GFLOP/s and GB/s, 1 for items/s).
    Rate { work_per_iter: f64, scale: f64 },
}

impl Conversion {
    /// Converts nanoseconds per iteration to the reported value.
    pub fn apply(self, ns_per_iter: f64) -> f64 {
        match self {
            Conversion::TimeNs => ns_per_iter,
            Conversion::Rate {
                work_per_iter,
                scale,
            } => work_per_iter * 1e9 / ns_per_iter.max(f64::MIN_POSITIVE) / scale,
        }
    }
}

/// One reported measure of a benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSpec {
    pub measure: String,
    pub unit: Unit,
    pub direction: Direction,
    pub conversion: Conversion,
}

impl MetricSpec {
    /// Time per iteration in ns, lower is better.
    pub fn time(measure: &str) -> MetricSpec {
        MetricSpec {
            measure: measure.to_string(),
            unit: Unit::new(Unit::NANOSECONDS),
            direction: Direction::LowerIsBetter,
            conversion: Conversion::TimeNs,
        }
    }

    /// A throughput: `work_per_iter / time`, reported in `unit` after dividing by `scale`.
    pub fn rate(measure: &str, unit: &str, work_per_iter: f64, scale: f64) -> MetricSpec {
        MetricSpec {
            measure: measure.to_string(),
            unit: Unit::new(unit),
            direction: Direction::HigherIsBetter,
            conversion: Conversion::Rate {
                work_per_iter,
                scale,
            },
        }
    }
}

/// Why a benchmark could not produce a sample.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("benchmark setup failed: {0}")]
    Setup(String),
    #[error("result check failed: {0}")]
    Validation(String),
    #[error("backend error: {0}")]
    Backend(String),
    /// The device is unusable in this process (a sticky CUDA error such as an illegal
    /// address): the benchmarks after this one must run in a fresh process.
    #[error("device unusable in this process: {0}")]
    DeviceLost(String),
}

/// A benchmark the engine can sample. Implementations own their buffers and time themselves
/// (wall clock on the CPU, device events on a GPU), so the engine never sees the clock source.
pub trait Benchmark: Send {
    fn id(&self) -> BenchmarkId;

    fn sampling(&self) -> SamplingHint;

    /// The measures this benchmark reports; the first is its primary one.
    fn metrics(&self) -> Vec<MetricSpec>;

    /// Runs `iters` iterations and returns the elapsed time in nanoseconds.
    fn run(&mut self, iters: u64) -> Result<f64, BenchError>;

    /// A benchmark run by several ranks (a multi-process collective): each rank's elapsed
    /// nanoseconds in the last `run`, by rank, so a straggler is visible; `None` otherwise.
    fn rank_times_ns(&self) -> Option<Vec<f64>> {
        None
    }

    /// The benchmark of the same suite whose measure, measured in the same run, is this one's
    /// ceiling (a row kernel's bandwidth against the copy bandwidth): the engine then also
    /// reports this measure as a percentage of that benchmark's median (`Ceiling`).
    fn ceiling(&self) -> Option<Ceiling> {
        None
    }

    /// What the hardware allows this benchmark (its card's dense peak, its memory bandwidth
    /// with the operands out of L2): the engine marks a median beyond it `implausible`
    /// (`crate::plausible`). `None`: nothing to hold it to (CPU benchmarks, unknown bounds).
    fn plausibility(&self) -> Option<crate::plausible::Plausibility> {
        None
    }
}

/// "Report `measure` also as a percentage of `of`'s `measure` in the same run": the derived
/// result's measure is `{measure}_of_{label}` (`bandwidth_of_copy`), its unit `%`, higher is
/// better. No derived result when `of` was not measured (filtered out, failed, too large).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceiling {
    pub measure: String,
    pub of: BenchmarkId,
    /// A short name of the ceiling (`copy`), part of the derived measure's name.
    pub label: String,
}

impl Ceiling {
    /// The measure of the derived result.
    pub fn derived_measure(&self) -> String {
        format!("{}_of_{}", self.measure, self.label)
    }
}

/// A benchmark with a `Ceiling` or a plausibility bound added: a backend wraps the benchmarks
/// its plan relates to a ceiling it also measures, or bounds by what the hardware can do, and
/// everything else (whatever is not given here) is the inner benchmark's.
pub struct Annotated {
    pub inner: Box<dyn Benchmark>,
    pub ceiling: Option<Ceiling>,
    pub plausibility: Option<crate::plausible::Plausibility>,
}

impl Annotated {
    /// `inner` with `ceiling`.
    pub fn with_ceiling(inner: Box<dyn Benchmark>, ceiling: Ceiling) -> Box<dyn Benchmark> {
        Box::new(Annotated {
            inner,
            ceiling: Some(ceiling),
            plausibility: None,
        })
    }

    /// `inner` with the plausibility `bound`.
    pub fn with_bound(
        inner: Box<dyn Benchmark>,
        bound: crate::plausible::Plausibility,
    ) -> Box<dyn Benchmark> {
        Box::new(Annotated {
            inner,
            ceiling: None,
            plausibility: Some(bound),
        })
    }
}

impl Benchmark for Annotated {
    fn id(&self) -> BenchmarkId {
        self.inner.id()
    }
    fn sampling(&self) -> SamplingHint {
        self.inner.sampling()
    }
    fn metrics(&self) -> Vec<MetricSpec> {
        self.inner.metrics()
    }
    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        self.inner.run(iters)
    }
    fn rank_times_ns(&self) -> Option<Vec<f64>> {
        self.inner.rank_times_ns()
    }
    fn ceiling(&self) -> Option<Ceiling> {
        self.ceiling.clone().or_else(|| self.inner.ceiling())
    }
    fn plausibility(&self) -> Option<crate::plausible::Plausibility> {
        self.plausibility
            .clone()
            .or_else(|| self.inner.plausibility())
    }
}
