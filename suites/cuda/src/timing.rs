//! The seam between the timing loops and the device: every stream operation a timed sample
//! enqueues (L2 flush, event records, the benchmark's launches, graph replays, synchronisation)
//! goes through [`Stream`], so the order of device operations is decided here, once, and tested
//! without a GPU against a recording fake (`timing_fake`). `device::EventTimer` implements
//! [`Stream`] on a real CUDA stream; the loops below are the only timing loops of the CUDA
//! suites.

use crate::error::CudaError;

/// Whether each timed iteration starts with a flushed L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// L2 overwritten (2× its size) before every iteration: what a kernel meets in a model,
    /// where other layers ran in between. The default.
    Cold,
    /// Iterations back to back: the data may stay in L2 from the previous one.
    Warm,
}

/// Event pairs in flight before the timer synchronises and sums them (cold mode).
pub const PAIRS: usize = 64;

/// The stream operations a timing loop needs. Event pairs are numbered from 0; `reserve`
/// makes pairs `0..n` exist before they are recorded.
pub trait Stream {
    /// Enqueues the L2 flush (`Device::flush_l2`).
    fn flush(&mut self) -> Result<(), CudaError>;
    /// Makes sure event pairs `0..pairs` exist.
    fn reserve(&mut self, pairs: usize) -> Result<(), CudaError>;
    /// Records the start event of `pair` on the stream.
    fn record_start(&mut self, pair: usize) -> Result<(), CudaError>;
    /// Records the end event of `pair` on the stream.
    fn record_end(&mut self, pair: usize) -> Result<(), CudaError>;
    /// Enqueues the benchmark's work of iteration `iter` (its buffer set follows from it).
    fn launch(&mut self, iter: u64) -> Result<(), CudaError>;
    /// Enqueues one replay of the benchmark's captured graph.
    fn graph_launch(&mut self) -> Result<(), CudaError>;
    /// Waits on the host until the stream's work is done.
    fn synchronize(&mut self) -> Result<(), CudaError>;
    /// Milliseconds between the start and end events of `pair` (stream synchronised).
    fn elapsed_ms(&mut self, pair: usize) -> Result<f64, CudaError>;
    /// Enqueues the blocking kernel: it holds the stream until [`Stream::release`], or gives up
    /// after [`BLOCK_TIMEOUT_NS`].
    fn block(&mut self) -> Result<(), CudaError>;
    /// Releases the blocking kernel (a host write the spinning kernel sees).
    fn release(&mut self) -> Result<(), CudaError>;
    /// After a synchronisation: whether the last blocking kernel gave up before its release.
    fn block_timed_out(&mut self) -> Result<bool, CudaError>;
    /// Says something about a sample that did not go as planned (stderr in the worker).
    fn warn(&mut self, message: &str);
}

/// How long the blocking kernel holds the stream before it gives up: 1 s, as nvbench's.
pub const BLOCK_TIMEOUT_NS: u64 = 1_000_000_000;
/// Most launches queued behind one blocking kernel: well below the driver's queue of pending
/// launches (about 1024), so queuing never waits for the held stream.
pub const HELD_LAUNCHES: u64 = 256;
/// Warm samples taken in a row whose blocking kernel gave up before the timer stops trying.
pub const BLOCK_ATTEMPTS: u32 = 3;

/// One device operation, in the order a timing loop enqueued it (the recording fake's log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceOp {
    Flush,
    Start(usize),
    End(usize),
    Launch(u64),
    GraphLaunch,
    Synchronize,
    Block,
    Release,
}

/// What a timed unit holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// `per_unit` iterations of the benchmark's work, enqueued one by one by the host.
    Eager { per_unit: u64 },
    /// One replay of a captured graph of `per_graph` iterations.
    Graph { per_graph: u64 },
}

impl Work {
    /// Iterations in one unit.
    pub fn iterations(self) -> u64 {
        match self {
            Work::Eager { per_unit } => per_unit.max(1),
            Work::Graph { per_graph } => per_graph.max(1),
        }
    }
}

/// When a timed region starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// As soon as its start event is reached on the stream: the host may have queued the unit
    /// already (behind the flush), so the region holds the device's work only.
    Queued,
    /// As `Queued`, for work whose enqueue itself waits on the host for the stream (a
    /// transfer from or to pageable memory, staged by the driver): a blocking kernel would
    /// deadlock it, so warm mode puts one event pair around the iterations without holding the
    /// stream.
    HostWaits,
    /// On an idle stream: the host synchronises (after the flush, in cold mode) before it
    /// records the start event, so the region holds the host's launch cost too, which is what
    /// a serving path pays for a forward pass.
    Idle,
}

/// How a benchmark is timed: its unit and where the unit's region starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub work: Work,
    pub start: Start,
}

impl Timing {
    /// One eagerly launched iteration per unit, device time only: the bandwidth, row, GEMM and
    /// user kernels.
    pub const PER_ITERATION: Timing = Timing {
        work: Work::Eager { per_unit: 1 },
        start: Start::Queued,
    };
}

/// Replays of a graph of `per_graph` iterations that cover `iters` iterations: at least one.
pub fn replays(iters: u64, per_graph: u64) -> u64 {
    iters.div_ceil(per_graph.max(1)).max(1)
}

/// The time of `iters` iterations from the time of `replays` replays of `per_graph` each: the
/// mean time of an iteration in the replays, times `iters` (the engine divides by `iters`).
pub fn time_of_iters(replayed_ns: f64, iters: u64, replays: u64, per_graph: u64) -> f64 {
    replayed_ns * iters as f64 / (replays * per_graph.max(1)) as f64
}

/// Enqueues one unit of `work`; `next` counts iterations over every call, so the rotation
/// over buffer sets continues from sample to sample.
fn enqueue_unit<S: Stream>(s: &mut S, work: Work, next: &mut u64) -> Result<(), CudaError> {
    match work {
        Work::Eager { per_unit } => {
            for _ in 0..per_unit.max(1) {
                s.launch(*next)?;
                *next += 1;
            }
        }
        Work::Graph { per_graph } => {
            s.graph_launch()?;
            *next += per_graph;
        }
    }
    Ok(())
}

/// Times `units` units and returns their device time in nanoseconds. An event pair around
/// each unit, up to [`PAIRS`] in flight before a synchronisation, when the L2 is flushed
/// before every unit (cold: the flush enqueued before the start event, so it is never timed)
/// or the stream is idle at every start; otherwise (warm, `Start::Queued`) one pair around all
/// of them.
fn time_units<S: Stream>(
    s: &mut S,
    next: &mut u64,
    cache: Cache,
    timing: Timing,
    units: u64,
) -> Result<f64, CudaError> {
    let mut total_ms = 0.0f64;
    if cache == Cache::Warm && timing.start == Start::HostWaits {
        s.reserve(1)?;
        s.record_start(0)?;
        for _ in 0..units {
            enqueue_unit(s, timing.work, next)?;
        }
        s.record_end(0)?;
        s.synchronize()?;
        return Ok(s.elapsed_ms(0)? * 1e6);
    }
    if cache == Cache::Warm && timing.start == Start::Queued {
        // Launches queued behind one blocking kernel stay under the driver's launch queue, or
        // the host would wait for a slot the held stream never frees. A graph replay counts
        // as the launches it holds (conservatively: how the driver queues its nodes is not
        // documented).
        let per_region = (HELD_LAUNCHES / timing.work.iterations()).max(1);
        let mut left = units;
        let mut total_ns = 0.0;
        while left > 0 {
            let n = left.min(per_region);
            total_ns += time_held(s, next, timing.work, n)?;
            left -= n;
        }
        return Ok(total_ns);
    }
    let mut left = units;
    while left > 0 {
        let batch = left.min(PAIRS as u64) as usize;
        s.reserve(batch)?;
        for pair in 0..batch {
            if cache == Cache::Cold {
                s.flush()?;
            }
            if timing.start == Start::Idle {
                s.synchronize()?;
            }
            s.record_start(pair)?;
            enqueue_unit(s, timing.work, next)?;
            s.record_end(pair)?;
        }
        s.synchronize()?;
        for pair in 0..batch {
            total_ms += s.elapsed_ms(pair)?;
        }
        left -= batch as u64;
    }
    Ok(total_ms * 1e6)
}

/// Warm mode: the units back to back between one event pair, behind the blocking kernel,
/// released once the last unit is queued, so the region is the device's time for them and not
/// the host's enqueue rate (nvbench's hot mode). A sample whose blocking kernel gave up (the
/// host took over [`BLOCK_TIMEOUT_NS`] to queue it) timed part of the spin: it is discarded
/// with a warning and taken again, at most [`BLOCK_ATTEMPTS`] times.
fn time_held<S: Stream>(
    s: &mut S,
    next: &mut u64,
    work: Work,
    units: u64,
) -> Result<f64, CudaError> {
    s.reserve(1)?;
    for attempt in 1..=BLOCK_ATTEMPTS {
        s.block()?;
        s.record_start(0)?;
        for _ in 0..units {
            enqueue_unit(s, work, next)?;
        }
        s.record_end(0)?;
        s.release()?;
        s.synchronize()?;
        if !s.block_timed_out()? {
            return Ok(s.elapsed_ms(0)? * 1e6);
        }
        s.warn(&format!(
            "the blocking kernel gave up after 1 s, before {units} timed units were queued: sample discarded (attempt {attempt} of {BLOCK_ATTEMPTS})"
        ));
    }
    Err(CudaError::Setup(format!(
        "the blocking kernel gave up {BLOCK_ATTEMPTS} times in a row: the host cannot queue a warm sample within 1 s; hint: lower the suite's sampling time or use cache = \"cold\""
    )))
}

/// Times `iters` iterations on `s` as `timing` says and returns their device time in
/// nanoseconds: whole units, scaled to `iters` iterations ([`time_of_iters`]).
pub fn time<S: Stream>(
    s: &mut S,
    next: &mut u64,
    cache: Cache,
    timing: Timing,
    iters: u64,
) -> Result<f64, CudaError> {
    let per_unit = timing.work.iterations();
    let n = replays(iters, per_unit);
    let ns = time_units(s, next, cache, timing, n)?;
    Ok(time_of_iters(ns, iters, n, per_unit))
}

#[cfg(test)]
mod tests;
