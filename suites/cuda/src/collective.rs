//! The CUDA `collective` suite: which NCCL layout a worker is in (one process driving every
//! local GPU, or one process per GPU after the rendezvous), the benchmarks that layout runs
//! (the five collectives over nccl-tests' sweep, 8 B to 1 GiB, sized by
//! `pitwall_schema::work`), and the suite built from them: one benchmark per collective and
//! size, all sharing one NCCL group (`nccl_group`), each checked before its first timed batch,
//! its sample the mean of the ranks' times (nccl-tests' default `-a 1`) with every rank's
//! time kept, algbw and busbw counted as nccl-tests does (docs/SUITES.md).

use std::sync::{Arc, Mutex};

use pitwall_rendezvous::session::Bound;
use pitwall_rendezvous::{Launcher, Layout};

use crate::nccl_group::{Group, LEAD_TIMEOUT, NcclProvider};
use pitwall_schema::backend::{BackendError, SuiteOptions};
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::schema::Unit;
use pitwall_schema::work::{
    Collective, CollectiveShape, bus_factor, collective_shape, sweep_bytes,
};

/// Largest message of the NCCL sweep, as nccl-tests' usual `-e 1G`.
pub const NCCL_MAX_BYTES: u64 = 1 << 30;
/// The NCCL benchmarks' element type is f32 (`ncclFloat`, nccl-tests' default).
const ELEM_BYTES: u64 = 4;

/// How the ranks of an NCCL collective map to processes and GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NcclLayout {
    /// One process drives every local GPU (`ncclCommInitAll`); no rendezvous.
    AllLocalGpus { devices: usize },
    /// One process per GPU, started by a launcher: rank 0 creates the `ncclUniqueId` and hands
    /// it to the others through the rendezvous (`ncclCommInitRank`); the GPU is `local_rank`.
    RankPerProcess {
        rank: usize,
        world_size: usize,
        local_rank: usize,
        launcher: Launcher,
    },
}

impl NcclLayout {
    /// The layout of this worker: a launcher's multi-process layout, else every GPU it sees.
    pub fn of(layout: &Layout, devices: usize) -> NcclLayout {
        if layout.is_multi_process() {
            NcclLayout::RankPerProcess {
                rank: layout.rank,
                world_size: layout.world_size,
                local_rank: layout.local_rank,
                launcher: layout.launcher,
            }
        } else {
            NcclLayout::AllLocalGpus {
                devices: devices.max(1),
            }
        }
    }

    pub fn world_size(&self) -> usize {
        match self {
            NcclLayout::AllLocalGpus { devices } => *devices,
            NcclLayout::RankPerProcess { world_size, .. } => *world_size,
        }
    }

    /// What the run should say about the layout: one GPU is world size 1, where every
    /// collective but broadcast has a bus factor of 0 (nothing crosses a link).
    pub fn describe(&self) -> String {
        match self {
            NcclLayout::AllLocalGpus { devices: 1 } => {
                "one process, one GPU: world size 1 (busbw is 0 but for broadcast; hint: run on several GPUs, or one process per GPU under torchrun or srun)".to_string()
            }
            NcclLayout::AllLocalGpus { devices } => {
                format!("one process driving {devices} local GPUs: world size {devices}")
            }
            NcclLayout::RankPerProcess {
                rank,
                world_size,
                local_rank,
                launcher,
            } => format!(
                "rank {rank} of {world_size} ({}), GPU {local_rank}: one process per GPU",
                launcher.as_str()
            ),
        }
    }
}

/// One NCCL benchmark before any device is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedCollective {
    pub op: Collective,
    /// The sweep's size; `shape.bytes` is what algbw counts.
    pub requested_bytes: u64,
    pub shape: CollectiveShape,
}

/// The five collectives over the sweep 8 B … min(`max_bytes`, 1 GiB), factor 2, for
/// `world_size` ranks; sizes that leave no f32 per rank are left out.
pub fn plan(world_size: usize, options: &SuiteOptions) -> Vec<PlannedCollective> {
    let max = options
        .max_bytes
        .unwrap_or(NCCL_MAX_BYTES)
        .min(NCCL_MAX_BYTES);
    Collective::MEASURED
        .into_iter()
        .flat_map(|op| {
            sweep_bytes(max).into_iter().filter_map(move |bytes| {
                collective_shape(op, bytes, world_size, ELEM_BYTES).map(|shape| PlannedCollective {
                    op,
                    requested_bytes: bytes,
                    shape,
                })
            })
        })
        .collect()
}

/// The suite's benchmarks on this machine's GPUs through NCCL ([`suite_with`] and the
/// real NCCL of `nccl_ranks`).
pub fn suite(
    nccl: bool,
    layout: Result<Layout, String>,
    devices: usize,
    options: &SuiteOptions,
) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
    let provider = crate::nccl_ranks::SystemNccl { visible: devices };
    suite_with(&provider, nccl, layout, devices, options)
}

/// The suite's benchmarks: NCCL absent or the launcher's variables wrong is one line; else
/// the ranks meet (one process: every local GPU, or `ranks` of them; under a launcher: the
/// rendezvous, rank 0 here) and every planned collective is a benchmark of the group.
pub fn suite_with(
    provider: &dyn NcclProvider,
    nccl: bool,
    layout: Result<Layout, String>,
    devices: usize,
    options: &SuiteOptions,
) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
    if !nccl {
        return Err(crate::probe::no_nccl());
    }
    let failed = |reason: String| BackendError::Failed {
        backend: "cuda",
        reason,
    };
    let layout = layout.map_err(failed)?;
    let nccl_layout = NcclLayout::of(&layout, options.ranks.unwrap_or(devices));
    let group = match &nccl_layout {
        NcclLayout::AllLocalGpus { devices } => Group::all_local(provider, *devices),
        NcclLayout::RankPerProcess { .. } => {
            let bound = Bound::bind(&layout).map_err(|e| failed(e.to_string()))?;
            Group::lead(&layout, bound, provider, LEAD_TIMEOUT)
        }
    }
    .map_err(|e| failed(format!("{} ({})", e, nccl_layout.describe())))?;
    let name = match nccl_layout {
        NcclLayout::AllLocalGpus { .. } => "one_process",
        NcclLayout::RankPerProcess { .. } => "processes",
    };
    let planned = plan(group.world_size(), options);
    Ok(benches(group, name, &planned))
}

/// One NCCL collective of the sweep, run by every rank of the group.
pub struct NcclBench {
    pub op: Collective,
    pub requested_bytes: u64,
    pub shape: CollectiveShape,
    layout: &'static str,
    world_size: usize,
    group: Arc<Mutex<Group>>,
    verified: bool,
    last_rank_ns: Option<Vec<f64>>,
}

/// The benchmark name of `op` (`nccl_allreduce_sum_f32`, `nccl_broadcast_f32`…): not the CPU
/// backend's names, so switching backends never mixes one series.
pub fn bench_name(op: Collective) -> String {
    match op {
        Collective::AllReduce | Collective::ReduceScatter | Collective::Reduce => {
            format!("nccl_{}_sum_f32", op.as_str())
        }
        _ => format!("nccl_{}_f32", op.as_str()),
    }
}

/// The benchmarks of `planned` on `group`; `layout` is `one_process` or `processes`.
pub fn benches(
    group: Group,
    layout: &'static str,
    planned: &[PlannedCollective],
) -> Vec<Box<dyn Benchmark>> {
    let world_size = group.world_size();
    let group = Arc::new(Mutex::new(group));
    planned
        .iter()
        .map(|p| -> Box<dyn Benchmark> {
            Box::new(NcclBench {
                op: p.op,
                requested_bytes: p.requested_bytes,
                shape: p.shape,
                layout,
                world_size,
                group: Arc::clone(&group),
                verified: false,
                last_rank_ns: None,
            })
        })
        .collect()
}

impl Benchmark for NcclBench {
    fn id(&self) -> BenchmarkId {
        let ranks = self.world_size;
        BenchmarkId::new(
            &bench_name(self.op),
            &[
                ("bytes", self.shape.bytes.to_string()),
                ("ranks", ranks.to_string()),
                ("layout", self.layout.to_string()),
            ],
        )
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        let ranks = self.world_size;
        let bytes = self.shape.bytes as f64;
        vec![
            MetricSpec::rate("algbw", Unit::GB_PER_S, bytes, 1e9),
            MetricSpec::rate(
                "busbw",
                Unit::GB_PER_S,
                bytes * bus_factor(self.op, ranks),
                1e9,
            ),
        ]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        let mut group = self
            .group
            .lock()
            .map_err(|_| BenchError::Backend("a rank's session panicked".to_string()))?;
        let times = group.drive(
            self.op,
            self.requested_bytes,
            &self.shape,
            iters,
            !self.verified,
        )?;
        self.verified = true;
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        self.last_rank_ns = Some(times);
        Ok(mean)
    }

    fn rank_times_ns(&self) -> Option<Vec<f64>> {
        self.last_rank_ns.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(world_size: usize, rank: usize) -> Layout {
        Layout {
            rank,
            world_size,
            local_rank: rank % 8,
            launcher: Launcher::Slurm,
            addr: (world_size > 1).then(|| "head:29500".to_string()),
        }
    }

    #[test]
    fn the_sweep_runs_from_8_bytes_to_1_gib() {
        let p = plan(8, &SuiteOptions::default());
        let allreduce: Vec<u64> = p
            .iter()
            .filter(|c| c.op == Collective::AllReduce)
            .map(|c| c.requested_bytes)
            .collect();
        assert_eq!(allreduce.len(), 28);
        assert_eq!((allreduce[0], allreduce[27]), (8, 1 << 30));
        // Over 8 ranks the split collectives need 32 B for one f32 per rank: 8 and 16 B out.
        for op in [
            Collective::AllGather,
            Collective::ReduceScatter,
            Collective::AllToAll,
        ] {
            let sizes: Vec<_> = p.iter().filter(|c| c.op == op).collect();
            assert_eq!(sizes.len(), 26, "{op:?}");
            assert_eq!(sizes[0].requested_bytes, 32, "{op:?}");
            assert_eq!(sizes[0].shape.bytes, 32, "{op:?}");
        }
        assert_eq!(p.len(), 28 + 28 + 26 * 3);
        // max_bytes caps it; it never goes past 1 GiB.
        let capped = SuiteOptions {
            max_bytes: Some(64),
            ..Default::default()
        };
        assert!(plan(2, &capped).iter().all(|c| c.requested_bytes <= 64));
        let huge = SuiteOptions {
            max_bytes: Some(1 << 40),
            ..Default::default()
        };
        assert_eq!(plan(2, &huge).len(), 28 * 5);
    }

    #[test]
    fn message_sizes_per_collective_are_nccl_tests_counts() {
        let p = plan(3, &SuiteOptions::default());
        let at = |op, bytes| {
            p.iter()
                .find(|c| c.op == op && c.requested_bytes == bytes)
                .unwrap()
                .shape
        };
        assert_eq!(at(Collective::AllReduce, 1 << 20).bytes, 1 << 20);
        assert_eq!(at(Collective::Broadcast, 1 << 20).recv_elements, 1 << 18);
        // 2^18 f32 over 3 ranks: 87381 per rank, 262143 in all.
        let ag = at(Collective::AllGather, 1 << 20);
        assert_eq!(
            (ag.send_elements, ag.recv_elements, ag.bytes),
            (87381, 262_143, 1_048_572)
        );
        let rs = at(Collective::ReduceScatter, 1 << 20);
        assert_eq!((rs.send_elements, rs.recv_elements), (262_143, 87381));
        let a2a = at(Collective::AllToAll, 1 << 20);
        assert_eq!((a2a.send_elements, a2a.recv_elements), (262_143, 262_143));
    }

    #[test]
    fn layouts_say_which_and_one_gpu_is_world_size_one() {
        let one = NcclLayout::of(&Layout::single(), 1);
        assert_eq!(one.world_size(), 1);
        assert!(
            one.describe().contains("world size 1"),
            "{}",
            one.describe()
        );
        assert_eq!(NcclLayout::of(&Layout::single(), 0).world_size(), 1);
        let all = NcclLayout::of(&Layout::single(), 8);
        assert_eq!(all, NcclLayout::AllLocalGpus { devices: 8 });
        let ranked = NcclLayout::of(&layout(16, 9), 8);
        assert_eq!(ranked.world_size(), 16);
        assert!(ranked.describe().starts_with("rank 9 of 16 (slurm), GPU 1"));
    }

    #[test]
    fn no_nccl_or_a_bad_layout_is_one_line() {
        let opts = SuiteOptions::default();
        let provider = crate::nccl_ranks::SystemNccl { visible: 1 };
        let no_nccl = suite_with(&provider, false, Ok(Layout::single()), 1, &opts)
            .err()
            .unwrap()
            .to_string();
        assert!(
            no_nccl.contains("no NCCL") && no_nccl.contains("hint:"),
            "{no_nccl}"
        );
        let bad = suite_with(
            &provider,
            true,
            Err("slurm layout needs MASTER_ADDR".into()),
            1,
            &opts,
        );
        assert!(matches!(bad, Err(BackendError::Failed { .. })));
    }

    #[test]
    fn names_are_not_the_cpu_backends() {
        assert_eq!(bench_name(Collective::AllReduce), "nccl_allreduce_sum_f32");
        assert_eq!(
            bench_name(Collective::ReduceScatter),
            "nccl_reducescatter_sum_f32"
        );
        assert_eq!(bench_name(Collective::AllGather), "nccl_allgather_f32");
        assert_eq!(bench_name(Collective::Broadcast), "nccl_broadcast_f32");
        assert_eq!(bench_name(Collective::AllToAll), "nccl_alltoall_f32");
    }
}
