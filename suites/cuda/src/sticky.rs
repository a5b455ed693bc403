//! Sticky CUDA errors: after an illegal address, a kernel assertion or another error of that
//! kind, every later CUDA call of the process fails (the context is lost). Such an error
//! becomes `BenchError::DeviceLost`, which ends the worker; the engine runs the remaining
//! benchmarks in a fresh one (`pitwall_pipeline`'s `device_lost`). Teardown after it must not
//! panic: cudarc's `CudaBlas` drop `unwrap()`s `cublasDestroy`, which fails on a lost context,
//! so handles whose drop may panic are held in [`LeakAfterSticky`] and leaked instead.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

/// Set once a sticky error was seen in this process.
static SEEN: AtomicBool = AtomicBool::new(false);

/// Whether `code` leaves the context unusable (CUDA's "sticky" errors).
pub fn is_sticky(code: CUresult) -> bool {
    use CUresult::*;
    matches!(
        code,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ECC_UNCORRECTABLE
    )
}

/// Records `e` when it is sticky; returns whether it was.
pub fn note(e: &DriverError) -> bool {
    let sticky = is_sticky(e.0);
    if sticky {
        SEEN.store(true, Ordering::SeqCst);
    }
    sticky
}

/// Whether this process has seen a sticky error.
pub fn seen() -> bool {
    SEEN.load(Ordering::SeqCst)
}

/// A value dropped normally unless a sticky error was seen, then leaked: its teardown would
/// call into a lost context (and cudarc's cuBLAS handle would panic), and the worker ends
/// right after anyway.
pub struct LeakAfterSticky<T>(ManuallyDrop<T>);

impl<T> LeakAfterSticky<T> {
    pub fn new(value: T) -> LeakAfterSticky<T> {
        LeakAfterSticky(ManuallyDrop::new(value))
    }
}

impl<T> Deref for LeakAfterSticky<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Drop for LeakAfterSticky<T> {
    fn drop(&mut self) {
        if !seen() {
            // SAFETY: dropped once, here; never used again.
            unsafe { ManuallyDrop::drop(&mut self.0) };
        }
    }
}

#[cfg(test)]
mod tests;
