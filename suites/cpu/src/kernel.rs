//! The CPU `kernel` suite: a compute-bound GEMM, STREAM-style bandwidth sweeps and a reduction,
//! real work timed with the wall clock, so the pipeline has baselines on a machine without a GPU.

use std::hint::black_box;
use std::time::Instant;

use crate::checks;
use pitwall_schema::backend::SuiteOptions;
use pitwall_schema::benchmark::{
    Annotated, BenchError, Benchmark, BenchmarkId, Ceiling, MetricSpec, SamplingHint,
};
use pitwall_schema::schema::Unit;
use pitwall_schema::work::{Dtype, copy_bytes, gemm_flops, gemm_footprint_bytes, triad_bytes};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

pub fn suite(options: &SuiteOptions) -> Vec<Box<dyn Benchmark>> {
    let mut out: Vec<Box<dyn Benchmark>> = Vec::new();
    for n in GemmBench::SIZES {
        if fits(options.max_bytes, GemmBench::footprint_bytes(n)) {
            out.push(Box::new(GemmBench::new(n)));
        }
    }
    let copies = |bytes: u64| fits(options.max_bytes, bytes * StreamOp::Copy.arrays());
    for op in [StreamOp::Copy, StreamOp::Triad] {
        for bytes in StreamBench::ARRAY_BYTES {
            if fits(options.max_bytes, bytes * op.arrays()) {
                let b = Box::new(StreamBench::new(op, bytes));
                out.push(if op == StreamOp::Copy || !copies(bytes) {
                    b
                } else {
                    of_copy(b, bytes)
                });
            }
        }
    }
    for bytes in ReductionBench::ARRAY_BYTES {
        if fits(options.max_bytes, bytes) {
            let b = Box::new(ReductionBench::new(bytes));
            // Every reduction size is also a STREAM size; without its copy (capped out),
            // no ceiling.
            out.push(
                if copies(bytes) && StreamBench::ARRAY_BYTES.contains(&bytes) {
                    of_copy(b, bytes)
                } else {
                    b
                },
            );
        }
    }
    out
}

/// `b`'s bandwidth also as a percentage of the STREAM copy of arrays of the same size in the
/// same run (the same cache level: what a memory-bound kernel of that size can reach).
fn of_copy(b: Box<dyn Benchmark>, bytes: u64) -> Box<dyn Benchmark> {
    Annotated::with_ceiling(
        b,
        Ceiling {
            measure: "bandwidth".into(),
            of: StreamBench::new(StreamOp::Copy, bytes).id(),
            label: "copy".into(),
        },
    )
}

/// Whether a footprint of `bytes` is within the optional cap.
pub(super) fn fits(max_bytes: Option<u64>, bytes: u64) -> bool {
    max_bytes.is_none_or(|cap| bytes <= cap)
}

/// A small deterministic generator, so inputs are reproducible and never all zeros.
pub(super) struct Lcg(u64);

impl Lcg {
    pub(super) fn new(seed: u64) -> Lcg {
        Lcg(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub(super) fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 32) as u32
    }

    /// Uniform in [-1, 1).
    pub(super) fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    }
}

/// C (m×n) = A (m×k) · B (k×n) + beta·C, all contiguous row-major, single-threaded.
pub(super) fn sgemm(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], beta: f32, c: &mut [f32]) {
    assert!(a.len() >= m * k, "A holds {} of {}×{}", a.len(), m, k);
    assert!(b.len() >= k * n, "B holds {} of {}×{}", b.len(), k, n);
    assert!(c.len() >= m * n, "C holds {} of {}×{}", c.len(), m, n);
    // SAFETY: the asserts keep every element matrixmultiply touches inside the three slices:
    // row strides k, n, n with column stride 1 describe contiguous row-major matrices of the
    // asserted sizes, and `c` is borrowed mutably so it aliases neither input.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// f32 GEMM C = A·B on square n×n matrices.
pub struct GemmBench {
    n: usize,
    buffers: Option<[Vec<f32>; 3]>,
}

impl GemmBench {
    pub const SIZES: [usize; 4] = [64, 256, 512, 1024];

    pub fn new(n: usize) -> GemmBench {
        GemmBench { n, buffers: None }
    }

    /// Bytes of A, B and C together.
    pub fn footprint_bytes(n: usize) -> u64 {
        let n = n as u64;
        gemm_footprint_bytes(n, n, n, Dtype::F32, Dtype::F32)
    }

    fn flops_per_iter(&self) -> f64 {
        let n = self.n as u64;
        gemm_flops(n, n, n)
    }
}

impl Benchmark for GemmBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new("gemm_f32", &[("n", self.n.to_string())])
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        vec![MetricSpec::rate(
            "throughput",
            Unit::GFLOP_PER_S,
            self.flops_per_iter(),
            1e9,
        )]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        let n = self.n;
        if self.buffers.is_none() {
            let mut rng = Lcg::new(n as u64);
            let a: Vec<f32> = (0..n * n).map(|_| rng.next_f32()).collect();
            let b: Vec<f32> = (0..n * n).map(|_| rng.next_f32()).collect();
            let mut c = vec![0.0; n * n];
            // Checked once, untimed, before anything is timed.
            sgemm(n, n, n, &a, &b, 0.0, &mut c);
            checks::gemm(n, &a, &b, &c, &self.id().display())?;
            self.buffers = Some([a, b, c]);
        }
        let [a, b, c] = self.buffers.as_mut().expect("set above");
        let start = Instant::now();
        for _ in 0..iters {
            sgemm(n, n, n, black_box(a), black_box(b), 0.0, c);
            black_box(&mut *c);
        }
        Ok(start.elapsed().as_nanos() as f64)
    }
}

/// The STREAM operations measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamOp {
    /// b[i] = a[i]
    Copy,
    /// a[i] = b[i] + s·c[i]
    Triad,
}

impl StreamOp {
    pub fn name(self) -> &'static str {
        match self {
            StreamOp::Copy => "stream_copy",
            StreamOp::Triad => "stream_triad",
        }
    }

    /// Arrays touched per iteration, as STREAM counts bytes moved.
    pub fn arrays(self) -> u64 {
        match self {
            StreamOp::Copy => 2,
            StreamOp::Triad => 3,
        }
    }
}

/// The scalar of STREAM's triad.
pub const TRIAD_SCALAR: f64 = 3.0;

fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    for ((x, y), z) in a.iter_mut().zip(b).zip(c) {
        *x = y + s * z;
    }
}

/// STREAM copy or triad over f64 arrays of `bytes` each.
pub struct StreamBench {
    op: StreamOp,
    bytes: u64,
    arrays: Option<[Vec<f64>; 3]>,
}

impl StreamBench {
    /// Bytes per array, from L1-resident to DRAM-bound.
    pub const ARRAY_BYTES: [u64; 4] = [16 * KIB, 256 * KIB, 4 * MIB, 64 * MIB];

    pub fn new(op: StreamOp, bytes: u64) -> StreamBench {
        StreamBench {
            op,
            bytes,
            arrays: None,
        }
    }

    fn len(&self) -> usize {
        (self.bytes / size_of::<f64>() as u64) as usize
    }
}

impl Benchmark for StreamBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new(self.op.name(), &[("bytes", self.bytes.to_string())])
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        let n = self.len() as u64;
        let moved_bytes = match self.op {
            StreamOp::Copy => copy_bytes(n, Dtype::F64),
            StreamOp::Triad => triad_bytes(n, Dtype::F64),
        } as f64;
        vec![MetricSpec::rate(
            "bandwidth",
            Unit::GB_PER_S,
            moved_bytes,
            1e9,
        )]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        let (len, op) = (self.len(), self.op);
        if self.arrays.is_none() {
            let c_len = if op == StreamOp::Triad { len } else { 0 };
            let (mut a, mut b, c) = (vec![1.0; len], vec![2.0; len], vec![0.5; c_len]);
            // One untimed pass, checked on every element, before anything is timed.
            let what = self.id().display();
            match op {
                StreamOp::Copy => {
                    b.copy_from_slice(&a);
                    checks::elementwise(&b, |i| a[i], &what)?;
                }
                StreamOp::Triad => {
                    triad(&mut a, &b, &c, TRIAD_SCALAR);
                    checks::elementwise(&a, |i| b[i] + TRIAD_SCALAR * c[i], &what)?;
                }
            }
            self.arrays = Some([a, b, c]);
        }
        let [a, b, c] = self.arrays.as_mut().expect("set above");
        let start = Instant::now();
        match op {
            StreamOp::Copy => {
                for _ in 0..iters {
                    b.copy_from_slice(black_box(a));
                    black_box(&mut *b);
                }
            }
            StreamOp::Triad => {
                for _ in 0..iters {
                    triad(a, black_box(b), black_box(c), black_box(TRIAD_SCALAR));
                    black_box(&mut *a);
                }
            }
        }
        Ok(start.elapsed().as_nanos() as f64)
    }
}

/// Sum of f64s with eight independent accumulators, so the loop vectorises and is bound by
/// memory bandwidth rather than by the latency of one dependent add chain.
pub(super) fn sum_f64(xs: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = xs.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (a, x) in acc.iter_mut().zip(chunk) {
            *a += x;
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// An array of small integers whose exact sum is known, so the f64 sum can be checked exactly.
struct SumData {
    data: Vec<f64>,
    expected: i64,
}

impl SumData {
    fn new(len: usize) -> SumData {
        let mut rng = Lcg::new(len as u64);
        let ints: Vec<i64> = (0..len)
            .map(|_| i64::from(rng.next_u32() % 17) - 8)
            .collect();
        SumData {
            data: ints.iter().map(|&x| x as f64).collect(),
            expected: ints.iter().sum(),
        }
    }

    fn validate(&self) -> Result<(), BenchError> {
        let got = sum_f64(&self.data);
        if got == self.expected as f64 {
            Ok(())
        } else {
            Err(BenchError::Validation(format!(
                "reduce_sum over {} elements gave {got}, expected {}",
                self.data.len(),
                self.expected
            )))
        }
    }
}

/// Sum of an f64 array of `bytes`.
pub struct ReductionBench {
    bytes: u64,
    data: Option<SumData>,
}

impl ReductionBench {
    pub const ARRAY_BYTES: [u64; 2] = [256 * KIB, 64 * MIB];

    pub fn new(bytes: u64) -> ReductionBench {
        ReductionBench { bytes, data: None }
    }
}

impl Benchmark for ReductionBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new("reduce_sum", &[("bytes", self.bytes.to_string())])
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        vec![MetricSpec::rate(
            "bandwidth",
            Unit::GB_PER_S,
            self.bytes as f64,
            1e9,
        )]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        if self.data.is_none() {
            let data = SumData::new((self.bytes / size_of::<f64>() as u64) as usize);
            data.validate()?;
            self.data = Some(data);
        }
        let data = &self.data.as_ref().expect("set above").data;
        let start = Instant::now();
        for _ in 0..iters {
            black_box(sum_f64(black_box(data)));
        }
        Ok(start.elapsed().as_nanos() as f64)
    }
}

#[cfg(test)]
mod tests;
