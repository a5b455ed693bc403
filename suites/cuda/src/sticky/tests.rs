//! Tests of the sticky-error registry.

use super::*;
use crate::error::CudaError;
use pitwall_schema::benchmark::BenchError;

/// Drops like cudarc's `CudaBlas` after a lost context.
struct PanicsOnDrop;
impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("cublasDestroy failed");
    }
}

/// Issue 23, defect 8: an illegal address ends the worker (`DeviceLost`) and nothing
/// panics while the benchmark's handles are dropped.
#[test]
fn a_sticky_error_loses_the_device_and_teardown_does_not_panic() {
    assert!(is_sticky(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
    assert!(!is_sticky(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
    // (Another driver error's message needs the driver to name it: not converted here.)
    let e: BenchError = CudaError::Driver(DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)).into();
    assert!(matches!(e, BenchError::DeviceLost(_)), "{e:?}");
    assert!(e.to_string().contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{e}");
    assert!(seen());
    drop(LeakAfterSticky::new(PanicsOnDrop));
}
