//! Which benchmarks of the CUDA `kernel` suite are also reported against the copy bandwidth
//! measured in the same run (`Benchmark::ceiling`): the copy kernel and the triad against the
//! driver's device-to-device copy of the same array size, the row kernels (reduction, softmax,
//! layer norm) against the largest device-to-device copy, far beyond L2; a copy that may still
//! sit in L2 at its end event (16 MiB) is nobody's ceiling. Decided from the plan,
//! so it is tested without a GPU.

use crate::Planned;
use crate::memory::{MemOp, may_sit_in_l2};
use pitwall_schema::benchmark::{Annotated, Benchmark, BenchmarkId, Ceiling};

/// The ceiling's name in the derived measure (`bandwidth_of_copy`), as in the CPU backend.
const LABEL: &str = "copy";

/// The id `cuda_memcpy_d2d[bytes=…]` of the driver's copy of `bytes`.
fn memcpy_id(bytes: u64) -> BenchmarkId {
    BenchmarkId::new(MemOp::MemcpyD2D.name(), &[("bytes", bytes.to_string())])
}

/// The ceiling of planned benchmark `p` within `plan`, when its copy is planned too.
pub fn ceiling_of(p: Planned, plan: &[Planned]) -> Option<Ceiling> {
    let copies = || {
        plan.iter().filter_map(|q| match q {
            // A copy that may still sit in L2 at its end event is no HBM ceiling.
            Planned::Memory(MemOp::MemcpyD2D, bytes) if !may_sit_in_l2(2 * bytes) => Some(*bytes),
            _ => None,
        })
    };
    let of = match p {
        Planned::Memory(MemOp::CopyKernel | MemOp::Triad, bytes) => {
            copies().find(|&b| b == bytes)?
        }
        Planned::Rows(..) => copies().max()?,
        _ => return None,
    };
    Some(Ceiling {
        measure: "bandwidth".into(),
        of: memcpy_id(of),
        label: LABEL.into(),
    })
}

/// `benches` (built from `plan`, in its order) with the ceilings of `ceiling_of` added.
pub fn with_ceilings(
    plan: &[Planned],
    benches: Vec<Box<dyn Benchmark>>,
) -> Vec<Box<dyn Benchmark>> {
    plan.iter()
        .zip(benches)
        .map(|(&p, b)| match ceiling_of(p, plan) {
            Some(ceiling) => Annotated::with_ceiling(b, ceiling),
            None => b,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan;
    use pitwall_schema::backend::SuiteOptions;
    use pitwall_schema::work::{Dtype, RowOp};

    const MIB: u64 = 1 << 20;

    #[test]
    fn memory_kernels_use_the_copy_of_their_size_and_rows_the_largest() {
        let full = plan(&SuiteOptions::default());
        let of = |p| ceiling_of(p, &full).map(|c| c.of.display());
        assert_eq!(
            of(Planned::Memory(MemOp::Triad, 256 * MIB)).as_deref(),
            Some("cuda_memcpy_d2d[bytes=268435456]")
        );
        // Issue 23, defect 11: 16 MiB copies may sit in L2 at the end event: no ceiling.
        assert_eq!(of(Planned::Memory(MemOp::CopyKernel, 16 * MIB)), None);
        assert_eq!(
            of(Planned::Rows(RowOp::Softmax, (4096, 8192))).as_deref(),
            Some("cuda_memcpy_d2d[bytes=1073741824]")
        );
        assert_eq!(of(Planned::Memory(MemOp::MemcpyD2D, 16 * MIB)), None);
        assert_eq!(of(Planned::Gemm(Dtype::Bf16, 4096)), None);
        let c = ceiling_of(Planned::Rows(RowOp::Sum, (16384, 1024)), &full).unwrap();
        assert_eq!(c.derived_measure(), "bandwidth_of_copy");
    }

    #[test]
    fn a_capped_plan_relates_rows_to_the_largest_copy_left_or_to_none() {
        // 256 MiB: the 1 GiB copies are capped out, the 16 MiB ones stay.
        let capped = plan(&SuiteOptions {
            max_bytes: Some(256 * MIB),
            ..Default::default()
        });
        let rows = *capped
            .iter()
            .find(|p| matches!(p, Planned::Rows(..)))
            .unwrap();
        let largest = capped
            .iter()
            .filter_map(|p| match p {
                Planned::Memory(MemOp::MemcpyD2D, b) => Some(*b),
                _ => None,
            })
            .max()
            .unwrap();
        assert!(largest < 1024 * MIB);
        // Only copies that may sit in L2 are left: no ceiling.
        assert!(may_sit_in_l2(2 * largest));
        assert_eq!(ceiling_of(rows, &capped), None);
        let wider = plan(&SuiteOptions {
            max_bytes: Some(1024 * MIB),
            ..Default::default()
        });
        assert_eq!(ceiling_of(rows, &wider).unwrap().of, memcpy_id(256 * MIB));
        // Without any copy planned, nothing is related.
        assert_eq!(ceiling_of(rows, &[rows]), None);
    }
}
