//! Datasheet ceilings of the GPUs pitwall knows, so a GEMM is also reported as a percentage of
//! its card's dense tensor-core (or FMA) peak and a memory-bound GEMM as a percentage of the
//! card's HBM bandwidth: "where a ceiling is known, the fraction of it" (docs/SUITES.md). The
//! figures themselves are `pitwall_schema::datasheet`'s (the host's clock lock reads the same
//! table); this module turns them into measures.

use pitwall_schema::benchmark::MetricSpec;
pub use pitwall_schema::datasheet::{Peaks, of};
use pitwall_schema::schema::Unit;

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
