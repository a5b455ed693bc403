//! Noise-aware bisection: given a good and a bad commit and the benchmark that regressed
//! between them, find the first bad commit with as few build-and-measure steps as possible.
//!
//! The search is a binary search over the first-parent commits `(good, bad]`. Each probe is
//! measured in interleaved rounds with the good commit (fresh samples of both, so drift between
//! steps cancels) and classified against the *geometric midpoint* of the regression
//! (`sqrt(bad / good)` in ratio space): bad when the bootstrap interval of its ratio to good
//! lies beyond the midpoint, good when it lies short of it. When the interval straddles the
//! midpoint, more rounds are measured (up to a limit) before deciding by the point estimate,
//! and the step is marked uncertain. This is the classic "compare against both ends" rule of
//! performance bisection (e.g. Chromium's Pinpoint), with pitwall's A/B statistics
//! (docs/STATISTICS.md) as the interval. A commit that cannot be built or measured is skipped
//! (as `git bisect skip`) and a neighbour is tried instead.

use pitwall_stats::ab::{AbConfig, PairInput, compare_all};

/// What a probe turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Good,
    Bad,
    /// Could not be built or measured; not used to narrow the range.
    Untestable,
}

/// The classification of one probe's samples against the good commit's.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub class: Class,
    /// Median ratio probe / good, and its bootstrap interval.
    pub ratio: f64,
    pub ci: (f64, f64),
    /// The interval straddled the midpoint even after the most rounds allowed.
    pub uncertain: bool,
}

/// Classifies `probe` against `good` given the ratio `bad_ratio` (bad / good medians) that
/// defines the regression. `None` when the interval straddles the midpoint (measure more).
pub fn classify(
    good: &[f64],
    probe: &[f64],
    bad_ratio: f64,
    higher_is_better: bool,
    ab: &AbConfig,
) -> Option<Verdict> {
    let verdict = |class, ratio, ci, uncertain| Verdict {
        class,
        ratio,
        ci,
        uncertain,
    };
    let c = &compare_all(
        &[PairInput {
            base: good,
            cand: probe,
            higher_is_better,
            threshold: None,
        }],
        ab,
    )[0];
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
    if beyond {
        Some(verdict(Class::Bad, c.ratio, c.ci, false))
    } else if short {
        Some(verdict(Class::Good, c.ratio, c.ci, false))
    } else {
        None
    }
}

/// The decision when the most rounds allowed did not settle it: by the point estimate.
pub fn classify_by_estimate(good: &[f64], probe: &[f64], bad_ratio: f64) -> Verdict {
    let median = |v: &[f64]| pitwall_stats::summary::median(v).unwrap_or(f64::NAN);
    let ratio = median(probe) / median(good);
    let mid = bad_ratio.sqrt();
    let bad = if bad_ratio > 1.0 {
        ratio > mid
    } else {
        ratio < mid
    };
    Verdict {
        class: if bad { Class::Bad } else { Class::Good },
        ratio,
        ci: (f64::NAN, f64::NAN),
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

    /// Deterministic noise in [-1, 1).
    fn noise(i: usize, salt: usize) -> f64 {
        ((i * 7919 + salt * 104_729) % 1000) as f64 / 500.0 - 1.0
    }

    fn samples(level: f64, n: usize, salt: usize, rel: f64) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + rel * noise(i, salt)))
            .collect()
    }

    #[test]
    fn classification_against_the_midpoint() {
        let ab = AbConfig::default();
        let good = samples(100.0, 30, 1, 0.02);
        // A 30% slowdown: bad ratio 1.3, midpoint ~1.14.
        let bad = classify(&good, &samples(130.0, 30, 2, 0.02), 1.3, false, &ab).unwrap();
        assert_eq!(bad.class, Class::Bad);
        let same = classify(&good, &samples(100.0, 30, 3, 0.02), 1.3, false, &ab).unwrap();
        assert_eq!(same.class, Class::Good);
        // A throughput drop: bad ratio 0.7.
        let fast = samples(1000.0, 30, 4, 0.02);
        let dropped = classify(&fast, &samples(700.0, 30, 5, 0.02), 0.7, true, &ab).unwrap();
        assert_eq!(dropped.class, Class::Bad);
        let kept = classify(&fast, &samples(995.0, 30, 6, 0.02), 0.7, true, &ab).unwrap();
        assert_eq!(kept.class, Class::Good);
        // Right at the midpoint with heavy noise: undecided, then by estimate.
        let at_mid = samples(114.0, 6, 7, 0.3);
        assert!(classify(&good, &at_mid, 1.3, false, &ab).is_none());
        assert!(classify_by_estimate(&good, &at_mid, 1.3).uncertain);
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
