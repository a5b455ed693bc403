//! Tests of the CPU all-reduce: its sums, its bus factor and metrics, and its benchmark plan.

use super::*;
use pitwall_schema::schema::Direction;

#[test]
fn chunks_cover_uneven_and_tiny_messages() {
    for (len, n) in [(2, 4), (3, 4), (0, 3), (1001, 3), (16, 4)] {
        let ranges: Vec<_> = (0..n).map(|c| chunk_range(len, n, c)).collect();
        assert_eq!(ranges[0].start, 0);
        assert_eq!(ranges[n - 1].end, len);
        for w in ranges.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert!(w[0].len() + 1 >= w[1].len() && w[0].len() <= w[1].len() + 1);
        }
    }
}

#[test]
fn all_reduce_is_correct_for_ranks_and_sizes() {
    for ranks in [1, 2, 3, 4] {
        for bytes in [8, 12, 28, 4004, 1 << 20] {
            let mut bench = AllReduceBench::new(bytes, ranks);
            assert!(bench.run(1).unwrap() > 0.0, "ranks={ranks} bytes={bytes}");
            assert!(bench.verified);
            // Repeated runs stay correct: the input is never overwritten.
            bench.run(3).unwrap();
            bench.ring.as_ref().unwrap().shared.verify().unwrap();
        }
    }
}

#[test]
fn verify_catches_a_wrong_element() {
    let mut bench = AllReduceBench::new(4004, 3);
    bench.run(1).unwrap();
    let shared = &bench.ring.as_ref().unwrap().shared;
    shared.output[2][1].write().unwrap()[5] += 1.0;
    assert!(matches!(shared.verify(), Err(BenchError::Validation(_))));
}

#[test]
fn bad_message_sizes_are_setup_errors() {
    for bytes in [0, 6] {
        let err = AllReduceBench::new(bytes, 2).run(1);
        assert!(matches!(err, Err(BenchError::Setup(_))));
    }
}

#[test]
fn bus_factor_and_metrics_follow_nccl_tests() {
    // The factor itself is pitwall_schema::work's, tested there.
    assert_eq!(bus_factor(Collective::AllReduce, 4), 1.5);
    let bench = AllReduceBench::new(1 << 20, 4);
    assert_eq!(
        bench.id().display(),
        "allreduce_sum_f32[bytes=1048576,ranks=4]"
    );
    let m = bench.metrics();
    assert_eq!(
        (m[0].measure.as_str(), m[1].measure.as_str()),
        ("algbw", "busbw")
    );
    for spec in &m {
        assert_eq!(spec.unit, Unit::new("GB/s"));
        assert_eq!(spec.direction, Direction::HigherIsBetter);
    }
    // 1 MiB in 1 ms: algbw 1.048576 GB/s, busbw 1.5 times that.
    assert!((m[0].conversion.apply(1e6) - 1.048_576).abs() < 1e-12);
    assert!((m[1].conversion.apply(1e6) - 1.572_864).abs() < 1e-12);
}

#[test]
fn dropping_benches_stops_their_workers() {
    let mut handles = Vec::new();
    for i in 0..20 {
        let mut bench = AllReduceBench::new(64, 2 + i % 3);
        bench.run(2).unwrap();
        handles.push(Arc::downgrade(&bench.ring.as_ref().unwrap().shared));
    }
    // All benches above are dropped; workers hold clones of `shared` until they exit, so a
    // live Weak would mean a leaked thread.
    assert!(handles.iter().all(|w| w.upgrade().is_none()));
    drop(AllReduceBench::new(64, 4));
}

#[test]
fn suite_uses_ranks_option_and_caps_messages() {
    let opts = SuiteOptions {
        ranks: Some(3),
        max_bytes: Some(4096),
        ..Default::default()
    };
    let ids: Vec<String> = suite(&opts).iter().map(|b| b.id().display()).collect();
    assert_eq!(ids.len(), 4);
    assert_eq!(ids[3], "allreduce_sum_f32[bytes=4096,ranks=3]");
    assert!((2..=4).contains(&default_ranks()));
    assert_eq!(suite(&SuiteOptions::default()).len(), MESSAGE_BYTES.len());
}
