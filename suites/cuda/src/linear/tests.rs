//! The linear-layer GEMMs' plan, formulas, host check and timing, tested without a GPU.

use super::*;
use pitwall_schema::check::tolerance;

#[test]
fn peak_percentages_only_for_a_known_card_and_fp8_only_where_it_has_it() {
    let skinny_fp8 = plan()
        .into_iter()
        .find(|p| p.family != Family::Square && p.dtype == Dtype::Fp8E4m3)
        .unwrap();
    assert!(peak_metrics(skinny_fp8, None).is_empty(), "unknown card");
    let on_h200 = peak_metrics(skinny_fp8, crate::peaks::of("NVIDIA H200"));
    let names: Vec<&str> = on_h200.iter().map(|m| m.measure.as_str()).collect();
    assert_eq!(names, ["throughput_of_peak", "bandwidth_of_peak"]);
    // An A100 has no fp8 peak, only its HBM bandwidth.
    let on_a100 = peak_metrics(skinny_fp8, crate::peaks::of("NVIDIA A100-SXM4-80GB"));
    let names: Vec<&str> = on_a100.iter().map(|m| m.measure.as_str()).collect();
    assert_eq!(names, ["bandwidth_of_peak"]);
}

#[test]
fn the_plan_has_square_fp8_and_skinny_shapes_in_both_types_and_modes() {
    let all = plan();
    // fp8 twice: with and without fast accumulation.
    assert_eq!(all.len(), 2 * 2 + 2 * 5 * 2 + 2 * 5 * 2 * 2);
    let square: Vec<String> = all
        .iter()
        .filter(|p| p.family == Family::Square)
        .map(|p| p.id().display())
        .collect();
    assert_eq!(
        square,
        [
            "cuda_gemm[dtype=fp8_e4m3,fast_accum=off,n=4096,out=bf16]",
            "cuda_gemm[dtype=fp8_e4m3,fast_accum=on,n=4096,out=bf16]",
            "cuda_gemm[dtype=fp8_e4m3,fast_accum=off,n=8192,out=bf16]",
            "cuda_gemm[dtype=fp8_e4m3,fast_accum=on,n=8192,out=bf16]"
        ]
    );
    let skinny = LinearPlanned {
        family: Family::Skinny,
        dtype: Dtype::Bf16,
        m: 1,
        n: 8192,
        k: 8192,
        mode: Mode::Graph,
        fast_accum: false,
    };
    assert!(all.contains(&skinny));
    assert_eq!(
        skinny.id().display(),
        "cuda_gemm_skinny[dtype=bf16,k=8192,m=1,mode=graph,n=8192,out=bf16]"
    );
    assert_eq!(skinny.per_graph(), GRAPH_ITERATIONS);
    assert!(all.iter().all(|p| p.m <= p.n && p.n == p.k));
}

#[test]
fn flops_bytes_and_footprints_follow_the_shared_formulas() {
    let p = LinearPlanned {
        family: Family::Skinny,
        dtype: Dtype::Fp8E4m3,
        m: 16,
        n: 4096,
        k: 4096,
        mode: Mode::Eager,
        fast_accum: false,
    };
    assert_eq!(p.flops(), 2.0 * 16.0 * 4096.0 * 4096.0);
    // X and W one byte an element, Y two.
    assert_eq!(p.moved_bytes(), 16 * 4096 + 4096 * 4096 + 16 * 4096 * 2);
    // fp8, 4096: 16 MiB of weights; ⌈256 / 16⌉ + 1 sets for the plan's L2 bound.
    assert_eq!(p.footprint_bytes(), 17 * p.moved_bytes() + (32 << 20) + 8);
    let m = metrics(p);
    assert_eq!(
        (m[0].measure.as_str(), m[0].unit.as_str()),
        ("throughput", "TFLOP/s")
    );
    assert_eq!(
        (m[1].measure.as_str(), m[1].unit.as_str()),
        ("bandwidth", "GB/s")
    );
    // 1 ms a GEMM: 2.1e-3 TFLOP/s, 16.9 GB/s.
    assert!((m[0].conversion.apply(1e6) - p.flops() / 1e9).abs() < 1e-12);
    assert!((m[1].conversion.apply(1e6) - p.moved_bytes() as f64 / 1e6).abs() < 1e-6);
    assert_eq!(p.min_sm(), FP8_MIN_SM);
    assert_eq!(
        LinearPlanned {
            dtype: Dtype::Bf16,
            ..p
        }
        .min_sm(),
        0
    );
}

#[test]
fn host_values_decode_scaled_fp8_and_bf16() {
    // 0x38 is 1.0, 0xB0 is −0.5 in e4m3.
    assert_eq!(host_value(&[0x38, 0xB0], Dtype::Fp8E4m3, 0.25, 1), -0.125);
    assert_eq!(host_value(&[0x38], Dtype::Fp8E4m3, 0.5, 0), 0.5);
    let bf = crate::half16::bf16_from_f32(-3.0).to_le_bytes();
    assert_eq!(host_value(&bf, Dtype::Bf16, 0.5, 0), -3.0);
    assert!(lt_type(Dtype::Fp8E4m3).is_some() && lt_type(Dtype::Bf16).is_some());
    assert!(lt_type(Dtype::F32).is_none());
    // The rules the checks apply: fp8 a half ulp at 1, bf16 1e-2.
    assert_eq!(tolerance(Dtype::Fp8E4m3, 8192), 0.0625);
    assert_eq!(tolerance(Dtype::Bf16, 8192), 0.01);
}

/// The layout the check assumes: W stored n×k (row j holds output j's weights), so
/// Y[i][j] = Σₗ X[i][l]·W[j][l]; a W read as k×n instead fails the check.
#[test]
fn the_host_check_reads_w_as_out_by_in() {
    let (m, n, k) = (3, 5, 16);
    let codes = |seed: usize, len: usize| -> Vec<u8> {
        (0..len)
            .map(|i| [0x30, 0xB4, 0x2C, 0x3A, 0xA9][(i * 7 + seed) % 5])
            .collect()
    };
    let (x, w) = (codes(1, m * k), codes(2, n * k));
    let v = |b: &[u8], s, i| host_value(b, Dtype::Fp8E4m3, s, i);
    let y: Vec<u8> = (0..m * n)
        .flat_map(|o| {
            let (i, j) = (o / n, o % n);
            let dot: f64 = (0..k)
                .map(|l| v(&x, FP8_SCALE_X, i * k + l) * v(&w, FP8_SCALE_W, j * k + l))
                .sum();
            crate::half16::bf16_from_f64(dot).to_le_bytes()
        })
        .collect();
    let positions = sample_positions(m, n, 15, 1);
    let check = |w_at: &dyn Fn(usize, usize) -> f64| {
        check_gemm_sampled(
            (m, n, k),
            Dtype::Fp8E4m3,
            &positions,
            |i, l| v(&x, FP8_SCALE_X, i * k + l),
            w_at,
            |i, j| host_value(&y, OUT, 1.0, i * n + j),
        )
    };
    assert!(check(&|l, j| v(&w, FP8_SCALE_W, j * k + l)).passed());
    assert!(!check(&|l, j| v(&w, FP8_SCALE_W, l * n + j)).passed());
}

fn skinny(dtype: Dtype, nk: usize, mode: Mode) -> LinearPlanned {
    LinearPlanned {
        family: Family::Skinny,
        dtype,
        m: 1,
        n: nk,
        k: nk,
        mode,
        fast_accum: false,
    }
}

/// Issue 23, defect 1: eager and graph time the same 32 GEMMs after one flush, so their
/// difference is the launch cost only.
#[test]
fn cold_skinny_gemms_time_units_of_32_after_one_flush_eager_and_graph_alike() {
    use crate::timing::{self, DeviceOp};
    use crate::timing_fake::Recording;
    for mode in Mode::ALL {
        let p = skinny(Dtype::Fp8E4m3, 4096, mode);
        let mut s = Recording::new(0.032);
        let ns = timing::time(&mut s, &mut 0, Cache::Cold, p.timing(), 64).unwrap();
        let flushes = s.ops.iter().filter(|&&o| o == DeviceOp::Flush).count();
        assert_eq!(flushes, 2, "{mode:?}: one flush per unit of 32 GEMMs");
        for pair in 0..2 {
            let region = s.timed(pair);
            let gemms: u64 = region
                .iter()
                .map(|o| match o {
                    DeviceOp::Launch(_) => 1,
                    DeviceOp::GraphLaunch => GRAPH_ITERATIONS,
                    other => panic!("{mode:?}: {other:?} in the timed region"),
                })
                .sum();
            assert_eq!(gemms, 32, "{mode:?}");
        }
        // Two units of 32 µs: 64 GEMMs in 64 µs.
        assert!((ns - 64_000.0).abs() < 1e-6, "{mode:?}: {ns}");
    }
}

/// Issue 23, defect 1: between two reads of the same weights, more than twice the L2 of other
/// weights is read, so no GEMM of a unit finds its weights in L2.
#[test]
fn skinny_gemms_rotate_over_enough_sets_that_no_weight_is_read_from_l2() {
    const MIB: u64 = 1 << 20;
    let l2 = 50 * MIB; // an H100's
    // fp8, n = k = 4096: 16 MiB of weights; ⌈100 / 16⌉ + 1 sets.
    assert_eq!(skinny(Dtype::Fp8E4m3, 4096, Mode::Graph).buffer_sets(l2), 8);
    // bf16, 8192: 128 MiB, more than 2·L2 by itself; still two sets.
    assert_eq!(skinny(Dtype::Bf16, 8192, Mode::Eager).buffer_sets(l2), 2);
    for p in plan().into_iter().filter(|p| p.family == Family::Skinny) {
        for l2 in [40 * MIB, 50 * MIB, 60 * MIB, 126 * MIB] {
            let sets = p.buffer_sets(l2) as u64;
            assert!(sets >= 2);
            assert!((sets - 1) * p.weight_bytes() >= 2 * l2, "{p:?} on {l2}");
            assert!(sets * p.moved_bytes() <= p.footprint_bytes());
        }
    }
}

/// Issue 23, defect 11: every fp8 GEMM is offered with and without cuBLASLt's fast
/// accumulation, and its parameters say which; bf16 has no such choice.
#[test]
fn fp8_gemms_come_with_and_without_fast_accumulation_named_in_the_parameters() {
    let ids: Vec<String> = plan().into_iter().map(|p| p.id().display()).collect();
    for n in FP8_SQUARE {
        for accum in ["on", "off"] {
            let want = format!("cuda_gemm[dtype=fp8_e4m3,fast_accum={accum},n={n},out=bf16]");
            assert!(ids.contains(&want), "{want} missing");
        }
    }
    let want =
        "cuda_gemm_skinny[dtype=fp8_e4m3,fast_accum=on,k=4096,m=1,mode=graph,n=4096,out=bf16]";
    assert!(ids.iter().any(|i| i == want), "{want} missing");
    assert!(
        ids.iter()
            .filter(|i| i.contains("dtype=bf16"))
            .all(|i| !i.contains("fast_accum"))
    );
}
