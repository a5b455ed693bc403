//! The comparison of two sides: pairs their benchmarks by suite, name, parameters and measure,
//! sets aside what failed, was skipped, is on one side only or differs in unit or direction,
//! groups samples by replicate and round, and asks the statistics for verdicts. The one
//! implementation behind `pitwall compare`, interleaved pairs, `ci`, bisect and the report.

use std::collections::BTreeMap;

use pitwall_schema::{BenchmarkResult, Direction, PairInfo, ResultStatus, RoundOrder, Run};
use pitwall_stats::ab::{
    AbConfig, Replicate, ReplicatedPair, RoundOrder as StatsOrder, SequentialPlan,
    compare_replicated,
};

use crate::comparison::{ComparedBenchmark, ComparisonReport};
use crate::noise::{NoiseBook, PairNoise, ThresholdRule, resolve};
use pitwall_stats::ab::noise::observe;

/// Suite recorded for benchmarks read from a bare pitwall JSON file (which has no suite);
/// pairing ignores the suite when either side has this one.
pub const FILE_SUITE: &str = "";

/// Results of one side of a comparison, with a label saying where they came from.
#[derive(Debug, Clone)]
pub struct Side {
    /// `run 0193…` or `file a.json`.
    pub label: String,
    /// The run when the side is a stored or exported run (fingerprint, commit).
    pub run: Option<Run>,
    pub results: Vec<BenchmarkResult>,
}

type Key = (String, BTreeMap<String, String>, String);

fn key(r: &BenchmarkResult) -> Key {
    (r.name.clone(), r.params.clone(), r.measure.clone())
}

fn display(r: &BenchmarkResult) -> String {
    r.key()
}

/// Finds the candidate result matching `b`: same suite (unless either side is a bare file),
/// name, parameters and measure.
fn find(b: &BenchmarkResult, cands: &[BenchmarkResult], used: &[bool]) -> Option<usize> {
    let k = key(b);
    cands.iter().enumerate().position(|(i, c)| {
        !used[i]
            && key(c) == k
            && (c.suite == b.suite || c.suite == FILE_SUITE || b.suite == FILE_SUITE)
    })
}

/// Why two results with the same key cannot be compared: different units (`ns vs ms`) or
/// directions. A ratio across units or directions would be a wrong answer, not a verdict.
fn incompatibility(b: &BenchmarkResult, c: &BenchmarkResult) -> Option<String> {
    if b.unit != c.unit {
        Some(format!("unit {} vs {}", b.unit, c.unit))
    } else if b.direction != c.direction {
        Some(format!(
            "direction {} vs {}",
            b.direction.as_str(),
            c.direction.as_str()
        ))
    } else {
        None
    }
}

/// A result's samples grouped by replicate (benchmark process), each with its round in the
/// pair `info` describes (round 1 without one); samples without a replicate index count as
/// one replicate. `exclude_throttled` leaves out samples flagged as throttled.
pub fn replicates_of(
    r: &BenchmarkResult,
    info: Option<&PairInfo>,
    exclude_throttled: bool,
) -> Vec<Replicate> {
    let mut by_index: BTreeMap<u32, Replicate> = BTreeMap::new();
    for (i, &v) in r.samples.iter().enumerate() {
        if exclude_throttled && r.sample_meta.get(i).is_some_and(|m| m.throttled) {
            continue;
        }
        let index = r.replicates.get(i).copied().unwrap_or(0);
        by_index
            .entry(index)
            .or_insert_with(|| Replicate {
                round: info.map_or(1, |p| p.round_of(index)),
                samples: Vec::new(),
            })
            .samples
            .push(v);
    }
    by_index.into_values().collect()
}

/// `r` with its samples replaced by the SM cycles of each (`SampleMeta::cycles`, the time per
/// iteration at the sample's clock; fewer is better), when every sample has them.
fn cycles_of(r: &BenchmarkResult) -> Option<BenchmarkResult> {
    if r.samples.is_empty() || r.sample_meta.len() != r.samples.len() {
        return None;
    }
    let cycles: Option<Vec<f64>> = r.sample_meta.iter().map(|m| m.cycles).collect();
    Some(BenchmarkResult {
        samples: cycles?,
        direction: Direction::LowerIsBetter,
        ..r.clone()
    })
}

/// The order of each of the first `rounds` rounds of a pair, as the analysis reads them
/// (base-head where not recorded); empty without a pair.
pub fn round_orders(info: Option<&PairInfo>, rounds: u32) -> Vec<StatsOrder> {
    info.map_or_else(Vec::new, |p| {
        (1..=rounds)
            .map(|r| match p.order_of(r) {
                RoundOrder::BaseHead => StatsOrder::BaseHead,
                RoundOrder::HeadBase => StatsOrder::HeadBase,
            })
            .collect()
    })
}

/// How a comparison treats the environment and throttled samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompareOptions {
    /// Compare even when the fingerprints differ in fields that matter.
    pub allow_env_mismatch: bool,
    /// Leave out samples flagged as taken while the GPU was throttled.
    pub exclude_throttled: bool,
}

/// Compares two sides. `threshold_pct` gives a suite's regression threshold rule (the
/// caller's `--threshold`, suite and project settings); `env_mismatch` lists the environment
/// differences that matter between the sides' runs (empty when either side has no run), and
/// makes the comparison incomparable unless `options.allow_env_mismatch`; `noise` holds the
/// testbed's records of earlier pairs ([`NoiseBook::empty`] for none).
pub fn compare(
    baseline: &Side,
    candidate: &Side,
    threshold_pct: &dyn Fn(&str) -> ThresholdRule,
    env_mismatch: Vec<String>,
    ab: &AbConfig,
    options: CompareOptions,
    noise: &NoiseBook,
) -> ComparisonReport {
    let mut sorted = sort_results(baseline, candidate, threshold_pct);
    let pair = interleaved_pair(baseline, candidate);
    let rounds = pair.map_or(1, |(p, _)| p.rounds.max(1));
    let benchmarks = compare_pairs(&sorted.pairs, pair, rounds, ab, options, noise);
    let fewest = benchmarks
        .iter()
        .map(|b: &ComparedBenchmark| {
            b.comparison
                .base_replicates
                .min(b.comparison.cand_replicates)
        })
        .min()
        .unwrap_or(0);
    // Listed as benchmarks are everywhere: numbers in names and parameters as numbers.
    for list in [
        &mut sorted.only_baseline,
        &mut sorted.only_candidate,
        &mut sorted.failed,
        &mut sorted.skipped,
        &mut sorted.implausible,
        &mut sorted.incompatible,
    ] {
        list.sort_by(|a, b| crate::order::natural_cmp(a, b));
    }
    ComparisonReport {
        rounds: pair.map(|_| rounds),
        sequential: pair.and_then(|(p, _)| p.sequential).map(|s| s.max_rounds),
        replicates: fewest,
        baseline: baseline.label.clone(),
        candidate: candidate.label.clone(),
        benchmarks,
        only_baseline: sorted.only_baseline,
        only_candidate: sorted.only_candidate,
        failed: sorted.failed,
        skipped: sorted.skipped,
        implausible: sorted.implausible,
        incompatible: sorted.incompatible,
        incomparable: !env_mismatch.is_empty() && !options.allow_env_mismatch,
        env_mismatch,
        identical: crate::identical::entries(pair.map(|(_, p)| p)),
        time: crate::identical::pair_time(pair.map(|(_, p)| p)),
        contended: contended_sides(baseline, candidate),
    }
}

/// `baseline (LABEL): REASONS` for each side whose run was measured on a contended machine.
fn contended_sides(baseline: &Side, candidate: &Side) -> Vec<String> {
    [("baseline", baseline), ("candidate", candidate)]
        .into_iter()
        .filter_map(|(name, side)| {
            let c = side
                .run
                .as_ref()?
                .contention
                .as_ref()
                .filter(|c| c.contended)?;
            Some(format!("{name} ({}): {}", side.label, c.reasons.join(", ")))
        })
        .collect()
}

/// Two sides' results sorted into the pairs that are compared and the lines that are only
/// listed (each list in the order found).
struct Sorted<'a> {
    /// Baseline, candidate, and the suite's threshold rule.
    pairs: Vec<(&'a BenchmarkResult, &'a BenchmarkResult, ThresholdRule)>,
    only_baseline: Vec<String>,
    only_candidate: Vec<String>,
    failed: Vec<String>,
    skipped: Vec<String>,
    implausible: Vec<String>,
    incompatible: Vec<String>,
}

fn is(r: &BenchmarkResult, s: ResultStatus) -> bool {
    r.status == s
}

/// An implausible result's line: shown with its reason and never compared.
fn implausible_line(b: &BenchmarkResult, c: Option<&BenchmarkResult>) -> String {
    let why = [Some(b), c]
        .into_iter()
        .flatten()
        .find(|r| is(r, ResultStatus::Implausible))
        .and_then(|r| r.error.clone())
        .unwrap_or_else(|| "implausible".to_string());
    format!("{} ({})", display(b), why)
}

/// Pairs each baseline result with its candidate, setting aside what failed, is implausible,
/// was skipped, has no samples, is on one side only, or differs in unit or direction.
fn sort_results<'a>(
    baseline: &'a Side,
    candidate: &'a Side,
    threshold_pct: &dyn Fn(&str) -> ThresholdRule,
) -> Sorted<'a> {
    let mut used = vec![false; candidate.results.len()];
    let mut out = Sorted {
        pairs: Vec::new(),
        only_baseline: Vec::new(),
        only_candidate: Vec::new(),
        failed: Vec::new(),
        skipped: Vec::new(),
        implausible: Vec::new(),
        incompatible: Vec::new(),
    };
    for b in &baseline.results {
        match find(b, &candidate.results, &used) {
            Some(i) => {
                used[i] = true;
                let c = &candidate.results[i];
                if is(b, ResultStatus::Failed) || is(c, ResultStatus::Failed) {
                    out.failed.push(display(b));
                } else if is(b, ResultStatus::Implausible) || is(c, ResultStatus::Implausible) {
                    out.implausible.push(implausible_line(b, Some(c)));
                } else if is(b, ResultStatus::Skipped) || is(c, ResultStatus::Skipped) {
                    out.skipped.push(display(b));
                } else if b.samples.is_empty() || c.samples.is_empty() {
                    out.failed.push(display(b));
                } else if let Some(why) = incompatibility(b, c) {
                    out.incompatible.push(format!("{} ({why})", display(b)));
                } else {
                    let suite = if b.suite.is_empty() {
                        &c.suite
                    } else {
                        &b.suite
                    };
                    out.pairs.push((b, c, threshold_pct(suite)));
                }
            }
            None if is(b, ResultStatus::Failed) => out.failed.push(display(b)),
            None if is(b, ResultStatus::Implausible) => {
                out.implausible.push(implausible_line(b, None))
            }
            None if is(b, ResultStatus::Skipped) => out.skipped.push(display(b)),
            None => out.only_baseline.push(display(b)),
        }
    }
    for (c, _) in candidate.results.iter().zip(&used).filter(|(_, u)| !**u) {
        if is(c, ResultStatus::Failed) {
            out.failed.push(display(c));
        } else if is(c, ResultStatus::Implausible) {
            out.implausible.push(implausible_line(c, None));
        } else if is(c, ResultStatus::Skipped) {
            out.skipped.push(display(c));
        } else {
            out.only_candidate.push(display(c));
        }
    }
    out
}

/// An interleaved pair: both sides' runs linked by one pair id. Its rounds order the
/// replicates; two separately measured sides are one round each.
fn interleaved_pair<'a>(
    baseline: &'a Side,
    candidate: &'a Side,
) -> Option<(&'a PairInfo, &'a PairInfo)> {
    match (&baseline.run, &candidate.run) {
        (Some(a), Some(b)) => match (&a.pair, &b.pair) {
            (Some(pa), Some(pb)) if pa.id == pb.id => Some((pa, pb)),
            _ => None,
        },
        _ => None,
    }
}

/// The verdict of each compared pair over its replicates, with the same comparison of the SM
/// cycles behind each time where both sides have them: a time verdict whose cycles did not move
/// was moved by the clock.
fn compare_pairs(
    pairs: &[(&BenchmarkResult, &BenchmarkResult, ThresholdRule)],
    pair: Option<(&PairInfo, &PairInfo)>,
    rounds: u32,
    ab: &AbConfig,
    options: CompareOptions,
    noise: &NoiseBook,
) -> Vec<ComparedBenchmark> {
    let plan = match pair.and_then(|(p, _)| p.sequential) {
        Some(record) => crate::sequential::from_record(record, ab.replicate_alpha),
        None => SequentialPlan::fixed(rounds, ab.replicate_alpha),
    };
    let records: Vec<_> = pairs.iter().map(|(b, _, _)| noise.get(&b.key())).collect();
    let thresholds: Vec<_> = pairs
        .iter()
        .zip(&records)
        .map(|((_, _, rule), rec)| resolve(*rule, *rec, plan.first_look, ab.replicate_alpha))
        .collect();
    let orders = round_orders(pair.map(|(p, _)| p), rounds);
    let input = |b: &BenchmarkResult, c: &BenchmarkResult| {
        replicated(b, c, pair, &orders, options.exclude_throttled)
    };
    let inputs: Vec<ReplicatedPair> = pairs
        .iter()
        .zip(thresholds.iter().zip(&records))
        .map(|((b, c, _), (thr, rec))| ReplicatedPair {
            threshold: Some(thr.pct / 100.0),
            record: rec.copied(),
            ..input(b, c)
        })
        .collect();
    let comparisons = compare_replicated(&inputs, &plan, rounds, ab);
    let mut cycles_at = Vec::new();
    let mut cycles_inputs = Vec::new();
    for (i, ((b, c, _), thr)) in pairs.iter().zip(&thresholds).enumerate() {
        if let (Some(bc), Some(cc)) = (cycles_of(b), cycles_of(c)) {
            cycles_at.push(i);
            cycles_inputs.push(ReplicatedPair {
                threshold: Some(thr.pct / 100.0),
                ..input(&bc, &cc)
            });
        }
    }
    let mut cycles_verdicts = vec![None; pairs.len()];
    for (i, c) in cycles_at
        .into_iter()
        .zip(compare_replicated(&cycles_inputs, &plan, rounds, ab))
    {
        cycles_verdicts[i] = Some(c.verdict);
    }
    pairs
        .iter()
        .zip(comparisons)
        .zip(cycles_verdicts)
        .zip(thresholds)
        .map(
            |((((b, c, _), comparison), cycles_verdict), thr)| ComparedBenchmark {
                suite: if b.suite.is_empty() {
                    c.suite.clone()
                } else {
                    b.suite.clone()
                },
                name: b.name.clone(),
                params: b.params.clone(),
                measure: b.measure.clone(),
                unit: c.unit.to_string(),
                higher_is_better: c.direction == Direction::HigherIsBetter,
                comparison,
                cycles_verdict,
                threshold_raised_from_pct: thr.raised_from_pct,
            },
        )
        .collect()
}

/// One benchmark's two sides as a replicated pair (no threshold, no record): replicates by
/// round of the pair, in the pair's round orders, the direction of the candidate.
fn replicated(
    b: &BenchmarkResult,
    c: &BenchmarkResult,
    pair: Option<(&PairInfo, &PairInfo)>,
    orders: &[StatsOrder],
    exclude_throttled: bool,
) -> ReplicatedPair {
    ReplicatedPair {
        base: replicates_of(b, pair.map(|(p, _)| p), exclude_throttled),
        cand: replicates_of(c, pair.map(|(_, p)| p), exclude_throttled),
        higher_is_better: c.direction == Direction::HigherIsBetter,
        threshold: None,
        round_orders: orders.to_vec(),
        record: None,
    }
}

impl NoiseBook {
    /// The book of earlier pairs, each as its two sides (base, head), newest first: every
    /// benchmark's estimates pooled (`pitwall_stats::ab::noise::pool`).
    pub fn from_pairs(newest_first: &[(Side, Side)]) -> NoiseBook {
        let each: Vec<PairNoise> = newest_first
            .iter()
            .map(|(base, head)| pair_noise(base, head))
            .collect();
        NoiseBook::from_observations(&each)
    }
}

/// What one earlier pair tells the noise book: each shared benchmark's estimate of its noise
/// between processes (`pitwall_stats::ab::noise::observe`), by key. Computed once per pair,
/// then pooled into as many books as need it (`NoiseBook::from_observations`).
pub fn pair_noise(baseline: &Side, candidate: &Side) -> PairNoise {
    paired_inputs(baseline, candidate)
        .into_iter()
        .filter_map(|(key, pair, rounds)| observe(&pair, rounds).map(|o| (key, o)))
        .collect()
}

/// The benchmarks two sides share, each keyed by the base result's key as a replicated pair
/// (no threshold, no record) with the rounds it has: what an earlier pair tells the noise book.
pub(crate) fn paired_inputs(
    baseline: &Side,
    candidate: &Side,
) -> Vec<(String, ReplicatedPair, u32)> {
    let sorted = sort_results(baseline, candidate, &|_| ThresholdRule::Fixed(0.0));
    let pair = interleaved_pair(baseline, candidate);
    let rounds = pair.map_or(1, |(p, _)| p.rounds.max(1));
    let orders = round_orders(pair.map(|(p, _)| p), rounds);
    sorted
        .pairs
        .iter()
        .map(|(b, c, _)| (b.key(), replicated(b, c, pair, &orders, false), rounds))
        .collect()
}

#[cfg(test)]
mod tests;
