//! Tests of the CPU `kernel` suite: results against naive loops, bytes and flops counted as
//! STREAM and BLAS count them, the `max_bytes` cap, the copy ceilings and the checks.
use super::*;
use pitwall_schema::schema::Direction;

#[test]
fn gemm_matches_naive_triple_loop() {
    for n in [1, 7, 17, 64] {
        let mut bench = GemmBench::new(n);
        assert!(bench.run(1).unwrap() > 0.0);
        let [a, b, c] = bench.buffers.as_ref().unwrap();
        assert!(a.iter().any(|&x| x != 0.0), "inputs must not be zeros");
        for i in 0..n {
            for j in 0..n {
                let want: f64 = (0..n)
                    .map(|k| f64::from(a[i * n + k]) * f64::from(b[k * n + j]))
                    .sum();
                let got = f64::from(c[i * n + j]);
                assert!((got - want).abs() < 1e-4 * (n as f64), "n={n} ({i},{j})");
            }
        }
    }
}

#[test]
fn gemm_metric_counts_two_n_cubed_flops() {
    let m = GemmBench::new(256).metrics();
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].measure, "throughput");
    assert_eq!(m[0].unit, Unit::new("GFLOP/s"));
    assert_eq!(m[0].direction, Direction::HigherIsBetter);
    // 2·256³ flops in 1 ms is 33.554432 GFLOP/s.
    assert!((m[0].conversion.apply(1e6) - 33.554_432).abs() < 1e-9);
    assert_eq!(GemmBench::footprint_bytes(512), 3 * 512 * 512 * 4);
}

#[test]
fn stream_triad_and_copy_compute_the_right_values() {
    let (mut a, b, c) = (vec![0.0; 5], vec![1.0, 2.0, 3.0, 4.0, 5.0], vec![2.0; 5]);
    triad(&mut a, &b, &c, TRIAD_SCALAR);
    assert_eq!(a, vec![7.0, 8.0, 9.0, 10.0, 11.0]);

    let mut t = StreamBench::new(StreamOp::Triad, 16 * KIB);
    t.run(3).unwrap();
    let [a, _, _] = t.arrays.as_ref().unwrap();
    assert_eq!(a.len(), 2048);
    assert!(a.iter().all(|&x| x == 2.0 + TRIAD_SCALAR * 0.5));

    let mut cp = StreamBench::new(StreamOp::Copy, 16 * KIB);
    cp.run(1).unwrap();
    let [a, b, _] = cp.arrays.as_ref().unwrap();
    assert_eq!(a, b);
}

#[test]
fn stream_counts_bytes_as_stream_does() {
    let copy = StreamBench::new(StreamOp::Copy, MIB).metrics();
    let triad = StreamBench::new(StreamOp::Triad, MIB).metrics();
    assert_eq!(copy[0].unit, Unit::new("GB/s"));
    assert_eq!(copy[0].direction, Direction::HigherIsBetter);
    // 1 s per iteration: copy moves 2 MiB, triad 3 MiB.
    assert!((copy[0].conversion.apply(1e9) - 2.0 * MIB as f64 / 1e9).abs() < 1e-12);
    assert!((triad[0].conversion.apply(1e9) - 3.0 * MIB as f64 / 1e9).abs() < 1e-12);
    let id = StreamBench::new(StreamOp::Triad, 4 * MIB).id();
    assert_eq!(id.display(), "stream_triad[bytes=4194304]");
}

#[test]
fn reduction_sums_and_validates() {
    let xs: Vec<f64> = (1..=21).map(f64::from).collect();
    assert_eq!(sum_f64(&xs), 231.0);
    assert_eq!(sum_f64(&[]), 0.0);

    let mut data = SumData::new(1001);
    assert!(data.data.iter().any(|&x| x != 0.0));
    data.validate().unwrap();
    data.data[500] += 1.0;
    assert!(matches!(data.validate(), Err(BenchError::Validation(_))));

    let mut bench = ReductionBench::new(256 * KIB);
    assert!(bench.run(2).unwrap() > 0.0);
    assert_eq!(bench.metrics()[0].measure, "bandwidth");
}

#[test]
fn suite_caps_footprints_by_max_bytes() {
    let ids: Vec<String> = suite(&SuiteOptions {
        max_bytes: Some(MIB),
        ..Default::default()
    })
    .iter()
    .map(|b| b.id().display())
    .collect();
    assert!(ids.contains(&"gemm_f32[n=256]".to_string()));
    assert!(!ids.contains(&"gemm_f32[n=512]".to_string()));
    assert!(ids.contains(&"stream_triad[bytes=262144]".to_string()));
    assert!(!ids.contains(&"stream_copy[bytes=4194304]".to_string()));
    assert!(ids.contains(&"reduce_sum[bytes=262144]".to_string()));
    assert!(!ids.contains(&"reduce_sum[bytes=67108864]".to_string()));
    assert_eq!(suite(&SuiteOptions::default()).len(), 4 + 8 + 2);
}

#[test]
fn triads_and_reductions_have_the_copy_of_their_size_as_ceiling() {
    let ceilings = |max_bytes| -> Vec<(String, Option<String>)> {
        suite(&SuiteOptions {
            max_bytes,
            ..Default::default()
        })
        .iter()
        .map(|b| (b.id().display(), b.ceiling().map(|c| c.of.display())))
        .collect()
    };
    let all = ceilings(None);
    let of = |id: &str| all.iter().find(|(i, _)| i == id).unwrap().1.clone();
    assert_eq!(of("stream_copy[bytes=16384]"), None);
    assert_eq!(of("gemm_f32[n=256]"), None);
    assert_eq!(
        of("stream_triad[bytes=16384]").as_deref(),
        Some("stream_copy[bytes=16384]")
    );
    assert_eq!(
        of("reduce_sum[bytes=67108864]").as_deref(),
        Some("stream_copy[bytes=67108864]")
    );
    let c = suite(&SuiteOptions::default())
        .into_iter()
        .find_map(|b| b.ceiling())
        .unwrap();
    assert_eq!(c.derived_measure(), "bandwidth_of_copy");
    // Under a cap of 1 MiB the triad of 256 KiB (3 arrays) and its copy (2) both fit.
    let capped = ceilings(Some(MIB));
    assert!(capped.contains(&(
        "reduce_sum[bytes=262144]".into(),
        Some("stream_copy[bytes=262144]".into())
    )));
}
