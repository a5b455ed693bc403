//! Device memory for NCCL's buffers from `cuMemAlloc`, as nccl-tests allocates them (without
//! `-R`): not cudarc's stream-ordered pool (`cuMemAllocAsync`), whose memory a peer GPU may
//! only touch after `cuMemPoolSetAccess`, which NCCL ≤ 2.18's same-process direct mode does
//! (it writes into the peers' buffers). Each buffer is freed with `cuMemFree` in its context.
//! And where in them each iteration's collective works: shifted from iteration to iteration,
//! as nccl-tests shifts its offsets, so a small message does not run L2-hot.

use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaStream, DriverError, result};

/// The span the offsets shift over: beyond any L2 pitwall plans for (nccl-tests shifts over
/// its largest message).
pub(crate) const SHIFT_SPAN_BYTES: u64 = 256 << 20;

/// Iterations before the offsets of a collective whose larger buffer is `unit_bytes` (nccl-tests'
/// `totalnbytes`) wrap around: `SHIFT_SPAN_BYTES / unit_bytes`, at least 1.
fn steps(unit_bytes: u64) -> u64 {
    (SHIFT_SPAN_BYTES / unit_bytes.max(1)).max(1)
}

/// The byte offset of iteration `iter` in both buffers: `unit_bytes × (iter mod steps)`, as
/// nccl-tests' `shift`.
pub(crate) fn shift_bytes(iter: u64, unit_bytes: u64) -> u64 {
    unit_bytes * (iter % steps(unit_bytes))
}

/// Bytes each buffer needs for the shifted offsets: `steps × unit_bytes`.
pub(crate) fn span_bytes(unit_bytes: u64) -> u64 {
    steps(unit_bytes) * unit_bytes.max(1)
}

/// `bytes` of device memory on one GPU, from `cuMemAlloc`.
pub(crate) struct DeviceBuffer {
    ctx: Arc<CudaContext>,
    ptr: CUdeviceptr,
    bytes: usize,
}

impl DeviceBuffer {
    /// `bytes` (at least 1) of zeroed device memory in `ctx`, ready when this returns.
    pub fn zeroed(ctx: &Arc<CudaContext>, bytes: usize) -> Result<DeviceBuffer, DriverError> {
        ctx.bind_to_thread()?;
        let bytes = bytes.max(1);
        // SAFETY: a plain allocation in the current context; freed once, in `drop`.
        let ptr = unsafe { result::malloc_sync(bytes) }?;
        let buf = DeviceBuffer {
            ctx: Arc::clone(ctx),
            ptr,
            bytes,
        };
        // SAFETY: `bytes` bytes are allocated at `ptr`.
        unsafe { result::memset_d8_sync(ptr, 0, bytes) }?;
        ctx.synchronize()?;
        Ok(buf)
    }

    /// The device address.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Copies `data` to the start of the buffer, done when this returns.
    pub fn upload(&mut self, data: &[f32]) -> Result<(), DriverError> {
        assert!(
            std::mem::size_of_val(data) <= self.bytes,
            "upload past the buffer"
        );
        self.ctx.bind_to_thread()?;
        // SAFETY: the data fits the buffer (asserted); a synchronous copy.
        unsafe { result::memcpy_htod_sync(self.ptr, data) }?;
        self.ctx.synchronize()
    }

    /// The first `elements` f32s, after the work queued before this call is done.
    pub fn download(&self, elements: usize) -> Result<Vec<f32>, DriverError> {
        assert!(elements * 4 <= self.bytes, "download past the buffer");
        self.ctx.bind_to_thread()?;
        self.ctx.synchronize()?;
        let mut out = vec![0f32; elements];
        // SAFETY: `elements` f32s lie in the buffer (asserted); a synchronous copy.
        unsafe { result::memcpy_dtoh_sync(&mut out, self.ptr) }?;
        Ok(out)
    }

    /// Zeroes the buffer on `stream` (ordered with the collectives queued there).
    pub fn zero_on(&mut self, stream: &CudaStream) -> Result<(), DriverError> {
        // SAFETY: `bytes` bytes are allocated at `ptr`; `stream` belongs to its context.
        unsafe { result::memset_d8_async(self.ptr, 0, self.bytes, stream.cu_stream()) }
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // Its work is done: the rank synchronises its stream before it drops buffers.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by `cuMemAlloc` in this context, freed once.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 23, defect 11: each iteration works at another offset, as in nccl-tests, and the
    /// buffers hold every offset.
    #[test]
    fn offsets_shift_per_iteration_like_nccl_tests() {
        let small = 4096;
        assert_eq!(shift_bytes(0, small), 0);
        assert_eq!(shift_bytes(1, small), 4096);
        assert_eq!(shift_bytes(5, small), 5 * 4096);
        let steps = SHIFT_SPAN_BYTES / small;
        assert_eq!(shift_bytes(steps, small), 0, "wraps around");
        for unit in [4, 4096, 100 << 20, 256 << 20, 1 << 30] {
            for iter in [0, 1, 2, 63, 1 << 20] {
                assert!(
                    shift_bytes(iter, unit) + unit <= span_bytes(unit),
                    "{unit} {iter}"
                );
            }
        }
        // A message of the whole span or more never moves.
        assert_eq!(shift_bytes(1, 1 << 30), 0);
        assert_eq!(span_bytes(1 << 30), 1 << 30);
    }
}
