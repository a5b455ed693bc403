//! What each rank of an NCCL collective sends and must receive: rank-dependent small integers
//! stored as f32, so every sum NCCL forms, in any order, is exact and a correct result equals
//! the reference bit for bit. The same values as the CPU backend's collectives
//! (`pitwall_cpu::mesh::input_value`), so the two backends check the same thing. The
//! reference is O(1) per element (values repeat every 61 elements), so the check of a 1 GiB
//! output costs a pass over it, not n.

use pitwall_schema::work::{Collective, CollectiveShape};

/// The period of [`input_value`] in the element index.
const PERIOD: usize = 61;

/// Rank `rank`'s input element `i`: an integer in [−30, 30].
pub fn input_value(rank: usize, i: usize) -> f32 {
    ((i * 7 + rank * 13) % PERIOD) as f32 - 30.0
}

/// Rank `rank`'s send buffer for `shape`.
pub fn input_for(rank: usize, shape: &CollectiveShape) -> Vec<f32> {
    (0..shape.send_elements as usize)
        .map(|i| input_value(rank, i))
        .collect()
}

/// The reference of one collective over `n` ranks: what each rank's output must hold.
#[derive(Debug, Clone)]
pub struct Expected {
    op: Collective,
    n: usize,
    /// The block each rank contributes or receives, for the collectives that split.
    m: usize,
    /// Σ over ranks of `input_value(q, i)`, by `i % 61`.
    sums: [f32; PERIOD],
}

impl Expected {
    pub fn new(op: Collective, n: usize, shape: &CollectiveShape) -> Expected {
        let m = match op {
            Collective::AllGather => shape.send_elements as usize,
            Collective::ReduceScatter => shape.recv_elements as usize,
            Collective::AllToAll => shape.send_elements as usize / n.max(1),
            _ => shape.recv_elements as usize,
        };
        let mut sums = [0.0f32; PERIOD];
        for (r, s) in sums.iter_mut().enumerate() {
            *s = (0..n).map(|q| input_value(q, r)).sum();
        }
        Expected {
            op,
            n,
            m: m.max(1),
            sums,
        }
    }

    /// What rank `rank` must hold at element `i` of its output.
    pub fn at(&self, rank: usize, i: usize) -> f32 {
        let m = self.m;
        match self.op {
            Collective::AllReduce | Collective::Reduce => self.sums[i % PERIOD],
            // Block b of the output is rank b's input.
            Collective::AllGather => input_value(i / m, i % m),
            Collective::ReduceScatter => self.sums[(rank * m + i) % PERIOD],
            Collective::Broadcast => input_value(0, i),
            // Block b of the output is block `rank` of rank b's input.
            Collective::AllToAll => input_value(i / m, rank * m + i % m),
        }
    }

    /// Rank `rank`'s `output` against the reference: the first wrong element, by rank and
    /// index, or how many elements came back when the count is wrong.
    pub fn check(&self, rank: usize, want_len: usize, output: &[f32]) -> Result<(), String> {
        let name = self.op.as_str();
        let n = self.n;
        if output.len() != want_len {
            return Err(format!(
                "nccl {name} over {n} ranks: rank {rank} has {} output elements, expected {want_len}",
                output.len()
            ));
        }
        for (i, &got) in output.iter().enumerate() {
            let want = self.at(rank, i);
            // Exact: integer sums in f32 have no rounding; NaN never equals.
            if got != want {
                return Err(format!(
                    "nccl {name} over {n} ranks: rank {rank} element {i} is {got}, expected {want}"
                ));
            }
        }
        Ok(())
    }
}

/// Device bytes one rank allocates for `shape` (its send and receive buffers, f32).
pub fn rank_buffer_bytes(shape: &CollectiveShape) -> u64 {
    (shape.send_elements + shape.recv_elements) * 4
}

/// The collective computed naively on the host from every rank's input: what NCCL would
/// leave on `rank`. The tests' reference, and the fake NCCL's result in `nccl_group_tests`.
#[cfg(test)]
pub(crate) fn host_collective(
    op: Collective,
    n: usize,
    s: &CollectiveShape,
    rank: usize,
) -> Vec<f32> {
    let inputs: Vec<Vec<f32>> = (0..n).map(|q| input_for(q, s)).collect();
    let len = s.recv_elements as usize;
    match op {
        Collective::AllReduce => (0..len)
            .map(|i| inputs.iter().map(|x| x[i]).sum())
            .collect(),
        Collective::AllGather => inputs.concat(),
        Collective::ReduceScatter => (0..len)
            .map(|i| inputs.iter().map(|x| x[rank * len + i]).sum())
            .collect(),
        Collective::Broadcast => inputs[0].clone(),
        Collective::AllToAll => {
            let m = s.send_elements as usize / n;
            (0..n)
                .flat_map(|b| inputs[b][rank * m..(rank + 1) * m].to_vec())
                .collect()
        }
        Collective::Reduce => unreachable!(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::work::collective_shape;

    fn shape(op: Collective, bytes: u64, n: usize) -> CollectiveShape {
        collective_shape(op, bytes, n, 4).unwrap()
    }

    #[test]
    fn the_reference_is_the_naive_collective_for_every_op_and_rank() {
        for n in [1, 2, 3, 8] {
            for op in Collective::MEASURED {
                for bytes in [32u64, 4096, 1000 * 4] {
                    let Some(s) = collective_shape(op, bytes, n, 4) else {
                        continue;
                    };
                    let e = Expected::new(op, n, &s);
                    for rank in 0..n {
                        let out = host_collective(op, n, &s, rank);
                        assert_eq!(out.len() as u64, s.recv_elements);
                        e.check(rank, s.recv_elements as usize, &out)
                            .unwrap_or_else(|m| panic!("{op:?} n={n} {bytes} B: {m}"));
                    }
                }
            }
        }
    }

    #[test]
    fn sums_are_exact_integers_and_inputs_differ_by_rank() {
        let s = shape(Collective::AllReduce, 1 << 12, 8);
        let e = Expected::new(Collective::AllReduce, 8, &s);
        for i in 0..200 {
            let v = e.at(0, i);
            assert_eq!(v, v.round());
            assert!(v.abs() <= 240.0);
        }
        assert_ne!(input_for(0, &s), input_for(1, &s));
        assert!(input_for(3, &s).iter().all(|v| v.abs() <= 30.0));
    }

    #[test]
    fn a_wrong_element_or_length_names_the_rank_and_index() {
        let s = shape(Collective::ReduceScatter, 96, 3);
        let e = Expected::new(Collective::ReduceScatter, 3, &s);
        let mut out = host_collective(Collective::ReduceScatter, 3, &s, 2);
        out[5] += 1.0;
        let err = e.check(2, out.len(), &out).unwrap_err();
        assert!(
            err.starts_with("nccl reducescatter over 3 ranks: rank 2 element 5 is"),
            "{err}"
        );
        out[5] = f32::NAN;
        assert!(e.check(2, out.len(), &out).is_err());
        // Another rank's correct block is wrong here.
        let other = host_collective(Collective::ReduceScatter, 3, &s, 1);
        assert!(e.check(2, other.len(), &other).is_err());
        let short = &other[..3];
        assert!(
            e.check(1, other.len(), short)
                .unwrap_err()
                .contains("has 3 output elements")
        );
    }

    #[test]
    fn buffer_bytes_per_collective() {
        // 1 MiB over 4 ranks: all-reduce and broadcast send and receive the whole buffer,
        // all-gather sends a quarter, reduce-scatter receives a quarter, all-to-all both whole.
        let mib = 1u64 << 20;
        let b = |op| rank_buffer_bytes(&shape(op, mib, 4));
        assert_eq!(b(Collective::AllReduce), 2 * mib);
        assert_eq!(b(Collective::Broadcast), 2 * mib);
        assert_eq!(b(Collective::AllGather), mib + mib / 4);
        assert_eq!(b(Collective::ReduceScatter), mib + mib / 4);
        assert_eq!(b(Collective::AllToAll), 2 * mib);
    }
}
