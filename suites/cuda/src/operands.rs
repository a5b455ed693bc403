//! What the `implausible` guard of issue 23 needs to know of each benchmark of the CUDA
//! `kernel` suite, decided from the plan (so it is tested without a GPU): how it is timed, the
//! bytes its operands occupy over every buffer set (no workspace) and the bytes one timed unit
//! touches (`timing`: what a cold-mode flush made cold). The guard itself belongs to the engine.

use crate::Planned;
use crate::gemm::GemmBench;
use crate::memory::SETS;
use crate::rows;
use crate::timing::Timing;
use pitwall_schema::work::gemm_footprint_bytes;

/// The operand sizes of one benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operands {
    /// Device memory of its operands over every buffer set, without any workspace (warm mode:
    /// the data may stay in L2 between iterations when this is within 2× the L2 size).
    pub footprint_bytes: u64,
    /// Bytes its operands read and write in one timed unit (`timing::Timing`): in cold mode
    /// the unit starts with all of them out of L2.
    pub per_timed_unit_bytes: u64,
}

impl Planned {
    /// How it is timed: what one timed region holds (`timing`).
    pub fn timing(self) -> Timing {
        match self {
            Planned::Memory(op, _) => op.timing(),
            Planned::Gemm(..) | Planned::Rows(..) => Timing::PER_ITERATION,
            Planned::Linear(p) => p.timing(),
        }
    }

    /// Its operand sizes on a card with `l2_bytes` of L2 (the skinny GEMMs' buffer sets
    /// follow the L2: `LinearPlanned::buffer_sets`).
    pub fn operands(self, l2_bytes: u64) -> Operands {
        match self {
            Planned::Memory(op, bytes) => Operands {
                footprint_bytes: op.footprint_bytes(bytes),
                per_timed_unit_bytes: op.moved_bytes(bytes),
            },
            Planned::Gemm(dtype, n) => {
                let n = n as u64;
                Operands {
                    footprint_bytes: GemmBench::footprint_bytes(dtype, n as usize),
                    per_timed_unit_bytes: gemm_footprint_bytes(n, n, n, dtype, dtype),
                }
            }
            Planned::Rows(op, (r, c)) => {
                let all = rows::footprint_bytes(op, r, c);
                Operands {
                    footprint_bytes: all,
                    per_timed_unit_bytes: all / SETS as u64,
                }
            }
            Planned::Linear(p) => Operands {
                footprint_bytes: p.buffer_sets(l2_bytes) as u64 * p.moved_bytes(),
                per_timed_unit_bytes: self.timing().work.iterations() * p.moved_bytes(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::Family;
    use crate::memory::MemOp;
    use pitwall_schema::backend::SuiteOptions;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_timed_unit_of_a_skinny_gemm_reads_32_gemms_and_a_copy_its_arrays() {
        let l2 = 50 * MIB;
        let all = crate::plan(&SuiteOptions::default());
        let copy = Planned::Memory(MemOp::MemcpyD2D, 16 * MIB).operands(l2);
        assert_eq!(copy.per_timed_unit_bytes, 32 * MIB);
        assert_eq!(copy.footprint_bytes, 2 * 2 * 16 * MIB);
        let skinny = all
            .iter()
            .find_map(|p| match p {
                Planned::Linear(l) if l.family == Family::Skinny => Some(*l),
                _ => None,
            })
            .unwrap();
        let o = Planned::Linear(skinny).operands(l2);
        assert_eq!(o.per_timed_unit_bytes, 32 * skinny.moved_bytes());
        assert_eq!(
            o.footprint_bytes,
            skinny.buffer_sets(l2) as u64 * skinny.moved_bytes()
        );
        assert_eq!(Planned::Linear(skinny).timing().work.iterations(), 32);
        for p in all {
            let o = p.operands(l2);
            assert!(o.per_timed_unit_bytes > 0 && o.footprint_bytes <= p.footprint_bytes());
        }
    }
}
