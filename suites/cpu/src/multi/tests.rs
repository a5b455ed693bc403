//! The CPU collectives across ranks on localhost: ranks as threads for every collective and
//! rank count, three real processes (this test binary re-executed as followers with torchrun's
//! variables), the checks, and the wire formats.

use std::process::Command as Process;
use std::thread;

use super::*;
use crate::mesh::{chunk_range, expected};
use pitwall_rendezvous::Launcher;

/// Set in the children of `three_processes_run_every_collective`.
const CHILD_VAR: &str = "PITWALL_CPU_MULTI_TEST_CHILD";

fn layout(rank: usize, world_size: usize, port: u16) -> Layout {
    Layout {
        rank,
        world_size,
        local_rank: rank,
        launcher: Launcher::Torchrun,
        addr: Some(format!("127.0.0.1:{port}")),
    }
}

fn options(max_bytes: u64) -> SuiteOptions {
    SuiteOptions {
        max_bytes: Some(max_bytes),
        ..Default::default()
    }
}

/// Rank 0 of `world` with followers as threads; runs every benchmark of the sweep up to
/// `max_bytes` twice (checked, then timed) and returns (display name, rank times, metrics).
fn run_ranks_as_threads(world: usize, max_bytes: u64) -> Vec<(String, Vec<f64>, Vec<MetricSpec>)> {
    let bound = Bound::bind(&layout(0, world, 0)).unwrap();
    let port = bound.port().unwrap();
    let followers: Vec<_> = (1..world)
        .map(|r| thread::spawn(move || follow(&layout(r, world, port))))
        .collect();
    let lead = layout(0, world, port);
    let mut seen = Vec::new();
    {
        let mut benches = suite_on(&lead, bound, &options(max_bytes)).unwrap();
        for b in &mut benches {
            let name = b.id().display();
            b.run(1).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(b.run(2).unwrap() > 0.0, "{name}");
            seen.push((name, b.rank_times_ns().unwrap(), b.metrics()));
        }
    }
    release_followers(&lead).unwrap();
    for f in followers {
        f.join().unwrap().unwrap();
    }
    seen
}

#[test]
fn every_collective_is_correct_for_two_to_four_ranks() {
    for world in [2, 3, 4] {
        let seen = run_ranks_as_threads(world, 1 << 10);
        for op in Collective::MEASURED {
            let name = bench_name(op);
            let sizes = seen.iter().filter(|(n, ..)| n.starts_with(&name)).count();
            // 8 B … 1 KiB is 8 sizes; the split collectives skip those under one f32 per rank.
            let skipped = match op {
                Collective::AllReduce | Collective::Broadcast | Collective::Reduce => 0,
                _ => [8u64, 16].iter().filter(|&&b| b / 4 < world as u64).count(),
            };
            assert_eq!(sizes, 8 - skipped, "{name} over {world} ranks");
        }
        for (name, times, _) in &seen {
            assert_eq!(times.len(), world, "{name}");
            assert!(times.iter().all(|t| *t > 0.0), "{name}: {times:?}");
            assert!(name.contains(&format!("ranks={world}")) && name.contains("layout=processes"));
        }
    }
}

#[test]
fn busbw_is_algbw_times_the_collectives_factor() {
    let seen = run_ranks_as_threads(3, 4096);
    for (name, _, metrics) in &seen {
        let op = Collective::MEASURED
            .into_iter()
            .find(|op| name.starts_with(&bench_name(*op)))
            .unwrap();
        assert_eq!(metrics[0].measure, "algbw");
        assert_eq!(metrics[1].measure, "busbw");
        let (alg, bus) = (
            metrics[0].conversion.apply(1e3),
            metrics[1].conversion.apply(1e3),
        );
        let want = alg * bus_factor(op, 3);
        assert!((bus - want).abs() <= 1e-12 * want.abs().max(1.0), "{name}");
    }
    // 4 KiB all-gather over 3 ranks counts 4092 bytes, as nccl-tests would.
    assert!(
        seen.iter()
            .any(|(n, ..)| n == "allgather_f32[bytes=4092,layout=processes,ranks=3]")
    );
}

#[test]
fn checks_catch_a_wrong_element() {
    let shape = collective_shape(Collective::AllToAll, 48, 3, 4).unwrap();
    let m = 4;
    let mut out: Vec<f32> = (0..12)
        .map(|i| expected(Collective::AllToAll, 1, 3, m, i))
        .collect();
    check(Collective::AllToAll, 1, 3, &shape, &out).unwrap();
    out[7] += 1.0;
    let err = check(Collective::AllToAll, 1, 3, &shape, &out).unwrap_err();
    assert!(err.contains("rank 1 element 7"), "{err}");
    let shape = collective_shape(Collective::AllReduce, 40, 2, 4).unwrap();
    let out = vec![0.0; 10];
    assert!(check(Collective::AllReduce, 0, 2, &shape, &out).is_err());
    assert_eq!(chunk_range(10, 3, 0), 0..4);
}

#[test]
fn blobs_and_commands_round_trip() {
    let blob = Blob::Session {
        id: 42,
        addrs: vec![(None, 1000), (Some("10.0.0.2".parse().unwrap()), 2000)],
    };
    assert_eq!(Blob::decode(&blob.encode()), Some(blob));
    assert_eq!(Blob::decode(&Blob::EndRun.encode()), Some(Blob::EndRun));
    assert_eq!(Blob::decode(b"session x"), None);
}

/// A follower of `three_processes_run_every_collective`: nothing unless that test started it.
#[test]
fn follower_entry() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    let layout = Layout::from_env().unwrap();
    assert_ne!(layout.rank, 0);
    follow(&layout).unwrap();
}

#[test]
fn three_processes_run_every_collective() {
    let world = 3;
    let bound = Bound::bind(&layout(0, world, 0)).unwrap();
    let port = bound.port().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (1..world)
        .map(|r| {
            Process::new(&exe)
                .args(["--exact", "multi::tests::follower_entry", "--nocapture"])
                .env(CHILD_VAR, "1")
                .env("RANK", r.to_string())
                .env("WORLD_SIZE", world.to_string())
                .env("LOCAL_RANK", r.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .map(Kill)
                .unwrap()
        })
        .collect();
    let lead = layout(0, world, port);
    let mut ops = std::collections::BTreeSet::new();
    // Two sessions, as two rounds of a run in fresh workers would be.
    let mut first = Some(bound);
    for _round in 0..2 {
        let bound = first.take().unwrap_or_else(|| Bound::bind(&lead).unwrap());
        let mut benches = suite_on(&lead, bound, &options(256 << 10)).unwrap();
        for b in &mut benches {
            b.run(1).unwrap();
            assert_eq!(b.rank_times_ns().unwrap().len(), world);
            ops.insert(b.id().name);
        }
    }
    release_followers(&lead).unwrap();
    for mut c in children {
        assert!(c.0.wait().unwrap().success());
    }
    assert_eq!(ops.len(), 5, "{ops:?}");
}

/// A child rank, killed if the test fails first (it would otherwise wait for rank 0 for long).
struct Kill(std::process::Child);

impl Drop for Kill {
    fn drop(&mut self) {
        // Already exited when the test passed; nothing to report either way.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
