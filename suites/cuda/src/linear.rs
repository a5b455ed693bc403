//! GEMMs shaped like the linear layers of low-batch inference, in the `kernel` suite beside the
//! square ones: Y (m×n) = X (m×k)·Wᵀ with the weight stored n×k (a linear layer's [out, in]),
//! through cuBLASLt in its "TN" form, the one its fp8 kernels require. Skinny shapes (m = 1 to
//! 64 tokens, n = k = 4096 or 8192) in bf16 and fp8 e4m3, launched eagerly or as CUDA-graph
//! replays of 32 GEMMs; square fp8 GEMMs (n = 4096, 8192). fp8 takes e4m3 inputs with per-tensor
//! scale factors (cuBLASLt's A and B scale pointers) and gives bf16, accumulating in f32; it
//! needs compute capability 8.9 or newer. Checked on 256 sampled outputs before timing.

use std::sync::Arc;

use cudarc::cublaslt::sys::cudaDataType;
use cudarc::driver::{CudaSlice, DevicePtr};

use crate::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use crate::check::{check_gemm_sampled, sample_positions};
use crate::device::{Cache, CudaError, Device, EventTimer};
use crate::fp8::decode_e4m3;
use crate::gemm::CHECKED_ELEMENTS;
use crate::graph::{self, GRAPH_ITERATIONS, Graph, Mode};
use crate::memory::SETS;
use crate::schema::Unit;
use crate::work::{Dtype, gemm_flops, gemm_footprint_bytes};

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
}

impl LinearPlanned {
    pub fn id(self) -> BenchmarkId {
        let (dtype, out) = (self.dtype.as_str().to_string(), OUT.as_str().to_string());
        match self.family {
            Family::Square => BenchmarkId::new(
                "cuda_gemm",
                &[("dtype", dtype), ("n", self.n.to_string()), ("out", out)],
            ),
            Family::Skinny => BenchmarkId::new(
                "cuda_gemm_skinny",
                &[
                    ("dtype", dtype),
                    ("m", self.m.to_string()),
                    ("n", self.n.to_string()),
                    ("k", self.k.to_string()),
                    ("mode", self.mode.as_str().to_string()),
                    ("out", out),
                ],
            ),
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

    /// Device memory: every buffer set, the workspace and the two scales.
    pub fn footprint_bytes(self) -> u64 {
        SETS as u64 * self.moved_bytes() + LT_WORKSPACE_BYTES + 8
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
}

/// The square fp8 GEMMs, then the skinny ones in both types and both modes.
pub fn plan() -> Vec<LinearPlanned> {
    let mut out = Vec::new();
    for n in FP8_SQUARE {
        out.push(LinearPlanned {
            family: Family::Square,
            dtype: Dtype::Fp8E4m3,
            m: n,
            n,
            k: n,
            mode: Mode::Eager,
        });
    }
    for dtype in SKINNY_DTYPES {
        for nk in SKINNY_NK {
            for m in SKINNY_M {
                for mode in Mode::ALL {
                    out.push(LinearPlanned {
                        family: Family::Skinny,
                        dtype,
                        m,
                        n: nk,
                        k: nk,
                        mode,
                    });
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
        let mut sets = Vec::with_capacity(SETS);
        for s in 0..SETS as u64 {
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
        let lt = LtMatmul::new(dev, data, (p.m, p.n, p.k), scales)
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
        for set in 0..SETS {
            self.enqueue(&state, set)?;
        }
        stream.synchronize().map_err(CudaError::from)?;
        for set in 0..SETS {
            self.validate(&state, set, "eager")?;
        }
        if self.planned.mode == Mode::Graph {
            let per_graph = self.planned.per_graph();
            let graph = graph::capture(&self.dev, per_graph, |i| {
                self.enqueue(&state, (i % SETS as u64) as usize)
            })?;
            for [_, _, y] in &mut state.sets {
                stream.memset_zeros(y).map_err(CudaError::from)?;
            }
            graph.launch()?;
            stream.synchronize().map_err(CudaError::from)?;
            for set in 0..SETS {
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
        let graph = state.graph.as_ref().map(|g| (g, self.planned.per_graph()));
        let timed = timer.run(&dev, self.cache, graph, iters, |i| {
            self.enqueue(&state, (i % SETS as u64) as usize)
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
mod tests {
    use super::*;
    use crate::check::tolerance;

    #[test]
    fn peak_percentages_only_for_a_known_card_and_fp8_only_where_it_has_it() {
        let skinny_fp8 = plan()
            .into_iter()
            .find(|p| p.family != Family::Square && p.dtype == Dtype::Fp8E4m3)
            .unwrap();
        assert!(peak_metrics(skinny_fp8, None).is_empty(), "unknown card");
        let on_h200 = peak_metrics(skinny_fp8, crate::peaks::of("NVIDIA H200"));
        let names: Vec<&str> = on_h200.iter().map(|m| m.measure.as_str()).collect();
        assert_eq!(names, ["throughput_of_peak", "bandwidth_of_peak"]);
        // An A100 has no fp8 peak, only its HBM bandwidth.
        let on_a100 = peak_metrics(skinny_fp8, crate::peaks::of("NVIDIA A100-SXM4-80GB"));
        let names: Vec<&str> = on_a100.iter().map(|m| m.measure.as_str()).collect();
        assert_eq!(names, ["bandwidth_of_peak"]);
    }

    #[test]
    fn the_plan_has_square_fp8_and_skinny_shapes_in_both_types_and_modes() {
        let all = plan();
        assert_eq!(all.len(), 2 + 2 * 2 * 5 * 2);
        let square: Vec<String> = all
            .iter()
            .filter(|p| p.family == Family::Square)
            .map(|p| p.id().display())
            .collect();
        assert_eq!(
            square,
            [
                "cuda_gemm[dtype=fp8_e4m3,n=4096,out=bf16]",
                "cuda_gemm[dtype=fp8_e4m3,n=8192,out=bf16]"
            ]
        );
        let skinny = LinearPlanned {
            family: Family::Skinny,
            dtype: Dtype::Bf16,
            m: 1,
            n: 8192,
            k: 8192,
            mode: Mode::Graph,
        };
        assert!(all.contains(&skinny));
        assert_eq!(
            skinny.id().display(),
            "cuda_gemm_skinny[dtype=bf16,k=8192,m=1,mode=graph,n=8192,out=bf16]"
        );
        assert_eq!(skinny.per_graph(), GRAPH_ITERATIONS);
        assert!(all.iter().all(|p| p.m <= p.n && p.n == p.k));
    }

    #[test]
    fn flops_bytes_and_footprints_follow_the_shared_formulas() {
        let p = LinearPlanned {
            family: Family::Skinny,
            dtype: Dtype::Fp8E4m3,
            m: 16,
            n: 4096,
            k: 4096,
            mode: Mode::Eager,
        };
        assert_eq!(p.flops(), 2.0 * 16.0 * 4096.0 * 4096.0);
        // X and W one byte an element, Y two.
        assert_eq!(p.moved_bytes(), 16 * 4096 + 4096 * 4096 + 16 * 4096 * 2);
        assert_eq!(p.footprint_bytes(), 2 * p.moved_bytes() + (32 << 20) + 8);
        let m = metrics(p);
        assert_eq!(
            (m[0].measure.as_str(), m[0].unit.as_str()),
            ("throughput", "TFLOP/s")
        );
        assert_eq!(
            (m[1].measure.as_str(), m[1].unit.as_str()),
            ("bandwidth", "GB/s")
        );
        // 1 ms a GEMM: 2.1e-3 TFLOP/s, 16.9 GB/s.
        assert!((m[0].conversion.apply(1e6) - p.flops() / 1e9).abs() < 1e-12);
        assert!((m[1].conversion.apply(1e6) - p.moved_bytes() as f64 / 1e6).abs() < 1e-6);
        assert_eq!(p.min_sm(), FP8_MIN_SM);
        assert_eq!(
            LinearPlanned {
                dtype: Dtype::Bf16,
                ..p
            }
            .min_sm(),
            0
        );
    }

    #[test]
    fn host_values_decode_scaled_fp8_and_bf16() {
        // 0x38 is 1.0, 0xB0 is −0.5 in e4m3.
        assert_eq!(host_value(&[0x38, 0xB0], Dtype::Fp8E4m3, 0.25, 1), -0.125);
        assert_eq!(host_value(&[0x38], Dtype::Fp8E4m3, 0.5, 0), 0.5);
        let bf = crate::half16::bf16_from_f32(-3.0).to_le_bytes();
        assert_eq!(host_value(&bf, Dtype::Bf16, 0.5, 0), -3.0);
        assert!(lt_type(Dtype::Fp8E4m3).is_some() && lt_type(Dtype::Bf16).is_some());
        assert!(lt_type(Dtype::F32).is_none());
        // The rules the checks apply: fp8 a half ulp at 1, bf16 1e-2.
        assert_eq!(tolerance(Dtype::Fp8E4m3, 8192), 0.0625);
        assert_eq!(tolerance(Dtype::Bf16, 8192), 0.01);
    }

    /// The layout the check assumes: W stored n×k (row j holds output j's weights), so
    /// Y[i][j] = Σₗ X[i][l]·W[j][l]; a W read as k×n instead fails the check.
    #[test]
    fn the_host_check_reads_w_as_out_by_in() {
        let (m, n, k) = (3, 5, 16);
        let codes = |seed: usize, len: usize| -> Vec<u8> {
            (0..len)
                .map(|i| [0x30, 0xB4, 0x2C, 0x3A, 0xA9][(i * 7 + seed) % 5])
                .collect()
        };
        let (x, w) = (codes(1, m * k), codes(2, n * k));
        let v = |b: &[u8], s, i| host_value(b, Dtype::Fp8E4m3, s, i);
        let y: Vec<u8> = (0..m * n)
            .flat_map(|o| {
                let (i, j) = (o / n, o % n);
                let dot: f64 = (0..k)
                    .map(|l| v(&x, FP8_SCALE_X, i * k + l) * v(&w, FP8_SCALE_W, j * k + l))
                    .sum();
                crate::half16::bf16_from_f64(dot).to_le_bytes()
            })
            .collect();
        let positions = sample_positions(m, n, 15, 1);
        let check = |w_at: &dyn Fn(usize, usize) -> f64| {
            check_gemm_sampled(
                (m, n, k),
                Dtype::Fp8E4m3,
                &positions,
                |i, l| v(&x, FP8_SCALE_X, i * k + l),
                w_at,
                |i, j| host_value(&y, OUT, 1.0, i * n + j),
            )
        };
        assert!(check(&|l, j| v(&w, FP8_SCALE_W, j * k + l)).passed());
        assert!(!check(&|l, j| v(&w, FP8_SCALE_W, l * n + j)).passed());
    }
}
