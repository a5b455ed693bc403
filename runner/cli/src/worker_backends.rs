//! The backends a `pitwall __worker` process may be asked for by name, CUDA probed only when
//! asked for.

use std::cell::OnceCell;

use pitwall_cpu::CpuBackend;
use pitwall_cuda::CudaBackend;
use pitwall_schema::Backend;
use pitwall_schema::backend::BackendError;

use super::suite_backend::short_reason;

/// The backends a `pitwall __worker` may be asked for by name (`Backend::name`), CUDA probed
/// only when asked for.
#[derive(Default)]
pub(super) struct WorkerBackends {
    cpu: CpuBackend,
    cuda: OnceCell<Result<CudaBackend, String>>,
}

impl WorkerBackends {
    pub(super) fn get(&self, name: &str) -> Result<&dyn Backend, BackendError> {
        let unavailable = |reason: String| BackendError::Unavailable {
            backend: "cuda",
            reason,
        };
        match name {
            "cuda" => match self
                .cuda
                .get_or_init(|| CudaBackend::probe().map_err(|e| short_reason(&e)))
            {
                Ok(cuda) => Ok(cuda),
                Err(reason) => Err(unavailable(reason.clone())),
            },
            "cpu" => Ok(&self.cpu),
            other => Err(BackendError::Failed {
                backend: "worker",
                reason: format!(
                    "the parent asked for backend `{other}`, which this pitwall does not have"
                ),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_worker_builds_the_backend_it_is_named() {
        let backends = super::WorkerBackends::default();
        assert_eq!(backends.get("cpu").unwrap().name(), "cpu");
        let e = backends.get("rocm").err().unwrap();
        assert!(e.to_string().contains("backend `rocm`"), "{e}");
        use pitwall_cuda::CudaSystem;
        if !pitwall_cuda::SystemCuda.driver_present() {
            let e = backends.get("cuda").err().unwrap();
            assert_eq!(e.to_string(), "cuda backend unavailable: no CUDA driver");
        }
    }
}
