//! The NCCL suite's ranks without a GPU: a fake NCCL whose ranks compute each collective on
//! the host from every rank's known input, over the real rendezvous on localhost with ranks as
//! threads: the unique id handed from rank 0 to every rank, the check before timing, per-rank
//! times, a wrong rank named, a rank that is not ready, the end of the run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use super::*;
use crate::collective::plan;
use crate::collective::{bench_name, benches};
use crate::nccl_data::{Expected, host_collective};
use pitwall_rendezvous::Launcher;
use pitwall_schema::benchmark::{Benchmark, MetricSpec};
use pitwall_schema::work::bus_factor;
use std::sync::{Arc, Mutex};

const TEST_TIMEOUT: Duration = Duration::from_secs(30);

fn layout(rank: usize, world_size: usize, port: u16) -> Layout {
    Layout {
        rank,
        world_size,
        local_rank: rank,
        launcher: Launcher::Torchrun,
        addr: Some(format!("127.0.0.1:{port}")),
    }
}

/// What the fake NCCL of one process saw and how it misbehaves.
#[derive(Default)]
struct Fake {
    ids_made: AtomicUsize,
    joined: Mutex<Vec<(usize, [u8; UNIQUE_ID_BYTES])>>,
    /// The rank whose output is off by one at element 1.
    corrupt: Option<usize>,
    not_ready: Option<&'static str>,
}

struct FakeRanks {
    ranks: Vec<usize>,
    world: usize,
    corrupt: Option<usize>,
    verified: Arc<AtomicUsize>,
}

impl LocalRanks for FakeRanks {
    fn ranks(&self) -> Vec<usize> {
        self.ranks.clone()
    }
    fn prepare(
        &mut self,
        op: Collective,
        shape: &CollectiveShape,
        verify: bool,
    ) -> Result<Vec<Result<(), String>>, String> {
        if !verify {
            return Ok(vec![Ok(()); self.ranks.len()]);
        }
        self.verified.fetch_add(1, Ordering::SeqCst);
        let e = Expected::new(op, self.world, shape);
        Ok(self
            .ranks
            .iter()
            .map(|&r| {
                let mut out = host_collective(op, self.world, shape, r);
                if self.corrupt == Some(r) && out.len() > 1 {
                    out[1] += 1.0;
                }
                e.check(r, shape.recv_elements as usize, &out)
            })
            .collect())
    }
    fn time(&mut self, _: Collective, _: &CollectiveShape, iters: u64) -> Result<Vec<f64>, String> {
        // Rank r takes (r + 1) µs per collective: a straggler is the last rank.
        Ok(self
            .ranks
            .iter()
            .map(|&r| (r as f64 + 1.0) * 1e3 * iters as f64)
            .collect())
    }
}

impl NcclProvider for Fake {
    fn ready(&self, _: usize) -> Result<(), String> {
        self.not_ready.map_or(Ok(()), |w| Err(w.to_string()))
    }
    fn unique_id(&self) -> Result<[u8; UNIQUE_ID_BYTES], String> {
        let n = self.ids_made.fetch_add(1, Ordering::SeqCst) as u8;
        let mut id = [0u8; UNIQUE_ID_BYTES];
        for (i, b) in id.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(31) ^ n ^ 0xA5;
        }
        Ok(id)
    }
    fn join_rank(
        &self,
        rank: usize,
        world_size: usize,
        _: usize,
        id: &[u8; UNIQUE_ID_BYTES],
    ) -> Result<Box<dyn LocalRanks>, String> {
        self.joined.lock().unwrap().push((rank, *id));
        Ok(Box::new(FakeRanks {
            ranks: vec![rank],
            world: world_size,
            corrupt: self.corrupt,
            verified: Arc::default(),
        }))
    }
    fn all_local(&self, devices: usize) -> Result<Box<dyn LocalRanks>, String> {
        Ok(Box::new(FakeRanks {
            ranks: (0..devices).collect(),
            world: devices,
            corrupt: self.corrupt,
            verified: Arc::default(),
        }))
    }
}

/// Rank 0 of `world` with followers as threads, each with its own fake; runs `f` on rank 0's
/// benchmarks (max 4 KiB), then releases the followers as `release_followers` does. Returns
/// rank 0's fake and the followers'.
fn with_ranks(
    world: usize,
    fakes: Vec<Fake>,
    f: impl FnOnce(Result<Vec<Box<dyn Benchmark>>, CollectiveError>),
) -> Vec<Arc<Fake>> {
    let fakes: Vec<Arc<Fake>> = fakes.into_iter().map(Arc::new).collect();
    let bound = Bound::bind(&layout(0, world, 0)).unwrap();
    let port = bound.port().unwrap();
    let followers: Vec<_> = (1..world)
        .map(|r| {
            let fake = Arc::clone(&fakes[r]);
            thread::spawn(move || follow_with(&layout(r, world, port), fake.as_ref(), TEST_TIMEOUT))
        })
        .collect();
    let lead = layout(0, world, port);
    let planned = plan(
        world,
        &pitwall_schema::backend::SuiteOptions {
            max_bytes: Some(4096),
            ..Default::default()
        },
    );
    f(Group::lead(&lead, bound, fakes[0].as_ref(), TEST_TIMEOUT)
        .map(|g| benches(g, "processes", &planned)));
    Bound::bind(&lead)
        .unwrap()
        .join(&[], |_| END_RUN.to_vec(), TEST_TIMEOUT)
        .unwrap();
    for h in followers {
        h.join().unwrap().unwrap();
    }
    fakes
}

#[test]
fn rank_zeros_unique_id_reaches_every_rank_and_every_collective_checks() {
    let world = 3;
    let fakes = with_ranks(world, (0..world).map(|_| Fake::default()).collect(), |b| {
        let mut benches = b.unwrap();
        // 5 collectives, 8 B … 4 KiB; the split ones start at 16 B (one f32 per rank of 3).
        assert_eq!(benches.len(), 10 * 2 + 9 * 3);
        for b in &mut benches {
            let name = b.id().display();
            assert!(
                name.starts_with("nccl_") && name.contains("layout=processes,ranks=3"),
                "{name}"
            );
            b.run(1).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mean = b.run(4).unwrap();
            // Ranks take 1, 2, 3 µs each: the sample is their mean, every rank's time kept.
            assert_eq!(mean, 8e3, "{name}");
            assert_eq!(b.rank_times_ns().unwrap(), vec![4e3, 8e3, 12e3], "{name}");
        }
    });
    assert_eq!(
        fakes[0].ids_made.load(Ordering::SeqCst),
        1,
        "only rank 0 makes the id"
    );
    assert!(
        fakes[1..]
            .iter()
            .all(|f| f.ids_made.load(Ordering::SeqCst) == 0)
    );
    let id = fakes[0].joined.lock().unwrap()[0];
    assert_eq!(id.0, 0);
    assert!(id.1.iter().any(|&b| b != 0));
    for (r, f) in fakes.iter().enumerate().skip(1) {
        assert_eq!(
            *f.joined.lock().unwrap(),
            vec![(r, id.1)],
            "rank {r} got rank 0's id"
        );
    }
}

#[test]
fn a_wrong_rank_fails_the_benchmark_by_name_and_nobody_times() {
    let fakes = vec![
        Fake::default(),
        Fake::default(),
        Fake {
            corrupt: Some(2),
            ..Fake::default()
        },
    ];
    with_ranks(3, fakes, |b| {
        let mut benches = b.unwrap();
        let allreduce = benches
            .iter_mut()
            .find(|b| {
                b.id()
                    .display()
                    .starts_with("nccl_allreduce_sum_f32[bytes=64,")
            })
            .unwrap();
        let err = allreduce.run(1).unwrap_err();
        assert!(matches!(err, BenchError::Validation(_)), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("rank 2: nccl allreduce over 3 ranks: rank 2 element 1"),
            "{msg}"
        );
        assert!(allreduce.rank_times_ns().is_none());
    });
}

#[test]
fn a_rank_that_is_not_ready_calls_the_session_off_and_still_exits_cleanly() {
    let fakes = vec![
        Fake::default(),
        Fake {
            not_ready: Some("no NCCL"),
            ..Fake::default()
        },
    ];
    let fakes = with_ranks(2, fakes, |b| {
        let err = b.err().unwrap().to_string();
        assert_eq!(err, "nccl session refused: rank 1: no NCCL");
    });
    assert_eq!(fakes[0].ids_made.load(Ordering::SeqCst), 0);
    assert!(fakes[1].joined.lock().unwrap().is_empty());
}

#[test]
fn one_process_drives_every_local_gpu_as_a_rank() {
    let fake = Fake::default();
    let group = Group::all_local(&fake, 4).unwrap();
    let planned = plan(
        4,
        &pitwall_schema::backend::SuiteOptions {
            max_bytes: Some(256),
            ..Default::default()
        },
    );
    let mut benches = benches(group, "one_process", &planned);
    for b in &mut benches {
        b.run(1).unwrap();
        assert_eq!(b.rank_times_ns().unwrap().len(), 4);
        let work = |m: &MetricSpec| match m.conversion {
            pitwall_schema::benchmark::Conversion::Rate { work_per_iter, .. } => work_per_iter,
            _ => panic!("not a rate"),
        };
        let m = b.metrics();
        let op = Collective::MEASURED
            .into_iter()
            .find(|op| b.id().display().starts_with(&bench_name(*op)))
            .unwrap();
        // busbw = algbw × nccl-tests' factor for 4 ranks.
        assert_eq!(work(&m[1]), work(&m[0]) * bus_factor(op, 4));
    }
    let name = benches[0].id().display();
    assert_eq!(
        name,
        "nccl_allreduce_sum_f32[bytes=8,layout=one_process,ranks=4]"
    );
}

#[test]
fn hellos_and_blobs_say_who_is_ready() {
    let fake = Fake::default();
    let ok = Hello {
        rank: 1,
        peer_ip: None,
        payload: hello_of(&fake, 1),
    };
    let cpu = Hello {
        rank: 2,
        peer_ip: None,
        payload: vec![0x39, 0x30],
    };
    let blob = blob_of(std::slice::from_ref(&ok), &fake);
    assert!(matches!(decode_blob(&blob), Some(Blob::Id(_))));
    let refused = blob_of(&[ok, cpu], &fake);
    match decode_blob(&refused) {
        Some(Blob::Refused(why)) => {
            assert!(
                why.starts_with("rank 2 does not follow with the CUDA backend"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(decode_blob(b"end"), Some(Blob::EndRun));
    assert_eq!(decode_blob(b"session 1\n- 4000"), None);
}

#[test]
fn replies_become_times_in_rank_order_or_the_first_failure() {
    let all = vec![b"0 10".to_vec(), b"2 30\n1 20".to_vec()];
    let t = times_of(&all, 3).unwrap();
    assert_eq!(t, vec![(0, 10.0), (1, 20.0), (2, 30.0)]);
    assert!(
        times_of(&all, 4)
            .unwrap_err()
            .to_string()
            .contains("rank 3 sent no time")
    );
    let failed = vec![
        b"0 ok".to_vec(),
        b"1 fail CUDA driver: out of memory".to_vec(),
    ];
    let e = verdict_of(&failed).unwrap_err();
    assert_eq!(one_line("a\nb\r\nc"), "a b  c");
    assert!(matches!(e, BenchError::Backend(ref m) if m == "rank 1: CUDA driver: out of memory"));
}
