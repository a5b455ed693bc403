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
mod tests {
    use super::*;
    use crate::timing_fake::Recording;
    use DeviceOp::*;

    #[test]
    fn replays_cover_the_iterations_asked_for() {
        assert_eq!(replays(1, 32), 1);
        assert_eq!(replays(32, 32), 1);
        assert_eq!(replays(33, 32), 2);
        assert_eq!(replays(1000, 1), 1000);
        assert_eq!(replays(0, 32), 1);
        assert_eq!(replays(5, 0), 5);
    }

    #[test]
    fn replayed_time_scales_to_the_iterations_asked_for() {
        // 2 replays of 32 iterations took 6.4 µs: 100 ns an iteration; 40 asked for: 4 µs.
        assert!((time_of_iters(6400.0, 40, 2, 32) - 4000.0).abs() < 1e-9);
        // One iteration per graph (an inference pass): the replays' own time.
        assert_eq!(time_of_iters(5000.0, 5, 5, 1), 5000.0);
    }

    #[test]
    fn cold_eager_flushes_before_every_start_event_and_never_times_the_flush() {
        let mut s = Recording::new(0.001);
        let mut next = 0;
        let ns = time(&mut s, &mut next, Cache::Cold, Timing::PER_ITERATION, 2).unwrap();
        assert_eq!(
            s.ops,
            [
                Flush,
                Start(0),
                Launch(0),
                End(0),
                Flush,
                Start(1),
                Launch(1),
                End(1),
                Synchronize
            ]
        );
        assert!((ns - 2000.0).abs() < 1e-6, "{ns}");
        assert_eq!(s.timed(1), [Launch(1)]);
        // The rotation continues in the next sample.
        time(&mut s, &mut next, Cache::Cold, Timing::PER_ITERATION, 1).unwrap();
        assert!(s.ops.contains(&Launch(2)));
    }

    #[test]
    fn cold_mode_synchronises_after_at_most_pairs_units() {
        let mut s = Recording::new(0.001);
        time(
            &mut s,
            &mut 0,
            Cache::Cold,
            Timing::PER_ITERATION,
            PAIRS as u64 + 1,
        )
        .unwrap();
        let syncs: Vec<usize> = (0..s.ops.len())
            .filter(|&i| s.ops[i] == Synchronize)
            .collect();
        assert_eq!(syncs.len(), 2);
        assert_eq!(s.ops[syncs[0] - 1], End(PAIRS - 1));
    }

    /// Issue 23, defect 1: a forward pass's latency includes the host's launch cost, so every
    /// pass starts on an idle stream, after the flush in cold mode, eager and graph alike.
    #[test]
    fn inference_latency_starts_on_an_idle_stream_after_the_flush() {
        use crate::graph::Mode;
        use crate::infer_plan::{InferPlanned, Workload};
        for mode in Mode::ALL {
            let p = InferPlanned {
                workload: Workload::Mlp,
                batch: 1,
                seq: 1,
                mode,
            };
            let pass = match mode {
                Mode::Eager => Launch(0),
                Mode::Graph => GraphLaunch,
            };
            let mut s = Recording::new(0.01);
            time(&mut s, &mut 0, Cache::Cold, p.timing(), 2).unwrap();
            assert_eq!(
                s.ops[..5],
                [Flush, Synchronize, Start(0), pass, End(0)],
                "{mode:?}"
            );
            assert_eq!(s.ops[5..7], [Flush, Synchronize], "{mode:?}");
            let mut s = Recording::new(0.01);
            time(&mut s, &mut 0, Cache::Warm, p.timing(), 2).unwrap();
            assert_eq!(
                s.ops[..4],
                [Synchronize, Start(0), pass, End(0)],
                "{mode:?}"
            );
            assert_eq!(s.ops[4], Synchronize, "{mode:?}");
        }
    }

    /// Issue 23, defect 6: in warm mode a spin-wait kernel holds the stream until the last
    /// launch is queued, so short ops are timed back to back on the device, not at the host's
    /// enqueue rate.
    #[test]
    fn warm_mode_holds_the_stream_until_the_last_launch_is_queued() {
        let mut s = Recording::new(0.003);
        let ns = time(&mut s, &mut 0, Cache::Warm, Timing::PER_ITERATION, 2).unwrap();
        assert_eq!(
            s.ops,
            [
                Block,
                Start(0),
                Launch(0),
                Launch(1),
                End(0),
                Release,
                Synchronize
            ]
        );
        assert!((ns - 3000.0).abs() < 1e-6);
        assert!(s.warnings.is_empty());
    }

    /// Issue 23, defect 6: a pageable transfer's enqueue waits for the stream, so nothing
    /// holds it (a blocking kernel would deadlock until its timeout).
    #[test]
    fn pageable_transfers_are_never_held_by_the_blocking_kernel() {
        use crate::memory::{HostMemory, MemOp};
        let pageable = MemOp::HostToDevice(HostMemory::Pageable).timing();
        assert_eq!(pageable.start, super::Start::HostWaits);
        assert_eq!(MemOp::DeviceToHost(HostMemory::Pageable).timing(), pageable);
        let mut s = Recording::new(0.002);
        time(&mut s, &mut 0, Cache::Warm, pageable, 2).unwrap();
        assert_eq!(s.ops, [Start(0), Launch(0), Launch(1), End(0), Synchronize]);
        let pinned = MemOp::HostToDevice(HostMemory::Pinned).timing();
        assert_eq!(pinned, Timing::PER_ITERATION);
    }

    /// Issue 23, defect 6: no more launches behind one blocking kernel than the launch queue
    /// holds; the regions' times add up.
    #[test]
    fn a_long_warm_sample_is_held_in_regions_of_at_most_held_launches() {
        let mut s = Recording::new(0.5);
        let iters = 2 * HELD_LAUNCHES + 1;
        let ns = time(&mut s, &mut 0, Cache::Warm, Timing::PER_ITERATION, iters).unwrap();
        assert_eq!(s.ops.iter().filter(|&&o| o == Block).count(), 3);
        assert!((ns - 1.5e6).abs() < 1e-3, "{ns}");
        let mut launches = 0;
        for op in &s.ops {
            match op {
                Block => launches = 0,
                Launch(_) => launches += 1,
                Release => assert!(launches <= HELD_LAUNCHES),
                _ => {}
            }
        }
    }

    /// Issue 23, defect 6: a blocking kernel that gave up after 1 s leaves a sample that timed
    /// part of the spin: it is discarded with a warning and taken again.
    #[test]
    fn a_sample_whose_blocking_kernel_gave_up_is_discarded_with_a_warning() {
        let mut s = Recording::new(0.003);
        s.timeouts = 1;
        time(&mut s, &mut 0, Cache::Warm, Timing::PER_ITERATION, 1).unwrap();
        assert_eq!(s.ops.iter().filter(|&&o| o == Block).count(), 2);
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("discarded"), "{:?}", s.warnings);
        let mut s = Recording::new(0.003);
        s.timeouts = BLOCK_ATTEMPTS;
        let err = time(&mut s, &mut 0, Cache::Warm, Timing::PER_ITERATION, 1).unwrap_err();
        assert!(err.to_string().contains("blocking kernel"), "{err}");
    }
}
