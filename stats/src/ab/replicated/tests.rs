//! Tests of the replicate verdicts: per-process offsets, sequential looks, fallbacks.

use super::*;
use crate::ab::Xoshiro256;
use crate::ab::replicate_summary::summary;

fn normal(rng: &mut Xoshiro256) -> f64 {
    let u1 = rng.next_f64().max(1e-300);
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `rounds` replicates of `n` samples around `level`, each process offset by a lognormal
/// factor of sd `offset`, samples with cv `cv`.
fn side(
    rng: &mut Xoshiro256,
    rounds: u32,
    n: usize,
    level: f64,
    cv: f64,
    offset: f64,
) -> Vec<Replicate> {
    (1..=rounds)
        .map(|round| {
            let off = (offset * normal(rng)).exp();
            Replicate {
                round,
                samples: (0..n)
                    .map(|_| level * off * (cv * normal(rng)).exp())
                    .collect(),
            }
        })
        .collect()
}

fn pair(base: Vec<Replicate>, cand: Vec<Replicate>) -> ReplicatedPair {
    ReplicatedPair {
        base,
        cand,
        higher_is_better: false,
        threshold: None,
    }
}

#[test]
fn process_offsets_are_not_called_changes() {
    // A/A: 3 processes a side, 50 samples each, 0.5% within-process noise, 3% offsets between
    // processes. Pooling the samples calls many of these "changed"; replicates do not.
    let mut rng = Xoshiro256::seed_from(11);
    let pairs: Vec<ReplicatedPair> = (0..40)
        .map(|_| {
            pair(
                side(&mut rng, 3, 50, 100.0, 0.005, 0.03),
                side(&mut rng, 3, 50, 100.0, 0.005, 0.03),
            )
        })
        .collect();
    let config = AbConfig::default();
    let out = compare_replicated(
        &pairs,
        &SequentialPlan::fixed(3, config.replicate_alpha),
        3,
        &config,
    );
    let calls = out
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Regression | Verdict::Improvement))
        .count();
    assert_eq!(
        calls,
        0,
        "{:?}",
        out.iter().map(|c| &c.reason).collect::<Vec<_>>()
    );
    assert!(
        out.iter()
            .all(|c| c.method == Method::Replicates && c.base_replicates == 3)
    );
    // The same data pooled: the old within-process verdict calls a good share of them.
    let pooled: Vec<(Vec<f64>, Vec<f64>)> = pairs
        .iter()
        .map(|p| {
            (
                ReplicatedPair::all_samples(&p.base, 3),
                ReplicatedPair::all_samples(&p.cand, 3),
            )
        })
        .collect();
    let inputs: Vec<PairInput<'_>> = pooled
        .iter()
        .map(|(b, c)| PairInput {
            base: b,
            cand: c,
            higher_is_better: false,
            threshold: None,
        })
        .collect();
    let old_calls = compare_all(&inputs, &config)
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Regression | Verdict::Improvement))
        .count();
    assert!(old_calls >= 10, "pooled verdicts called {old_calls} of 40");
}

#[test]
fn a_clear_change_is_decided_at_the_first_look() {
    let mut rng = Xoshiro256::seed_from(5);
    let slow = pair(
        side(&mut rng, 15, 10, 100.0, 0.01, 0.005),
        side(&mut rng, 15, 10, 130.0, 0.01, 0.005),
    );
    let fast_throughput = ReplicatedPair {
        higher_is_better: true,
        ..pair(
            side(&mut rng, 15, 10, 100.0, 0.01, 0.005),
            side(&mut rng, 15, 10, 130.0, 0.01, 0.005),
        )
    };
    let config = AbConfig::default();
    let plan = SequentialPlan::until_decided(3, 15, config.replicate_alpha);
    let out = compare_replicated(&[slow, fast_throughput], &plan, 15, &config);
    assert_eq!(out[0].verdict, Verdict::Regression, "{}", out[0].reason);
    assert_eq!(out[1].verdict, Verdict::Improvement, "{}", out[1].reason);
    for c in &out {
        assert_eq!(c.decided_at_round, Some(3), "{}", c.reason);
        assert_eq!(c.base_replicates, 3, "the verdict is the one of its look");
        assert!((c.ratio - 1.3).abs() < 0.02 && c.ci.0 > 1.1, "{c:?}");
        assert!(c.reason.contains("decided at round 3"), "{}", c.reason);
    }
}

#[test]
fn unchanged_needs_an_interval_inside_the_band() {
    let mut rng = Xoshiro256::seed_from(8);
    let config = AbConfig::default();
    let plan = SequentialPlan::until_decided(3, 15, config.replicate_alpha);
    // Quiet: shown unchanged early. Noisy (8% offsets): not shown unchanged at round 3.
    let quiet = pair(
        side(&mut rng, 15, 10, 100.0, 0.002, 0.001),
        side(&mut rng, 15, 10, 100.0, 0.002, 0.001),
    );
    let out = compare_replicated(&[quiet.clone(), quiet.clone(), quiet], &plan, 15, &config);
    assert_eq!(out[0].verdict, Verdict::Unchanged, "{}", out[0].reason);
    assert!(out[0].decided_at_round.unwrap() <= 4, "{}", out[0].reason);
    let noisy = pair(
        side(&mut rng, 3, 10, 100.0, 0.01, 0.08),
        side(&mut rng, 3, 10, 100.0, 0.01, 0.08),
    );
    let out = compare_replicated(&[noisy], &plan, 3, &config);
    assert_eq!(out[0].verdict, Verdict::Inconclusive, "{}", out[0].reason);
}

#[test]
fn a_hopeless_benchmark_is_given_up_before_the_last_round() {
    // 25% offsets between processes, and a 1.5% shift: 15 rounds cannot decide it.
    let mut rng = Xoshiro256::seed_from(21);
    let config = AbConfig::default();
    let plan = SequentialPlan::until_decided(3, 15, config.replicate_alpha);
    let hopeless = pair(
        side(&mut rng, 15, 5, 100.0, 0.02, 0.25),
        side(&mut rng, 15, 5, 101.5, 0.02, 0.25),
    );
    let out = compare_replicated(&[hopeless], &plan, 15, &config);
    assert_eq!(out[0].verdict, Verdict::Inconclusive);
    assert!(
        out[0].reason.starts_with("given up at round"),
        "{}",
        out[0].reason
    );
    assert!(out[0].base_replicates < 15, "{}", out[0].reason);
}

#[test]
fn one_replicate_a_side_falls_back_to_the_within_process_verdict() {
    let mut rng = Xoshiro256::seed_from(2);
    let one = pair(
        side(&mut rng, 1, 20, 100.0, 0.01, 0.0),
        side(&mut rng, 1, 20, 120.0, 0.01, 0.0),
    );
    let out = compare_replicated(
        &[one],
        &SequentialPlan::fixed(1, 0.05),
        1,
        &AbConfig::default(),
    );
    assert_eq!(out[0].method, Method::WithinProcess);
    assert_eq!((out[0].base_replicates, out[0].cand_replicates), (1, 1));
    assert_eq!(out[0].verdict, Verdict::Regression, "{}", out[0].reason);
    // Zero counts cannot be logged: also the within-process rule (all zero: unchanged).
    let zeros = pair(
        vec![
            Replicate {
                round: 1,
                samples: vec![0.0; 5],
            },
            Replicate {
                round: 2,
                samples: vec![0.0; 5],
            },
        ],
        vec![
            Replicate {
                round: 1,
                samples: vec![0.0; 5],
            },
            Replicate {
                round: 2,
                samples: vec![0.0; 5],
            },
        ],
    );
    let out = compare_replicated(
        &[zeros],
        &SequentialPlan::fixed(2, 0.05),
        2,
        &AbConfig::default(),
    );
    assert_eq!(out[0].method, Method::WithinProcess);
    assert_eq!(out[0].verdict, Verdict::Unchanged);
}

#[test]
fn slow_outliers_within_a_replicate_are_set_aside() {
    let s = summary(&[100.0, 101.0, 99.0, 100.5, 99.5, 300.0], false);
    assert!((s.exp() - 100.0).abs() < 0.5, "{}", s.exp());
    // For a throughput the slow side is low.
    let s = summary(&[100.0, 101.0, 99.0, 100.5, 99.5, 30.0], true);
    assert!((s.exp() - 100.0).abs() < 0.5, "{}", s.exp());
}

#[test]
fn error_rate_of_a_null_comparison_looked_at_every_round() {
    // 200 A/A benchmarks with per-process offsets, looked at after every round 3..=15:
    // regression/improvement calls stay far below α.
    let mut rng = Xoshiro256::seed_from(99);
    let config = AbConfig::default();
    let plan = SequentialPlan::until_decided(3, 15, config.replicate_alpha);
    let pairs: Vec<ReplicatedPair> = (0..200)
        .map(|i| {
            let cv = 0.02 + 0.02 * (i % 5) as f64 / 4.0;
            pair(
                side(&mut rng, 15, 5, 100.0, cv, 0.7 * cv),
                side(&mut rng, 15, 5, 100.0, cv, 0.7 * cv),
            )
        })
        .collect();
    let out = compare_replicated(&pairs, &plan, 15, &config);
    let calls = out
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Regression | Verdict::Improvement))
        .count();
    assert!(calls <= 2, "{calls} false calls in 200");
}
