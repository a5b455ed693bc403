//! Datasheet ceilings of the GPUs pitwall knows, so a GEMM is also reported as a percentage of
//! its card's dense tensor-core (or FMA) peak and a memory-bound GEMM as a percentage of the
//! card's HBM bandwidth: "where a ceiling is known, the fraction of it" (docs/SUITES.md).
//!
//! Sources: NVIDIA's datasheets (H200: "NVIDIA H200 Tensor Core GPU" datasheet, 2024; H100:
//! "NVIDIA H100 Tensor Core GPU" datasheet, 2023; A100: "NVIDIA A100 Tensor Core GPU" datasheet,
//! 2021). The datasheets give tensor-core figures "with sparsity"; the dense peaks below are
//! half of them, as the datasheets' footnotes say. These are boost-clock peaks: a card held at a
//! lower clock, or power-capped, cannot reach them, which is what the percentage then shows.

use crate::benchmark::MetricSpec;
use crate::schema::Unit;
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
const KNOWN: [(&str, Peaks); 7] = [
    (
        "NVIDIA H200",
        Peaks {
            f32_tflops: 67.0,
            tf32_tflops: 494.5,
            bf16_tflops: 989.5,
            f16_tflops: 989.5,
            fp8_tflops: Some(1979.0),
            hbm_gb_per_s: 4800.0,
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
        },
    ),
];

/// The ceilings of the card named `name`, if pitwall knows it (no guess for other names: a
/// percentage of a wrong peak would mislead).
pub fn of(name: &str) -> Option<Peaks> {
    KNOWN
        .iter()
        .find(|(known, _)| *known == name.trim())
        .map(|(_, p)| *p)
}

/// `flops_per_iter` as a percentage of a peak of `peak_tflops` (`throughput_of_peak`, %).
pub fn throughput_of_peak(flops_per_iter: f64, peak_tflops: f64) -> MetricSpec {
    MetricSpec::rate(
        "throughput_of_peak",
        Unit::PERCENT,
        flops_per_iter,
        peak_tflops * 1e12 / 100.0,
    )
}

/// `bytes_per_iter` as a percentage of the HBM bandwidth `hbm_gb_per_s`
/// (`bandwidth_of_peak`, %).
pub fn bandwidth_of_peak(bytes_per_iter: f64, hbm_gb_per_s: f64) -> MetricSpec {
    MetricSpec::rate(
        "bandwidth_of_peak",
        Unit::PERCENT,
        bytes_per_iter,
        hbm_gb_per_s * 1e9 / 100.0,
    )
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
    fn a_gemm_at_the_peak_is_100_percent() {
        // 2·8192³ flops in the time the H200's bf16 peak needs for them: 100%.
        let flops = 2.0 * 8192f64.powi(3);
        let m = throughput_of_peak(flops, 989.5);
        assert_eq!(
            (m.measure.as_str(), m.unit.as_str()),
            ("throughput_of_peak", "%")
        );
        let ns_at_peak = flops / 989.5e12 * 1e9;
        let pct = m.conversion.apply(ns_at_peak);
        assert!((pct - 100.0).abs() < 1e-9, "{pct}");
        // Twice the time: half the peak.
        assert!((m.conversion.apply(2.0 * ns_at_peak) - 50.0).abs() < 1e-9);
        let b = bandwidth_of_peak(4.8e9, 4800.0);
        assert!(
            (b.conversion.apply(1e6) - 100.0).abs() < 1e-9,
            "4.8 GB in 1 ms"
        );
    }
}
