//! One cuBLASLt matmul, set up once and enqueued many times: Y (m×n, row-major bf16) =
//! X (m×k)·Wᵀ with W n×k, which in cuBLASLt's column-major terms is D (n×m) = op(A)·B with
//! A = W as a k×n matrix transposed (`TRANSA = T`) and B = X as k×m (`TRANSB = N`): the "TN"
//! layout fp8 needs. f32 compute and scale types; for fp8 the per-tensor scales of A and B are
//! device pointers (`A_SCALE_POINTER`, `B_SCALE_POINTER`). The algorithm is cuBLASLt's first
//! heuristic choice within the workspace, picked once, so every timed GEMM runs the same one.

use std::ffi::c_void;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys::{
    self as ltsys, cublasComputeType_t, cublasLtMatmulAlgo_t,
    cublasLtMatmulDescAttributes_t as DescAttr, cublasLtMatmulPreferenceAttributes_t as PrefAttr,
    cudaDataType,
};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, DevicePtr};

use super::LT_WORKSPACE_BYTES;
use crate::device::Device;
use crate::error::CudaError;

/// The handle, descriptors, chosen algorithm, workspace and scales of one GEMM shape.
pub struct LtMatmul {
    handle: ltsys::cublasLtHandle_t,
    desc: ltsys::cublasLtMatmulDesc_t,
    a: ltsys::cublasLtMatrixLayout_t,
    b: ltsys::cublasLtMatrixLayout_t,
    d: ltsys::cublasLtMatrixLayout_t,
    algo: cublasLtMatmulAlgo_t,
    workspace: CudaSlice<u8>,
    /// The scales of A (W) and of B (X) for fp8, each in its own allocation; unused otherwise.
    _scales: Option<[CudaSlice<f32>; 2]>,
}

// SAFETY: the cuBLASLt objects are plain handles owned by one benchmark and used by the thread
// running it; cuBLASLt handles may be used from any thread, one at a time (`LtMatmul` is not
// `Sync`).
unsafe impl Send for LtMatmul {}

impl Drop for LtMatmul {
    fn drop(&mut self) {
        // SAFETY: each non-null one was created in `new` (a failed `new` leaves the rest null)
        // and is destroyed only here; errors at teardown cannot be acted on.
        unsafe {
            for layout in [self.d, self.b, self.a] {
                if !layout.is_null() {
                    let _ = lt::destroy_matrix_layout(layout);
                }
            }
            if !self.desc.is_null() {
                let _ = lt::destroy_matmul_desc(self.desc);
            }
            let _ = lt::destroy_handle(self.handle);
        }
    }
}

fn set_desc<T>(
    desc: ltsys::cublasLtMatmulDesc_t,
    attr: DescAttr,
    value: &T,
) -> Result<(), CudaError> {
    // SAFETY: `desc` is live; `value` is the attribute's documented type and size.
    unsafe {
        lt::set_matmul_desc_attribute(
            desc,
            attr,
            (value as *const T).cast(),
            std::mem::size_of::<T>(),
        )
    }?;
    Ok(())
}

impl LtMatmul {
    /// Sets up Y (m×n) = X (m×k)·Wᵀ for inputs of `data`; `scales` = (scale of W, scale of X)
    /// for fp8; `fast_accum` sets `CUBLASLT_MATMUL_DESC_FAST_ACCUM`.
    pub fn new(
        dev: &Device,
        data: cudaDataType,
        (m, n, k): (usize, usize, usize),
        scales: Option<(f32, f32)>,
        fast_accum: bool,
    ) -> Result<LtMatmul, CudaError> {
        // SAFETY: cuBLASLt writes the workspace only inside its own kernels.
        let workspace = unsafe { dev.stream.alloc::<u8>(LT_WORKSPACE_BYTES as usize) }?;
        // Each scale in its own allocation: cuBLASLt 13.1 on an H200 (2026-12-04) answered
        // every fp8 matmul with NOT_SUPPORTED when B's scale sat 4 bytes after A's in one
        // buffer, while its heuristic had offered an algorithm (docs/PERFORMANCE.md "GPU").
        let scales = match scales {
            Some((w, x)) => Some([dev.stream.clone_htod(&[w])?, dev.stream.clone_htod(&[x])?]),
            None => None,
        };
        let handle = lt::create_handle()?;
        // From here on every created object is owned by `out`, so an error drops them.
        let mut out = LtMatmul {
            handle,
            desc: std::ptr::null_mut(),
            a: std::ptr::null_mut(),
            b: std::ptr::null_mut(),
            d: std::ptr::null_mut(),
            algo: cublasLtMatmulAlgo_t { data: [0; 8] },
            workspace,
            _scales: None,
        };
        out.desc = lt::create_matmul_desc(
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
            cudaDataType::CUDA_R_32F,
        )?;
        set_desc(
            out.desc,
            DescAttr::CUBLASLT_MATMUL_DESC_TRANSA,
            &(cublasOperation_t::CUBLAS_OP_T as i32),
        )?;
        set_desc(
            out.desc,
            DescAttr::CUBLASLT_MATMUL_DESC_TRANSB,
            &(cublasOperation_t::CUBLAS_OP_N as i32),
        )?;
        if let Some([w_scale, x_scale]) = &scales {
            let (a_scale, _a) = w_scale.device_ptr(&dev.stream);
            let (b_scale, _b) = x_scale.device_ptr(&dev.stream);
            set_desc(
                out.desc,
                DescAttr::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                &a_scale,
            )?;
            set_desc(
                out.desc,
                DescAttr::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                &b_scale,
            )?;
        }
        out._scales = scales;
        if fast_accum {
            // An int8_t, as cuBLASLt documents the attribute.
            set_desc(out.desc, DescAttr::CUBLASLT_MATMUL_DESC_FAST_ACCUM, &1i8)?;
        }
        let (m, n, k) = (m as u64, n as u64, k as u64);
        out.a = lt::create_matrix_layout(data, k, n, k as i64)?;
        out.b = lt::create_matrix_layout(data, k, m, k as i64)?;
        out.d = lt::create_matrix_layout(cudaDataType::CUDA_R_16BF, n, m, n as i64)?;
        let pref = lt::create_matmul_pref()?;
        let max_workspace = LT_WORKSPACE_BYTES;
        // SAFETY: `pref` is live; the attribute is a u64.
        let heuristic = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                PrefAttr::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&max_workspace as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
            .and_then(|()| {
                lt::get_matmul_algo_heuristic(
                    out.handle, out.desc, out.a, out.b, out.d, out.d, pref,
                )
            })
        };
        // SAFETY: created above, not used after.
        let _ = unsafe { lt::destroy_matmul_pref(pref) };
        out.algo = heuristic
            .map_err(|e| {
                CudaError::Setup(format!("cuBLASLt offers no algorithm for this GEMM: {e}"))
            })?
            .algo;
        Ok(out)
    }

    /// Enqueues Y = X·Wᵀ on the device's stream (α = 1, β = 0: C is D and never read).
    pub fn enqueue(
        &self,
        dev: &Device,
        w: CUdeviceptr,
        x: CUdeviceptr,
        y: CUdeviceptr,
    ) -> Result<(), CudaError> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (ws, _sync) = self.workspace.device_ptr(&dev.stream);
        // SAFETY: the descriptors describe W (k×n), X (k×m) and Y (n×m) as allocated by the
        // caller on this context; the algorithm was chosen for them; the workspace holds
        // LT_WORKSPACE_BYTES; α and β are f32, the scale type.
        unsafe {
            lt::matmul(
                self.handle,
                self.desc,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                w as *const c_void,
                self.a,
                x as *const c_void,
                self.b,
                y as *const c_void,
                self.d,
                y as *mut c_void,
                self.d,
                &self.algo,
                ws as *mut c_void,
                LT_WORKSPACE_BYTES as usize,
                dev.stream.cu_stream() as ltsys::cudaStream_t,
            )
        }?;
        Ok(())
    }
}
