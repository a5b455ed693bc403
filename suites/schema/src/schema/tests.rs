//! Tests of the result schema, and the result every other module's tests start from.

use super::*;
use std::collections::BTreeMap;

pub(crate) fn result(samples: Vec<f64>) -> BenchmarkResult {
    BenchmarkResult {
        suite: "kernel".into(),
        name: "gemm_f32".into(),
        params: BTreeMap::from([("n".to_string(), "64".to_string())]),
        measure: "throughput".into(),
        unit: Unit::new(Unit::GFLOP_PER_S),
        direction: Direction::HigherIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples,
        sample_meta: Vec::new(),
        replicates: Vec::new(),
        summary: None,
    }
}

#[test]
fn key_names_suite_params_and_measure() {
    assert_eq!(result(vec![1.0]).key(), "kernel/gemm_f32[n=64]/throughput");
}

#[test]
fn combined_status_of_repeated_measurements() {
    use ResultStatus::*;
    for (a, b, want) in [
        (Ok, Ok, Ok),
        (Ok, Skipped, Ok),
        (Skipped, Ok, Ok),
        (Skipped, Skipped, Skipped),
        (Failed, Ok, Failed),
        (Skipped, Failed, Failed),
        (Ok, Failed, Failed),
    ] {
        assert_eq!(a.combine(b), want, "{a:?} + {b:?}");
    }
}
