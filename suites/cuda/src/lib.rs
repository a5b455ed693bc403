//! The CUDA backend: built-in suites on NVIDIA GPUs through cudarc, every CUDA library loaded at
//! run time, so the same binary builds and runs (CPU suites only) on a machine without CUDA.

// Paths inside this crate name the contracts as `crate::backend`, `crate::benchmark`, `crate::schema`.
use pitwall_schema::{backend, benchmark, check, schema, work};

pub mod device;
pub mod gemm;
pub mod kernels;
pub mod memory;
pub mod probe;
pub mod rows;
pub mod suite;
pub mod timing;

pub use probe::{CudaInfo, CudaSystem, SystemCuda, probe_with};

use crate::backend::{Backend, BackendError, SuiteKind, SuiteOptions};
use crate::benchmark::Benchmark;

/// The CUDA backend, once [`CudaBackend::probe`] found a driver, a device and the libraries.
/// It holds no CUDA context: the probe runs in the parent pitwall, the benchmarks in its
/// `__worker` processes, each of which creates its own context when asked for a suite.
#[derive(Debug, Clone)]
pub struct CudaBackend {
    info: CudaInfo,
}

impl CudaBackend {
    /// The backend, or `BackendError::Unavailable` with a short reason (`no CUDA driver`,
    /// `no CUDA device`, …). Never panics, also without any CUDA library on the machine.
    pub fn probe() -> Result<CudaBackend, BackendError> {
        probe_with(&SystemCuda).map(|info| CudaBackend { info })
    }

    /// What the probe found.
    pub fn info(&self) -> &CudaInfo {
        &self.info
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn benchmarks(
        &self,
        kind: SuiteKind,
        options: &SuiteOptions,
    ) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
        match kind {
            SuiteKind::Kernel => {
                let plan = suite::plan(options);
                // CUDA device 0 (after CUDA_VISIBLE_DEVICES), opened in the worker process.
                let dev = device::Device::open(0).map_err(|e| BackendError::Failed {
                    backend: "cuda",
                    reason: format!("cannot open CUDA device 0: {e}"),
                })?;
                Ok(suite::build(&dev, &plan, timing::Cache::Cold))
            }
            SuiteKind::Collective if !self.info.nccl => Err(probe::no_nccl()),
            SuiteKind::Inference | SuiteKind::Collective => Err(not_built(kind)),
        }
    }
}

/// A suite this pitwall has no CUDA implementation of yet: skipped with one line.
fn not_built(kind: SuiteKind) -> BackendError {
    BackendError::Unavailable {
        backend: "cuda",
        reason: format!(
            "the CUDA `{}` suite is not implemented yet; hint: set [suites] backend = \"cpu\" to run the CPU one",
            kind.as_str()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_without_a_driver_is_unavailable_not_a_panic() {
        // SAFETY: only tries to dlopen the driver library.
        if unsafe { cudarc::driver::sys::is_culib_present() } {
            eprintln!("skipped: this machine has a CUDA driver");
            return;
        }
        let err = CudaBackend::probe().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cuda backend unavailable: no CUDA driver; hint:"),
            "{err}"
        );
    }
}
