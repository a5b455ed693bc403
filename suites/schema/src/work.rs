//! The work a built-in benchmark does per iteration, counted one way for every backend: GEMM
//! flops, the bytes a memory-bound kernel moves, and nccl-tests' algbw/busbw, so a CPU and a
//! CUDA `stream_triad` or `allreduce` report comparable physical units; and whether that work
//! starts with its data in L2 (`CacheMode`), which the plausibility bounds depend on.

/// Whether a GPU benchmark's timed iterations start with its data evicted from the L2 cache.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// L2 overwritten before every timed iteration (not timed): what a kernel meets inside a
    /// model, where other work ran in between.
    #[default]
    Cold,
    /// Iterations back to back: inputs may stay in L2 from the previous one.
    Warm,
}

impl CacheMode {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::Cold => "cold",
            CacheMode::Warm => "warm",
        }
    }

    pub fn parse(s: &str) -> Option<CacheMode> {
        [CacheMode::Cold, CacheMode::Warm]
            .into_iter()
            .find(|m| m.as_str() == s)
    }
}

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

impl Collective {
    /// The five collectives pitwall's `collective` suites measure (reduce is nccl-tests' too,
    /// but no suite runs it).
    pub const MEASURED: [Collective; 5] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::Broadcast,
        Collective::AllToAll,
    ];

    /// As benchmark names show it (`allreduce`, `allgather`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Collective::AllReduce => "allreduce",
            Collective::AllGather => "allgather",
            Collective::ReduceScatter => "reducescatter",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::AllToAll => "alltoall",
        }
    }

    pub fn parse(s: &str) -> Option<Collective> {
        Collective::MEASURED
            .into_iter()
            .chain([Collective::Reduce])
            .find(|c| c.as_str() == s)
    }
}

/// Smallest message of a collective sweep, as nccl-tests' `-b 8`.
pub const SWEEP_MIN_BYTES: u64 = 8;
/// Each message of the sweep is this many times the previous one, as nccl-tests' `-f 2`.
pub const SWEEP_FACTOR: u64 = 2;

/// The message sizes of a collective sweep: 8 B, 16 B, … up to and including `max_bytes`.
pub fn sweep_bytes(max_bytes: u64) -> Vec<u64> {
    std::iter::successors(Some(SWEEP_MIN_BYTES), |b| b.checked_mul(SWEEP_FACTOR))
        .take_while(|&b| b <= max_bytes)
        .collect()
}

/// The shape of one collective's buffers for a requested message size, as nccl-tests sizes
/// them (`*GetCollByteCount`): `bytes` is the size nccl-tests reports (algbw = bytes / time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectiveShape {
    /// The size counted in algbw, after rounding down to whole elements (and, for the
    /// collectives that split the buffer over ranks, to a whole number per rank).
    pub bytes: u64,
    /// Elements each rank sends.
    pub send_elements: u64,
    /// Elements each rank receives.
    pub recv_elements: u64,
}

/// The buffers of `op` over `ranks` ranks for a requested size of `bytes` of `elem_bytes`-byte
/// elements, or `None` when that leaves no element (an all-gather of 8 B over 4 ranks of
/// f32s). All-reduce and broadcast: the whole buffer on every rank. All-gather: each rank
/// sends bytes/n and receives bytes. Reduce-scatter: each rank sends bytes, receives bytes/n.
/// All-to-all: each rank sends and receives bytes, a block of bytes/n to and from each rank.
pub fn collective_shape(
    op: Collective,
    bytes: u64,
    ranks: usize,
    elem_bytes: u64,
) -> Option<CollectiveShape> {
    let n = ranks.max(1) as u64;
    let count = bytes / elem_bytes.max(1);
    let shape = match op {
        Collective::AllReduce | Collective::Broadcast | Collective::Reduce => CollectiveShape {
            bytes: count * elem_bytes,
            send_elements: count,
            recv_elements: count,
        },
        Collective::AllGather => CollectiveShape {
            bytes: count / n * n * elem_bytes,
            send_elements: count / n,
            recv_elements: count / n * n,
        },
        Collective::ReduceScatter => CollectiveShape {
            bytes: count / n * n * elem_bytes,
            send_elements: count / n * n,
            recv_elements: count / n,
        },
        Collective::AllToAll => CollectiveShape {
            bytes: count / n * n * elem_bytes,
            send_elements: count / n * n,
            recv_elements: count / n * n,
        },
    };
    (shape.send_elements > 0 && shape.recv_elements > 0).then_some(shape)
}

/// nccl-tests' algorithm bandwidth in bytes per second: size / time.
pub fn algbw_bytes_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds.max(f64::MIN_POSITIVE)
}

/// nccl-tests' bus bandwidth in bytes per second: algbw × the collective's factor.
pub fn busbw_bytes_per_s(op: Collective, ranks: usize, bytes: u64, seconds: f64) -> f64 {
    algbw_bytes_per_s(bytes, seconds) * bus_factor(op, ranks)
}

/// A command rank 0 sends the other ranks of a collective session (both backends: the CPU's
/// TCP collectives and the NCCL ones), over the rendezvous' control channel: run `iters` of
/// `op` on `bytes` (checking the result first when `verify`), or end the session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CollectiveCommand {
    Run {
        op: Collective,
        bytes: u64,
        iters: u64,
        verify: bool,
    },
    EndSession,
}

impl CollectiveCommand {
    /// The wire form: `run <op> <bytes> <iters> <verify>` or `end`.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            CollectiveCommand::EndSession => b"end".to_vec(),
            CollectiveCommand::Run {
                op,
                bytes,
                iters,
                verify,
            } => format!("run {} {bytes} {iters} {verify}", op.as_str()).into_bytes(),
        }
    }

    /// The command `bytes` encode, or `None` for anything else.
    pub fn decode(bytes: &[u8]) -> Option<CollectiveCommand> {
        let text = std::str::from_utf8(bytes).ok()?;
        if text == "end" {
            return Some(CollectiveCommand::EndSession);
        }
        let mut w = text.strip_prefix("run ")?.split(' ');
        Some(CollectiveCommand::Run {
            op: Collective::parse(w.next()?)?,
            bytes: w.next()?.parse().ok()?,
            iters: w.next()?.parse().ok()?,
            verify: w.next()?.parse().ok()?,
        })
    }
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
    fn busbw_per_collective_is_nccl_tests_formula() {
        use Collective::*;
        // nccl-tests doc/PERFORMANCE.md: busbw = algbw × factor, algbw = S / t. 3 ranks,
        // 3 MB in 1 ms: algbw 3 GB/s.
        let (bytes, secs, n) = (3_000_000u64, 0.001, 3);
        let algbw = algbw_bytes_per_s(bytes, secs);
        assert_eq!(algbw, 3e9);
        let expected = [
            (AllReduce, 3e9 * 2.0 * 2.0 / 3.0),
            (AllGather, 3e9 * 2.0 / 3.0),
            (ReduceScatter, 3e9 * 2.0 / 3.0),
            (Broadcast, 3e9),
            (Reduce, 3e9),
            (AllToAll, 3e9 * 2.0 / 3.0),
        ];
        for (op, want) in expected {
            let got = busbw_bytes_per_s(op, n, bytes, secs);
            assert!((got - want).abs() < 1e-3, "{op:?}: {got} != {want}");
        }
        // One rank moves nothing over a bus, except broadcast and reduce (factor 1).
        for op in [AllReduce, AllGather, ReduceScatter, AllToAll] {
            assert_eq!(bus_factor(op, 1), 0.0, "{op:?}");
        }
        assert_eq!(bus_factor(Broadcast, 1), 1.0);
    }

    #[test]
    fn the_sweep_doubles_from_8_bytes_to_the_cap() {
        assert_eq!(sweep_bytes(64), [8, 16, 32, 64]);
        assert_eq!(sweep_bytes(100), [8, 16, 32, 64]);
        assert_eq!(sweep_bytes(7), Vec::<u64>::new());
        let gib = sweep_bytes(1 << 30);
        assert_eq!((gib.len(), gib[0], *gib.last().unwrap()), (28, 8, 1 << 30));
        assert!(gib.windows(2).all(|w| w[1] == 2 * w[0]));
        assert_eq!(sweep_bytes(u64::MAX).len(), 61);
    }

    #[test]
    fn message_shapes_follow_nccl_tests_counts() {
        use Collective::*;
        // 4 KiB of f32 over 3 ranks: 1024 elements, 341 per rank for the split collectives.
        let s = collective_shape(AllReduce, 4096, 3, 4).unwrap();
        assert_eq!(
            (s.bytes, s.send_elements, s.recv_elements),
            (4096, 1024, 1024)
        );
        let s = collective_shape(Broadcast, 4096, 3, 4).unwrap();
        assert_eq!(
            (s.bytes, s.send_elements, s.recv_elements),
            (4096, 1024, 1024)
        );
        let s = collective_shape(AllGather, 4096, 3, 4).unwrap();
        assert_eq!(
            (s.bytes, s.send_elements, s.recv_elements),
            (4092, 341, 1023)
        );
        let s = collective_shape(ReduceScatter, 4096, 3, 4).unwrap();
        assert_eq!(
            (s.bytes, s.send_elements, s.recv_elements),
            (4092, 1023, 341)
        );
        let s = collective_shape(AllToAll, 4096, 3, 4).unwrap();
        assert_eq!(
            (s.bytes, s.send_elements, s.recv_elements),
            (4092, 1023, 1023)
        );
        // 8 B over 4 ranks of f32 leaves no element to split; all-reduce still has two.
        for op in [AllGather, ReduceScatter, AllToAll] {
            assert_eq!(collective_shape(op, 8, 4, 4), None, "{op:?}");
        }
        assert_eq!(
            collective_shape(AllReduce, 8, 4, 4).unwrap().send_elements,
            2
        );
        assert_eq!(collective_shape(AllReduce, 2, 4, 4), None);
        for op in Collective::MEASURED {
            assert_eq!(Collective::parse(op.as_str()), Some(op));
        }
        assert_eq!(Collective::parse("reduce"), Some(Reduce));
        assert_eq!(Collective::parse("gather"), None);
    }

    #[test]
    fn dtypes_have_their_sizes_and_names() {
        let sizes: Vec<u64> = Dtype::ALL.iter().map(|d| d.size_bytes()).collect();
        assert_eq!(sizes, [8, 4, 4, 2, 2, 1, 1]);
        assert_eq!(Dtype::Tf32.as_str(), "tf32");
        assert_eq!(Dtype::Fp8E4m3.as_str(), "fp8_e4m3");
    }

    #[test]
    fn collective_commands_survive_the_wire_and_nothing_else_decodes() {
        let cmd = CollectiveCommand::Run {
            op: Collective::ReduceScatter,
            bytes: 1 << 30,
            iters: 7,
            verify: true,
        };
        assert_eq!(CollectiveCommand::decode(&cmd.encode()), Some(cmd));
        assert_eq!(
            CollectiveCommand::decode(b"end"),
            Some(CollectiveCommand::EndSession)
        );
        assert_eq!(CollectiveCommand::decode(b"run gather 8 1 true"), None);
        assert_eq!(CollectiveCommand::decode(b"run all_reduce 8 1"), None);
    }
}
