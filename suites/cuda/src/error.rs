//! How a CUDA benchmark fails: every driver, NVRTC and cuBLAS return code becomes a
//! `CudaError` that keeps the library's own error, and a sticky one becomes
//! `BenchError::DeviceLost` (`sticky`). Every module that talks to the device returns it.

use cudarc::cublas::result::CublasError;
use cudarc::driver::DriverError;

use crate::kernels::KernelError;
use pitwall_schema::benchmark::BenchError;

/// Why a CUDA benchmark could not run; each keeps the library's own error.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    #[error("CUDA driver: {0}")]
    Driver(#[from] DriverError),
    #[error("cuBLAS: {0}")]
    Cublas(#[from] CublasError),
    #[error("cuBLASLt: {0}")]
    CublasLt(#[from] cudarc::cublaslt::result::CublasError),
    #[error(transparent)]
    Kernel(#[from] KernelError),
    #[error("{0}")]
    Setup(String),
}

impl From<CudaError> for BenchError {
    fn from(e: CudaError) -> BenchError {
        match e {
            CudaError::Setup(m) => BenchError::Setup(m),
            // A sticky error: this process's context is lost (`sticky`).
            CudaError::Driver(d) if crate::sticky::note(&d) => {
                BenchError::DeviceLost(format!("CUDA driver: {:?}", d.0))
            }
            e => BenchError::Backend(e.to_string()),
        }
    }
}
