//! The noise record: what one pair gives, how pairs are pooled, when a record is used or set
//! aside, and what it predicts before measuring.

use super::*;
use crate::ab::Xoshiro256;
use crate::ab::replicate_summary::{Replicate, RoundOrder};

fn normal(rng: &mut Xoshiro256) -> f64 {
    let u1 = rng.next_f64().max(1e-300);
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `rounds` balanced rounds, one process a side, each with a lognormal offset of sd `between`
/// and 5 samples of 0.1% noise; the head is `ratio` × the base.
fn pair(rng: &mut Xoshiro256, rounds: u32, between: f64, ratio: f64) -> ReplicatedPair {
    let mut side = |level: f64| -> Vec<Replicate> {
        (1..=rounds)
            .map(|round| {
                let off = (between * normal(rng)).exp();
                Replicate {
                    round,
                    samples: (0..5)
                        .map(|_| level * off * (0.001 * normal(rng)).exp())
                        .collect(),
                }
            })
            .collect()
    };
    let base = side(100.0);
    let cand = side(100.0 * ratio);
    ReplicatedPair {
        base,
        cand,
        higher_is_better: false,
        threshold: None,
        round_orders: (1..=rounds)
            .map(|r| {
                if r % 2 == 0 {
                    RoundOrder::HeadBase
                } else {
                    RoundOrder::BaseHead
                }
            })
            .collect(),
        record: None,
    }
}

#[test]
fn one_pair_estimates_the_variance_between_processes() {
    let mut rng = Xoshiro256::seed_from(11);
    // A 1% per-process offset: the estimates average 1e-4 (plus the tiny within-process
    // part), not twice that (a round's difference holds two processes).
    let obs: Vec<NoiseObs> = (0..40)
        .map(|_| observe(&pair(&mut rng, 12, 0.01, 1.05), 12).unwrap())
        .collect();
    assert!(obs.iter().all(|o| o.dof == 10.0), "{obs:?}");
    let mean = obs.iter().map(|o| o.var).sum::<f64>() / 40.0;
    assert!((mean / 1e-4 - 1.0).abs() < 0.15, "{mean}");
    // One replicate a side is no estimate.
    let one = pair(&mut rng, 1, 0.01, 1.0);
    assert!(observe(&one, 1).is_none());
}

#[test]
fn pooling_weighs_recent_pairs_more_with_a_ten_pair_half_life() {
    let old = NoiseObs { var: 4.0, dof: 5.0 };
    let new = NoiseObs { var: 1.0, dof: 5.0 };
    let mut obs = vec![new];
    obs.extend(std::iter::repeat_n(old, 10));
    let r = pool(&obs).unwrap();
    assert_eq!(r.pairs, 11);
    // Weights 1, 2^-0.1 … 2^-1: the old pairs dominate by number, not by recency alone.
    let w: f64 = (1..=10).map(|a| 0.5f64.powf(f64::from(a) / 10.0)).sum();
    assert!((r.var - (1.0 + 4.0 * w) / (1.0 + w)).abs() < 1e-12, "{r:?}");
    assert!((r.dof - 5.0 * (1.0 + w)).abs() < 1e-12, "{r:?}");
    assert!(pool(&[]).is_none());
}

fn look_with(pooled_var: f64, dof: f64) -> Look {
    Look {
        nb: 4,
        nc: 4,
        diff: 0.0,
        pooled_var,
        dof,
        factor: 0.25,
        paired_rounds: 4,
        within: None,
        per_replicate: 2.0,
    }
}

#[test]
fn an_agreeing_record_lends_at_most_three_times_the_own_degrees_of_freedom() {
    let rec = NoiseRecord {
        var: 1e-4,
        dof: 100.0,
        pairs: 20,
    };
    let l = look_with(2e-4, 2.0);
    let (var, dof, used) = apply(Some(&rec), &l, (2e-4, 2.0), None);
    assert_eq!(dof, 2.0 + 6.0);
    assert!((var - 2e-4).abs() < 1e-12, "{var}");
    assert_eq!(
        used,
        Some(RecordUse::Used {
            dof: 6.0,
            pairs: 20
        })
    );
    assert!(used.unwrap().note().is_none());
    // A quieter current look is pulled towards the record, never past it.
    let (var, _, _) = apply(Some(&rec), &look_with(1.5e-4, 2.0), (1.5e-4, 2.0), None);
    assert!(var > 1.5e-4 && var < 2e-4, "{var}");
    // No record: nothing changes.
    assert_eq!(apply(None, &l, (3.0, 4.0), None), (3.0, 4.0, None));
}

#[test]
fn a_record_that_disagrees_with_the_data_is_set_aside_and_said() {
    let rec = NoiseRecord {
        var: 1e-4,
        dof: 100.0,
        pairs: 20,
    };
    // The current variance is 6× the record's on 10 degrees of freedom: F test rejects.
    let l = look_with(12e-4, 10.0);
    let (var, dof, used) = apply(Some(&rec), &l, (12e-4, 10.0), None);
    assert_eq!((var, dof), (12e-4, 10.0));
    let Some(RecordUse::Ignored { ratio, p }) = used else {
        panic!("{used:?}")
    };
    assert!((ratio - 6.0).abs() < 1e-9 && p < 0.05, "{ratio} {p}");
    let note = used.unwrap().note().unwrap();
    assert!(note.contains("6.00× the record's"), "{note}");
    // So is one that is far too noisy: a quarter of the record's variance.
    let (_, _, used) = apply(Some(&rec), &look_with(0.5e-4, 30.0), (0.5e-4, 30.0), None);
    assert!(matches!(used, Some(RecordUse::Ignored { .. })), "{used:?}");
}

#[test]
fn what_a_record_predicts_before_measuring() {
    let plan = SequentialPlan::until_decided(3, 15, 0.04);
    let quiet = NoiseRecord {
        var: (0.002f64).powi(2),
        dof: 60.0,
        pairs: 20,
    };
    let noisy = NoiseRecord {
        var: (0.03f64).powi(2),
        ..quiet
    };
    let first = detectable_log(&quiet, &plan, 3);
    let last = detectable_log(&quiet, &plan, 15);
    assert!(last < first, "{first} {last}");
    // A 0.2% process noise resolves 2% at the first look; 3% noise never does within 15.
    assert_eq!(rounds_for(&quiet, &plan, 0.02), Some(3));
    assert_eq!(rounds_for(&noisy, &plan, 0.02), None);
    let between = NoiseRecord {
        var: (0.008f64).powi(2),
        ..quiet
    };
    let r = rounds_for(&between, &plan, 0.02).unwrap();
    assert!((4..=15).contains(&r), "{r}");
}

#[test]
fn a_record_off_for_the_whole_testbed_is_seen_by_the_benchmarks_together() {
    let rec = NoiseRecord {
        var: 1e-4,
        dof: 100.0,
        pairs: 20,
    };
    // Thirty benchmarks at round 3 (2 degrees of freedom each), each 3.5× its record: alone
    // none is rejected, together they are.
    let looks: Vec<Look> = (0..30)
        .map(|i| look_with(7e-4 * (1.0 + 0.5 * f64::from(i % 3)), 2.0))
        .collect();
    let (_, _, alone) = apply(Some(&rec), &looks[0], (7e-4, 2.0), None);
    assert!(matches!(alone, Some(RecordUse::Used { .. })), "{alone:?}");
    let joint = joint_disagreement(looks.iter().map(|l| (&rec, l)));
    let (ratio, p) = joint.expect("rejected");
    assert!(ratio > 3.5 && p < 0.001, "{ratio} {p}");
    let (var, dof, used) = apply(Some(&rec), &looks[0], (7e-4, 2.0), joint);
    assert_eq!((var, dof), (7e-4, 2.0));
    let note = used.unwrap().note().unwrap();
    assert!(note.contains("for the whole comparison"), "{note}");
    // Records that agree pass together too.
    // (2e-4 is the record's variance × 2 per replicate; e corrects for the log's bias.)
    let mut rng = Xoshiro256::seed_from(5);
    let fine: Vec<Look> = (0..30)
        .map(|_| {
            let chi2 = normal(&mut rng).powi(2) + normal(&mut rng).powi(2);
            look_with(2e-4 * chi2 / 2.0, 2.0)
        })
        .collect();
    assert!(joint_disagreement(fine.iter().map(|l| (&rec, l))).is_none());
}
