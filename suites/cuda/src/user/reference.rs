//! The host side of a `cuda-kernels` benchmark's check: buffers decoded from their element type
//! to f64, constant fills encoded, the closed set of host references (`copy`, `scale`, `axpy`,
//! `add`, `sum`) computed in f64 from the same rounded inputs, and the pairs compared under
//! `pitwall_schema::check`'s per-type rule.

use crate::half16::{bf16_from_f64, bf16_to_f64, f16_from_f64, f16_to_f64};

use pitwall_schema::check::{Compared, dot_scale};
use pitwall_schema::manifest::{ElemType, HostOp};

/// The values of a buffer of `elem`s, as f64 (little-endian, as the device stores them).
pub fn decode(elem: ElemType, bytes: &[u8]) -> Vec<f64> {
    match elem {
        ElemType::F64 => bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        ElemType::F32 => bytes
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
        ElemType::F16 => bytes
            .chunks_exact(2)
            .map(|c| f16_to_f64(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        ElemType::Bf16 => bytes
            .chunks_exact(2)
            .map(|c| bf16_to_f64(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
    }
}

/// `count` copies of `value` rounded to `elem`, as the device stores them.
pub fn encode_const(elem: ElemType, value: f64, count: usize) -> Vec<u8> {
    let one: Vec<u8> = match elem {
        ElemType::F64 => value.to_le_bytes().to_vec(),
        ElemType::F32 => (value as f32).to_le_bytes().to_vec(),
        ElemType::F16 => f16_from_f64(value).to_le_bytes().to_vec(),
        ElemType::Bf16 => bf16_from_f64(value).to_le_bytes().to_vec(),
    };
    one.repeat(count)
}

/// The `random_init.cu` kernel that fills a buffer of `elem`s.
pub fn random_entry(elem: ElemType) -> &'static str {
    match elem {
        ElemType::F64 => "random_uniform_f64",
        ElemType::F32 => "random_uniform_f32",
        ElemType::F16 => "random_uniform_f16",
        ElemType::Bf16 => "random_uniform_bf16",
    }
}

/// What a host reference says each output element should be, with the magnitude its error is
/// relative to: element-wise results to the magnitude of their own terms (|a·x| + |y|), a sum
/// to [`dot_scale`] (the larger of |Σx| and ‖x‖₂, since random terms cancel). `a` is 0 and
/// `y` empty for the operations that take neither.
pub fn host_reference(op: HostOp, a: f64, x: &[f64], y: &[f64]) -> Vec<(f64, f64)> {
    match op {
        HostOp::Copy => x.iter().map(|&v| (v, v.abs())).collect(),
        HostOp::Scale => x.iter().map(|&v| (a * v, (a * v).abs())).collect(),
        HostOp::Axpy => x
            .iter()
            .zip(y)
            .map(|(&v, &w)| (a * v + w, (a * v).abs() + w.abs()))
            .collect(),
        HostOp::Add => x
            .iter()
            .zip(y)
            .map(|(&v, &w)| (v + w, v.abs() + w.abs()))
            .collect(),
        HostOp::Sum => {
            let sum: f64 = x.iter().sum();
            vec![(sum, dot_scale(sum, x.iter().map(|v| v * v).sum()))]
        }
    }
}

/// Output elements against a host reference (a sum checks the first element only).
pub fn against_host(got: &[f64], want: &[(f64, f64)]) -> Vec<Compared> {
    got.iter()
        .zip(want)
        .enumerate()
        .map(|(index, (&got, &(want, scale)))| Compared {
            index,
            got,
            want,
            scale,
        })
        .collect()
}

/// Output elements against a reference kernel's: each error relative to the larger of the
/// element's magnitude and the root mean square of the reference output, so an element that
/// should be near zero (a sum whose terms cancel) is not held to a relative error of its own
/// tiny value, while a wrong element of ordinary size still shows.
pub fn against_kernel(got: &[f64], want: &[f64]) -> Vec<Compared> {
    let finite: Vec<f64> = want.iter().copied().filter(|v| v.is_finite()).collect();
    let rms = if finite.is_empty() {
        0.0
    } else {
        (finite.iter().map(|v| v * v).sum::<f64>() / finite.len() as f64).sqrt()
    };
    let mut out: Vec<Compared> = got
        .iter()
        .zip(want)
        .enumerate()
        .map(|(index, (&got, &want))| Compared {
            index,
            got,
            want,
            scale: want.abs().max(rms),
        })
        .collect();
    // A reference that produced NaN is no reference: make the element fail.
    for c in &mut out {
        if !c.want.is_finite() {
            c.got = f64::NAN;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::check::{check, tolerance};

    #[test]
    fn buffers_decode_from_every_element_type() {
        let values = [1.5, -0.25, 3.0];
        for elem in ElemType::ALL {
            let mut bytes = Vec::new();
            for v in values {
                bytes.extend(encode_const(elem, v, 1));
            }
            assert_eq!(bytes.len(), 3 * elem.size_bytes() as usize);
            assert_eq!(decode(elem, &bytes), values.to_vec(), "{elem:?}");
        }
        // Rounded as the device would store it.
        let third = decode(ElemType::Bf16, &encode_const(ElemType::Bf16, 1.0 / 3.0, 1))[0];
        assert_eq!(third, bf16_to_f64(bf16_from_f64(1.0 / 3.0)));
        assert_eq!(encode_const(ElemType::F32, 2.0, 4).len(), 16);
        assert_eq!(random_entry(ElemType::F16), "random_uniform_f16");
    }

    #[test]
    fn host_references_compute_their_formulas() {
        let x = [1.0, -2.0, 0.5];
        let y = [4.0, 1.0, -1.0];
        let want = |op, a| {
            host_reference(op, a, &x, &y)
                .into_iter()
                .map(|p| p.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(want(HostOp::Copy, 0.0), vec![1.0, -2.0, 0.5]);
        assert_eq!(want(HostOp::Scale, 2.0), vec![2.0, -4.0, 1.0]);
        assert_eq!(want(HostOp::Axpy, 2.0), vec![6.0, -3.0, 0.0]);
        assert_eq!(want(HostOp::Add, 0.0), vec![5.0, -1.0, -0.5]);
        assert_eq!(want(HostOp::Sum, 0.0), vec![-0.5]);
        // axpy's third element is exactly 0: its error is relative to its terms, 1 + 1.
        assert_eq!(host_reference(HostOp::Axpy, 2.0, &x, &y)[2].1, 2.0);
        // A sum's scale is ‖x‖₂ when the terms cancel.
        assert_eq!(
            host_reference(HostOp::Sum, 0.0, &x, &[])[0].1,
            5.25f64.sqrt()
        );
    }

    #[test]
    fn a_wrong_element_fails_and_rounding_passes() {
        let x: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.37).sin()).collect();
        let y: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.11).cos()).collect();
        let want = host_reference(HostOp::Axpy, 2.0, &x, &y);
        // What an f32 kernel computes: rounded inputs, an f32 result.
        let got: Vec<f64> = x
            .iter()
            .zip(&y)
            .map(|(&v, &w)| f64::from(2.0f32 * v as f32 + w as f32))
            .collect();
        let tol = tolerance(ElemType::F32.dtype(), 1);
        assert!(check(against_host(&got, &want), tol).passed());
        let mut wrong = got.clone();
        wrong[417] += 0.01;
        let verdict = check(against_host(&wrong, &want), tol);
        assert!(!verdict.passed());
        assert_eq!(verdict.failed, 1);
        assert_eq!(verdict.worst.unwrap().0.index, 417);
        // A kernel that skips the last element (an off-by-one grid) leaves it zero.
        let mut short = got.clone();
        short[999] = 0.0;
        assert!(!check(against_host(&short, &want), tol).passed());
    }

    #[test]
    fn a_reference_kernel_is_compared_at_the_outputs_magnitude() {
        // Row sums of cancelling terms: one near zero, computed in another order.
        let want = [10.0, 1e-9, -7.0];
        let got = [10.000001, 2e-9, -7.0];
        let verdict = check(
            against_kernel(&got, &want),
            tolerance(ElemType::F32.dtype(), 1024),
        );
        assert!(verdict.passed(), "{verdict:?}");
        let bad = [10.0, 1e-9, -6.0];
        assert!(!check(against_kernel(&bad, &want), 1e-3).passed());
        let nan_ref = check(against_kernel(&[1.0], &[f64::NAN]), 1.0);
        assert!(!nan_ref.passed());
    }
}
