//! The CUDA `inference` suite on a device: each benchmark allocates the buffers of its plan
//! (`infer_plan`), fills the input and weights with device-side random bf16 values, runs one
//! forward pass (module load, cuBLAS kernel choice), checks every stage on sampled elements
//! against its host reference (`infer_ref`), and only then times passes one at a time (the
//! engine samples per iteration, so latency percentiles p50 to p99.9 exist), with CUDA events
//! around each pass. In graph mode the pass is captured into a CUDA graph after the eager check,
//! its outputs are zeroed, the graph is replayed once and checked again, and every timed pass
//! is one `cuGraphLaunch`.

use std::sync::Arc;

use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use cudarc::cublas::{CudaBlas, result as blas};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use crate::device::{Device, EventTimer};
use crate::error::CudaError;
use crate::graph::{self, Graph, Mode};
use crate::infer_plan::{Buf, CUBLAS_WORKSPACE_BYTES, Epi, InferPlanned, Stage};
use crate::infer_ref::{
    CHECKED_PER_STAGE, Epilogue, HostMat, MODEL, ModelShape, RMS_EPS, check_attention,
    check_linear, check_rmsnorm,
};
use crate::kernels;
use crate::sticky::LeakAfterSticky;
use crate::timing::Cache;
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::check::sample_positions;
use pitwall_schema::schema::Unit;

/// `v` as a C `int` argument.
fn int(v: usize) -> Result<i32, CudaError> {
    i32::try_from(v).map_err(|_| CudaError::Setup(format!("{v} does not fit an int")))
}

/// Threads per block of the row and attention kernels.
const ROW_BLOCK: u32 = 256;
const ATTENTION_BLOCK: u32 = 128;

struct State {
    /// Leaked after a sticky error: cudarc's drop would panic on the lost context.
    blas: LeakAfterSticky<CudaBlas>,
    /// Owned here, set on the handle: cuBLAS must not allocate while a graph is captured.
    _workspace: CudaSlice<u8>,
    /// Indexed by `Buf as usize`; `None` for buffers the workload does not use.
    bufs: Vec<Option<CudaSlice<u16>>>,
    graph: Option<Graph>,
    timer: EventTimer,
}

impl State {
    fn ptr(&self, dev: &Device, b: Buf) -> Result<CUdeviceptr, CudaError> {
        let slice = self.bufs[b as usize]
            .as_ref()
            .ok_or_else(|| CudaError::Setup(format!("buffer {b:?} is not allocated")))?;
        let (ptr, _sync) = slice.device_ptr(&dev.stream);
        Ok(ptr)
    }
}

/// One forward pass of an MLP or a transformer block, timed pass by pass.
pub struct InferBench {
    dev: Arc<Device>,
    planned: InferPlanned,
    cache: Cache,
    state: Option<State>,
}

impl InferBench {
    pub fn new(dev: Arc<Device>, planned: InferPlanned, cache: Cache) -> InferBench {
        InferBench {
            dev,
            planned,
            cache,
            state: None,
        }
    }

    fn setup(&self) -> Result<State, CudaError> {
        let dev = &self.dev;
        let tokens = self.planned.tokens();
        let mut bufs: Vec<Option<CudaSlice<u16>>> = (0..Buf::ALL.len()).map(|_| None).collect();
        for b in self.planned.buffers() {
            let (r, c) = b.dims(MODEL, tokens);
            // SAFETY: inputs are filled below; every other buffer is written by its stage
            // before any stage reads it (`infer_plan`'s dataflow test).
            bufs[b as usize] = Some(unsafe { dev.stream.alloc::<u16>(r * c) }?);
        }
        for b in self.planned.inputs() {
            let (r, c) = b.dims(MODEL, tokens);
            let buf = bufs[b as usize].as_mut().expect("allocated above");
            dev.fill_uniform(
                "random_uniform_bf16",
                buf,
                (r * c) as u64,
                0x1F00 + b as u64,
            )?;
        }
        let blas = LeakAfterSticky::new(CudaBlas::new(dev.stream.clone())?);
        // SAFETY: the workspace is only used by cuBLAS on this stream, and lives in State
        // beside the handle.
        let workspace = unsafe { dev.stream.alloc::<u8>(CUBLAS_WORKSPACE_BYTES as usize) }?;
        {
            let (ptr, _sync) = workspace.device_ptr(&dev.stream);
            // SAFETY: a live handle and CUBLAS_WORKSPACE_BYTES of device memory at `ptr`.
            unsafe {
                cudarc::cublas::sys::cublasSetWorkspace_v2(
                    *blas.handle(),
                    ptr as *mut std::ffi::c_void,
                    CUBLAS_WORKSPACE_BYTES as usize,
                )
            }
            .result()?;
        }
        Ok(State {
            blas,
            _workspace: workspace,
            bufs,
            graph: None,
            timer: EventTimer::new(),
        })
    }

    /// Enqueues one stage on the device's stream.
    fn enqueue_stage(&self, state: &State, stage: Stage) -> Result<(), CudaError> {
        let dev = &self.dev;
        let tokens = self.planned.tokens();
        let p = |b| state.ptr(dev, b);
        match stage {
            Stage::RmsNorm { x, gamma, y } => {
                let (rows, cols) = x.dims(MODEL, tokens);
                let f = dev.function(&kernels::INFERENCE, "rmsnorm_bf16")?;
                let cfg = LaunchConfig {
                    grid_dim: (rows as u32, 1, 1),
                    block_dim: (ROW_BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                };
                let (xp, gp, yp) = (p(x)?, p(gamma)?, p(y)?);
                let (rows, cols) = (int(rows)?, int(cols)?);
                let mut launch = dev.stream.launch_builder(&f);
                launch
                    .arg(&xp)
                    .arg(&gp)
                    .arg(&yp)
                    .arg(&rows)
                    .arg(&cols)
                    .arg(&RMS_EPS);
                // SAFETY: x and y hold rows×cols bf16 values, gamma cols; the arguments match.
                unsafe { launch.launch(cfg) }?;
            }
            Stage::Linear { a, w, y, epilogue } => self.enqueue_linear(state, a, w, y, epilogue)?,
            Stage::Attention { qkv, out } => {
                let f = dev.function(&kernels::INFERENCE, "attention_causal_bf16")?;
                let (batch, seq) = (self.planned.batch, self.planned.seq);
                let cfg = LaunchConfig {
                    grid_dim: (seq as u32, MODEL.heads as u32, batch as u32),
                    block_dim: (ATTENTION_BLOCK, 1, 1),
                    shared_mem_bytes: ((MODEL.head_dim + seq) * 4) as u32,
                };
                let (qp, op) = (p(qkv)?, p(out)?);
                let (seq, heads, dh) = (int(seq)?, int(MODEL.heads)?, int(MODEL.head_dim)?);
                let scale = MODEL.attention_scale();
                let mut launch = dev.stream.launch_builder(&f);
                launch
                    .arg(&qp)
                    .arg(&op)
                    .arg(&seq)
                    .arg(&heads)
                    .arg(&dh)
                    .arg(&scale);
                // SAFETY: qkv holds batch·seq rows of 3·d values, out batch·seq rows of d;
                // the dynamic shared memory holds head_dim + seq floats, as the kernel uses.
                unsafe { launch.launch(cfg) }?;
            }
        }
        Ok(())
    }

    /// Enqueues a linear stage: y = α·a·w by cuBLAS, then its epilogue kernel.
    fn enqueue_linear(
        &self,
        state: &State,
        a: Buf,
        w: Buf,
        y: Buf,
        epilogue: Epi,
    ) -> Result<(), CudaError> {
        let dev = &self.dev;
        let tokens = self.planned.tokens();
        let p = |b| state.ptr(dev, b);
        let (m, k) = a.dims(MODEL, tokens);
        let n = w.dims(MODEL, tokens).1;
        let alpha = ModelShape::gemm_alpha(k);
        let beta = 0.0f32;
        let (ap, wp, yp) = (p(a)?, p(w)?, p(y)?);
        let (mi, ni, ki) = (int(m)?, int(n)?, int(k)?);
        let bf16 = cudaDataType::CUDA_R_16BF;
        // Row-major Y (m×n) = A (m×k)·W (k×n) is column-major Yᵀ = Wᵀ·Aᵀ: W first.
        // SAFETY: A, W and Y hold m×k, k×n and m×n bf16 values on this context; the
        // 32F compute type scales with f32 α and β.
        unsafe {
            blas::gemm_ex(
                *state.blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                ni,
                mi,
                ki,
                (&alpha as *const f32).cast(),
                wp as *const std::ffi::c_void,
                bf16,
                ni,
                ap as *const std::ffi::c_void,
                bf16,
                ki,
                (&beta as *const f32).cast(),
                yp as *mut std::ffi::c_void,
                bf16,
                ni,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }?;
        let elements = (m * n) as u64;
        let cfg = dev.grid_stride(elements);
        match epilogue {
            Epi::None => {}
            Epi::BiasGelu { bias } => {
                let f = dev.function(&kernels::INFERENCE, "bias_gelu_bf16")?;
                let bp = p(bias)?;
                let mut launch = dev.stream.launch_builder(&f);
                launch.arg(&yp).arg(&bp).arg(&elements).arg(&ni);
                // SAFETY: y holds m×n values, bias n; the arguments match.
                unsafe { launch.launch(cfg) }?;
            }
            Epi::BiasResidual { bias, residual } => {
                let f = dev.function(&kernels::INFERENCE, "bias_residual_bf16")?;
                let (bp, rp) = (p(bias)?, p(residual)?);
                let mut launch = dev.stream.launch_builder(&f);
                launch.arg(&yp).arg(&bp).arg(&rp).arg(&elements).arg(&ni);
                // SAFETY: y and residual hold m×n values, bias n; the arguments match.
                unsafe { launch.launch(cfg) }?;
            }
        }
        Ok(())
    }

    /// Enqueues a whole forward pass.
    fn enqueue_pass(&self, state: &State) -> Result<(), CudaError> {
        for stage in self.planned.workload.stages() {
            self.enqueue_stage(state, stage)?;
        }
        Ok(())
    }

    /// After a pass (stream synchronised): every stage on sampled elements against its host
    /// reference from the stage's own device inputs; the first failing stage fails the check.
    fn validate(&self, state: &State, when: &str) -> Result<(), BenchError> {
        let stream = &self.dev.stream;
        let tokens = self.planned.tokens();
        let mut host: Vec<Vec<u16>> = vec![Vec::new(); Buf::ALL.len()];
        for b in self.planned.buffers() {
            let slice = state.bufs[b as usize].as_ref().expect("allocated in setup");
            host[b as usize] = stream.clone_dtoh(slice).map_err(CudaError::from)?;
        }
        stream.synchronize().map_err(CudaError::from)?;
        let mat = |b: Buf| HostMat {
            data: &host[b as usize],
            cols: b.dims(MODEL, tokens).1,
        };
        for (index, stage) in self.planned.workload.stages().into_iter().enumerate() {
            let y = mat(stage.output());
            let positions = sample_positions(
                y.rows(),
                y.cols,
                CHECKED_PER_STAGE,
                (tokens as u64) << 8 | index as u64,
            );
            let verdict = match stage {
                Stage::RmsNorm { x, gamma, .. } => {
                    check_rmsnorm(mat(x), &host[gamma as usize], y, &positions)
                }
                Stage::Linear { a, w, epilogue, .. } => {
                    let epilogue = match epilogue {
                        Epi::None => Epilogue::None,
                        Epi::BiasGelu { bias } => Epilogue::BiasGelu {
                            bias: &host[bias as usize],
                        },
                        Epi::BiasResidual { bias, residual } => Epilogue::BiasResidual {
                            bias: &host[bias as usize],
                            residual: mat(residual),
                        },
                    };
                    check_linear(mat(a), mat(w), epilogue, y, &positions)
                }
                Stage::Attention { qkv, .. } => {
                    check_attention(MODEL, self.planned.seq, mat(qkv), y, &positions)
                }
            };
            if !verdict.passed() {
                let what = format!("{} ({when}), {}", self.id().display(), stage.name());
                return Err(BenchError::Validation(verdict.describe(&what)));
            }
        }
        Ok(())
    }

    /// The first run's work: buffers, a checked eager pass, and in graph mode the captured
    /// graph, checked on a replay into zeroed outputs.
    fn prepare(&self) -> Result<State, BenchError> {
        let mut state = self.setup()?;
        self.enqueue_pass(&state)?;
        self.dev.stream.synchronize().map_err(CudaError::from)?;
        self.validate(&state, "eager pass")?;
        if self.planned.mode == Mode::Graph {
            let graph = graph::capture(&self.dev.stream, 1, |_| self.enqueue_pass(&state))?;
            let stages = self.planned.workload.stages();
            for stage in &stages {
                let out = state.bufs[stage.output() as usize]
                    .as_mut()
                    .expect("allocated in setup");
                self.dev.stream.memset_zeros(out).map_err(CudaError::from)?;
            }
            graph.launch()?;
            self.dev.stream.synchronize().map_err(CudaError::from)?;
            self.validate(&state, "graph replay")?;
            state.graph = Some(graph);
        }
        Ok(state)
    }
}

impl Benchmark for InferBench {
    fn id(&self) -> BenchmarkId {
        self.planned.id()
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::PerIteration
    }

    /// As the CPU `mlp_forward`: the latency of a pass (ns), then sequences per second.
    fn metrics(&self) -> Vec<MetricSpec> {
        metrics(self.planned)
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        // The raw driver and cuBLAS calls use the thread's current context.
        self.dev.ctx.bind_to_thread().map_err(CudaError::from)?;
        if self.state.is_none() {
            self.state = Some(self.prepare()?);
        }
        let mut state = self.state.take().expect("set above");
        let mut timer = std::mem::take(&mut state.timer);
        let dev = self.dev.clone();
        let timing = self.planned.timing();
        let timed = timer.run(
            &dev,
            self.cache,
            timing,
            state.graph.as_ref(),
            iters,
            |_| self.enqueue_pass(&state),
        );
        state.timer = timer;
        self.state = Some(state);
        Ok(timed?)
    }
}

/// The measures of an inference benchmark: `latency` of one pass in ns, and `throughput` in
/// items/s where an item is one sequence of the batch, as the CPU suite counts them.
pub fn metrics(planned: InferPlanned) -> Vec<MetricSpec> {
    vec![
        MetricSpec::time("latency"),
        MetricSpec::rate("throughput", Unit::ITEMS_PER_S, planned.batch as f64, 1.0),
    ]
}

/// The planned benchmarks on `dev`.
pub fn build(dev: &Arc<Device>, plan: &[InferPlanned], cache: Cache) -> Vec<Box<dyn Benchmark>> {
    plan.iter()
        .map(|&p| Box::new(InferBench::new(dev.clone(), p, cache)) as Box<dyn Benchmark>)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer_plan::Workload;
    use pitwall_schema::schema::Direction;

    #[test]
    fn metrics_match_the_cpu_inference_suite() {
        let p = InferPlanned {
            workload: Workload::Block,
            batch: 8,
            seq: 128,
            mode: Mode::Eager,
        };
        let m = metrics(p);
        assert_eq!(m[0].measure, "latency");
        assert_eq!(m[0].unit, Unit::new("ns"));
        assert_eq!(m[0].direction, Direction::LowerIsBetter);
        assert_eq!(m[1].measure, "throughput");
        assert_eq!(m[1].unit, Unit::new("items/s"));
        // 8 sequences in 1 ms: 8000 items/s.
        assert!((m[1].conversion.apply(1e6) - 8000.0).abs() < 1e-9);
    }
}
