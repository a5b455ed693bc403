//! Tests of the inference suite's host references: each accepts what the device computes (the
//! same arithmetic in f32 with bf16 rounding, written here) and rejects planted mistakes.

use super::*;
use pitwall_schema::check::sample_positions;

fn bits(x: f32) -> u16 {
    crate::half16::bf16_from_f32(x)
}

fn random(n: usize, seed: u64) -> Vec<u16> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            bits(((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0 + 1e-3)
        })
        .collect()
}

fn f(b: u16) -> f32 {
    crate::half16::bf16_to_f64(b) as f32
}

/// What the device computes, in f32 with bf16 rounding between stages (the kernels' and
/// cuBLAS' arithmetic): the reference must accept it.
fn device_rmsnorm(x: &[u16], gamma: &[u16], cols: usize) -> Vec<u16> {
    x.chunks(cols)
        .flat_map(|row| {
            let ss: f32 = row.iter().map(|&v| f(v) * f(v)).sum();
            let inv = 1.0 / (ss / cols as f32 + RMS_EPS).sqrt();
            row.iter()
                .zip(gamma)
                .map(move |(&v, &g)| bits(f(v) * inv * f(g)))
        })
        .collect()
}

fn device_gemm(a: &[u16], w: &[u16], k: usize, n: usize) -> Vec<u16> {
    let alpha = ModelShape::gemm_alpha(k);
    let t = a.len() / k;
    let mut y = vec![0u16; t * n];
    for i in 0..t {
        for j in 0..n {
            let dot: f32 = (0..k).map(|l| f(a[i * k + l]) * f(w[l * n + j])).sum();
            y[i * n + j] = bits(alpha * dot);
        }
    }
    y
}

fn device_attention(shape: ModelShape, seq: usize, qkv: &[u16]) -> Vec<u16> {
    let (d, dh) = (shape.d_model, shape.head_dim);
    let rows = qkv.len() / (3 * d);
    let mut out = vec![0u16; rows * d];
    for t in 0..rows {
        let (b, i) = (t / seq, t % seq);
        for h in 0..shape.heads {
            let at = |r: usize, c: usize| f(qkv[r * 3 * d + c]);
            let s: Vec<f32> = (0..=i)
                .map(|j| {
                    (0..dh)
                        .map(|e| at(t, h * dh + e) * at(b * seq + j, d + h * dh + e))
                        .sum::<f32>()
                        * shape.attention_scale()
                })
                .collect();
            let m = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let p: Vec<f32> = s.iter().map(|v| (v - m).exp()).collect();
            let l: f32 = p.iter().sum();
            for e in 0..dh {
                let acc: f32 = (0..=i)
                    .map(|j| p[j] * at(b * seq + j, 2 * d + h * dh + e))
                    .sum();
                out[t * d + h * dh + e] = bits(acc / l);
            }
        }
    }
    out
}

const TINY: ModelShape = ModelShape {
    d_model: 16,
    heads: 2,
    head_dim: 8,
    ffn: 32,
};

#[test]
fn erf_and_gelu_match_known_values() {
    assert!(erf(0.0).abs() < 1e-7);
    assert!((erf(1.0) - 0.842_700_792_949_715).abs() < 1e-7);
    assert!((erf(-2.0) + 0.995_322_265_018_953).abs() < 1e-7);
    assert!((gelu(1.0) - 0.841_344_746_068_543).abs() < 1e-7);
    assert!((gelu(-1.0) + 0.158_655_253_931_457).abs() < 1e-7);
    assert_eq!(gelu(0.0), 0.0);
}

#[test]
fn gemm_alpha_is_an_exact_power_of_two_for_the_model() {
    assert_eq!(ModelShape::gemm_alpha(MODEL.d_model), 1.0 / 32.0);
    assert_eq!(ModelShape::gemm_alpha(MODEL.ffn), 1.0 / 64.0);
    assert_eq!(MODEL.attention_scale(), 0.125);
    assert_eq!(MODEL.heads * MODEL.head_dim, MODEL.d_model);
}

#[test]
fn rmsnorm_reference_accepts_the_device_arithmetic_and_catches_an_element_10_percent_off() {
    let (rows, cols) = (6, 16);
    let x = random(rows * cols, 1);
    let gamma = random(cols, 2);
    let y = device_rmsnorm(&x, &gamma, cols);
    let pos = sample_positions(rows, cols, 64, 3);
    let xm = HostMat { data: &x, cols };
    let v = check_rmsnorm(xm, &gamma, HostMat { data: &y, cols }, &pos);
    assert!(v.passed(), "{}", v.describe("rmsnorm"));
    assert_eq!(v.checked, 64);
    // One element 10% off fails, alone.
    let mut wrong = y.clone();
    let (r, c) = pos[5];
    wrong[r * cols + c] = bits(f(y[r * cols + c]) * 1.1);
    let v = check_rmsnorm(xm, &gamma, HostMat { data: &wrong, cols }, &pos);
    assert_eq!(v.failed, 1, "{}", v.describe("rmsnorm"));
}

#[test]
fn linear_references_with_each_epilogue() {
    let (t, k, n) = (5, 32, 24);
    let a = random(t * k, 4);
    let w = random(k * n, 5);
    let bias = random(n, 6);
    let res = random(t * n, 7);
    let pos = sample_positions(t, n, 100, 8);
    let (am, wm) = (HostMat { data: &a, cols: k }, HostMat { data: &w, cols: n });
    let plain = device_gemm(&a, &w, k, n);
    let v = check_linear(
        am,
        wm,
        Epilogue::None,
        HostMat {
            data: &plain,
            cols: n,
        },
        &pos,
    );
    assert!(v.passed(), "{}", v.describe("none"));

    let gelu_y: Vec<u16> = plain
        .iter()
        .enumerate()
        .map(|(i, &y)| {
            let z = f(y) + f(bias[i % n]);
            bits((gelu(f64::from(z))) as f32)
        })
        .collect();
    let epi = Epilogue::BiasGelu { bias: &bias };
    let v = check_linear(
        am,
        wm,
        epi,
        HostMat {
            data: &gelu_y,
            cols: n,
        },
        &pos,
    );
    assert!(v.passed(), "{}", v.describe("gelu"));
    // Without the bias, or with ReLU instead of GELU, the check fails.
    let relu_y: Vec<u16> = plain
        .iter()
        .enumerate()
        .map(|(i, &y)| bits((f(y) + f(bias[i % n])).max(0.0)))
        .collect();
    let v = check_linear(
        am,
        wm,
        epi,
        HostMat {
            data: &relu_y,
            cols: n,
        },
        &pos,
    );
    assert!(!v.passed());
    let v = check_linear(
        am,
        wm,
        epi,
        HostMat {
            data: &plain,
            cols: n,
        },
        &pos,
    );
    assert!(!v.passed());

    let rm = HostMat {
        data: &res,
        cols: n,
    };
    let res_y: Vec<u16> = plain
        .iter()
        .enumerate()
        .map(|(i, &y)| bits(f(y) + f(bias[i % n]) + f(res[i])))
        .collect();
    let epi = Epilogue::BiasResidual {
        bias: &bias,
        residual: rm,
    };
    let v = check_linear(
        am,
        wm,
        epi,
        HostMat {
            data: &res_y,
            cols: n,
        },
        &pos,
    );
    assert!(v.passed(), "{}", v.describe("residual"));
    // Forgetting the residual fails.
    let no_res: Vec<u16> = plain
        .iter()
        .enumerate()
        .map(|(i, &y)| bits(f(y) + f(bias[i % n])))
        .collect();
    assert!(
        !check_linear(
            am,
            wm,
            epi,
            HostMat {
                data: &no_res,
                cols: n
            },
            &pos
        )
        .passed()
    );
    // A product without α = 1/√k is off by a factor √32.
    let unscaled: Vec<u16> = plain.iter().map(|&y| bits(f(y) * 32f32.sqrt())).collect();
    let v = check_linear(
        am,
        wm,
        Epilogue::None,
        HostMat {
            data: &unscaled,
            cols: n,
        },
        &pos,
    );
    assert!(!v.passed());
}

#[test]
fn attention_reference_is_causal_and_per_head() {
    let (batch, seq) = (2, 5);
    let d = TINY.d_model;
    let qkv = random(batch * seq * 3 * d, 9);
    let out = device_attention(TINY, seq, &qkv);
    let pos = sample_positions(batch * seq, d, 120, 10);
    let qm = HostMat {
        data: &qkv,
        cols: 3 * d,
    };
    let v = check_attention(
        TINY,
        seq,
        qm,
        HostMat {
            data: &out,
            cols: d,
        },
        &pos,
    );
    assert!(v.passed(), "{}", v.describe("attention"));
    assert_eq!(v.checked, 120);
    // Without the causal mask the first query of a sequence would mix every value of it.
    let mut non_causal = out.clone();
    for (t, row) in non_causal.chunks_mut(d).enumerate() {
        if t % seq == 0 {
            let b = t / seq;
            for (c, o) in row.iter_mut().enumerate() {
                let mean: f32 = (0..seq)
                    .map(|j| f(qkv[(b * seq + j) * 3 * d + 2 * d + c]))
                    .sum::<f32>()
                    / seq as f32;
                *o = bits(mean);
            }
        }
    }
    let first_rows: Vec<(usize, usize)> = (0..d).map(|c| (0, c)).collect();
    let v = check_attention(
        TINY,
        seq,
        qm,
        HostMat {
            data: &non_causal,
            cols: d,
        },
        &first_rows,
    );
    assert!(!v.passed(), "{}", v.describe("non-causal"));
    // Heads swapped: the first head's output in the second head's columns.
    let mut swapped = out.clone();
    for row in swapped.chunks_mut(d) {
        let (h0, h1) = row.split_at_mut(TINY.head_dim);
        h0.swap_with_slice(h1);
    }
    let v = check_attention(
        TINY,
        seq,
        qm,
        HostMat {
            data: &swapped,
            cols: d,
        },
        &pos,
    );
    assert!(!v.passed());
}
