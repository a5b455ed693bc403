//! The model of the CUDA `inference` suite and its host references: the shapes of the
//! transformer block and of its MLP, and, for every stage the device runs, an f64 computation
//! from that stage's own device inputs (bf16, already rounded) checked on sampled output
//! elements with `pitwall_schema::check`. Checking stage by stage keeps the bf16 rounding of one
//! stage out of the next one's reference, so the bf16 rule (1e-2) holds for each, and the last
//! stage is the block's output. Pure code: tested without a GPU.

use pitwall_schema::check::{Compared, Verdict, check, dot_scale, tolerance};
use pitwall_schema::work::Dtype;

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
    crate::half16::bf16_to_f64(bits)
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
mod tests;
