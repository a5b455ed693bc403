//! bf16 and fp16 on the host: the 16-bit values the CUDA GEMMs, the inference suite and user
//! kernels' references read and write, converted exactly (round to nearest, ties to even).
//!
//! Written here rather than taken from the `half` crate, which brought zerocopy into the
//! release build for a dozen conversions (docs/PERFORMANCE.md "Build time"). The tests check
//! every 16-bit pattern against `half`, and a million values against the rounding rule itself
//! (`half`'s own f64 conversions round twice, through f32). Formats: IEEE 754-2008 binary16
//! (5 exponent bits, 10 mantissa bits) and bfloat16 (the top half of binary32: 8 and 7).

/// A binary floating-point format of 16 bits: sign, `exp_bits`, `mant_bits`.
#[derive(Debug, Clone, Copy)]
struct Format {
    exp_bits: u32,
    mant_bits: u32,
}

const BF16: Format = Format {
    exp_bits: 8,
    mant_bits: 7,
};
const F16: Format = Format {
    exp_bits: 5,
    mant_bits: 10,
};

impl Format {
    fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    fn exp_all(self) -> u16 {
        (1 << self.exp_bits) - 1
    }

    /// `x` to the nearest value of the format, ties to even; beyond the largest finite value
    /// (after rounding) it is infinite, NaN stays NaN (quiet).
    fn encode(self, x: f64) -> u16 {
        let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
        let mant = self.mant_bits as i32;
        if x.is_nan() {
            return sign | (self.exp_all() << mant) | (1 << (mant - 1));
        }
        let a = x.abs();
        if a.is_infinite() {
            return sign | (self.exp_all() << mant);
        }
        let biased64 = ((a.to_bits() >> 52) & 0x7FF) as i32;
        if biased64 == 0 {
            // Zero, or an f64 subnormal (below 2⁻¹⁰²²): far below half the smallest subnormal.
            return sign;
        }
        let e = biased64 - 1023;
        let emin = 1 - self.bias();
        // The spacing of the format's values around `a` is 2^q: scaling by a power of two is
        // exact, so is rounding the scaled value to an integer.
        let mut q = e.max(emin) - mant;
        let mut m = (a * 2f64.powi(-q)).round_ties_even() as u64;
        if m == 1 << (mant + 1) {
            m >>= 1;
            q += 1;
        }
        if m < 1 << mant {
            // Subnormal (or zero): exponent field 0, spacing 2^(emin − mant).
            return sign | m as u16;
        }
        let biased = q + mant + self.bias();
        if biased >= i32::from(self.exp_all()) {
            return sign | (self.exp_all() << mant);
        }
        sign | ((biased as u16) << mant) | (m as u16 & ((1 << mant) - 1))
    }

    /// The value of `bits` in this format.
    fn decode(self, bits: u16) -> f64 {
        let mant = self.mant_bits as i32;
        let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
        let exp = (bits >> mant) & self.exp_all();
        let m = f64::from(bits & ((1 << mant) - 1));
        let magnitude = if exp == self.exp_all() {
            if m == 0.0 { f64::INFINITY } else { f64::NAN }
        } else if exp == 0 {
            m * 2f64.powi(1 - self.bias() - mant)
        } else {
            (m + f64::from(1u32 << mant)) * 2f64.powi(i32::from(exp) - self.bias() - mant)
        };
        sign * magnitude
    }
}

/// The bf16 nearest `x` (ties to even), as its bits.
pub fn bf16_from_f64(x: f64) -> u16 {
    BF16.encode(x)
}

/// The bf16 nearest `x` (ties to even; f32 to f64 is exact, so this rounds once).
pub fn bf16_from_f32(x: f32) -> u16 {
    BF16.encode(f64::from(x))
}

/// The value of bf16 `bits`.
pub fn bf16_to_f64(bits: u16) -> f64 {
    BF16.decode(bits)
}

/// The fp16 nearest `x` (ties to even), as its bits.
pub fn f16_from_f64(x: f64) -> u16 {
    F16.encode(x)
}

/// The value of fp16 `bits`.
pub fn f16_to_f64(bits: u16) -> f64 {
    F16.decode(bits)
}

/// Element `i` of a little-endian array of 16-bit values.
pub fn le_u16_at(bytes: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    #[test]
    fn every_bit_pattern_decodes_as_half_does() {
        for bits in 0..=u16::MAX {
            let (ours, theirs) = (bf16_to_f64(bits), half::bf16::from_bits(bits).to_f64());
            assert!(same(ours, theirs), "bf16 {bits:#06x}: {ours} vs {theirs}");
            let (ours, theirs) = (f16_to_f64(bits), half::f16::from_bits(bits).to_f64());
            assert!(same(ours, theirs), "f16 {bits:#06x}: {ours} vs {theirs}");
        }
    }

    #[test]
    fn every_value_round_trips_and_halfway_points_go_to_even() {
        for bits in 0..=u16::MAX {
            let b = bf16_to_f64(bits);
            if !b.is_nan() {
                assert_eq!(bf16_from_f64(b), bits, "bf16 {bits:#06x}");
            }
            let f = f16_to_f64(bits);
            if !f.is_nan() {
                assert_eq!(f16_from_f64(f), bits, "f16 {bits:#06x}");
            }
        }
        // 1 + 2⁻⁸ lies halfway between bf16 1.0 (even) and 1 + 2⁻⁷ (odd).
        assert_eq!(bf16_from_f64(1.0 + 2f64.powi(-8)), 0x3F80);
        assert_eq!(bf16_from_f64(1.0 + 3.0 * 2f64.powi(-8)), 0x3F82);
        // fp16: the largest finite value is 65504; halfway to 65536 and above is infinite.
        assert_eq!(f16_from_f64(65504.0), 0x7BFF);
        assert_eq!(f16_from_f64(65519.99), 0x7BFF);
        assert_eq!(f16_from_f64(65520.0), 0x7C00);
        assert_eq!(f16_from_f64(-1e9), 0xFC00);
        // Below half the smallest subnormal is zero, with its sign.
        assert_eq!(f16_from_f64(2f64.powi(-26)), 0x0000);
        assert_eq!(f16_from_f64(-2f64.powi(-25) * 1.01), 0x8001);
        assert!(bf16_to_f64(bf16_from_f32(f32::NAN)).is_nan());
    }

    /// `bits` is the nearest value of `format` to `x`, the even one on a tie (for a finite
    /// `x` within the format's finite range).
    fn is_nearest(format: Format, x: f64, bits: u16) -> bool {
        let v = format.decode(bits);
        [bits.wrapping_sub(1), bits.wrapping_add(1)]
            .into_iter()
            .map(|n| format.decode(n))
            .filter(|n| n.is_finite() && n.signum() == v.signum())
            .all(|n| {
                let (dv, dn) = ((x - v).abs(), (x - n).abs());
                dv < dn || (dv == dn && bits & 1 == 0)
            })
    }

    #[test]
    fn a_million_values_round_to_nearest_even() {
        // Bit patterns spread over every f64 exponent, and over the f32 ones.
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1_000_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let x = f64::from_bits(s);
            if x.is_nan() {
                continue;
            }
            // half's own f64 conversions round through f32, so a value just above a halfway
            // point can go down (bf16 3.1068927607297827e-6: 0x3650, the nearest is 0x3651):
            // for f64 inputs the rule itself is checked, half is the reference for f32 ones.
            let bf16_max = bf16_to_f64(0x7F7F);
            if x.abs() <= bf16_max {
                assert!(is_nearest(BF16, x, bf16_from_f64(x)), "bf16 {x:e}");
            } else if x.abs() > 2.0 * bf16_max {
                assert!(bf16_to_f64(bf16_from_f64(x)).is_infinite(), "bf16 {x:e}");
            }
            // Scaled into the formats' own range, where the rounding matters.
            let y = f64::from_bits((s & 0x800F_FFFF_FFFF_FFFF) | ((1023 - 30 + (s >> 58)) << 52));
            assert!(is_nearest(BF16, y, bf16_from_f64(y)), "bf16 {y:e}");
            if y.abs() < 65504.0 {
                assert!(is_nearest(F16, y, f16_from_f64(y)), "f16 {y:e}");
            }
            let z = f32::from_bits(s as u32);
            if !z.is_nan() {
                assert_eq!(
                    bf16_from_f32(z),
                    half::bf16::from_f32(z).to_bits(),
                    "bf16 {z:e}"
                );
                let w = f32::from_bits(
                    (s as u32 & 0x807F_FFFF) | ((127 - 30 + (s >> 59) as u32 * 2) << 23),
                );
                assert_eq!(
                    f16_from_f64(f64::from(w)),
                    half::f16::from_f32(w).to_bits(),
                    "f16 {w:e}"
                );
            }
        }
        assert_eq!(f16_from_f64(6.387331734158719e-2), 0x2C17);
        assert_eq!(bf16_from_f64(3.1068927607297827e-6), 0x3651);
    }
}
