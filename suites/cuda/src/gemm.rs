//! cuBLAS GEMMs of the CUDA `kernel` suite: square C = A·B in f32, tf32 (f32 storage, tensor
//! cores), bf16 and f16 (f32 accumulation), inputs random on the device, checked on sampled
//! output elements against host dot products before anything is timed, reported in TFLOP/s
//! (2·n³ per iteration, `pitwall_schema::work::gemm_flops`).

use std::sync::Arc;

use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use cudarc::cublas::{CudaBlas, result as blas};
use cudarc::driver::{CudaSlice, DevicePtr};

use crate::device::{Device, EventTimer};
use crate::error::CudaError;
use crate::memory::SETS;
use crate::sticky::LeakAfterSticky;
use crate::timing::Cache;
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::check::{check_gemm_sampled, sample_positions};
use pitwall_schema::schema::Unit;
use pitwall_schema::work::{Dtype, gemm_flops, gemm_footprint_bytes};

/// Square sizes measured, up to 8192 (capped by `max_bytes`).
pub const SIZES: [usize; 3] = [1024, 4096, 8192];

/// The GEMM types measured.
pub const DTYPES: [Dtype; 4] = [Dtype::F32, Dtype::Tf32, Dtype::Bf16, Dtype::F16];

/// Output elements compared with host dot products.
pub const CHECKED_ELEMENTS: usize = 256;

/// How cuBLAS is asked for one type: storage type and compute type.
fn blas_types(dtype: Dtype) -> Option<(cudaDataType, cublasComputeType_t)> {
    Some(match dtype {
        Dtype::F32 => (
            cudaDataType::CUDA_R_32F,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
        ),
        Dtype::Tf32 => (
            cudaDataType::CUDA_R_32F,
            cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
        ),
        Dtype::Bf16 => (
            cudaDataType::CUDA_R_16BF,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
        ),
        Dtype::F16 => (
            cudaDataType::CUDA_R_16F,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
        ),
        Dtype::F64 | Dtype::Fp8E4m3 | Dtype::Fp8E5m2 => return None,
    })
}

/// The `random_init.cu` kernel filling a buffer of `dtype`.
fn init_entry(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Bf16 => "random_uniform_bf16",
        Dtype::F16 => "random_uniform_f16",
        _ => "random_uniform_f32",
    }
}

/// Element `i` of a downloaded buffer of `dtype` (decoded on access: the check reads a few
/// rows and columns of matrices of up to 256 MiB).
fn host_value(bytes: &[u8], dtype: Dtype, i: usize) -> f64 {
    match dtype {
        Dtype::Bf16 => crate::half16::bf16_to_f64(crate::half16::le_u16_at(bytes, i)),
        Dtype::F16 => crate::half16::f16_to_f64(crate::half16::le_u16_at(bytes, i)),
        _ => {
            let b = &bytes[4 * i..4 * i + 4];
            f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
    }
}

struct State {
    /// Leaked after a sticky error: cudarc's drop would panic on the lost context.
    blas: LeakAfterSticky<CudaBlas>,
    /// `sets[s] = [A, B, C]`, row-major n×n each.
    sets: Vec<[CudaSlice<u8>; 3]>,
    timer: EventTimer,
}

/// C = A·B on square n×n matrices of one type, through cublasGemmEx.
pub struct GemmBench {
    dev: Arc<Device>,
    dtype: Dtype,
    n: usize,
    cache: Cache,
    state: Option<State>,
}

impl GemmBench {
    pub fn new(dev: Arc<Device>, dtype: Dtype, n: usize, cache: Cache) -> GemmBench {
        GemmBench {
            dev,
            dtype,
            n,
            cache,
            state: None,
        }
    }

    /// Device memory of every buffer set.
    pub fn footprint_bytes(dtype: Dtype, n: usize) -> u64 {
        let n = n as u64;
        SETS as u64 * gemm_footprint_bytes(n, n, n, dtype, dtype)
    }

    fn setup(&self) -> Result<State, CudaError> {
        let dev = &self.dev;
        let elements = (self.n * self.n) as u64;
        let bytes = (elements * self.dtype.size_bytes()) as usize;
        let mut sets = Vec::with_capacity(SETS);
        for s in 0..SETS as u64 {
            // SAFETY: A and B are filled below; C is written by every GEMM (beta = 0).
            let mut a = unsafe { dev.stream.alloc::<u8>(bytes) }?;
            let mut b = unsafe { dev.stream.alloc::<u8>(bytes) }?;
            let c = unsafe { dev.stream.alloc::<u8>(bytes) }?;
            let entry = init_entry(self.dtype);
            dev.fill_uniform(entry, &mut a, elements, 0xA000 + s)?;
            dev.fill_uniform(entry, &mut b, elements, 0xB000 + s)?;
            sets.push([a, b, c]);
        }
        let blas = LeakAfterSticky::new(CudaBlas::new(dev.stream.clone())?);
        Ok(State {
            blas,
            sets,
            timer: EventTimer::new(),
        })
    }

    /// Enqueues C = A·B of buffer set `set`. cuBLAS is column-major: row-major C = A·B is
    /// column-major Cᵀ = Bᵀ·Aᵀ, so B is passed first.
    fn enqueue(&self, state: &mut State, set: usize) -> Result<(), CudaError> {
        let (data, compute) = blas_types(self.dtype).ok_or_else(|| {
            CudaError::Setup(format!("no cuBLAS GEMM for {}", self.dtype.as_str()))
        })?;
        let n = i32::try_from(self.n)
            .map_err(|_| CudaError::Setup(format!("n = {} is too large", self.n)))?;
        let stream = &self.dev.stream;
        let [a, b, c] = &mut state.sets[set];
        let (a, _a) = a.device_ptr(stream);
        let (b, _b) = b.device_ptr(stream);
        let (c, _c) = c.device_ptr(stream);
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: A, B and C hold n×n elements of `data` on this context; the scale type of a
        // 32F compute type is f32, as alpha and beta are.
        unsafe {
            blas::gemm_ex(
                *state.blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                n,
                n,
                n,
                (&alpha as *const f32).cast(),
                b as *const std::ffi::c_void,
                data,
                n,
                a as *const std::ffi::c_void,
                data,
                n,
                (&beta as *const f32).cast(),
                c as *mut std::ffi::c_void,
                data,
                n,
                compute,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }?;
        Ok(())
    }

    /// After one GEMM on `set` (stream synchronised): sampled elements of C against host dot
    /// products of the same A and B, under the type's tolerance (`pitwall_schema::check`).
    fn validate(&self, state: &State, set: usize) -> Result<(), BenchError> {
        let stream = &self.dev.stream;
        let down = |buf: &CudaSlice<u8>| -> Result<Vec<u8>, BenchError> {
            let bytes = stream.clone_dtoh(buf).map_err(CudaError::from)?;
            stream.synchronize().map_err(CudaError::from)?;
            Ok(bytes)
        };
        let [a, b, c] = &state.sets[set];
        let (a, b, c) = (down(a)?, down(b)?, down(c)?);
        let (n, dtype) = (self.n, self.dtype);
        let positions = sample_positions(n, n, CHECKED_ELEMENTS, n as u64 ^ set as u64);
        let verdict = check_gemm_sampled(
            (n, n, n),
            self.dtype,
            &positions,
            |i, l| host_value(&a, dtype, i * n + l),
            |l, j| host_value(&b, dtype, l * n + j),
            |i, j| host_value(&c, dtype, i * n + j),
        );
        if verdict.passed() {
            Ok(())
        } else {
            Err(BenchError::Validation(
                verdict.describe(&self.id().display()),
            ))
        }
    }
}

impl Benchmark for GemmBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new(
            "cuda_gemm",
            &[
                ("dtype", self.dtype.as_str().to_string()),
                ("n", self.n.to_string()),
            ],
        )
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        let n = self.n as u64;
        let flops = gemm_flops(n, n, n);
        let mut m = vec![MetricSpec::rate(
            "throughput",
            Unit::TFLOP_PER_S,
            flops,
            1e12,
        )];
        // The card's datasheet peak for this type, where pitwall knows the card.
        if let Some(peak) = crate::peaks::of(&self.dev.name).and_then(|p| p.tflops(self.dtype)) {
            m.push(crate::peaks::throughput_of_peak(flops, peak));
        }
        m
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        // The raw driver and cuBLAS calls use the thread's current context.
        self.dev.ctx.bind_to_thread().map_err(CudaError::from)?;
        if self.state.is_none() {
            let mut state = self.setup()?;
            // Warm-up (cuBLAS picks and loads its kernels), then the check of every set.
            for set in 0..SETS {
                self.enqueue(&mut state, set)?;
            }
            self.dev.stream.synchronize().map_err(CudaError::from)?;
            for set in 0..SETS {
                self.validate(&state, set)?;
            }
            self.state = Some(state);
        }
        let mut state = self.state.take().expect("set above");
        let mut timer = std::mem::take(&mut state.timer);
        let dev = self.dev.clone();
        let timed = timer.time(&dev, self.cache, iters, |i| {
            self.enqueue(&mut state, (i % SETS as u64) as usize)
        });
        state.timer = timer;
        self.state = Some(state);
        Ok(timed?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_values_decode_each_storage_type() {
        let bf16: Vec<u8> = [1.0f32, 3.0]
            .iter()
            .flat_map(|&x| crate::half16::bf16_from_f32(x).to_le_bytes())
            .collect();
        let f16 = crate::half16::f16_from_f64(-0.5).to_le_bytes();
        let f32s: Vec<u8> = [0.25f32, 2.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(host_value(&bf16, Dtype::Bf16, 1), 3.0);
        assert_eq!(host_value(&f16, Dtype::F16, 0), -0.5);
        assert_eq!(host_value(&f32s, Dtype::Tf32, 0), 0.25);
        assert_eq!(host_value(&f32s, Dtype::F32, 1), 2.0);
    }

    #[test]
    fn every_measured_type_has_a_cublas_mapping_and_footprint() {
        for dtype in DTYPES {
            assert!(blas_types(dtype).is_some(), "{}", dtype.as_str());
        }
        assert!(blas_types(Dtype::Fp8E4m3).is_none());
        assert_eq!(
            GemmBench::footprint_bytes(Dtype::F32, 8192),
            2 * 3 * 8192 * 8192 * 4
        );
        assert_eq!(
            GemmBench::footprint_bytes(Dtype::Bf16, 1024),
            2 * 3 * 1024 * 1024 * 2
        );
    }
}
