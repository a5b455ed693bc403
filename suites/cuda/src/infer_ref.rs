//! The model of the CUDA `inference` suite and its host references: the shapes of the
//! transformer block and of its MLP, and, for every stage the device runs, an f64 computation
//! from that stage's own device inputs (bf16, already rounded) checked on sampled output
//! elements with `pitwall_schema::check`. Checking stage by stage keeps the bf16 rounding of one
//! stage out of the next one's reference, so the bf16 rule (1e-2) holds for each, and the last
//! stage is the block's output. Pure code: tested without a GPU.

use crate::check::{Compared, Verdict, check, dot_scale, tolerance};
use crate::work::Dtype;

/// The widths of the model: d_model, attention heads of `head_dim`, the MLP's hidden width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelShape {
    pub d_model: usize,
    pub heads: usize,
    pub head_dim: usize,
    pub ffn: usize,
}

/// A GPT-2-medium-sized layer: d_model 1024, 16 heads of 64, MLP 4096.
pub const MODEL: ModelShape = ModelShape {
    d_model: 1024,
    heads: 16,
    head_dim: 64,
    ffn: 4096,
};

/// ε of the RMS norms, inside the square root.
pub const RMS_EPS: f32 = 1e-5;

/// Output elements compared per stage.
pub const CHECKED_PER_STAGE: usize = 256;

/// The activation type of the suite.
pub const DTYPE: Dtype = Dtype::Bf16;

impl ModelShape {
    /// The GEMMs scale their product by 1/√k (cuBLAS α), as weights initialised with a
    /// 1/√fan_in scale would: activations stay of order one through the layer. 1/32 and 1/64
    /// for this model, exact in f32.
    pub fn gemm_alpha(k: usize) -> f32 {
        (k as f32).sqrt().recip()
    }

    /// 1/√head_dim, the attention scores' scale (Vaswani et al. 2017).
    pub fn attention_scale(self) -> f32 {
        (self.head_dim as f32).sqrt().recip()
    }
}

/// A bf16 bit pattern as f64.
pub fn bf16_to_f64(bits: u16) -> f64 {
    half::bf16::from_bits(bits).to_f64()
}

/// A row-major matrix of bf16 bit patterns as downloaded from the device.
#[derive(Debug, Clone, Copy)]
pub struct HostMat<'a> {
    pub data: &'a [u16],
    pub cols: usize,
}

impl HostMat<'_> {
    pub fn at(&self, r: usize, c: usize) -> f64 {
        bf16_to_f64(self.data[r * self.cols + c])
    }
    pub fn rows(&self) -> usize {
        self.data.len() / self.cols.max(1)
    }
}

/// What the device applies to a GEMM's output in place, after rounding it to bf16.
#[derive(Debug, Clone, Copy)]
pub enum Epilogue<'a> {
    None,
    /// gelu(y + bias), `bias_gelu_bf16`.
    BiasGelu {
        bias: &'a [u16],
    },
    /// y + bias + residual, `bias_residual_bf16`.
    BiasResidual {
        bias: &'a [u16],
        residual: HostMat<'a>,
    },
}

/// The exact GELU, 0.5·z·(1 + erf(z/√2)) (Hendrycks and Gimpel 2016), as `bias_gelu_bf16`
/// computes it (with `erff`); its slope is at most 1.13.
pub fn gelu(z: f64) -> f64 {
    0.5 * z * (1.0 + erf(z / std::f64::consts::SQRT_2))
}

/// erf from Numerical Recipes' Chebyshev fit `erfcc` (Press et al., 2nd ed., §6.2: fractional
/// error of erfc below 1.2e-7 everywhere), far below the 1e-2 bf16 rule it serves.
pub fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 { 1.0 - erfc } else { erfc - 1.0 }
}

/// RMS norm of `x` into `y` with `gamma`, at `positions` (row, column).
pub fn check_rmsnorm(
    x: HostMat<'_>,
    gamma: &[u16],
    y: HostMat<'_>,
    positions: &[(usize, usize)],
) -> Verdict {
    let cols = x.cols;
    let elements = positions.iter().map(|&(r, c)| {
        let ms = (0..cols).map(|j| x.at(r, j).powi(2)).sum::<f64>() / cols as f64;
        let want = x.at(r, c) / (ms + f64::from(RMS_EPS)).sqrt() * bf16_to_f64(gamma[c]);
        Compared {
            index: r * cols + c,
            got: y.at(r, c),
            want,
            scale: want.abs(),
        }
    });
    check(elements, tolerance(DTYPE, cols as u64))
}

/// y = epilogue(α·a·w) at `positions`, a (t×k) and w (k×n) row-major, α = 1/√k. The error is
/// relative to the larger of |want| and the dot product's scale (`check::dot_scale`, with the
/// bias and residual as further terms): the device rounds the product to bf16 before the
/// epilogue, an error of 2⁻⁹ of that scale, which GELU (slope ≤ 1.13) does not amplify.
pub fn check_linear(
    a: HostMat<'_>,
    w: HostMat<'_>,
    epilogue: Epilogue<'_>,
    y: HostMat<'_>,
    positions: &[(usize, usize)],
) -> Verdict {
    let (k, n) = (a.cols, w.cols);
    let alpha = f64::from(ModelShape::gemm_alpha(k));
    let elements = positions.iter().map(|&(i, j)| {
        let (mut dot, mut sum_sq) = (0.0f64, 0.0f64);
        for l in 0..k {
            let t = alpha * a.at(i, l) * w.at(l, j);
            dot += t;
            sum_sq += t * t;
        }
        let (want, scale) = match epilogue {
            Epilogue::None => (dot, dot_scale(dot, sum_sq)),
            Epilogue::BiasGelu { bias } => {
                let z = dot + bf16_to_f64(bias[j]);
                let want = gelu(z);
                (want, want.abs().max(dot_scale(z, sum_sq)))
            }
            Epilogue::BiasResidual { bias, residual } => {
                let (b, r) = (bf16_to_f64(bias[j]), residual.at(i, j));
                let want = dot + b + r;
                (want, dot_scale(want, sum_sq + b * b + r * r))
            }
        };
        Compared {
            index: i * n + j,
            got: y.at(i, j),
            want,
            scale,
        }
    });
    check(elements, tolerance(DTYPE, k as u64))
}

/// Causal attention of `qkv` (rows b·seq + i; q | k | v, head h at h·head_dim) into `out`, at
/// `positions` (row, column of out): softmax over j ≤ i of scale·q·kⱼ, then Σ pⱼ·vⱼ, relative
/// to the dot scale of that sum.
pub fn check_attention(
    shape: ModelShape,
    seq: usize,
    qkv: HostMat<'_>,
    out: HostMat<'_>,
    positions: &[(usize, usize)],
) -> Verdict {
    let (d, dh) = (shape.d_model, shape.head_dim);
    let scale = f64::from(shape.attention_scale());
    let elements = positions.iter().map(|&(t, c)| {
        let (b, i, h) = (t / seq, t % seq, c / dh);
        let row = |j: usize| b * seq + j;
        let scores: Vec<f64> = (0..=i)
            .map(|j| {
                scale
                    * (0..dh)
                        .map(|e| qkv.at(t, h * dh + e) * qkv.at(row(j), d + h * dh + e))
                        .sum::<f64>()
            })
            .collect();
        let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exps: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
        let total: f64 = exps.iter().sum();
        let (mut want, mut sum_sq) = (0.0f64, 0.0f64);
        for (j, e) in exps.iter().enumerate() {
            let term = e / total * qkv.at(row(j), 2 * d + c);
            want += term;
            sum_sq += term * term;
        }
        Compared {
            index: t * d + c,
            got: out.at(t, c),
            want,
            scale: dot_scale(want, sum_sq),
        }
    });
    check(elements, tolerance(DTYPE, dh as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::sample_positions;

    fn bits(x: f32) -> u16 {
        half::bf16::from_f32(x).to_bits()
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
        half::bf16::from_bits(b).to_f32()
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
}
