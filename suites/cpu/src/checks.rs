//! The CPU suites' checks before timing: a benchmark's first result is compared with a
//! reference computed in f64 from the same inputs, under `pitwall_schema::check`'s per-type
//! rule, so a wrong result fails the benchmark instead of being timed (docs/SUITES.md, "The
//! reference-check rule"). Run once per benchmark, outside the timed loop.

use pitwall_schema::benchmark::BenchError;
use pitwall_schema::check::{
    Compared, Verdict, check, check_gemm_sampled, sample_positions, tolerance,
};
use pitwall_schema::work::Dtype;

/// Output elements of a GEMM checked: the corners, then positions drawn from a fixed seed.
const GEMM_CHECKED: usize = 64;

fn verdict_to_result(v: Verdict, what: &str) -> Result<(), BenchError> {
    if v.passed() {
        Ok(())
    } else {
        Err(BenchError::Validation(v.describe(what)))
    }
}

/// C = A·B of square row-major n×n f32 matrices, on a sample of C.
pub(crate) fn gemm(
    n: usize,
    a: &[f32],
    b: &[f32],
    c: &[f32],
    what: &str,
) -> Result<(), BenchError> {
    let positions = sample_positions(n, n, GEMM_CHECKED, n as u64);
    let v = check_gemm_sampled(
        (n, n, n),
        Dtype::F32,
        &positions,
        |i, l| f64::from(a[i * n + l]),
        |l, j| f64::from(b[l * n + j]),
        |i, j| f64::from(c[i * n + j]),
    );
    verdict_to_result(v, what)
}

/// `got` equal to `want` element by element (within the f64 rule for one operation), every
/// element: a copy, or a triad `b + s·c`.
pub(crate) fn elementwise(
    got: &[f64],
    want: impl Fn(usize) -> f64,
    what: &str,
) -> Result<(), BenchError> {
    let v = check(
        got.iter().enumerate().map(|(i, &g)| {
            let w = want(i);
            Compared {
                index: i,
                got: g,
                want: w,
                scale: w.abs(),
            }
        }),
        tolerance(Dtype::F64, 1),
    );
    verdict_to_result(v, what)
}

/// One dense layer y = x·W + bias (W inputs × outputs, row-major), with ReLU unless `last`.
pub(crate) struct LayerRef<'a> {
    pub inputs: usize,
    pub outputs: usize,
    pub weights: &'a [f32],
    pub bias: &'a [f32],
}

/// An MLP's output (`batch` rows) against the same forward pass in f64 with plain loops: each
/// output element relative to the size of its last layer's dot product, under the f32 rule
/// with k = that layer's inputs (the earlier layers' rounding is far below it).
pub(crate) fn mlp(
    layers: &[LayerRef<'_>],
    input: &[f32],
    batch: usize,
    got: &[f32],
    what: &str,
) -> Result<(), BenchError> {
    let mut x: Vec<f64> = input.iter().map(|&v| f64::from(v)).collect();
    let mut compared = Vec::new();
    for (li, l) in layers.iter().enumerate() {
        let last = li + 1 == layers.len();
        let mut y = vec![0.0; batch * l.outputs];
        for r in 0..batch {
            for o in 0..l.outputs {
                let (mut acc, mut sum_sq) = (f64::from(l.bias[o]), 0.0f64);
                for k in 0..l.inputs {
                    let t = x[r * l.inputs + k] * f64::from(l.weights[k * l.outputs + o]);
                    acc += t;
                    sum_sq += t * t;
                }
                let idx = r * l.outputs + o;
                if last {
                    compared.push(Compared {
                        index: idx,
                        got: got.get(idx).map_or(f64::NAN, |&g| f64::from(g)),
                        want: acc,
                        scale: pitwall_schema::check::dot_scale(acc, sum_sq),
                    });
                }
                y[idx] = if last { acc } else { acc.max(0.0) };
            }
        }
        x = y;
    }
    let k = layers.last().map_or(1, |l| l.inputs) as u64;
    verdict_to_result(check(compared, tolerance(Dtype::F32, k)), what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_right_gemm_passes_and_a_wrong_element_fails_by_name() {
        let n = 8;
        let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 - 2.0).collect();
        let mut c = vec![0.0f32; n * n];
        for i in 0..n {
            for j in 0..n {
                c[i * n + j] = (0..n).map(|l| a[i * n + l] * b[l * n + j]).sum();
            }
        }
        assert!(gemm(n, &a, &b, &c, "gemm_f32[n=8]").is_ok());
        // A wrong corner (always checked).
        c[n * n - 1] += 1.0;
        let e = gemm(n, &a, &b, &c, "gemm_f32[n=8]")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("gemm_f32[n=8]: 1 of") && e.contains("worst [63]"),
            "{e}"
        );
    }

    #[test]
    fn elementwise_fails_on_a_wrong_or_missing_value() {
        assert!(elementwise(&[3.5, 3.5], |_| 3.5, "stream_triad").is_ok());
        let e = elementwise(&[3.5, 3.0], |_| 3.5, "stream_triad").unwrap_err();
        assert!(e.to_string().contains("1 of 2 checked elements off"), "{e}");
        assert!(elementwise(&[f64::NAN], |_| 1.0, "stream_copy").is_err());
        assert!(
            elementwise(&[], |_| 1.0, "empty").is_err(),
            "nothing compared fails"
        );
    }

    #[test]
    fn an_mlp_without_its_relu_or_bias_fails() {
        let w1 = [1.0f32, -1.0, 0.5, 2.0];
        let w2 = [1.0f32, 1.0];
        let (b1, b2) = ([0.1f32, -0.2], [0.3f32]);
        let layers = [
            LayerRef {
                inputs: 2,
                outputs: 2,
                weights: &w1,
                bias: &b1,
            },
            LayerRef {
                inputs: 2,
                outputs: 1,
                weights: &w2,
                bias: &b2,
            },
        ];
        let input = [1.0f32, -2.0];
        // h = relu([1 - 1, -1 - 4] + [0.1, -0.2]) = [0.1, 0]; y = 0.1 + 0 + 0.3 = 0.4.
        assert!(mlp(&layers, &input, 1, &[0.4], "mlp").is_ok());
        // Without ReLU: h = [0.1, -5.2], y = -4.8.
        assert!(mlp(&layers, &input, 1, &[-4.8], "mlp").is_err());
        // Without the last bias.
        assert!(mlp(&layers, &input, 1, &[0.1], "mlp").is_err());
    }
}
