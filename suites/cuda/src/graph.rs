//! CUDA-graph replay for launch-bound benchmarks: the work of N iterations is captured once
//! from the benchmark's stream (`cuStreamBeginCapture`/`cuStreamEndCapture`, then
//! `cuGraphInstantiate` and `cuGraphUpload`, through cudarc) and every timed unit is one
//! `cuGraphLaunch` of it, so the CPU cost of N launches becomes one. The result records which
//! way it was launched in its `mode` parameter (`eager` or `graph`), so the two never mix in one
//! history series. The arithmetic of replays is pure and tested without a GPU.

use cudarc::driver::CudaGraph;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};

use crate::device::{Cache, CudaError, Device, EventTimer};

/// How a benchmark's kernels are launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Each kernel and library call enqueued by the host, one by one.
    Eager,
    /// A captured CUDA graph replayed with one `cuGraphLaunch`.
    Graph,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::Eager, Mode::Graph];

    /// The value of the `mode` parameter.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Eager => "eager",
            Mode::Graph => "graph",
        }
    }
}

/// Iterations captured into one graph by the batched benchmarks of the `kernel` suite (the
/// skinny GEMMs): enough that one replay lasts well beyond a launch's few microseconds.
pub const GRAPH_ITERATIONS: u64 = 32;

/// Replays of a graph of `per_graph` iterations that cover `iters` iterations: at least one.
pub fn replays(iters: u64, per_graph: u64) -> u64 {
    iters.div_ceil(per_graph.max(1)).max(1)
}

/// The time of `iters` iterations from the time of `replays` replays of `per_graph` each: the
/// mean time of an iteration in the replays, times `iters` (the engine divides by `iters`).
pub fn time_of_iters(replayed_ns: f64, iters: u64, replays: u64, per_graph: u64) -> f64 {
    replayed_ns * iters as f64 / (replays * per_graph.max(1)) as f64
}

/// An instantiated CUDA graph owned by one benchmark.
pub struct Graph(CudaGraph);

// SAFETY: CUDA graphs may be used from any thread but are not internally synchronised. A
// `Graph` is owned by one benchmark and used through `&self` only by the thread running it
// (it is not `Sync`), so moving it to another thread between runs is sound.
unsafe impl Send for Graph {}

impl Graph {
    /// One replay on the stream it was captured from (`cuGraphLaunch`).
    pub fn launch(&self) -> Result<(), CudaError> {
        Ok(self.0.launch()?)
    }
}

/// Captures `per_graph` iterations of `enqueue` (given the iteration number, so buffer sets
/// rotate inside the graph as they would eagerly) into an instantiated, uploaded graph.
/// `enqueue` must only enqueue work on `dev.stream` (no synchronisation, no allocation: neither
/// is allowed while capturing). A failed capture is ended before the error is returned, so the
/// stream stays usable.
pub fn capture(
    dev: &Device,
    per_graph: u64,
    mut enqueue: impl FnMut(u64) -> Result<(), CudaError>,
) -> Result<Graph, CudaError> {
    // Thread-local: other threads' CUDA calls are not affected by this thread's capture.
    dev.stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    let mut captured = Ok(());
    for i in 0..per_graph {
        captured = enqueue(i);
        if captured.is_err() {
            break;
        }
    }
    let graph = dev.stream.end_capture(CUgraphInstantiate_flags(0));
    captured?;
    let graph = graph?
        .ok_or_else(|| CudaError::Setup("the CUDA graph capture recorded no work".to_string()))?;
    // Moves the graph's resources to the device now, so the first timed replay pays no setup.
    graph.upload()?;
    Ok(Graph(graph))
}

/// Times `iters` iterations of a captured graph of `per_graph` iterations: whole replays, each
/// between its own events (and after an L2 flush in cold mode, as an eager iteration), scaled
/// to `iters` iterations by [`time_of_iters`].
pub fn time_replays(
    timer: &mut EventTimer,
    dev: &Device,
    cache: Cache,
    graph: &Graph,
    per_graph: u64,
    iters: u64,
) -> Result<f64, CudaError> {
    let n = replays(iters, per_graph);
    let ns = timer.time(dev, cache, n, |_| graph.launch())?;
    Ok(time_of_iters(ns, iters, n, per_graph))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(Mode::Graph.as_str(), "graph");
        assert_eq!(Mode::ALL.map(Mode::as_str), ["eager", "graph"]);
    }
}
