//! GEMMs shaped like the linear layers of low-batch inference, in the `kernel` suite beside the
//! square ones: Y (m×n) = X (m×k)·Wᵀ with the weight stored n×k (a linear layer's [out, in]),
//! through cuBLASLt in its "TN" form, the one its fp8 kernels require. Skinny shapes (m = 1 to
//! 64 tokens, n = k = 4096 or 8192) in bf16 and fp8 e4m3, timed in units of 32 GEMMs launched
//! eagerly or as one CUDA-graph replay, rotating over enough buffer sets that no GEMM finds its
//! weights in L2; square fp8 GEMMs (n = 4096, 8192). fp8 takes e4m3 inputs with per-tensor
//! scale factors (cuBLASLt's A and B scale pointers) and gives bf16, accumulating in f32, with
//! and without fast accumulation; it needs compute capability 8.9 or newer. Checked on 256
//! sampled outputs before timing.

use std::sync::Arc;

use cudarc::cublaslt::sys::cudaDataType;
use cudarc::driver::{CudaSlice, DevicePtr};

use crate::device::{Device, EventTimer};
use crate::error::CudaError;
use crate::fp8::decode_e4m3;
use crate::gemm::CHECKED_ELEMENTS;
use crate::graph::{self, GRAPH_ITERATIONS, Graph, Mode};
use crate::memory::{PLAN_L2_BYTES, SETS};
use crate::timing::Cache;
use crate::timing::{Start, Timing, Work};
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::check::{check_gemm_sampled, sample_positions};
use pitwall_schema::schema::Unit;
use pitwall_schema::work::{Dtype, gemm_flops, gemm_footprint_bytes};

mod device_lt;
use device_lt::LtMatmul;

/// Tokens of the skinny GEMMs: a decode step's batch sizes.
pub const SKINNY_M: [usize; 5] = [1, 8, 16, 32, 64];
/// n = k of the skinny GEMMs: the hidden sizes of 7B- and 70B-class models.
pub const SKINNY_NK: [usize; 2] = [4096, 8192];
/// Square fp8 GEMMs.
pub const FP8_SQUARE: [usize; 2] = [4096, 8192];
/// The input types of the skinny GEMMs.
pub const SKINNY_DTYPES: [Dtype; 2] = [Dtype::Bf16, Dtype::Fp8E4m3];
/// fp8 tensor cores: Ada (8.9) and Hopper (9.0) on.
pub const FP8_MIN_SM: u32 = 89;
/// Every GEMM here writes bf16.
pub const OUT: Dtype = Dtype::Bf16;
/// The fp8 per-tensor scales of X and W: powers of two, so the host reference is exact.
pub const FP8_SCALE_X: f32 = 0.5;
pub const FP8_SCALE_W: f32 = 0.25;
/// The cuBLASLt workspace (NVIDIA's recommendation for Hopper), counted in the footprint.
pub const LT_WORKSPACE_BYTES: u64 = 32 << 20;

/// Square or inference-shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `cuda_gemm[dtype=fp8_e4m3,n,out=bf16]`, beside the square GEMMs of `gemm.rs`.
    Square,
    /// `cuda_gemm_skinny[dtype,k,m,mode,n,out]`.
    Skinny,
}

/// One linear-layer GEMM of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinearPlanned {
    pub family: Family,
    pub dtype: Dtype,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub mode: Mode,
    /// fp8 only: cuBLASLt's `CUBLASLT_MATMUL_DESC_FAST_ACCUM` (the `fast_accum` parameter,
    /// `on` or `off`), which on Hopper skips the periodic promotion of partial sums to full
    /// f32 accumulators; always `false` for bf16.
    pub fast_accum: bool,
}

impl LinearPlanned {
    pub fn id(self) -> BenchmarkId {
        let (dtype, out) = (self.dtype.as_str().to_string(), OUT.as_str().to_string());
        let mut params = vec![("dtype", dtype), ("n", self.n.to_string()), ("out", out)];
        if self.dtype == Dtype::Fp8E4m3 {
            let on = if self.fast_accum { "on" } else { "off" };
            params.push(("fast_accum", on.to_string()));
        }
        match self.family {
            Family::Square => BenchmarkId::new("cuda_gemm", &params),
            Family::Skinny => {
                params.push(("m", self.m.to_string()));
                params.push(("k", self.k.to_string()));
                params.push(("mode", self.mode.as_str().to_string()));
                BenchmarkId::new("cuda_gemm_skinny", &params)
            }
        }
    }

    /// 2·m·n·k (`work::gemm_flops`).
    pub fn flops(self) -> f64 {
        gemm_flops(self.m as u64, self.n as u64, self.k as u64)
    }

    /// Each operand read once and the output written once (`work::gemm_footprint_bytes`): the
    /// effective bytes of a GEMM that is memory-bound at these sizes.
    pub fn moved_bytes(self) -> u64 {
        let (m, n, k) = (self.m as u64, self.n as u64, self.k as u64);
        gemm_footprint_bytes(m, n, k, self.dtype, OUT)
    }

    /// Device memory: every buffer set (as many as a card with [`PLAN_L2_BYTES`] of L2
    /// needs, an upper bound for the plan's `max_bytes` cap), the workspace and the two scales.
    pub fn footprint_bytes(self) -> u64 {
        self.buffer_sets(PLAN_L2_BYTES) as u64 * self.moved_bytes() + LT_WORKSPACE_BYTES + 8
    }

    /// The compute capability (as `sm_XY`) it needs.
    pub fn min_sm(self) -> u32 {
        if self.dtype == Dtype::Fp8E4m3 {
            FP8_MIN_SM
        } else {
            0
        }
    }

    /// Launches per graph replay.
    pub fn per_graph(self) -> u64 {
        match self.mode {
            Mode::Eager => 1,
            Mode::Graph => GRAPH_ITERATIONS,
        }
    }

    /// What one timed region holds: 32 GEMMs (`GRAPH_ITERATIONS`), enqueued one by one or as
    /// one graph replay, after one flush in cold mode; eager and graph differ by launch cost
    /// only. The square GEMMs, long enough on their own, are timed one by one.
    pub fn timing(self) -> Timing {
        if self.family == Family::Square {
            return Timing::PER_ITERATION;
        }
        let work = match self.mode {
            Mode::Eager => Work::Eager {
                per_unit: GRAPH_ITERATIONS,
            },
            Mode::Graph => Work::Graph {
                per_graph: GRAPH_ITERATIONS,
            },
        };
        Timing {
            work,
            start: Start::Queued,
        }
    }

    /// Bytes of the weight matrix W (n×k).
    pub fn weight_bytes(self) -> u64 {
        (self.n * self.k) as u64 * self.dtype.size_bytes()
    }

    /// Buffer sets the GEMMs rotate over on a card with `l2_bytes` of L2: ⌈2·L2 / weight
    /// bytes⌉ + 1, at least 2, so between two reads of the same weights more than twice the
    /// L2 of other weights is read and no GEMM of a timed unit finds its weights in L2. The
    /// square GEMMs, compute-bound, use two.
    pub fn buffer_sets(self, l2_bytes: u64) -> usize {
        if self.family == Family::Square {
            return SETS;
        }
        let sets = (2 * l2_bytes).div_ceil(self.weight_bytes().max(1)) + 1;
        sets.max(SETS as u64) as usize
    }
}

/// The fast-accumulation settings offered for `dtype`: both for fp8, none (off) for bf16.
fn accumulations(dtype: Dtype) -> &'static [bool] {
    if dtype == Dtype::Fp8E4m3 {
        &[false, true]
    } else {
        &[false]
    }
}

/// The square fp8 GEMMs, then the skinny ones in both types and both modes; every fp8 GEMM
/// without and with fast accumulation.
pub fn plan() -> Vec<LinearPlanned> {
    let mut out = Vec::new();
    for n in FP8_SQUARE {
        for &fast_accum in accumulations(Dtype::Fp8E4m3) {
            out.push(LinearPlanned {
                family: Family::Square,
                dtype: Dtype::Fp8E4m3,
                m: n,
                n,
                k: n,
                mode: Mode::Eager,
                fast_accum,
            });
        }
    }
    for dtype in SKINNY_DTYPES {
        for nk in SKINNY_NK {
            for m in SKINNY_M {
                for mode in Mode::ALL {
                    for &fast_accum in accumulations(dtype) {
                        out.push(LinearPlanned {
                            family: Family::Skinny,
                            dtype,
                            m,
                            n: nk,
                            k: nk,
                            mode,
                            fast_accum,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The storage type as cuBLASLt names it, and the initialiser of `random_init.cu`.
fn lt_type(dtype: Dtype) -> Option<(cudaDataType, &'static str)> {
    match dtype {
        Dtype::Bf16 => Some((cudaDataType::CUDA_R_16BF, "random_uniform_bf16")),
        Dtype::Fp8E4m3 => Some((cudaDataType::CUDA_R_8F_E4M3, "random_uniform_fp8_e4m3")),
        _ => None,
    }
}

/// Element `i` of a downloaded buffer of `dtype`, times its scale (1 for bf16).
fn host_value(bytes: &[u8], dtype: Dtype, scale: f32, i: usize) -> f64 {
    match dtype {
        Dtype::Fp8E4m3 => decode_e4m3(bytes[i]) * f64::from(scale),
        _ => crate::half16::bf16_to_f64(crate::half16::le_u16_at(bytes, i)),
    }
}

struct State {
    lt: LtMatmul,
    /// `sets[s] = [X, W, Y]`.
    sets: Vec<[CudaSlice<u8>; 3]>,
    graph: Option<Graph>,
    timer: EventTimer,
}

/// One GEMM of [`plan`] on a device.
pub struct LinearBench {
    dev: Arc<Device>,
    planned: LinearPlanned,
    cache: Cache,
    state: Option<State>,
}

impl LinearBench {
    pub fn new(dev: Arc<Device>, planned: LinearPlanned, cache: Cache) -> LinearBench {
        LinearBench {
            dev,
            planned,
            cache,
            state: None,
        }
    }

    fn setup(&self) -> Result<State, CudaError> {
        let (dev, p) = (&self.dev, self.planned);
        let (data, init) = lt_type(p.dtype).ok_or_else(|| {
            CudaError::Setup(format!("no cuBLASLt GEMM for {}", p.dtype.as_str()))
        })?;
        let size = p.dtype.size_bytes() as usize;
        let count = p.buffer_sets(dev.l2_bytes);
        let mut sets = Vec::with_capacity(count);
        for s in 0..count as u64 {
            // SAFETY: X and W are filled below; Y is written by every GEMM (β = 0).
            let mut x = unsafe { dev.stream.alloc::<u8>(p.m * p.k * size) }?;
            let mut w = unsafe { dev.stream.alloc::<u8>(p.n * p.k * size) }?;
            let y = unsafe {
                dev.stream
                    .alloc::<u8>(p.m * p.n * OUT.size_bytes() as usize)
            }?;
            dev.fill_uniform(init, &mut x, (p.m * p.k) as u64, 0xC000 + s)?;
            dev.fill_uniform(init, &mut w, (p.n * p.k) as u64, 0xD000 + s)?;
            sets.push([x, w, y]);
        }
        let scales = (p.dtype == Dtype::Fp8E4m3).then_some((FP8_SCALE_W, FP8_SCALE_X));
        let lt = LtMatmul::new(dev, data, (p.m, p.n, p.k), scales, p.fast_accum)
            .map_err(|e| CudaError::Setup(format!("{}: {e}", p.id().display())))?;
        Ok(State {
            lt,
            sets,
            graph: None,
            timer: EventTimer::new(),
        })
    }

    fn enqueue(&self, state: &State, set: usize) -> Result<(), CudaError> {
        let stream = &self.dev.stream;
        let [x, w, y] = &state.sets[set];
        let (x, _x) = x.device_ptr(stream);
        let (w, _w) = w.device_ptr(stream);
        let (y, _y) = y.device_ptr(stream);
        state.lt.enqueue(&self.dev, w, x, y)
    }

    /// After a GEMM on `set` (stream synchronised): sampled elements of Y against host dot
    /// products of the same (scaled) inputs, under the input type's rule.
    fn validate(&self, state: &State, set: usize, when: &str) -> Result<(), BenchError> {
        let stream = &self.dev.stream;
        let down = |buf: &CudaSlice<u8>| -> Result<Vec<u8>, BenchError> {
            let bytes = stream.clone_dtoh(buf).map_err(CudaError::from)?;
            stream.synchronize().map_err(CudaError::from)?;
            Ok(bytes)
        };
        let [x, w, y] = &state.sets[set];
        let (x, w, y) = (down(x)?, down(w)?, down(y)?);
        let p = self.planned;
        let (sx, sw) = (FP8_SCALE_X, FP8_SCALE_W);
        let positions =
            sample_positions(p.m, p.n, CHECKED_ELEMENTS, (p.m * p.n) as u64 ^ set as u64);
        let verdict = check_gemm_sampled(
            (p.m, p.n, p.k),
            p.dtype,
            &positions,
            |i, l| host_value(&x, p.dtype, sx, i * p.k + l),
            |l, j| host_value(&w, p.dtype, sw, j * p.k + l),
            |i, j| host_value(&y, OUT, 1.0, i * p.n + j),
        );
        if verdict.passed() {
            Ok(())
        } else {
            let what = format!("{} ({when})", self.id().display());
            Err(BenchError::Validation(verdict.describe(&what)))
        }
    }

    /// Buffers, a checked GEMM on every set, and in graph mode the captured graph, checked on
    /// a replay into zeroed outputs.
    fn prepare(&self) -> Result<State, BenchError> {
        let mut state = self.setup()?;
        let stream = &self.dev.stream;
        let count = state.sets.len();
        for set in 0..count {
            self.enqueue(&state, set)?;
        }
        stream.synchronize().map_err(CudaError::from)?;
        for set in 0..count {
            self.validate(&state, set, "eager")?;
        }
        if self.planned.mode == Mode::Graph {
            let per_graph = self.planned.per_graph();
            let graph = graph::capture(&self.dev.stream, per_graph, |i| {
                self.enqueue(&state, (i % count as u64) as usize)
            })?;
            for [_, _, y] in &mut state.sets {
                stream.memset_zeros(y).map_err(CudaError::from)?;
            }
            graph.launch()?;
            stream.synchronize().map_err(CudaError::from)?;
            for set in 0..count {
                self.validate(&state, set, "graph replay")?;
            }
            state.graph = Some(graph);
        }
        Ok(state)
    }
}

impl Benchmark for LinearBench {
    fn id(&self) -> BenchmarkId {
        self.planned.id()
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        let mut m = metrics(self.planned);
        m.extend(peak_metrics(self.planned, crate::peaks::of(&self.dev.name)));
        m
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        self.dev.ctx.bind_to_thread().map_err(CudaError::from)?;
        if self.state.is_none() {
            self.state = Some(self.prepare()?);
        }
        let mut state = self.state.take().expect("set above");
        let mut timer = std::mem::take(&mut state.timer);
        let dev = self.dev.clone();
        let (timing, count) = (self.planned.timing(), state.sets.len() as u64);
        let timed = timer.run(&dev, self.cache, timing, state.graph.as_ref(), iters, |i| {
            self.enqueue(&state, (i % count) as usize)
        });
        state.timer = timer;
        self.state = Some(state);
        Ok(timed?)
    }
}

/// TFLOP/s first (as `cuda_gemm`), then the effective bandwidth in GB/s, the ceiling that
/// matters for skinny shapes.
/// The percentages of the card's datasheet peaks (`peaks`), where pitwall knows the card:
/// of its tensor-core peak for the inputs' type, and of its HBM bandwidth (the skinny GEMMs of
/// low-batch inference are bound by reading the weights).
pub fn peak_metrics(p: LinearPlanned, peaks: Option<crate::peaks::Peaks>) -> Vec<MetricSpec> {
    let Some(peaks) = peaks else {
        return Vec::new();
    };
    let mut m = Vec::new();
    if let Some(tflops) = peaks.tflops(p.dtype) {
        m.push(crate::peaks::throughput_of_peak(p.flops(), tflops));
    }
    m.push(crate::peaks::bandwidth_of_peak(
        p.moved_bytes() as f64,
        peaks.hbm_gb_per_s,
    ));
    m
}

pub fn metrics(p: LinearPlanned) -> Vec<MetricSpec> {
    vec![
        MetricSpec::rate("throughput", Unit::TFLOP_PER_S, p.flops(), 1e12),
        MetricSpec::rate("bandwidth", Unit::GB_PER_S, p.moved_bytes() as f64, 1e9),
    ]
}

#[cfg(test)]
mod tests;
