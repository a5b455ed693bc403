//! NVIDIA's datasheet figures of the GPUs pitwall knows, in the one crate every other can
//! reach: the CUDA backend reports a GEMM as a percentage of its card's dense peak (and fills
//! the `plausible` guard's bounds from them), and the host locks `clocks = "lock"` at the
//! card's base clock.
//!
//! Sources: NVIDIA's datasheets (H200: "NVIDIA H200 Tensor Core GPU" datasheet, 2024; H100:
//! "NVIDIA H100 Tensor Core GPU" datasheet, 2023; A100: "NVIDIA A100 Tensor Core GPU" datasheet,
//! 2021). The datasheets give tensor-core figures "with sparsity"; the dense peaks below are
//! half of them, as the datasheets' footnotes say. These are boost-clock peaks: a card held at a
//! lower clock, or power-capped, cannot reach them, which is what the percentage then shows.
//! Base clocks are NVIDIA's product specifications (the SXM H100 and H200 share a 1590 MHz
//! base and a 1980 MHz boost); the H200 NVL's is left unknown rather than guessed.

use crate::work::Dtype;

/// One card's ceilings: dense TFLOP/s per input type and HBM GB/s (10⁹ B/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peaks {
    /// f32 without tensor cores (FMA).
    pub f32_tflops: f64,
    pub tf32_tflops: f64,
    pub bf16_tflops: f64,
    pub f16_tflops: f64,
    /// `None` on cards without fp8 tensor cores.
    pub fp8_tflops: Option<f64>,
    pub hbm_gb_per_s: f64,
    /// The datasheet base SM clock (MHz): what `clocks = "lock"` locks to (the highest
    /// clock NVML offers at or below it). `None` where the vendor gives none.
    pub base_sm_mhz: Option<u32>,
}

impl Peaks {
    /// The dense peak for GEMM inputs of `dtype`, when the card has one.
    pub fn tflops(&self, dtype: Dtype) -> Option<f64> {
        match dtype {
            Dtype::F32 => Some(self.f32_tflops),
            Dtype::Tf32 => Some(self.tf32_tflops),
            Dtype::Bf16 => Some(self.bf16_tflops),
            Dtype::F16 => Some(self.f16_tflops),
            Dtype::Fp8E4m3 | Dtype::Fp8E5m2 => self.fp8_tflops,
            Dtype::F64 => None,
        }
    }
}

/// The known cards, by the name CUDA (and nvidia-smi) reports, exactly.
pub const KNOWN: [(&str, Peaks); 7] = [
    (
        "NVIDIA H200",
        Peaks {
            f32_tflops: 67.0,
            tf32_tflops: 494.5,
            bf16_tflops: 989.5,
            f16_tflops: 989.5,
            fp8_tflops: Some(1979.0),
            hbm_gb_per_s: 4800.0,
            base_sm_mhz: Some(1590),
        },
    ),
    (
        "NVIDIA H200 NVL",
        Peaks {
            f32_tflops: 60.0,
            tf32_tflops: 417.5,
            bf16_tflops: 835.5,
            f16_tflops: 835.5,
            fp8_tflops: Some(1670.5),
            hbm_gb_per_s: 4800.0,
            base_sm_mhz: None,
        },
    ),
    (
        "NVIDIA H100 80GB HBM3",
        Peaks {
            f32_tflops: 67.0,
            tf32_tflops: 494.5,
            bf16_tflops: 989.5,
            f16_tflops: 989.5,
            fp8_tflops: Some(1979.0),
            hbm_gb_per_s: 3350.0,
            base_sm_mhz: Some(1590),
        },
    ),
    (
        "NVIDIA H100 PCIe",
        Peaks {
            f32_tflops: 51.0,
            tf32_tflops: 378.0,
            bf16_tflops: 756.0,
            f16_tflops: 756.0,
            fp8_tflops: Some(1513.0),
            hbm_gb_per_s: 2000.0,
            base_sm_mhz: Some(1125),
        },
    ),
    (
        "NVIDIA A100-SXM4-80GB",
        Peaks {
            f32_tflops: 19.5,
            tf32_tflops: 156.0,
            bf16_tflops: 312.0,
            f16_tflops: 312.0,
            fp8_tflops: None,
            hbm_gb_per_s: 2039.0,
            base_sm_mhz: Some(1275),
        },
    ),
    (
        "NVIDIA A100-SXM4-40GB",
        Peaks {
            f32_tflops: 19.5,
            tf32_tflops: 156.0,
            bf16_tflops: 312.0,
            f16_tflops: 312.0,
            fp8_tflops: None,
            hbm_gb_per_s: 1555.0,
            base_sm_mhz: Some(1275),
        },
    ),
    (
        "NVIDIA A100 80GB PCIe",
        Peaks {
            f32_tflops: 19.5,
            tf32_tflops: 156.0,
            bf16_tflops: 312.0,
            f16_tflops: 312.0,
            fp8_tflops: None,
            hbm_gb_per_s: 1935.0,
            base_sm_mhz: Some(1065),
        },
    ),
];

/// The figures of the card named `name`, if pitwall knows it (no guess for other names: a
/// percentage of a wrong peak would mislead).
pub fn of(name: &str) -> Option<Peaks> {
    KNOWN
        .iter()
        .find(|(known, _)| *known == name.trim())
        .map(|(_, p)| *p)
}

/// The datasheet base SM clock of the card named `name`, when pitwall knows one.
pub fn base_sm_mhz(name: &str) -> Option<u32> {
    of(name).and_then(|p| p.base_sm_mhz)
}

/// A card's short name for messages: `NVIDIA H200` → `H200`.
pub fn short_name(name: &str) -> &str {
    name.trim().strip_prefix("NVIDIA ").unwrap_or(name.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_names_are_known_and_fp8_only_where_the_card_has_it() {
        let h200 = of("NVIDIA H200").unwrap();
        assert_eq!(h200.tflops(Dtype::Bf16), Some(989.5));
        assert_eq!(h200.tflops(Dtype::Fp8E4m3), Some(1979.0));
        assert_eq!(
            of("NVIDIA A100-SXM4-80GB").unwrap().tflops(Dtype::Fp8E4m3),
            None
        );
        assert_eq!(h200.tflops(Dtype::F64), None);
        // A name pitwall does not know gets no percentage rather than a neighbour's peak.
        assert_eq!(of("NVIDIA H200 SXM 141GB (engineering sample)"), None);
        assert_eq!(of("NVIDIA GeForce RTX 4090"), None);
        assert_ne!(of("NVIDIA H200 NVL"), of("NVIDIA H200"));
    }

    #[test]
    fn base_clocks_are_below_boost_and_unknown_where_not_published() {
        assert_eq!(base_sm_mhz("NVIDIA H200"), Some(1590));
        assert_eq!(base_sm_mhz("NVIDIA H200 NVL"), None);
        assert_eq!(base_sm_mhz("NVIDIA GeForce RTX 4090"), None);
        for (name, p) in KNOWN {
            if let Some(base) = p.base_sm_mhz {
                assert!((1000..1980).contains(&base), "{name}: {base}");
            }
        }
        assert_eq!(short_name("NVIDIA H200"), "H200");
        assert_eq!(short_name("Fake GPU"), "Fake GPU");
    }
}
