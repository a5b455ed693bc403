//! Results as a percentage of a ceiling measured in the same run (`Benchmark::ceiling`): a row
//! kernel's bandwidth against the copy bandwidth of the same suite, so a reader sees how close
//! to the machine's limit each benchmark runs, with the ceiling taken on the same machine, in
//! the same process tree and at the same time (as nvbench and STREAM-style reports do).

use pitwall_schema::{BenchmarkId, BenchmarkResult, Ceiling, Direction, ResultStatus, Unit};
use pitwall_stats::summary::median;

/// The derived results of `ceilings` (each a benchmark's id and its ceiling) over the results
/// of one suite: each sample of the benchmark's measure × 100 ÷ the median of the ceiling's
/// samples, with the benchmark's per-sample state and replicates. A benchmark or ceiling that
/// failed, was not measured or has no positive median gives no derived result.
pub(super) fn ceiling_results(
    results: &[BenchmarkResult],
    ceilings: &[(BenchmarkId, Ceiling)],
) -> Vec<BenchmarkResult> {
    let find = |id: &BenchmarkId, measure: &str| {
        results.iter().find(|r| {
            r.name == id.name
                && r.params == id.params
                && r.measure == measure
                && r.status == ResultStatus::Ok
                && !r.samples.is_empty()
        })
    };
    ceilings
        .iter()
        .filter_map(|(id, c)| {
            let r = find(id, &c.measure)?;
            let top = find(&c.of, &c.measure)?;
            let finite: Vec<f64> = top
                .samples
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .collect();
            let m = median(&finite).filter(|m| *m > 0.0)?;
            Some(BenchmarkResult {
                measure: c.derived_measure(),
                unit: Unit::new(Unit::PERCENT),
                direction: Direction::HigherIsBetter,
                samples: r.samples.iter().map(|v| v * 100.0 / m).collect(),
                ..r.clone()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn result(name: &str, bytes: &str, samples: &[f64]) -> BenchmarkResult {
        BenchmarkResult {
            suite: "kernel".into(),
            name: name.into(),
            params: BTreeMap::from([("bytes".to_string(), bytes.to_string())]),
            measure: "bandwidth".into(),
            unit: Unit::new(Unit::GB_PER_S),
            direction: Direction::HigherIsBetter,
            status: ResultStatus::Ok,
            error: None,
            samples: samples.to_vec(),
            sample_meta: Vec::new(),
            replicates: vec![0; samples.len()],
            summary: None,
        }
    }

    fn id(name: &str, bytes: &str) -> BenchmarkId {
        BenchmarkId::new(name, &[("bytes", bytes.to_string())])
    }

    fn of_copy(name: &str) -> (BenchmarkId, Ceiling) {
        (
            id(name, "64"),
            Ceiling {
                measure: "bandwidth".into(),
                of: id("stream_copy", "1024"),
                label: "copy".into(),
            },
        )
    }

    #[test]
    fn each_sample_is_a_percentage_of_the_ceilings_median() {
        let results = vec![
            result("stream_copy", "64", &[90.0]),
            result("stream_copy", "1024", &[200.0, 100.0, 110.0, 90.0, 105.0]),
            result("reduce", "64", &[50.0, 75.0, 100.0]),
        ];
        let out = ceiling_results(&results, &[of_copy("reduce")]);
        assert_eq!(out.len(), 1);
        let d = &out[0];
        assert_eq!(
            (d.name.as_str(), d.measure.as_str()),
            ("reduce", "bandwidth_of_copy")
        );
        assert_eq!(d.unit.as_str(), "%");
        assert_eq!(d.direction, Direction::HigherIsBetter);
        // The ceiling's median is 105 (not its mean, 121, nor its first sample).
        let expected = [50.0, 75.0, 100.0].map(|v| v * 100.0 / 105.0);
        assert_eq!(d.samples, expected);
        assert_eq!(
            d.replicates,
            vec![0; 3],
            "the benchmark's replicates are kept"
        );
    }

    #[test]
    fn no_derived_result_without_a_measured_ceiling_or_benchmark() {
        let reduce = result("reduce", "64", &[50.0]);
        // The ceiling was filtered out.
        assert!(ceiling_results(std::slice::from_ref(&reduce), &[of_copy("reduce")]).is_empty());
        // The ceiling failed.
        let mut copy = result("stream_copy", "1024", &[100.0]);
        copy.status = ResultStatus::Failed;
        assert!(ceiling_results(&[reduce.clone(), copy], &[of_copy("reduce")]).is_empty());
        // A ceiling of median zero gives no percentage rather than an infinity.
        let zero = result("stream_copy", "1024", &[0.0, 0.0, 1.0]);
        assert!(ceiling_results(&[reduce.clone(), zero.clone()], &[of_copy("reduce")]).is_empty());
        // The benchmark itself was not measured.
        assert!(ceiling_results(&[zero], &[of_copy("reduce")]).is_empty());
    }
}
