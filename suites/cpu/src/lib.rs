//! The CPU backend: real kernels, an MLP and a thread all-reduce, so every suite runs and is
//! tested on a machine without a GPU.

mod checks;
mod collective;
mod inference;
mod kernel;
mod mesh;
pub mod multi;

pub use collective::AllReduceBench;
pub use inference::MlpBench;
pub use kernel::{GemmBench, ReductionBench, StreamBench, StreamOp};

use pitwall_schema::backend::{Backend, BackendError, SuiteKind, SuiteOptions};
use pitwall_schema::benchmark::Benchmark;

/// The CPU backend.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn benchmarks(
        &self,
        kind: SuiteKind,
        options: &SuiteOptions,
    ) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
        Ok(match kind {
            SuiteKind::Kernel => kernel::suite(options),
            SuiteKind::Inference => inference::suite(options),
            SuiteKind::Collective => collective_suite(options)?,
            SuiteKind::CudaKernels => {
                return Err(BackendError::Unavailable {
                    backend: "cuda",
                    reason: "a `cuda-kernels` suite runs on the CUDA backend only, and this run uses the CPU backend; hint: run on a machine with an NVIDIA GPU and CUDA 13, [suites] backend = \"auto\" or \"cuda\"".into(),
                });
            }
        })
    }
}

/// The collective suite in the layout the launcher's variables give: the thread ring in one
/// process, or the five collectives across processes driven by rank 0 (other ranks run
/// [`multi::follow`] instead of a suite).
fn collective_suite(options: &SuiteOptions) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
    let failed = |reason: String| BackendError::Failed {
        backend: "cpu",
        reason,
    };
    let layout = pitwall_rendezvous::Layout::from_env().map_err(|e| failed(e.to_string()))?;
    if !layout.is_multi_process() {
        return Ok(collective::suite(options));
    }
    if layout.rank != 0 {
        return Err(failed(format!(
            "rank {} follows rank 0 and runs no suite of its own (hint: run `pitwall run` on every rank; ranks other than 0 follow)",
            layout.rank
        )));
    }
    multi::suite(&layout, options).map_err(|e| failed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_cuda_kernels_are_skipped_with_why() {
        let err = CpuBackend
            .benchmarks(SuiteKind::CudaKernels, &SuiteOptions::default())
            .err()
            .unwrap();
        assert!(matches!(err, BackendError::Unavailable { .. }));
        assert!(
            err.to_string().starts_with(
                "cuda backend unavailable: a `cuda-kernels` suite runs on the CUDA backend only"
            ),
            "{err}"
        );
    }

    #[test]
    fn every_suite_runs_once_within_a_small_cap() {
        let options = SuiteOptions {
            max_bytes: Some(1 << 20),
            ..Default::default()
        };
        for kind in SuiteKind::ALL {
            let mut benches = CpuBackend.benchmarks(kind, &options).unwrap();
            assert!(!benches.is_empty(), "{} is empty", kind.as_str());
            for bench in &mut benches {
                let name = bench.id().display();
                let ns = bench.run(1).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(ns > 0.0, "{name} took {ns} ns");
                assert!(!bench.metrics().is_empty(), "{name} has no metrics");
            }
        }
    }
}
