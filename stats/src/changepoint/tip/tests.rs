//! Tests of the tip check: slow changes at a history's end are suspected, not detected.

use super::*;
use crate::changepoint::detect;

fn level(values: &[f64]) -> Vec<f64> {
    values.to_vec()
}

#[test]
fn two_slow_points_after_five_are_suspected_not_detected() {
    let x = level(&[10.21, 10.19, 10.15, 10.21, 9.84, 11.35, 11.68]);
    let cfg = DetectConfig::default();
    let changes = detect(&x, &cfg);
    assert!(changes.is_empty());
    let s = suspect_tip(&x, &changes, &cfg).expect("suspected");
    assert_eq!((s.index, s.points_after, s.more_points), (5, 2, 3));
    assert!(s.rel_change > 0.1, "{s:?}");
}

#[test]
fn one_slow_point_or_noise_is_not_suspected() {
    let cfg = DetectConfig::default();
    let spike = [10.21, 10.19, 10.15, 10.21, 9.84, 10.1, 10.0, 12.5];
    assert_eq!(suspect_tip(&spike, &[], &cfg), None);
    let quiet = [10.21, 10.19, 10.15, 10.21, 9.84, 10.1, 10.0, 10.2];
    assert_eq!(suspect_tip(&quiet, &[], &cfg), None);
}

#[test]
fn a_step_four_points_from_the_end_is_suspected_not_reported_one_early() {
    // Eight points at 100, the eighth a little high, then four at 110: the step starts at
    // 8, but a change point needs five points after it; 7 would name the wrong commit.
    let mut x = vec![99.9, 100.1, 100.0, 99.6, 100.2, 99.4, 100.0, 100.2];
    x.extend([110.1, 110.0, 110.3, 110.2]);
    let cfg = DetectConfig::default();
    let changes = detect(&x, &cfg);
    assert!(changes.is_empty(), "{changes:?}");
    let s = suspect_tip(&x, &changes, &cfg).expect("suspected");
    assert_eq!((s.index, s.points_after, s.more_points), (8, 4, 1));
    x.push(110.1);
    let changes = detect(&x, &cfg);
    assert_eq!(changes.iter().map(|c| c.index).collect::<Vec<_>>(), [8]);
}

#[test]
fn a_confirmed_step_is_not_suspected_again() {
    // Five points after the step: detect confirms it and nothing is left at the tip.
    let x = level(&[
        10.21, 10.19, 10.15, 10.21, 9.84, 11.35, 11.68, 11.18, 11.14, 12.03,
    ]);
    let cfg = DetectConfig::default();
    let changes = detect(&x, &cfg);
    assert_eq!(changes.iter().map(|c| c.index).collect::<Vec<_>>(), [5]);
    assert_eq!(suspect_tip(&x, &changes, &cfg), None);
}

#[test]
fn after_a_confirmed_step_a_new_one_at_the_tip_is_suspected() {
    let mut x: Vec<f64> = (0..8).map(|i| 10.0 + 0.05 * (i % 3) as f64).collect();
    x.extend((0..8).map(|i| 12.0 + 0.05 * (i % 3) as f64));
    x.extend([14.0, 14.1, 13.95]);
    let cfg = DetectConfig::default();
    let changes = detect(&x, &cfg);
    assert_eq!(changes.iter().map(|c| c.index).collect::<Vec<_>>(), [8]);
    let s = suspect_tip(&x, &changes, &cfg).expect("suspected");
    assert_eq!((s.index, s.more_points), (16, 2));
    assert!((s.before - 12.05).abs() < 0.06, "{s:?}");
}
