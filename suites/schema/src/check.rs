//! Whether a benchmark computed the right answer, decided one way for every backend: the
//! tolerance each element type allows, a pass/fail over compared elements that names the worst
//! one, and a sampled check of a large GEMM against host dot products (a full host GEMM of
//! 8192³ would take minutes). A wrong result fails the benchmark instead of being timed.

use crate::work::Dtype;

/// The largest error a dot product of `k` terms computed in `dtype` may have, relative to its
/// magnitude: max(|want|, ‖terms‖₂) (see [`dot_scale`]). The reference uses the same rounded
/// inputs, so what is left is accumulation order and the rounding of the output:
/// - f32: 1e-5·√k (accumulation error grows like √k for random data; the rule is loose enough
///   that it does not tell an f32 GEMM from one silently run in tf32);
/// - tf32 and bf16: 1e-2 (10 and 7 mantissa bits: a half ulp is 4.9e-4 and 3.9e-3);
/// - f16: 1e-3 (a half ulp is 4.9e-4), accumulation in f32;
/// - fp8: a half ulp of the format at 1, 2⁻⁴ for e4m3 and 2⁻³ for e5m2;
/// - f64: 1e-13·√k.
pub fn tolerance(dtype: Dtype, k: u64) -> f64 {
    let sqrt_k = (k.max(1) as f64).sqrt();
    match dtype {
        Dtype::F64 => 1e-13 * sqrt_k,
        Dtype::F32 => 1e-5 * sqrt_k,
        Dtype::Tf32 | Dtype::Bf16 => 1e-2,
        Dtype::F16 => 1e-3,
        Dtype::Fp8E4m3 => 0.0625,
        Dtype::Fp8E5m2 => 0.125,
    }
}

/// The magnitude a dot product's error is measured against: the larger of |want| and the
/// Euclidean norm of its terms ‖(aₗ·bₗ)ₗ‖₂. With random inputs the terms cancel, so |want| alone
/// can be near zero for a correct element (and any rounding error then looks huge), while
/// Σ|terms| grows like k and hides a missing block of terms; ‖terms‖₂ is the size a sum of
/// random terms and its rounding errors have (a random walk), and |want| keeps the rounding of a
/// large output within its half ulp. A GEMM that drops 64 of 8192 terms is off by about 0.09
/// of this; a wrong layout by about 1.
pub fn dot_scale(want: f64, sum_sq_terms: f64) -> f64 {
    want.abs().max(sum_sq_terms.sqrt())
}

/// One compared element: what was computed, what the reference says, and the magnitude the
/// error is relative to ([`dot_scale`] for a dot product, |want| or the terms' magnitude
/// where there is no sum).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compared {
    /// Position in the output (row-major index, or whatever the caller names).
    pub index: usize,
    pub got: f64,
    pub want: f64,
    pub scale: f64,
}

impl Compared {
    /// |got − want| / scale; infinite when `got` is not finite or the scale is zero and they
    /// differ, so a NaN can never pass.
    pub fn rel_err(&self) -> f64 {
        if !self.got.is_finite() {
            return f64::INFINITY;
        }
        let diff = (self.got - self.want).abs();
        if diff == 0.0 {
            0.0
        } else if self.scale > 0.0 {
            diff / self.scale
        } else {
            f64::INFINITY
        }
    }
}

/// The outcome of a check: how many elements were compared and failed, and the worst one.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub checked: usize,
    pub failed: usize,
    pub tolerance: f64,
    /// The element with the largest relative error, and that error.
    pub worst: Option<(Compared, f64)>,
}

impl Verdict {
    /// Every element within the tolerance, and at least one compared.
    pub fn passed(&self) -> bool {
        self.checked > 0 && self.failed == 0
    }

    /// One line for a failed benchmark's result: how many were off and the worst element.
    pub fn describe(&self, what: &str) -> String {
        match &self.worst {
            None => format!("{what}: nothing was compared"),
            Some((w, err)) => format!(
                "{what}: {} of {} checked elements off; worst [{}] = {} (want {}, error {:.2e} of the terms' magnitude, tolerance {:.2e})",
                self.failed, self.checked, w.index, w.got, w.want, err, self.tolerance
            ),
        }
    }
}

/// Compares every element against `tolerance`.
pub fn check(elements: impl IntoIterator<Item = Compared>, tolerance: f64) -> Verdict {
    let mut verdict = Verdict {
        checked: 0,
        failed: 0,
        tolerance,
        worst: None,
    };
    for e in elements {
        let err = e.rel_err();
        verdict.checked += 1;
        // A NaN error fails too.
        if err.is_nan() || err > tolerance {
            verdict.failed += 1;
        }
        if verdict.worst.as_ref().is_none_or(|(_, w)| err > *w) {
            verdict.worst = Some((e, err));
        }
    }
    verdict
}

/// splitmix64: the sampler's deterministic generator.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `count` positions (row, column) of an m×n output to check: the four corners (where
/// off-by-one tiling bugs show), then positions drawn from `seed`, so a run checks the same
/// elements each time and different sizes check different ones. Fewer when the output is
/// smaller than `count`; every position is in range.
pub fn sample_positions(m: usize, n: usize, count: usize, seed: u64) -> Vec<(usize, usize)> {
    if m == 0 || n == 0 {
        return Vec::new();
    }
    let count = count.min(m.saturating_mul(n));
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(count);
    for p in [(0, 0), (m - 1, n - 1), (0, n - 1), (m - 1, 0)] {
        if out.len() < count && !out.contains(&p) {
            out.push(p);
        }
    }
    let mut state = seed;
    while out.len() < count {
        state = mix(state);
        let p = (
            (state % m as u64) as usize,
            ((state >> 32) % n as u64) as usize,
        );
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Checks C = A·B (A m×k, B k×n) at `positions` against host dot products in f64 of the same
/// (already rounded) inputs. The closures read one element, `a(i, l)`, `b(l, j)`, `c(i, j)`,
/// whatever the layout; `index` in the verdict is `i·n + j`.
pub fn check_gemm_sampled(
    (m, n, k): (usize, usize, usize),
    dtype: Dtype,
    positions: &[(usize, usize)],
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
    c: impl Fn(usize, usize) -> f64,
) -> Verdict {
    let elements = positions
        .iter()
        .filter(|&&(i, j)| i < m && j < n)
        .map(|&(i, j)| {
            let (mut want, mut sum_sq) = (0.0f64, 0.0f64);
            for l in 0..k {
                let t = a(i, l) * b(l, j);
                want += t;
                sum_sq += t * t;
            }
            Compared {
                index: i * n + j,
                got: c(i, j),
                want,
                scale: dot_scale(want, sum_sq),
            }
        });
    check(elements, tolerance(dtype, k as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances_follow_the_rule() {
        assert!((tolerance(Dtype::F32, 10_000) - 1e-3).abs() < 1e-15);
        assert!((tolerance(Dtype::F32, 1) - 1e-5).abs() < 1e-18);
        assert_eq!(tolerance(Dtype::Tf32, 8192), 1e-2);
        assert_eq!(tolerance(Dtype::Bf16, 64), 1e-2);
        assert_eq!(tolerance(Dtype::F16, 64), 1e-3);
        assert_eq!(tolerance(Dtype::Fp8E4m3, 64), 0.0625);
        assert_eq!(tolerance(Dtype::Fp8E5m2, 64), 0.125);
        assert!(tolerance(Dtype::F64, 4) < 1e-12);
        // Stricter types allow less.
        assert!(tolerance(Dtype::F32, 8192) < tolerance(Dtype::F16, 8192));
        assert!(tolerance(Dtype::F16, 8192) < tolerance(Dtype::Bf16, 8192));
    }

    #[test]
    fn check_passes_within_and_names_the_worst_element() {
        let e = |index, got, want| Compared {
            index,
            got,
            want,
            scale: 10.0,
        };
        let v = check([e(0, 1.0, 1.0), e(1, 2.001, 2.0), e(2, 3.0, 3.0005)], 1e-3);
        assert!(v.passed(), "{v:?}");
        assert_eq!((v.checked, v.failed), (3, 0));
        let (worst, err) = v.worst.unwrap();
        assert_eq!(worst.index, 1);
        assert!((err - 1e-4).abs() < 1e-9);

        let v = check([e(0, 1.0, 1.0), e(7, 5.0, 2.0), e(9, 2.5, 2.0)], 1e-3);
        assert!(!v.passed());
        assert_eq!((v.checked, v.failed), (3, 2));
        assert_eq!(v.worst.unwrap().0.index, 7);
        let line = v.describe("gemm_f32[n=4]");
        assert!(
            line.starts_with(
                "gemm_f32[n=4]: 2 of 3 checked elements off; worst [7] = 5 (want 2, error 3.00e-1"
            ),
            "{line}"
        );
    }

    #[test]
    fn nan_and_empty_never_pass() {
        let nan = Compared {
            index: 0,
            got: f64::NAN,
            want: 1.0,
            scale: 1.0,
        };
        assert_eq!(nan.rel_err(), f64::INFINITY);
        assert!(!check([nan], 1.0).passed());
        assert!(!check([], 1.0).passed());
        assert_eq!(check([], 1.0).describe("x"), "x: nothing was compared");
        let zero_scale = Compared {
            index: 0,
            got: 1e-30,
            want: 0.0,
            scale: 0.0,
        };
        assert!(!check([zero_scale], 1.0).passed());
        let exact = Compared {
            got: 0.0,
            ..zero_scale
        };
        assert!(check([exact], 0.0).passed());
    }

    #[test]
    fn the_dot_scale_tolerates_cancellation_and_catches_dropped_terms() {
        assert_eq!(dot_scale(-3.0, 4.0), 3.0);
        assert_eq!(dot_scale(0.5, 4.0), 2.0);
        // k = 8192 random terms: dropping 64 of them is caught even by the bf16 rule.
        let k = 8192;
        let terms: Vec<f64> = (0..k)
            .map(|l| {
                let h = mix(l as u64);
                ((h >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * ((h & 0xFFFF) as f64 / 65536.0)
            })
            .collect();
        let want: f64 = terms.iter().sum();
        let sum_sq: f64 = terms.iter().map(|t| t * t).sum();
        let dropped: f64 = terms[..k - 64].iter().sum();
        let e = Compared {
            index: 0,
            got: dropped,
            want,
            scale: dot_scale(want, sum_sq),
        };
        assert!(
            e.rel_err() > tolerance(Dtype::Bf16, k as u64),
            "{}",
            e.rel_err()
        );
    }

    #[test]
    fn sampled_positions_are_in_range_distinct_and_repeatable() {
        let p = sample_positions(100, 37, 64, 7);
        assert_eq!(p.len(), 64);
        assert_eq!(&p[..4], &[(0, 0), (99, 36), (0, 36), (99, 0)]);
        assert!(p.iter().all(|&(i, j)| i < 100 && j < 37));
        let mut sorted = p.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 64, "distinct");
        assert_eq!(p, sample_positions(100, 37, 64, 7));
        assert_ne!(p, sample_positions(100, 37, 64, 8));
        assert_eq!(sample_positions(2, 2, 64, 1).len(), 4);
        assert_eq!(sample_positions(1, 1, 3, 1), vec![(0, 0)]);
        assert!(sample_positions(0, 5, 3, 1).is_empty());
    }

    /// A small GEMM with f32 inputs computed in f32 passes the f32 rule; one wrong element,
    /// or the same GEMM with its inputs truncated to bf16 (checked against the f32 inputs),
    /// fails it, and passes the bf16 rule.
    #[test]
    fn sampled_gemm_check_catches_a_wrong_element_and_lost_precision() {
        let (m, n, k) = (48, 40, 64);
        let val = |s: u64, i: usize| {
            let h = mix(s ^ mix(i as u64));
            ((h >> 42) as f64 + 0.5) / f64::from(1u32 << 21) - 1.0
        };
        let a: Vec<f32> = (0..m * k).map(|i| val(1, i) as f32).collect();
        let b: Vec<f32> = (0..k * n).map(|i| val(2, i) as f32).collect();
        assert!(a.iter().chain(&b).all(|&x| x != 0.0 && x.abs() < 1.0));
        let gemm = |a: &[f32], b: &[f32]| -> Vec<f32> {
            let mut c = vec![0.0f32; m * n];
            for i in 0..m {
                for j in 0..n {
                    c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
                }
            }
            c
        };
        let c = gemm(&a, &b);
        let positions = sample_positions(m, n, 200, 3);
        let run = |c: &[f32], dtype| {
            check_gemm_sampled(
                (m, n, k),
                dtype,
                &positions,
                |i, l| f64::from(a[i * k + l]),
                |l, j| f64::from(b[l * n + j]),
                |i, j| f64::from(c[i * n + j]),
            )
        };
        let v = run(&c, Dtype::F32);
        assert!(v.passed(), "{}", v.describe("f32"));
        assert_eq!(v.checked, 200);

        let mut wrong = c.clone();
        let (i, j) = positions[10];
        wrong[i * n + j] += 0.5;
        let v = run(&wrong, Dtype::F32);
        assert!(!v.passed());
        assert_eq!(v.failed, 1);
        assert_eq!(v.worst.unwrap().0.index, i * n + j);

        // Inputs truncated to bf16's 8 significant bits, checked against the f32 inputs.
        let bf = |x: f32| f32::from_bits(x.to_bits() & 0xFFFF_0000);
        let (a16, b16): (Vec<f32>, Vec<f32>) = (
            a.iter().map(|&x| bf(x)).collect(),
            b.iter().map(|&x| bf(x)).collect(),
        );
        let lossy = gemm(&a16, &b16);
        assert!(
            !run(&lossy, Dtype::F32).passed(),
            "bf16 inputs pass an f32 check"
        );
        assert!(
            run(&lossy, Dtype::Bf16).passed(),
            "but within the bf16 rule"
        );
    }
}
