//! Tests of the timing loops against the recording fake stream: which operations, in which order.

use super::*;
use crate::timing_fake::Recording;
use DeviceOp::*;

#[test]
fn replays_cover_the_iterations_asked_for() {
    assert_eq!(replays(1, 32), 1);
    assert_eq!(replays(32, 32), 1);
    assert_eq!(replays(33, 32), 2);
    assert_eq!(replays(1000, 1), 1000);
    assert_eq!(replays(0, 32), 1);
    assert_eq!(replays(5, 0), 5);
}

#[test]
fn replayed_time_scales_to_the_iterations_asked_for() {
    // 2 replays of 32 iterations took 6.4 µs: 100 ns an iteration; 40 asked for: 4 µs.
    assert!((time_of_iters(6400.0, 40, 2, 32) - 4000.0).abs() < 1e-9);
    // One iteration per graph (an inference pass): the replays' own time.
    assert_eq!(time_of_iters(5000.0, 5, 5, 1), 5000.0);
}

#[test]
fn cold_eager_flushes_before_every_start_event_and_never_times_the_flush() {
    let mut s = Recording::new(0.001);
    let mut next = 0;
    let ns = time(&mut s, &mut next, Cache::Cold, Timing::PER_ITERATION, 2).unwrap();
    assert_eq!(
        s.ops,
        [
            Flush,
            Start(0),
            Launch(0),
            End(0),
            Flush,
            Start(1),
            Launch(1),
            End(1),
            Synchronize
        ]
    );
    assert!((ns - 2000.0).abs() < 1e-6, "{ns}");
    assert_eq!(s.timed(1), [Launch(1)]);
    // The rotation continues in the next sample.
    time(&mut s, &mut next, Cache::Cold, Timing::PER_ITERATION, 1).unwrap();
    assert!(s.ops.contains(&Launch(2)));
}

#[test]
fn cold_mode_synchronises_after_at_most_pairs_units() {
    let mut s = Recording::new(0.001);
    time(
        &mut s,
        &mut 0,
        Cache::Cold,
        Timing::PER_ITERATION,
        PAIRS as u64 + 1,
    )
    .unwrap();
    let syncs: Vec<usize> = (0..s.ops.len())
        .filter(|&i| s.ops[i] == Synchronize)
        .collect();
    assert_eq!(syncs.len(), 2);
    assert_eq!(s.ops[syncs[0] - 1], End(PAIRS - 1));
}

/// Issue 23, defect 1: a forward pass's latency includes the host's launch cost, so every
/// pass starts on an idle stream, after the flush in cold mode, eager and graph alike.
#[test]
fn inference_latency_starts_on_an_idle_stream_after_the_flush() {
    use crate::graph::Mode;
    use crate::infer_plan::{InferPlanned, Workload};
    for mode in Mode::ALL {
        let p = InferPlanned {
            workload: Workload::Mlp,
            batch: 1,
            seq: 1,
            mode,
        };
        let pass = match mode {
            Mode::Eager => Launch(0),
            Mode::Graph => GraphLaunch,
        };
        let mut s = Recording::new(0.01);
        time(&mut s, &mut 0, Cache::Cold, p.timing(), 2).unwrap();
        assert_eq!(
            s.ops[..5],
            [Flush, Synchronize, Start(0), pass, End(0)],
            "{mode:?}"
        );
        assert_eq!(s.ops[5..7], [Flush, Synchronize], "{mode:?}");
        let mut s = Recording::new(0.01);
        time(&mut s, &mut 0, Cache::Warm, p.timing(), 2).unwrap();
        assert_eq!(
            s.ops[..4],
            [Synchronize, Start(0), pass, End(0)],
            "{mode:?}"
        );
        assert_eq!(s.ops[4], Synchronize, "{mode:?}");
    }
}

/// Issue 23, defect 6: in warm mode a spin-wait kernel holds the stream until the last
/// launch is queued, so short ops are timed back to back on the device, not at the host's
/// enqueue rate.
#[test]
fn warm_mode_holds_the_stream_until_the_last_launch_is_queued() {
    let mut s = Recording::new(0.003);
    let ns = time(&mut s, &mut 0, Cache::Warm, Timing::PER_ITERATION, 2).unwrap();
    assert_eq!(
        s.ops,
        [
            Block,
            Start(0),
            Launch(0),
            Launch(1),
            End(0),
            Release,
            Synchronize
        ]
    );
    assert!((ns - 3000.0).abs() < 1e-6);
    assert!(s.warnings.is_empty());
}

/// Issue 23, defect 6: a pageable transfer's enqueue waits for the stream, so nothing
/// holds it (a blocking kernel would deadlock until its timeout).
#[test]
fn pageable_transfers_are_never_held_by_the_blocking_kernel() {
    use crate::memory::{HostMemory, MemOp};
    let pageable = MemOp::HostToDevice(HostMemory::Pageable).timing();
    assert_eq!(pageable.start, super::Start::HostWaits);
    assert_eq!(MemOp::DeviceToHost(HostMemory::Pageable).timing(), pageable);
    let mut s = Recording::new(0.002);
    time(&mut s, &mut 0, Cache::Warm, pageable, 2).unwrap();
    assert_eq!(s.ops, [Start(0), Launch(0), Launch(1), End(0), Synchronize]);
    let pinned = MemOp::HostToDevice(HostMemory::Pinned).timing();
    assert_eq!(pinned, Timing::PER_ITERATION);
}

/// Issue 23, defect 6: no more launches behind one blocking kernel than the launch queue
/// holds; the regions' times add up.
#[test]
fn a_long_warm_sample_is_held_in_regions_of_at_most_held_launches() {
    let mut s = Recording::new(0.5);
    let iters = 2 * HELD_LAUNCHES + 1;
    let ns = time(&mut s, &mut 0, Cache::Warm, Timing::PER_ITERATION, iters).unwrap();
    assert_eq!(s.ops.iter().filter(|&&o| o == Block).count(), 3);
    assert!((ns - 1.5e6).abs() < 1e-3, "{ns}");
    let mut launches = 0;
    for op in &s.ops {
        match op {
            Block => launches = 0,
            Launch(_) => launches += 1,
            Release => assert!(launches <= HELD_LAUNCHES),
            _ => {}
        }
    }
}

/// Issue 23, defect 6: a blocking kernel that gave up after 1 s leaves a sample that timed
/// part of the spin: it is discarded with a warning and taken again.
#[test]
fn a_sample_whose_blocking_kernel_gave_up_is_discarded_with_a_warning() {
    let mut s = Recording::new(0.003);
    s.timeouts = 1;
    time(&mut s, &mut 0, Cache::Warm, Timing::PER_ITERATION, 1).unwrap();
    assert_eq!(s.ops.iter().filter(|&&o| o == Block).count(), 2);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].contains("discarded"), "{:?}", s.warnings);
    let mut s = Recording::new(0.003);
    s.timeouts = BLOCK_ATTEMPTS;
    let err = time(&mut s, &mut 0, Cache::Warm, Timing::PER_ITERATION, 1).unwrap_err();
    assert!(err.to_string().contains("blocking kernel"), "{err}");
}
