//! The noise book from earlier pairs' sides, and `threshold_pct = "auto"` from it.

use std::collections::BTreeMap;

use pitwall_schema::{BenchmarkResult, Direction, ResultStatus, Unit};

use super::*;
use crate::compare::Side;

/// `reps` processes of 5 samples, process `i` offset by `offsets[i % len]` (a fraction).
fn result(name: &str, ns: f64, offsets: &[f64], reps: u32) -> BenchmarkResult {
    let mut samples = Vec::new();
    let mut replicates = Vec::new();
    for rep in 0..reps {
        let off = 1.0 + offsets[rep as usize % offsets.len()];
        for i in 0..5 {
            samples.push(ns * off * (1.0 + 0.0005 * (f64::from(i) - 2.0)));
            replicates.push(rep);
        }
    }
    BenchmarkResult {
        suite: "s".into(),
        name: name.into(),
        params: BTreeMap::new(),
        measure: "time".into(),
        unit: Unit::new(Unit::NANOSECONDS),
        direction: Direction::LowerIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples,
        sample_meta: Vec::new(),
        replicates,
        summary: None,
    }
}

fn side(results: Vec<BenchmarkResult>) -> Side {
    Side {
        label: "x".into(),
        run: None,
        results,
    }
}

/// An A/A pair of two benchmarks: `quiet` with ±0.1% offsets between processes, `loud` ±4%.
fn aa_pair(shift: usize) -> (Side, Side) {
    let small = [0.001, -0.001, 0.0005, -0.0005];
    let large = [0.04, -0.04, 0.02, -0.02, 0.0];
    let mk = |k: usize| {
        let rot = |o: &[f64]| -> Vec<f64> { (0..o.len()).map(|i| o[(i + k) % o.len()]).collect() };
        side(vec![
            result("quiet", 1000.0, &rot(&small), 5),
            result("loud", 1000.0, &rot(&large), 5),
        ])
    };
    (mk(shift), mk(shift + 1))
}

#[test]
fn earlier_pairs_make_one_record_per_benchmark() {
    let pairs: Vec<(Side, Side)> = (0..3).map(aa_pair).collect();
    let book = NoiseBook::from_pairs(&pairs);
    assert_eq!(book.pairs, 3);
    let quiet = book.get("s/quiet/time").unwrap();
    let loud = book.get("s/loud/time").unwrap();
    assert_eq!((quiet.pairs, loud.pairs), (3, 3));
    // Two separately measured sides: 5 + 5 − 2 degrees of freedom each, pooled over three.
    assert!(quiet.dof > 8.0 * 2.0 && quiet.dof < 8.0 * 3.0, "{quiet:?}");
    assert!(loud.var > 100.0 * quiet.var, "{quiet:?} {loud:?}");
    assert!(NoiseBook::empty().is_empty() && book.records().count() == 2);
}

#[test]
fn auto_thresholds_rise_only_where_noise_cannot_resolve_the_floor() {
    let pairs: Vec<(Side, Side)> = (0..3).map(aa_pair).collect();
    let book = NoiseBook::from_pairs(&pairs);
    let auto = ThresholdRule::Auto {
        floor_pct: 2.0,
        max_rounds: 15,
    };
    let quiet = resolve(auto, book.get("s/quiet/time"), 3, 0.04);
    assert_eq!(
        quiet,
        ResolvedThreshold {
            pct: 2.0,
            raised_from_pct: None
        }
    );
    let loud = resolve(auto, book.get("s/loud/time"), 3, 0.04);
    assert!(
        loud.pct > 2.0 && loud.raised_from_pct == Some(2.0),
        "{loud:?}"
    );
    // Without a record, "auto" is its floor; a fixed threshold is never raised.
    assert_eq!(resolve(auto, None, 3, 0.04).pct, 2.0);
    let fixed = resolve(ThresholdRule::Fixed(1.0), book.get("s/loud/time"), 3, 0.04);
    assert_eq!((fixed.pct, fixed.raised_from_pct), (1.0, None));
}

#[test]
fn a_comparison_uses_the_record_and_says_when_it_does_not() {
    let pairs: Vec<(Side, Side)> = (0..3).map(aa_pair).collect();
    let book = NoiseBook::from_pairs(&pairs);
    let (b, c) = aa_pair(7);
    let report = crate::compare::compare(
        &b,
        &c,
        &|_| ThresholdRule::Fixed(2.0),
        Vec::new(),
        &pitwall_stats::ab::AbConfig::default(),
        crate::compare::CompareOptions::default(),
        &book,
    );
    for bench in &report.benchmarks {
        assert!(
            matches!(
                bench.comparison.noise_record,
                Some(pitwall_stats::ab::RecordUse::Used { .. })
            ),
            "{bench:?}"
        );
    }
    // A record of a much quieter machine than this pair's is set aside, and the reason says so.
    let quiet: Vec<(Side, Side)> = (0..3)
        .map(|k| {
            let small = [0.0001 * (k as f64 + 1.0), -0.0001];
            (
                side(vec![result("loud", 1000.0, &small, 5)]),
                side(vec![result("loud", 1000.0, &small, 5)]),
            )
        })
        .collect();
    let wrong = NoiseBook::from_pairs(&quiet);
    let report = crate::compare::compare(
        &b,
        &c,
        &|_| ThresholdRule::Fixed(2.0),
        Vec::new(),
        &pitwall_stats::ab::AbConfig::default(),
        crate::compare::CompareOptions::default(),
        &wrong,
    );
    let loud = report.benchmarks.iter().find(|x| x.name == "loud").unwrap();
    assert!(
        loud.comparison
            .reason
            .contains("the testbed's noise record was ignored"),
        "{}",
        loud.comparison.reason
    );
}
