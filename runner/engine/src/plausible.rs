//! The `implausible` guard applied to a suite's results: each benchmark whose backend says
//! what bounds it (`Benchmark::plausibility`) has its median time held to that bound
//! (`pitwall_schema::plausible`), and when it is beyond, every result of that benchmark keeps
//! its samples but becomes `implausible` with the reason. The run is then partial, and no
//! verdict, history point or alert is made of those results.

use pitwall_schema::{BenchmarkId, BenchmarkResult, Plausibility, ResultStatus, Unit};
use pitwall_stats::summary::median;

/// One benchmark's bound and the median time per iteration it was measured at.
#[derive(Debug, Clone)]
pub(super) struct Guarded {
    pub id: BenchmarkId,
    pub bound: Plausibility,
    pub median_ns: f64,
}

/// The median of a result's finite samples.
fn median_of(r: &BenchmarkResult) -> Option<f64> {
    let finite: Vec<f64> = r
        .samples
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    median(&finite)
}

/// The median bandwidth (GB/s) of benchmark `id` in `results`, when it was measured.
fn bandwidth_of(results: &[BenchmarkResult], id: &BenchmarkId) -> Option<f64> {
    results
        .iter()
        .find(|r| {
            r.name == id.name
                && r.params == id.params
                && r.status == ResultStatus::Ok
                && r.unit.as_str() == Unit::GB_PER_S
        })
        .and_then(median_of)
}

/// Marks the results of every guarded benchmark whose median is beyond its bound; returns the
/// reasons, one line each, in the order of `guarded`.
pub(super) fn mark_implausible(
    results: &mut [BenchmarkResult],
    guarded: &[Guarded],
) -> Vec<String> {
    let mut reasons = Vec::new();
    for g in guarded {
        let copy = g
            .bound
            .memory
            .as_ref()
            .and_then(|m| m.copy.as_ref())
            .and_then(|c| bandwidth_of(results, c));
        let Some(why) = g.bound.check(&g.id.display(), g.median_ns, copy) else {
            continue;
        };
        for r in results
            .iter_mut()
            .filter(|r| r.name == g.id.name && r.params == g.id.params)
            .filter(|r| r.status == ResultStatus::Ok)
        {
            r.status = ResultStatus::Implausible;
            r.error = Some(format!("implausible: {why}"));
        }
        reasons.push(why);
    }
    reasons
}

/// The median time per iteration of a sample set, for `Guarded::median_ns`.
pub(super) fn median_ns(ns_per_iter: &[f64]) -> Option<f64> {
    let finite: Vec<f64> = ns_per_iter
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    median(&finite)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use pitwall_schema::backend::CacheMode;
    use pitwall_schema::{Direction, MemoryBound};

    use super::*;

    const MIB: u64 = 1 << 20;

    fn result(name: &str, measure: &str, unit: &str, samples: &[f64]) -> BenchmarkResult {
        BenchmarkResult {
            suite: "kernel".into(),
            name: name.into(),
            params: BTreeMap::from([("n".to_string(), "4096".to_string())]),
            measure: measure.into(),
            unit: Unit::new(unit),
            direction: Direction::HigherIsBetter,
            status: ResultStatus::Ok,
            error: None,
            samples: samples.to_vec(),
            sample_meta: Vec::new(),
            replicates: Vec::new(),
            summary: None,
        }
    }

    fn id(name: &str) -> BenchmarkId {
        BenchmarkId::new(name, &[("n", "4096".to_string())])
    }

    fn skinny(hbm: Option<f64>) -> Plausibility {
        Plausibility {
            card: "NVIDIA H200".into(),
            compute: None,
            memory: Some(MemoryBound {
                bytes_per_iter: 16.0 * MIB as f64,
                cache: CacheMode::Cold,
                read_per_unit_bytes: 512 * MIB,
                footprint_bytes: 512 * MIB,
                l2_bytes: 50 * MIB,
                hbm_gb_per_s: hbm,
                copy: Some(id("copy")),
            }),
        }
    }

    #[test]
    fn a_result_beyond_hbm_keeps_its_samples_and_says_why() {
        // 16 MiB in 2.84 µs: 5.9 TB/s on an H200 (4.8 TB/s).
        let ns = 16.0 * MIB as f64 / 5.9e12 * 1e9;
        let mut results = vec![
            result("cuda_gemm_skinny", "time", "ns", &[ns, ns, ns]),
            result("cuda_gemm_skinny", "bandwidth", "GB/s", &[5900.0; 3]),
            result("other", "time", "ns", &[1.0]),
        ];
        let guarded = [Guarded {
            id: id("cuda_gemm_skinny"),
            bound: skinny(Some(4800.0)),
            median_ns: ns,
        }];
        let reasons = mark_implausible(&mut results, &guarded);
        assert_eq!(
            reasons,
            ["cuda_gemm_skinny[n=4096] 5.9 TB/s > H200 HBM peak 4.8 TB/s"]
        );
        for r in &results[..2] {
            assert_eq!(r.status, ResultStatus::Implausible, "{}", r.measure);
            assert_eq!(r.samples.len(), 3, "samples kept");
            assert_eq!(
                r.error.as_deref(),
                Some("implausible: cuda_gemm_skinny[n=4096] 5.9 TB/s > H200 HBM peak 4.8 TB/s")
            );
        }
        assert_eq!(results[2].status, ResultStatus::Ok);
        assert_eq!(
            pitwall_schema::RunStatus::from_results(&results),
            pitwall_schema::RunStatus::Partial
        );
    }

    #[test]
    fn an_unknown_card_is_held_to_the_copy_measured_in_the_same_run() {
        let ns = 16.0 * MIB as f64 / 2.0e12 * 1e9;
        let mut results = vec![
            result("copy", "bandwidth", "GB/s", &[1000.0, 1010.0, 990.0]),
            result("cuda_gemm_skinny", "time", "ns", &[ns]),
        ];
        let mut bound = skinny(None);
        bound.card = "NVIDIA GeForce RTX 4090".into();
        let guarded = [Guarded {
            id: id("cuda_gemm_skinny"),
            bound,
            median_ns: ns,
        }];
        let reasons = mark_implausible(&mut results, &guarded);
        assert_eq!(
            reasons,
            ["cuda_gemm_skinny[n=4096] 2.0 TB/s > the copy bandwidth of this run 1.0 TB/s"]
        );
        assert_eq!(results[1].status, ResultStatus::Implausible);
        assert_eq!(results[0].status, ResultStatus::Ok);
        // Without the copy in the run there is nothing to hold it to.
        let mut alone = vec![result("cuda_gemm_skinny", "time", "ns", &[ns])];
        assert!(mark_implausible(&mut alone, &guarded).is_empty());
        assert_eq!(alone[0].status, ResultStatus::Ok);
    }

    #[test]
    fn medians_skip_non_finite_samples() {
        assert_eq!(median_ns(&[3.0, f64::NAN, 1.0, 2.0]), Some(2.0));
        assert_eq!(median_ns(&[]), None);
    }
}
