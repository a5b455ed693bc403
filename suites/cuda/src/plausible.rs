//! What bounds each benchmark of the CUDA `kernel` suite, for the engine's `implausible`
//! guard (`pitwall_schema::plausible`): a GEMM its card's dense peak for its type, memory-bound
//! work the card's HBM bandwidth (or, on a card pitwall does not know, the largest
//! device-to-device copy of the same run), counted from the plan, as the ceilings are
//! (`ceiling`), so it is tested without a GPU. Host transfers are bounded by PCIe, not HBM,
//! and get no bound.

use crate::Planned;
use crate::memory::MemOp;
use pitwall_schema::backend::CacheMode;
use pitwall_schema::benchmark::{Annotated, Benchmark, BenchmarkId};
use pitwall_schema::datasheet;
use pitwall_schema::plausible::{ComputeBound, MemoryBound, Plausibility};
use pitwall_schema::work::{Dtype, gemm_flops, row_op_bytes};

/// The device a bound is for: its name (`NVIDIA H200`), L2 size and the suite's cache mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    pub name: String,
    pub l2_bytes: u64,
    pub cache: CacheMode,
}

/// The largest `cuda_memcpy_d2d` of `plan`: on an unknown card, HBM is what it reaches.
fn largest_copy(plan: &[Planned]) -> Option<BenchmarkId> {
    plan.iter()
        .filter_map(|q| match q {
            Planned::Memory(MemOp::MemcpyD2D, bytes) => Some(*bytes),
            _ => None,
        })
        .max()
        .map(|b| BenchmarkId::new(MemOp::MemcpyD2D.name(), &[("bytes", b.to_string())]))
}

/// The bound of planned benchmark `p` within `plan` on `card`; `None` when nothing bounds it.
pub fn plausibility_of(p: Planned, plan: &[Planned], card: &Card) -> Option<Plausibility> {
    let peaks = datasheet::of(&card.name);
    let compute = |dtype: Dtype, flops: f64| {
        peaks
            .and_then(|pk| pk.tflops(dtype))
            .map(|peak_tflops| ComputeBound {
                flops_per_iter: flops,
                dtype,
                peak_tflops,
            })
    };
    let copy = largest_copy(plan);
    let memory = |bytes_per_iter: u64, read_per_unit_bytes: u64, footprint_bytes: u64| {
        Some(MemoryBound {
            bytes_per_iter: bytes_per_iter as f64,
            cache: card.cache,
            read_per_unit_bytes,
            footprint_bytes,
            l2_bytes: card.l2_bytes,
            hbm_gb_per_s: peaks.map(|pk| pk.hbm_gb_per_s),
            copy: if peaks.is_none() { copy.clone() } else { None },
        })
    };
    let (compute, memory) = match p {
        Planned::Memory(op @ (MemOp::MemcpyD2D | MemOp::CopyKernel | MemOp::Triad), bytes) => {
            let moved = op.moved_bytes(bytes);
            // Every array but the one written is read.
            (
                None,
                memory(moved, moved - bytes, op.footprint_bytes(bytes)),
            )
        }
        Planned::Memory(..) => (None, None),
        Planned::Gemm(dtype, n) => {
            let n = n as u64;
            (compute(dtype, gemm_flops(n, n, n)), None)
        }
        Planned::Rows(op, (rows, cols)) => {
            let (rows, cols) = (rows as u64, cols as u64);
            let moved = row_op_bytes(op, rows, cols, Dtype::F32);
            let input = rows * cols * Dtype::F32.size_bytes();
            (
                None,
                memory(
                    moved,
                    input,
                    crate::rows::footprint_bytes(op, rows as usize, cols as usize),
                ),
            )
        }
        Planned::Linear(lp) => {
            let (m, n, k) = (lp.m as u64, lp.n as u64, lp.k as u64);
            let operands = (m * k + k * n) * lp.dtype.size_bytes();
            // A timed unit of eager and graph alike holds `timing().work` GEMMs (issue 23,
            // defect 1), rotating over as many buffer sets as the L2 asks for (`operands`).
            (
                compute(lp.dtype, lp.flops()),
                memory(
                    lp.moved_bytes(),
                    operands * p.timing().work.iterations(),
                    p.operands(card.l2_bytes).footprint_bytes,
                ),
            )
        }
    };
    // The copy a bound falls back to is no bound of itself.
    let memory = memory
        .filter(|m| m.hbm_gb_per_s.is_some() || m.copy.as_ref().is_some_and(|c| !is_id_of(p, c)));
    (compute.is_some() || memory.is_some()).then(|| Plausibility {
        card: card.name.clone(),
        compute,
        memory,
    })
}

/// Whether `id` is planned copy `p`'s id (the copies' ids are all this module needs).
fn is_id_of(p: Planned, id: &BenchmarkId) -> bool {
    match p {
        Planned::Memory(MemOp::MemcpyD2D, bytes) => {
            id.name == MemOp::MemcpyD2D.name()
                && id.params.get("bytes").map(String::as_str) == Some(&*bytes.to_string())
        }
        _ => false,
    }
}

/// `benches` (built from `plan`, in its order) with the bounds of `plausibility_of` added.
pub fn with_bounds(
    plan: &[Planned],
    card: &Card,
    benches: Vec<Box<dyn Benchmark>>,
) -> Vec<Box<dyn Benchmark>> {
    plan.iter()
        .zip(benches)
        .map(|(&p, b)| match plausibility_of(p, plan, card) {
            Some(bound) => Annotated::with_bound(b, bound),
            None => b,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Mode;
    use crate::linear::{Family, LinearPlanned};
    use crate::memory::HostMemory;
    use crate::plan;
    use pitwall_schema::backend::SuiteOptions;

    const MIB: u64 = 1 << 20;

    fn card(name: &str, cache: CacheMode) -> Card {
        Card {
            name: name.into(),
            l2_bytes: 50 * MIB,
            cache,
        }
    }

    #[test]
    fn an_h200_holds_gemms_to_their_peak_and_copies_to_hbm() {
        let full = plan(&SuiteOptions::default());
        let h200 = card("NVIDIA H200", CacheMode::Cold);
        let gemm = plausibility_of(Planned::Gemm(Dtype::Bf16, 8192), &full, &h200).unwrap();
        assert_eq!(gemm.compute.unwrap().peak_tflops, 989.5);
        assert!(gemm.memory.is_none());
        let copy =
            plausibility_of(Planned::Memory(MemOp::CopyKernel, 1 << 30), &full, &h200).unwrap();
        let m = copy.memory.unwrap();
        assert_eq!(
            (m.hbm_gb_per_s, m.read_per_unit_bytes),
            (Some(4800.0), 1 << 30)
        );
        assert!(m.out_of_l2());
        // A 16 MiB copy may sit in L2 at the end event: bounded on paper, never checked.
        let small =
            plausibility_of(Planned::Memory(MemOp::CopyKernel, 16 * MIB), &full, &h200).unwrap();
        assert!(!small.memory.unwrap().out_of_l2());
        // PCIe transfers: no HBM bound.
        let h2d = Planned::Memory(MemOp::HostToDevice(HostMemory::Pinned), 1 << 30);
        assert_eq!(plausibility_of(h2d, &full, &h200), None);
    }

    #[test]
    fn a_unit_of_skinny_gemms_reads_its_weights_once_per_gemm_eager_and_graph_alike() {
        let skinny = |mode| {
            Planned::Linear(LinearPlanned {
                family: Family::Skinny,
                dtype: Dtype::Fp8E4m3,
                m: 16,
                n: 4096,
                k: 4096,
                mode,
                fast_accum: false,
            })
        };
        let full = plan(&SuiteOptions::default());
        let h200 = card("NVIDIA H200", CacheMode::Cold);
        let eager = plausibility_of(skinny(Mode::Eager), &full, &h200).unwrap();
        let graph = plausibility_of(skinny(Mode::Graph), &full, &h200).unwrap();
        let (e, g) = (eager.memory.unwrap(), graph.memory.unwrap());
        // 16 MiB of fp8 weights (and a 16×4096 input) per GEMM; a unit of either mode is 32
        // of them, over buffer sets rotated so that none is read from L2 (issue 23, defect 1).
        assert_eq!(e.read_per_unit_bytes, 32 * (16 * MIB + 16 * 4096));
        assert_eq!(e.read_per_unit_bytes, g.read_per_unit_bytes);
        assert!(
            e.out_of_l2() && g.out_of_l2(),
            "32 GEMMs' reads exceed the L2"
        );
        assert_eq!(graph.compute.unwrap().peak_tflops, 1979.0);
    }

    #[test]
    fn an_unknown_card_is_held_to_the_largest_copy_of_the_run() {
        let full = plan(&SuiteOptions::default());
        let rtx = card("NVIDIA GeForce RTX 4090", CacheMode::Cold);
        let triad = plausibility_of(Planned::Memory(MemOp::Triad, 1 << 30), &full, &rtx).unwrap();
        let m = triad.memory.unwrap();
        assert_eq!(m.hbm_gb_per_s, None);
        assert_eq!(
            m.copy.map(|c| c.display()).as_deref(),
            Some("cuda_memcpy_d2d[bytes=1073741824]")
        );
        // The copy itself is nobody's bound, and no GEMM peak is known.
        assert_eq!(
            plausibility_of(Planned::Memory(MemOp::MemcpyD2D, 1 << 30), &full, &rtx),
            None
        );
        assert_eq!(
            plausibility_of(Planned::Gemm(Dtype::Bf16, 8192), &full, &rtx),
            None
        );
    }
}
