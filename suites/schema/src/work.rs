//! The work a built-in benchmark does per iteration, counted one way for every backend: GEMM
//! flops, the bytes a memory-bound kernel moves, and nccl-tests' algbw/busbw, so a CPU and a
//! CUDA `stream_triad` or `allreduce` report comparable physical units.

/// Element types of the built-in suites' buffers and GEMM operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    F64,
    F32,
    /// f32 storage, multiplied on tensor cores with inputs rounded to tf32 (10-bit mantissa).
    Tf32,
    Bf16,
    F16,
    /// 8-bit float, 4 exponent and 3 mantissa bits.
    Fp8E4m3,
    /// 8-bit float, 5 exponent and 2 mantissa bits.
    Fp8E5m2,
}

impl Dtype {
    pub const ALL: [Dtype; 7] = [
        Dtype::F64,
        Dtype::F32,
        Dtype::Tf32,
        Dtype::Bf16,
        Dtype::F16,
        Dtype::Fp8E4m3,
        Dtype::Fp8E5m2,
    ];

    /// As benchmark names and parameters show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::F64 => "f64",
            Dtype::F32 => "f32",
            Dtype::Tf32 => "tf32",
            Dtype::Bf16 => "bf16",
            Dtype::F16 => "f16",
            Dtype::Fp8E4m3 => "fp8_e4m3",
            Dtype::Fp8E5m2 => "fp8_e5m2",
        }
    }

    /// Bytes of one stored element.
    pub fn size_bytes(self) -> u64 {
        match self {
            Dtype::F64 => 8,
            Dtype::F32 | Dtype::Tf32 => 4,
            Dtype::Bf16 | Dtype::F16 => 2,
            Dtype::Fp8E4m3 | Dtype::Fp8E5m2 => 1,
        }
    }
}

/// Floating-point operations of one GEMM C (m×n) = A (m×k) · B (k×n): a multiply and an add per
/// term, 2·m·n·k.
pub fn gemm_flops(m: u64, n: u64, k: u64) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

/// Bytes of A, B and C of a GEMM, each stored as `dtype` (C in `out`).
pub fn gemm_footprint_bytes(m: u64, n: u64, k: u64, dtype: Dtype, out: Dtype) -> u64 {
    (m * k + k * n) * dtype.size_bytes() + m * n * out.size_bytes()
}

/// A copy of `n` elements reads each once and writes each once: 2·n·size (STREAM's count).
pub fn copy_bytes(n: u64, dtype: Dtype) -> u64 {
    2 * n * dtype.size_bytes()
}

/// STREAM triad a = b + s·c reads b and c and writes a: 3·n·size.
pub fn triad_bytes(n: u64, dtype: Dtype) -> u64 {
    3 * n * dtype.size_bytes()
}

/// A one-way transfer (host to device, device to host) of `bytes`: the bytes themselves.
pub fn transfer_bytes(bytes: u64) -> u64 {
    bytes
}

/// The effective bytes of a row-wise kernel over a rows×cols matrix: what it must move at
/// least, each input element read once and each output element written once, whatever passes
/// the implementation makes (extra passes show as a lower bandwidth, as in nvbench and Triton).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOp {
    /// out[r] = Σ x[r][·]: the matrix read, one value per row written.
    Sum,
    /// y = softmax(x) per row: the matrix read and written.
    Softmax,
    /// y = (x − mean)/√(var + ε)·γ + β per row: the matrix read and written, γ and β read.
    LayerNorm,
}

pub fn row_op_bytes(op: RowOp, rows: u64, cols: u64, dtype: Dtype) -> u64 {
    let size = dtype.size_bytes();
    match op {
        RowOp::Sum => (rows * cols + rows) * size,
        RowOp::Softmax => 2 * rows * cols * size,
        RowOp::LayerNorm => (2 * rows * cols + 2 * cols) * size,
    }
}

/// The collectives nccl-tests measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    AllToAll,
}

/// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): busbw = algbw × factor, so the
/// number is comparable with the hardware's link bandwidth whatever the rank count.
/// All-reduce 2(n−1)/n; all-gather, reduce-scatter and all-to-all (n−1)/n; broadcast and
/// reduce 1. For all-gather and reduce-scatter the size is the whole array (count per rank ×
/// element size × n), as nccl-tests counts it. Zero ranks give 0.
pub fn bus_factor(op: Collective, ranks: usize) -> f64 {
    if ranks == 0 {
        return 0.0;
    }
    let n = ranks as f64;
    match op {
        Collective::AllReduce => 2.0 * (n - 1.0) / n,
        Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => (n - 1.0) / n,
        Collective::Broadcast | Collective::Reduce => 1.0,
    }
}

/// nccl-tests' algorithm bandwidth in bytes per second: size / time.
pub fn algbw_bytes_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds.max(f64::MIN_POSITIVE)
}

/// nccl-tests' bus bandwidth in bytes per second: algbw × the collective's factor.
pub fn busbw_bytes_per_s(op: Collective, ranks: usize, bytes: u64, seconds: f64) -> f64 {
    algbw_bytes_per_s(bytes, seconds) * bus_factor(op, ranks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_counts_two_m_n_k() {
        assert_eq!(gemm_flops(256, 256, 256), 2.0 * 256f64.powi(3));
        assert_eq!(gemm_flops(2, 3, 5), 60.0);
        // 8192³ is 1.1 TFLOP: no overflow on the way.
        assert_eq!(gemm_flops(8192, 8192, 8192), 2.0 * 8192f64.powi(3));
        assert_eq!(
            gemm_footprint_bytes(512, 512, 512, Dtype::F32, Dtype::F32),
            3 * 512 * 512 * 4
        );
        assert_eq!(
            gemm_footprint_bytes(4, 2, 8, Dtype::Bf16, Dtype::F32),
            (32 + 16) * 2 + 8 * 4
        );
    }

    #[test]
    fn memory_kernels_count_bytes_as_stream_does() {
        assert_eq!(copy_bytes(1000, Dtype::F64), 16_000);
        assert_eq!(triad_bytes(1000, Dtype::F64), 24_000);
        assert_eq!(copy_bytes(10, Dtype::F16), 40);
        assert_eq!(transfer_bytes(1 << 20), 1 << 20);
        assert_eq!(
            row_op_bytes(RowOp::Sum, 4, 1024, Dtype::F32),
            (4096 + 4) * 4
        );
        assert_eq!(
            row_op_bytes(RowOp::Softmax, 4, 1024, Dtype::F32),
            2 * 4096 * 4
        );
        assert_eq!(
            row_op_bytes(RowOp::LayerNorm, 4, 1024, Dtype::F32),
            (2 * 4096 + 2 * 1024) * 4
        );
    }

    #[test]
    fn bus_factors_are_nccl_tests_own() {
        use Collective::*;
        assert_eq!(bus_factor(AllReduce, 8), 1.75);
        assert_eq!(bus_factor(AllReduce, 4), 1.5);
        assert_eq!(bus_factor(AllReduce, 2), 1.0);
        assert_eq!(bus_factor(AllReduce, 1), 0.0);
        for op in [AllGather, ReduceScatter, AllToAll] {
            assert_eq!(bus_factor(op, 8), 0.875);
            assert_eq!(bus_factor(op, 2), 0.5);
        }
        assert_eq!(bus_factor(Broadcast, 8), 1.0);
        assert_eq!(bus_factor(Reduce, 8), 1.0);
        assert_eq!(bus_factor(AllReduce, 0), 0.0);
        // 1 GB in 10 ms is 100 GB/s algbw; all-reduce over 8 ranks: 175 GB/s busbw.
        assert_eq!(algbw_bytes_per_s(1_000_000_000, 0.01), 1e11);
        assert!((busbw_bytes_per_s(AllReduce, 8, 1_000_000_000, 0.01) - 1.75e11).abs() < 1.0);
    }

    #[test]
    fn dtypes_have_their_sizes_and_names() {
        let sizes: Vec<u64> = Dtype::ALL.iter().map(|d| d.size_bytes()).collect();
        assert_eq!(sizes, [8, 4, 4, 2, 2, 1, 1]);
        assert_eq!(Dtype::Tf32.as_str(), "tf32");
        assert_eq!(Dtype::Fp8E4m3.as_str(), "fp8_e4m3");
    }
}
