//! Noise-aware bisection: given a good and a bad commit and the benchmark that regressed
//! between them, find the first bad commit with as few build-and-measure steps as possible.
//!
//! The search is a binary search over the first-parent commits `(good, bad]`. Each probe is
//! measured in interleaved rounds with the good commit (fresh processes of both, so drift
//! between steps cancels) and classified against the *geometric midpoint* of the regression
//! (`sqrt(bad / good)` in ratio space): bad when the repeated confidence interval of its ratio
//! to good lies beyond the midpoint, good when it lies short of it. The interval comes from
//! the replicates (one per process and round) and the same sequential plan as `run
//! --until-decided` (docs/STATISTICS.md), so a probe may be looked at after every round and
//! stop as soon as it is clear. When the interval still straddles the midpoint at the most
//! rounds allowed, the step is decided by the point estimate and marked uncertain, and so is
//! the whole bisection. This is the classic "compare against both ends" rule of performance
//! bisection (e.g. Chromium's Pinpoint). A commit that cannot be built or measured is skipped
//! (as `git bisect skip`) and a neighbour is tried instead.

use pitwall_stats::ab::Comparison;

/// What a probe turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Good,
    Bad,
    /// Could not be built or measured; not used to narrow the range.
    Untestable,
}

/// The classification of one probe against the good commit.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub class: Class,
    /// Ratio probe / good, and its repeated confidence interval.
    pub ratio: f64,
    pub ci: (f64, f64),
    /// The interval straddled the midpoint even after the most rounds allowed.
    pub uncertain: bool,
}

/// Classifies a probe's comparison with good (`c.ratio`, `c.ci`) given the ratio `bad_ratio`
/// (bad / good) that defines the regression. `None` when the interval straddles the midpoint
/// (measure more).
pub fn classify(c: &Comparison, bad_ratio: f64) -> Option<Verdict> {
    let mid = bad_ratio.sqrt();
    let (lo, hi) = c.ci;
    if !(c.ratio.is_finite() && lo.is_finite() && hi.is_finite()) {
        return None;
    }
    // "Beyond the midpoint" is above it for a slowdown (ratio > 1), below it for a drop.
    let (beyond, short) = if bad_ratio > 1.0 {
        (lo > mid, hi < mid)
    } else {
        (hi < mid, lo > mid)
    };
    let verdict = |class| Verdict {
        class,
        ratio: c.ratio,
        ci: c.ci,
        uncertain: false,
    };
    if beyond {
        Some(verdict(Class::Bad))
    } else if short {
        Some(verdict(Class::Good))
    } else {
        None
    }
}

/// The decision when the most rounds allowed did not settle it: by the point estimate, marked
/// uncertain.
pub fn classify_by_estimate(c: &Comparison, bad_ratio: f64) -> Verdict {
    let mid = bad_ratio.sqrt();
    let bad = if bad_ratio > 1.0 {
        c.ratio > mid
    } else {
        c.ratio < mid
    };
    Verdict {
        class: if bad { Class::Bad } else { Class::Good },
        ratio: c.ratio,
        ci: c.ci,
        uncertain: true,
    }
}

/// The search state over commits `0..=n`: 0 is the good commit, `n` the bad one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    /// Latest commit known good, earliest known bad.
    pub good: usize,
    pub bad: usize,
    untestable: Vec<usize>,
}

impl Range {
    pub fn new(n: usize) -> Range {
        Range {
            good: 0,
            bad: n,
            untestable: Vec::new(),
        }
    }

    /// The next commit to measure: the testable commit strictly between `good` and `bad`
    /// nearest the middle; `None` when the range is settled (or only untestable commits lie
    /// between, in which case the first bad commit is one of them or `bad`).
    pub fn next(&self) -> Option<usize> {
        let mid = (self.good + self.bad) / 2;
        (self.good + 1..self.bad)
            .filter(|i| !self.untestable.contains(i))
            .min_by_key(|i| (i.abs_diff(mid), *i))
    }

    pub fn record(&mut self, index: usize, class: Class) {
        match class {
            Class::Good => self.good = self.good.max(index),
            Class::Bad => self.bad = self.bad.min(index),
            Class::Untestable => self.untestable.push(index),
        }
    }

    /// Commits that may still be the first bad one besides `bad` (untestable ones between).
    pub fn unresolved(&self) -> Vec<usize> {
        (self.good + 1..self.bad)
            .filter(|i| self.untestable.contains(i))
            .collect()
    }
}

/// The most probes a bisection of `n` commits needs when nothing is untestable.
pub fn max_steps(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(ratio: f64, ci: (f64, f64)) -> Comparison {
        use pitwall_stats::ab::{Replicate, ReplicatedPair, SequentialPlan, interval_at};
        // Any comparison will do; only ratio and ci are read.
        let reps = |level: f64| -> Vec<Replicate> {
            (1..=3)
                .map(|round| Replicate {
                    round,
                    samples: vec![level, level * 1.01, level * 0.99],
                })
                .collect()
        };
        let pair = ReplicatedPair {
            base: reps(100.0),
            cand: reps(101.0),
            higher_is_better: false,
            threshold: None,
            round_orders: Vec::new(),
            record: None,
        };
        let mut c = interval_at(
            &pair,
            &SequentialPlan::fixed(3, 0.05),
            3,
            &pitwall_stats::ab::AbConfig::default(),
        )
        .unwrap();
        c.ratio = ratio;
        c.ci = ci;
        c
    }

    #[test]
    fn classification_against_the_midpoint() {
        // A 30% slowdown: bad ratio 1.3, midpoint ~1.14.
        let bad = classify(&comparison(1.3, (1.25, 1.35)), 1.3).unwrap();
        assert_eq!(bad.class, Class::Bad);
        let same = classify(&comparison(1.0, (0.97, 1.03)), 1.3).unwrap();
        assert_eq!(same.class, Class::Good);
        // A throughput drop: bad ratio 0.7, midpoint ~0.84.
        let dropped = classify(&comparison(0.7, (0.66, 0.74)), 0.7).unwrap();
        assert_eq!(dropped.class, Class::Bad);
        let kept = classify(&comparison(0.995, (0.97, 1.02)), 0.7).unwrap();
        assert_eq!(kept.class, Class::Good);
        // Straddling the midpoint: undecided, then by estimate and uncertain.
        let at_mid = comparison(1.16, (1.0, 1.3));
        assert!(classify(&at_mid, 1.3).is_none());
        let v = classify_by_estimate(&at_mid, 1.3);
        assert!(v.uncertain && v.class == Class::Bad);
        // No interval: never a sure class.
        assert!(classify(&comparison(1.3, (f64::NAN, f64::NAN)), 1.3).is_none());
    }

    #[test]
    fn the_range_finds_any_first_bad_commit_in_log2_steps() {
        for n in 1..=40 {
            for first_bad in 1..=n {
                let mut r = Range::new(n);
                let mut steps = 0;
                while let Some(i) = r.next() {
                    steps += 1;
                    r.record(
                        i,
                        if i >= first_bad {
                            Class::Bad
                        } else {
                            Class::Good
                        },
                    );
                }
                assert_eq!(r.bad, first_bad, "n {n}");
                assert!(steps <= max_steps(n), "n {n}: {steps} > {}", max_steps(n));
            }
        }
        assert_eq!(
            (max_steps(1), max_steps(2), max_steps(8), max_steps(9)),
            (0, 1, 3, 4)
        );
    }

    #[test]
    fn untestable_commits_are_skipped_and_reported() {
        // Commits 0 (good) .. 8 (bad); 4 and 5 do not build; 5 is the first bad one.
        let mut r = Range::new(8);
        let first_bad = 5;
        while let Some(i) = r.next() {
            let class = if i == 4 || i == 5 {
                Class::Untestable
            } else if i >= first_bad {
                Class::Bad
            } else {
                Class::Good
            };
            r.record(i, class);
        }
        assert_eq!((r.good, r.bad), (3, 6));
        assert_eq!(r.unresolved(), [4, 5], "the culprit is 4, 5 or 6");
    }
}
