//! fp8 e4m3 on the host: decoding what the device computed with, and the same rounding as the
//! device's random initialiser (`random_uniform_fp8_e4m3` in `kernels/random_init.cu`, a line
//! by line port), so that rounding is tested without a GPU. The format is OCP's 8-bit floating
//! point "E4M3" (OCP OFP8 specification 1.0, 2023): exponent bias 7, 3 mantissa bits, no
//! infinity, S.1111.111 the only NaN, 448 the largest value, 2⁻⁹ the smallest subnormal.

/// The value of an e4m3 byte (NaN for 0x7F and 0xFF).
pub fn decode_e4m3(byte: u8) -> f64 {
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((byte >> 3) & 0x0F);
    let mantissa = f64::from(byte & 0x07);
    if exponent == 0x0F && byte & 0x07 == 0x07 {
        return f64::NAN;
    }
    let magnitude = if exponent == 0 {
        mantissa * 2f64.powi(-9)
    } else {
        (1.0 + mantissa / 8.0) * 2f64.powi(exponent - 7)
    };
    sign * magnitude
}

/// `v` (|v| < 1) to the nearest e4m3, ties to even; a value that would round to zero becomes
/// the smallest subnormal of its sign, as on the device (inputs are never zero).
pub fn encode_e4m3(v: f32) -> u8 {
    let sign = ((v.to_bits() >> 24) & 0x80) as u8;
    let a = v.abs();
    let code: u32 = if a < 0.015_625 {
        // Below 2⁻⁶: subnormal steps of 2⁻⁹; `round_ties_even` is `__float2int_rn`.
        let m = (a * 512.0).round_ties_even() as u32;
        if m == 0 { 1 } else { m }
    } else {
        let bits = a.to_bits();
        let e = ((bits >> 23) & 0xFF) as i32 - 127;
        let mant = bits & 0x7F_FFFF;
        let mut code = (((e + 7) as u32) << 3) | (mant >> 20);
        let (rem, half) = (mant & 0xF_FFFF, 0x8_0000);
        if rem > half || (rem == half && code & 1 == 1) {
            code += 1;
        }
        code
    };
    sign | code as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_formats_landmarks() {
        assert_eq!(decode_e4m3(0x38), 1.0);
        assert_eq!(decode_e4m3(0xB8), -1.0);
        assert_eq!(decode_e4m3(0x7E), 448.0);
        assert_eq!(decode_e4m3(0x01), 2f64.powi(-9));
        assert_eq!(decode_e4m3(0x08), 2f64.powi(-6));
        assert_eq!(decode_e4m3(0x07), 7.0 * 2f64.powi(-9));
        assert_eq!(decode_e4m3(0x36), 0.875);
        assert!(decode_e4m3(0x7F).is_nan() && decode_e4m3(0xFF).is_nan());
        assert_eq!(decode_e4m3(0x00), 0.0);
    }

    #[test]
    fn every_code_below_one_round_trips() {
        for code in 0x01u8..0x38 {
            for sign in [0u8, 0x80] {
                let c = sign | code;
                assert_eq!(encode_e4m3(decode_e4m3(c) as f32), c, "{c:#04x}");
            }
        }
    }

    #[test]
    fn rounds_to_nearest_ties_to_even_and_never_to_zero() {
        // Halfway between 0.875 (0x36) and 0.9375 (0x37): the even mantissa.
        assert_eq!(encode_e4m3(0.906_25), 0x36);
        assert_eq!(encode_e4m3(0.906_3), 0x37);
        // Halfway between 2⁻⁹ and 2·2⁻⁹: to 2·2⁻⁹.
        assert_eq!(encode_e4m3(1.5 * 2f32.powi(-9)), 0x02);
        // Just below 2⁻⁶ rounds up into the smallest normal.
        assert_eq!(encode_e4m3(0.015_6), 0x08);
        // A mantissa carry into the exponent: just below 0.5 is 0.5.
        assert_eq!(encode_e4m3(0.499), 0x30);
        assert_eq!(encode_e4m3(1e-6), 0x01);
        assert_eq!(encode_e4m3(-1e-6), 0x81);
        // Within half a step of the value, for values spread over (−1, 1).
        for i in 1..2000 {
            let v = (i as f32 / 1000.0 - 1.0) * 0.999;
            let got = decode_e4m3(encode_e4m3(v));
            let step = if v.abs() < 0.015_625 {
                2f64.powi(-9)
            } else {
                2f64.powi(f64::from(v.abs()).log2().floor() as i32 - 3)
            };
            assert!(
                (got - f64::from(v)).abs() <= step / 2.0 + 1e-12 || v.abs() < 2f32.powi(-10),
                "{v}: {got}"
            );
        }
    }
}
