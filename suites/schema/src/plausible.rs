//! The `implausible` guard's rule: a result faster than its hardware can be is a measuring
//! error (an operand read from L2 that the benchmark meant to stream from HBM, a timer that
//! missed work), not a number to compare. A backend describes what bounds each benchmark
//! (`Plausibility`, from `Benchmark::plausibility`); the engine applies `Plausibility::check`
//! to the median time it measured and marks the benchmark's results `implausible` with the
//! reason. The figures come from the benchmark descriptions, never from the results.

use crate::schema::BenchmarkId;
use crate::work::{CacheMode, Dtype};

/// How far above a ceiling a median may be before it is implausible: 3%, the datasheets'
/// rounding plus clock jitter.
pub const PLAUSIBLE_MARGIN: f64 = 0.03;

/// What bounds one benchmark: its card's dense peak for its dtype (GEMMs), its card's memory
/// bandwidth (memory-bound work), or both.
#[derive(Debug, Clone, PartialEq)]
pub struct Plausibility {
    /// The card's name as CUDA reports it (`NVIDIA H200`), for the reason line.
    pub card: String,
    pub compute: Option<ComputeBound>,
    pub memory: Option<MemoryBound>,
}

/// A GEMM's floating-point work against its card's dense peak for its input type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ComputeBound {
    pub flops_per_iter: f64,
    pub dtype: Dtype,
    /// The card's dense peak for `dtype` (`pitwall_schema::datasheet`).
    pub peak_tflops: f64,
}

/// Memory-bound work against HBM. Bandwidth above HBM is only impossible when the operands
/// cannot have come from L2: cold mode with at least an L2's worth of operands read per timed
/// unit, or warm mode with an operand footprint over twice the L2.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryBound {
    /// Bytes the benchmark's bandwidth counts per iteration.
    pub bytes_per_iter: f64,
    pub cache: CacheMode,
    /// Operand bytes read per timed unit (between one event pair, after one flush).
    pub read_per_unit_bytes: u64,
    /// Operand bytes the benchmark touches, workspace left out.
    pub footprint_bytes: u64,
    /// The device's L2 size.
    pub l2_bytes: u64,
    /// The card's datasheet HBM bandwidth (GB/s); `None` for a card pitwall does not know,
    /// which is then held to `copy`.
    pub hbm_gb_per_s: Option<f64>,
    /// The copy benchmark of the same suite whose bandwidth, measured in the same run, stands
    /// in for `hbm_gb_per_s` on an unknown card.
    pub copy: Option<BenchmarkId>,
}

impl MemoryBound {
    /// Whether the operands must have come from HBM, so that HBM bounds the bandwidth.
    pub fn out_of_l2(&self) -> bool {
        match self.cache {
            CacheMode::Cold => self.read_per_unit_bytes >= self.l2_bytes,
            CacheMode::Warm => self.footprint_bytes > 2 * self.l2_bytes,
        }
    }
}

/// A rate for the reason line: `5.9 TB/s`, `812 GB/s`, `1250 TFLOP/s`.
fn rate(value: f64, unit: &str) -> String {
    if unit == "B/s" {
        if value >= 1e12 {
            format!("{:.1} TB/s", value / 1e12)
        } else {
            format!("{:.0} GB/s", value / 1e9)
        }
    } else {
        format!("{:.1} TFLOP/s", value / 1e12)
    }
}

impl Plausibility {
    /// Why a median of `ns_per_iter` is implausible for benchmark `shown`, if it is.
    /// `copy_gb_per_s` is the median bandwidth of `MemoryBound::copy` in the same run, when it
    /// was measured. `None`: plausible, or nothing to hold it to.
    pub fn check(
        &self,
        shown: &str,
        ns_per_iter: f64,
        copy_gb_per_s: Option<f64>,
    ) -> Option<String> {
        if !(ns_per_iter.is_finite() && ns_per_iter > 0.0) {
            return None;
        }
        let card = crate::datasheet::short_name(&self.card);
        let limit = 1.0 + PLAUSIBLE_MARGIN;
        if let Some(c) = &self.compute {
            let flops_per_s = c.flops_per_iter * 1e9 / ns_per_iter;
            let peak = c.peak_tflops * 1e12;
            if peak > 0.0 && flops_per_s > peak * limit {
                return Some(format!(
                    "{shown} {} > {card} {} dense peak {}",
                    rate(flops_per_s, "FLOP/s"),
                    c.dtype.as_str(),
                    rate(peak, "FLOP/s")
                ));
            }
        }
        if let Some(m) = self.memory.as_ref().filter(|m| m.out_of_l2()) {
            let bytes_per_s = m.bytes_per_iter * 1e9 / ns_per_iter;
            let (ceiling, what) = match (m.hbm_gb_per_s, copy_gb_per_s) {
                (Some(hbm), _) => (hbm * 1e9, format!("{card} HBM peak")),
                (None, Some(copy)) => (copy * 1e9, "the copy bandwidth of this run".to_string()),
                (None, None) => return None,
            };
            if ceiling > 0.0 && bytes_per_s > ceiling * limit {
                return Some(format!(
                    "{shown} {} > {what} {}",
                    rate(bytes_per_s, "B/s"),
                    rate(ceiling, "B/s")
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn skinny(cache: CacheMode, read: u64, footprint: u64, hbm: Option<f64>) -> Plausibility {
        Plausibility {
            card: "NVIDIA H200".into(),
            compute: Some(ComputeBound {
                flops_per_iter: 2.0 * 16.0 * 4096.0 * 4096.0,
                dtype: Dtype::Fp8E4m3,
                peak_tflops: 1979.0,
            }),
            memory: Some(MemoryBound {
                bytes_per_iter: 16.0 * MIB as f64,
                cache,
                read_per_unit_bytes: read,
                footprint_bytes: footprint,
                l2_bytes: 50 * MIB,
                hbm_gb_per_s: hbm,
                copy: None,
            }),
        }
    }

    /// ns per iteration at which `bytes` move at `tb_per_s`.
    fn ns_at(bytes: f64, tb_per_s: f64) -> f64 {
        bytes / (tb_per_s * 1e12) * 1e9
    }

    #[test]
    fn bandwidth_above_hbm_with_operands_out_of_l2_is_implausible() {
        let b = 16.0 * MIB as f64;
        let cold = skinny(CacheMode::Cold, 32 * 16 * MIB, 48 * MIB, Some(4800.0));
        let why = cold.check("cuda_gemm_skinny[n=4096]", ns_at(b, 5.9), None);
        assert_eq!(
            why.as_deref(),
            Some("cuda_gemm_skinny[n=4096] 5.9 TB/s > H200 HBM peak 4.8 TB/s")
        );
        // Within 3% of the peak: plausible.
        assert_eq!(cold.check("x", ns_at(b, 4.9), None), None);
        // Cold, but less than an L2 read per timed unit: the operands may sit in L2.
        let small = skinny(CacheMode::Cold, 16 * MIB, 16 * MIB, Some(4800.0));
        assert_eq!(small.check("x", ns_at(b, 9.0), None), None);
        // Warm: only a footprint over twice the L2 bounds it.
        let warm_fits = skinny(CacheMode::Warm, 0, 100 * MIB, Some(4800.0));
        assert_eq!(warm_fits.check("x", ns_at(b, 9.0), None), None);
        let warm_big = skinny(CacheMode::Warm, 0, 101 * MIB, Some(4800.0));
        assert!(warm_big.check("x", ns_at(b, 9.0), None).is_some());
    }

    #[test]
    fn an_unknown_card_is_held_to_the_copy_of_the_same_run() {
        let b = 16.0 * MIB as f64;
        let mut p = skinny(CacheMode::Cold, 64 * MIB, 64 * MIB, None);
        p.card = "NVIDIA GeForce RTX 4090".into();
        p.compute = None;
        assert_eq!(p.check("x", ns_at(b, 2.0), None), None, "no copy: no claim");
        assert_eq!(
            p.check("x", ns_at(b, 2.0), Some(1000.0)).as_deref(),
            Some("x 2.0 TB/s > the copy bandwidth of this run 1.0 TB/s")
        );
        assert_eq!(p.check("x", ns_at(b, 1.02), Some(1000.0)), None);
    }

    #[test]
    fn a_gemm_above_its_dtype_peak_is_implausible() {
        let p = skinny(CacheMode::Cold, 0, 0, Some(4800.0));
        let flops = p.compute.unwrap().flops_per_iter;
        let ns_at_peak = flops / 1979e12 * 1e9;
        assert_eq!(p.check("g", ns_at_peak, None), None);
        assert_eq!(p.check("g", ns_at_peak / 1.02, None), None);
        let why = p.check("g", ns_at_peak / 1.1, None).unwrap();
        assert!(
            why.starts_with("g 2176.9 TFLOP/s > H200 fp8_e4m3 dense peak 1979.0"),
            "{why}"
        );
        assert_eq!(p.check("g", f64::NAN, None), None);
        assert_eq!(p.check("g", 0.0, None), None);
    }
}
