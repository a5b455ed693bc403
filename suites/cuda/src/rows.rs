//! The row-wise NVRTC kernels of the CUDA `kernel` suite over an f32 rows×cols matrix: row sum,
//! softmax and layer norm (`kernels/rows.cu`, one block per row). Reported in GB/s of the
//! effective bytes `pitwall_schema::work::row_op_bytes` counts; sampled rows are checked against
//! an f64 host computation after the warm-up, before anything is timed.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use crate::device::{Device, EventTimer};
use crate::error::CudaError;
use crate::kernels;
use crate::memory::SETS;
use crate::timing::Cache;
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::check::{Compared, check, dot_scale, tolerance};
use pitwall_schema::schema::Unit;
use pitwall_schema::work::{Dtype, RowOp, row_op_bytes};

/// Shapes measured: many short rows (attention-like) and fewer long ones (hidden sizes).
pub const SHAPES: [(usize, usize); 2] = [(16384, 1024), (4096, 8192)];

/// Layer norm's ε.
pub const EPS: f32 = 1e-5;

/// Threads per row block.
const THREADS: u32 = 256;

/// Rows compared with the host computation.
const CHECKED_ROWS: usize = 8;

pub fn name(op: RowOp) -> &'static str {
    match op {
        RowOp::Sum => "cuda_reduce_rows",
        RowOp::Softmax => "cuda_softmax_rows",
        RowOp::LayerNorm => "cuda_layernorm_rows",
    }
}

fn entry(op: RowOp) -> &'static str {
    match op {
        RowOp::Sum => "reduce_rows_f32",
        RowOp::Softmax => "softmax_rows_f32",
        RowOp::LayerNorm => "layernorm_rows_f32",
    }
}

/// Device memory of every buffer set: x and the output, and γ, β for layer norm.
pub fn footprint_bytes(op: RowOp, rows: usize, cols: usize) -> u64 {
    let (rows, cols) = (rows as u64, cols as u64);
    let out = match op {
        RowOp::Sum => rows,
        RowOp::Softmax => rows * cols,
        RowOp::LayerNorm => rows * cols + 2 * cols,
    };
    SETS as u64 * (rows * cols + out) * 4
}

/// The f64 host reference of one row: `(want, scale)` per output element, scale being the
/// magnitude the error is relative to (`dot_scale` for a sum, the terms of the normalised value).
pub fn reference(op: RowOp, x: &[f64], gamma: &[f64], beta: &[f64]) -> Vec<(f64, f64)> {
    let cols = x.len() as f64;
    match op {
        RowOp::Sum => {
            let sum: f64 = x.iter().sum();
            vec![(sum, dot_scale(sum, x.iter().map(|v| v * v).sum()))]
        }
        RowOp::Softmax => {
            let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
            let s: f64 = e.iter().sum();
            e.iter().map(|v| (v / s, v / s)).collect()
        }
        RowOp::LayerNorm => {
            let mean = x.iter().sum::<f64>() / cols;
            let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols;
            let rstd = 1.0 / (var + f64::from(EPS)).sqrt();
            x.iter()
                .zip(gamma.iter().zip(beta))
                .map(|(v, (g, b))| {
                    let scaled = (v - mean) * rstd * g;
                    (
                        scaled + b,
                        scaled.abs() + b.abs() + rstd * g.abs() * mean.abs(),
                    )
                })
                .collect()
        }
    }
}

struct State {
    /// `sets[s] = [x, out]`.
    sets: Vec<[CudaSlice<f32>; 2]>,
    gamma: CudaSlice<f32>,
    beta: CudaSlice<f32>,
    func: CudaFunction,
    timer: EventTimer,
}

/// One row-wise kernel over a rows×cols f32 matrix.
pub struct RowBench {
    dev: Arc<Device>,
    op: RowOp,
    rows: usize,
    cols: usize,
    cache: Cache,
    state: Option<State>,
}

impl RowBench {
    pub fn new(
        dev: Arc<Device>,
        op: RowOp,
        (rows, cols): (usize, usize),
        cache: Cache,
    ) -> RowBench {
        RowBench {
            dev,
            op,
            rows,
            cols,
            cache,
            state: None,
        }
    }

    fn setup(&self) -> Result<State, CudaError> {
        let dev = &self.dev;
        let elements = self.rows * self.cols;
        let out_len = if self.op == RowOp::Sum {
            self.rows
        } else {
            elements
        };
        let mut sets = Vec::with_capacity(SETS);
        for s in 0..SETS as u64 {
            // SAFETY: x is filled below, out written by every launch.
            let mut x = unsafe { dev.stream.alloc::<f32>(elements) }?;
            let out = unsafe { dev.stream.alloc::<f32>(out_len) }?;
            dev.fill_uniform("random_uniform_f32", &mut x, elements as u64, 0xC000 + s)?;
            sets.push([x, out]);
        }
        // SAFETY: filled right away.
        let mut gamma = unsafe { dev.stream.alloc::<f32>(self.cols) }?;
        let mut beta = unsafe { dev.stream.alloc::<f32>(self.cols) }?;
        dev.fill_uniform("random_uniform_f32", &mut gamma, self.cols as u64, 0xD000)?;
        dev.fill_uniform("random_uniform_f32", &mut beta, self.cols as u64, 0xD001)?;
        let func = dev.function(&kernels::ROWS, entry(self.op))?;
        Ok(State {
            sets,
            gamma,
            beta,
            func,
            timer: EventTimer::new(),
        })
    }

    fn enqueue(&self, state: &State, set: usize) -> Result<(), CudaError> {
        let stream = &self.dev.stream;
        let rows =
            i32::try_from(self.rows).map_err(|_| CudaError::Setup("too many rows".into()))?;
        let cols =
            i32::try_from(self.cols).map_err(|_| CudaError::Setup("too many columns".into()))?;
        let [x, out] = &state.sets[set];
        let (x, _x) = x.device_ptr(stream);
        let (out, _o) = out.device_ptr(stream);
        let (gamma, _g) = state.gamma.device_ptr(stream);
        let (beta, _b) = state.beta.device_ptr(stream);
        let mut launch = stream.launch_builder(&state.func);
        match self.op {
            RowOp::Sum | RowOp::Softmax => launch.arg(&x).arg(&out).arg(&rows).arg(&cols),
            RowOp::LayerNorm => launch
                .arg(&x)
                .arg(&gamma)
                .arg(&beta)
                .arg(&out)
                .arg(&rows)
                .arg(&cols)
                .arg(&EPS),
        };
        let cfg = LaunchConfig {
            grid_dim: (self.rows as u32, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: one block per row of `rows`×`cols` floats; the arguments match the entry's
        // signature in rows.cu; every buffer is sized for them.
        unsafe { launch.launch(cfg) }?;
        Ok(())
    }

    /// Sampled rows of set 0's output against [`reference`].
    fn validate(&self, state: &State) -> Result<(), BenchError> {
        let stream = &self.dev.stream;
        let down =
            |buf: &CudaSlice<f32>, r: std::ops::Range<usize>| -> Result<Vec<f64>, BenchError> {
                let v = stream.clone_dtoh(&buf.slice(r)).map_err(CudaError::from)?;
                stream.synchronize().map_err(CudaError::from)?;
                Ok(v.into_iter().map(f64::from).collect())
            };
        let cols = self.cols;
        let gamma = down(&state.gamma, 0..cols)?;
        let beta = down(&state.beta, 0..cols)?;
        let [x, out] = &state.sets[0];
        let mut elements = Vec::new();
        for k in 0..CHECKED_ROWS {
            let r = (self.rows - 1) * k / (CHECKED_ROWS - 1);
            let xs = down(x, r * cols..(r + 1) * cols)?;
            let got = match self.op {
                RowOp::Sum => down(out, r..r + 1)?,
                _ => down(out, r * cols..(r + 1) * cols)?,
            };
            let first = if self.op == RowOp::Sum { r } else { r * cols };
            for (i, (g, (want, scale))) in got
                .into_iter()
                .zip(reference(self.op, &xs, &gamma, &beta))
                .enumerate()
            {
                elements.push(Compared {
                    index: first + i,
                    got: g,
                    want,
                    scale,
                });
            }
        }
        let verdict = check(elements, tolerance(Dtype::F32, cols as u64));
        if verdict.passed() {
            Ok(())
        } else {
            Err(BenchError::Validation(
                verdict.describe(&self.id().display()),
            ))
        }
    }
}

impl Benchmark for RowBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new(
            name(self.op),
            &[
                ("cols", self.cols.to_string()),
                ("rows", self.rows.to_string()),
            ],
        )
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        let bytes = row_op_bytes(self.op, self.rows as u64, self.cols as u64, Dtype::F32);
        vec![MetricSpec::rate(
            "bandwidth",
            Unit::GB_PER_S,
            bytes as f64,
            1e9,
        )]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        // The raw driver and cuBLAS calls use the thread's current context.
        self.dev.ctx.bind_to_thread().map_err(CudaError::from)?;
        if self.state.is_none() {
            let state = self.setup()?;
            for set in 0..SETS {
                self.enqueue(&state, set)?;
            }
            self.dev.stream.synchronize().map_err(CudaError::from)?;
            self.validate(&state)?;
            self.state = Some(state);
        }
        let mut state = self.state.take().expect("set above");
        let mut timer = std::mem::take(&mut state.timer);
        let dev = self.dev.clone();
        let timed = timer.time(&dev, self.cache, iters, |i| {
            self.enqueue(&state, (i % SETS as u64) as usize)
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
    fn the_host_references_compute_what_the_kernels_do() {
        let x = [1.0, 2.0, 3.0, -2.0];
        // Σx = 4, ‖x‖₂ = √18.
        assert_eq!(
            reference(RowOp::Sum, &x, &[], &[]),
            vec![(4.0, 18f64.sqrt())]
        );

        let sm = reference(RowOp::Softmax, &x, &[], &[]);
        let total: f64 = sm.iter().map(|(w, _)| w).sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert!(sm[2].0 > sm[1].0 && sm[1].0 > sm[0].0 && sm[0].0 > sm[3].0);

        let ln = reference(RowOp::LayerNorm, &x, &[1.0; 4], &[0.0; 4]);
        let mean: f64 = ln.iter().map(|(w, _)| w).sum::<f64>() / 4.0;
        let var: f64 = ln.iter().map(|(w, _)| (w - mean).powi(2)).sum::<f64>() / 4.0;
        assert!(
            mean.abs() < 1e-12 && (var - 1.0).abs() < 1e-4,
            "{mean} {var}"
        );
        let shifted = reference(RowOp::LayerNorm, &x, &[2.0; 4], &[0.5; 4]);
        assert!((shifted[0].0 - (2.0 * ln[0].0 + 0.5)).abs() < 1e-12);
    }

    #[test]
    fn footprints_and_bytes() {
        assert_eq!(footprint_bytes(RowOp::Sum, 4, 8), 2 * (32 + 4) * 4);
        assert_eq!(footprint_bytes(RowOp::Softmax, 4, 8), 2 * 64 * 4);
        assert_eq!(footprint_bytes(RowOp::LayerNorm, 4, 8), 2 * (64 + 16) * 4);
        assert_eq!(name(RowOp::LayerNorm), "cuda_layernorm_rows");
    }
}
