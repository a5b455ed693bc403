//! A suite's summary in the write-up: each benchmark's level in its first and last segment
//! within the period, the geometric mean of the changes of time over benchmarks with its
//! bootstrap interval, the largest regressions and improvements, the trend, the noise.

use std::collections::BTreeMap;

use pitwall_schema::Direction;
use pitwall_stats::ab::Xoshiro256;

use super::{
    BenchChange, SampleCounts, SuiteSummary, TOP_N, TrendPoint, WriteupInput, time_change,
};
use crate::alerts::AlertRules;
use crate::history::Series;

fn median(v: &[f64]) -> f64 {
    pitwall_stats::median(v).unwrap_or(f64::NAN)
}

/// The segment (between change points) of point `i`.
fn segment_of(s: &Series, i: usize) -> usize {
    s.changes.iter().filter(|c| c.index <= i).count()
}

pub(super) fn summarize_suite(
    input: &WriteupInput<'_>,
    suite: &str,
    testbed: &str,
    series: &[&Series],
    in_period: &dyn Fn(usize) -> bool,
    rank: &[usize],
) -> Option<SuiteSummary> {
    let mut benchmarks = Vec::new();
    let mut cvs = Vec::new();
    let mut counts = Vec::new();
    let mut trend: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for s in series {
        let idx: Vec<usize> = (0..s.points.len())
            .filter(|&i| in_period(s.points[i].run))
            .collect();
        let (Some(&first), Some(&last)) = (idx.first(), idx.last()) else {
            continue;
        };
        let level = |seg: usize| {
            let v: Vec<f64> = idx
                .iter()
                .filter(|&&i| segment_of(s, i) == seg)
                .map(|&i| s.points[i].median)
                .collect();
            median(&v)
        };
        let (first_level, last_level) = (level(segment_of(s, first)), level(segment_of(s, last)));
        if !(first_level.is_normal() && last_level.is_normal()) {
            continue;
        }
        let mut segs: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for &i in &idx {
            counts.push(s.points[i].n);
            let m = s.points[i].median;
            segs.entry(segment_of(s, i)).or_default().push(m);
            let r = time_change(s.direction, first_level, m) + 1.0;
            if r.is_finite() && r > 0.0 {
                trend.entry(s.points[i].run).or_default().push(r.ln());
            }
        }
        let seg_cvs: Vec<f64> = segs.values().filter_map(|v| cv(v)).collect();
        if !seg_cvs.is_empty() {
            cvs.push(median(&seg_cvs));
        }
        benchmarks.push(BenchChange {
            key: s.key.clone(),
            label: s.label(),
            measure: s.measure.clone(),
            unit: s.unit.clone(),
            direction: s.direction,
            first_level,
            last_level,
            rel_change: last_level / first_level - 1.0,
            medians: idx.iter().map(|&i| s.points[i].median).collect(),
        });
    }
    if benchmarks.is_empty() {
        return None;
    }
    let threshold_pct = input.rules.threshold_for(suite);
    let ((worst, regressions), (best, improvements)) = beyond_threshold(&benchmarks, threshold_pct);
    let logs: Vec<f64> = benchmarks.iter().map(|b| b.time_change().ln_1p()).collect();
    let mut order: Vec<usize> = trend.keys().copied().collect();
    order.sort_by_key(|&ri| rank[ri]);
    Some(SuiteSummary {
        suite: suite.to_string(),
        testbed: testbed.to_string(),
        geomean_change: mean(&logs).exp() - 1.0,
        ci: geomean_ci(&logs, input.rules),
        regressions,
        improvements,
        worst,
        best,
        benchmarks,
        trend: order
            .into_iter()
            .map(|ri| TrendPoint {
                commit: input.runs[ri].commit.clone(),
                relative: mean(&trend[&ri]).exp(),
            })
            .collect(),
        noise_cv: (!cvs.is_empty()).then(|| median(&cvs)),
        samples_per_point: SampleCounts::of(counts),
        threshold_pct,
    })
}

/// The benchmarks that moved beyond the threshold, each way: the `TOP_N` worst regressions
/// (worst first) with how many regressed, and the `TOP_N` best improvements (best first) with
/// how many improved. A time regressed when it is more than the threshold slower (a throughput
/// when more than the threshold lower), as the ledger says of a step.
fn beyond_threshold(
    benchmarks: &[BenchChange],
    threshold_pct: f64,
) -> ((Vec<BenchChange>, usize), (Vec<BenchChange>, usize)) {
    let worse = |b: &BenchChange| match b.direction {
        Direction::LowerIsBetter => b.rel_change,
        Direction::HigherIsBetter => -b.rel_change,
    } * 100.0;
    let mut worst: Vec<BenchChange> = benchmarks
        .iter()
        .filter(|b| worse(b) > threshold_pct)
        .cloned()
        .collect();
    let mut best: Vec<BenchChange> = benchmarks
        .iter()
        .filter(|b| worse(b) < -threshold_pct)
        .cloned()
        .collect();
    let (regressions, improvements) = (worst.len(), best.len());
    worst.sort_by(|a, b| b.time_change().total_cmp(&a.time_change()));
    best.sort_by(|a, b| a.time_change().total_cmp(&b.time_change()));
    worst.truncate(TOP_N);
    best.truncate(TOP_N);
    ((worst, regressions), (best, improvements))
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Sample standard deviation over the mean; `None` under two values.
fn cv(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let m = mean(v);
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    (m != 0.0).then(|| var.sqrt() / m.abs())
}

/// Percentile bootstrap interval of the geometric mean (− 1) of the benchmarks whose log
/// changes of time are `logs`, resampling benchmarks (Efron & Tibshirani 1993, §13.3).
pub fn geomean_ci(logs: &[f64], rules: &AlertRules) -> Option<(f64, f64)> {
    if logs.is_empty() || rules.resamples < 10 {
        return None;
    }
    let mut rng = Xoshiro256::seed_from(rules.seed);
    let mut means: Vec<f64> = (0..rules.resamples)
        .map(|_| {
            let sum: f64 = (0..logs.len()).map(|_| logs[rng.below(logs.len())]).sum();
            sum / logs.len() as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let alpha = (1.0 - rules.level) / 2.0;
    let lo = pitwall_stats::quantile_sorted(&means, alpha)?;
    let hi = pitwall_stats::quantile_sorted(&means, 1.0 - alpha)?;
    Some((lo.exp() - 1.0, hi.exp() - 1.0))
}
