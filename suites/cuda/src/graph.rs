//! CUDA-graph replay for launch-bound benchmarks: the work of N iterations is captured once
//! from the benchmark's stream (`cuStreamBeginCapture`/`cuStreamEndCapture`, then
//! `cuGraphInstantiate` and `cuGraphUpload`, through cudarc) and every timed unit is one
//! `cuGraphLaunch` of it, so the CPU cost of N launches becomes one. The result records which
//! way it was launched in its `mode` parameter (`eager` or `graph`), so the two never mix in one
//! history series. How replays are timed is `timing`'s (`Work::Graph`).

use std::sync::Arc;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaGraph, CudaStream};

use crate::error::CudaError;

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
/// `enqueue` must only enqueue work on `stream` (no synchronisation, no allocation: neither
/// is allowed while capturing). A failed capture is ended before the error is returned, so the
/// stream stays usable.
pub fn capture(
    stream: &Arc<CudaStream>,
    per_graph: u64,
    mut enqueue: impl FnMut(u64) -> Result<(), CudaError>,
) -> Result<Graph, CudaError> {
    // Thread-local: other threads' CUDA calls are not affected by this thread's capture.
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    let mut captured = Ok(());
    for i in 0..per_graph {
        captured = enqueue(i);
        if captured.is_err() {
            break;
        }
    }
    let graph = stream.end_capture(CUgraphInstantiate_flags(0));
    captured?;
    let graph = graph?
        .ok_or_else(|| CudaError::Setup("the CUDA graph capture recorded no work".to_string()))?;
    // Moves the graph's resources to the device now, so the first timed replay pays no setup.
    graph.upload()?;
    Ok(Graph(graph))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_name_their_parameter_value() {
        assert_eq!(Mode::Graph.as_str(), "graph");
        assert_eq!(Mode::ALL.map(Mode::as_str), ["eager", "graph"]);
    }
}
