//! The value of an A/B comparison: each compared benchmark with its verdict, what could not be
//! compared and why, and the one-line summaries every output (terminal, JSON, Markdown, the PR
//! comment, the HTML report, bisect) shows, so that they all say the same.

use std::collections::BTreeMap;

use pitwall_stats::ab::{Comparison, Verdict};
use serde::Serialize;

use crate::number::pct;

/// One compared benchmark measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedBenchmark {
    pub suite: String,
    pub name: String,
    pub params: BTreeMap<String, String>,
    pub measure: String,
    pub unit: String,
    pub higher_is_better: bool,
    #[serde(flatten)]
    pub comparison: Comparison,
    /// The verdict on the SM cycles behind the times, where both sides observed the clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_verdict: Option<Verdict>,
    /// The configured threshold in percent when `threshold_pct = "auto"` raised it to what the
    /// benchmark's noise can resolve (`comparison.threshold` is the one used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_raised_from_pct: Option<f64>,
}

impl ComparedBenchmark {
    /// `suite/name[k=v]/measure` (the suite is left out for bare result files).
    pub fn key(&self) -> String {
        pitwall_schema::schema::benchmark_key(&self.suite, &self.name, &self.params, &self.measure)
    }

    /// What identifies it, for `order::bench_cmp`.
    pub fn bench_ref(&self) -> crate::order::BenchRef<'_> {
        crate::order::BenchRef {
            suite: &self.suite,
            name: &self.name,
            params: &self.params,
            measure: &self.measure,
        }
    }

    /// A regression or improvement in time whose cycles did not change: the clock moved it,
    /// not the code. Shown as `regression (clock-explained)`; it never fails a check.
    pub fn clock_explained(&self) -> bool {
        matches!(
            self.comparison.verdict,
            Verdict::Regression | Verdict::Improvement
        ) && self.cycles_verdict == Some(Verdict::Unchanged)
    }

    /// The verdict's reason, when the verdict is not what its interval suggests at a glance
    /// (issue 25): an undecided benchmark whose interval lies wholly outside or wholly inside
    /// ±threshold, or clear of the margin a call must exclude; a call whose interval reaches
    /// inside ±threshold. `None` when the interval tells the story, or there is no reason.
    pub fn unobvious_reason(&self) -> Option<&str> {
        let c = &self.comparison;
        let (lo, hi) = c.ci;
        if c.reason.is_empty() || !(lo.is_finite() && hi.is_finite()) {
            return None;
        }
        let thr = c.threshold;
        let margin = pitwall_stats::ab::replicated::REPLICATE_MARGIN * thr;
        let outside = lo > 1.0 + thr || hi < 1.0 - thr;
        let inside = lo >= 1.0 - thr && hi <= 1.0 + thr;
        let clear_of_margin = lo > 1.0 + margin || hi < 1.0 / (1.0 + margin);
        let unobvious = match c.verdict {
            Verdict::Inconclusive => outside || inside || clear_of_margin,
            Verdict::Regression | Verdict::Improvement => !outside,
            Verdict::Unchanged => !inside,
        };
        unobvious.then_some(c.reason.as_str())
    }

    /// Relative change in the "worse" direction: +5% means 5% worse, whatever the direction.
    pub fn worse_by(&self) -> f64 {
        let r = self.comparison.ratio;
        if self.higher_is_better {
            1.0 / r - 1.0
        } else {
            r - 1.0
        }
    }
}

/// A whole comparison, ready to render.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonReport {
    /// Interleaved rounds behind the comparison (a pair measured by `pitwall run
    /// --base/--head`); `None` when the two sides were measured separately.
    pub rounds: Option<u32>,
    /// `Some(max_rounds)` when the pair was measured until decided.
    pub sequential: Option<u32>,
    /// The fewest replicates (benchmark processes) per side behind any verdict: 1 means some
    /// verdict rests on one process per side, so noise between processes is not captured.
    pub replicates: usize,
    pub baseline: String,
    pub candidate: String,
    pub benchmarks: Vec<ComparedBenchmark>,
    /// Keys present (and ok) on one side only.
    pub only_baseline: Vec<String>,
    pub only_candidate: Vec<String>,
    /// Keys that failed on either side (not compared).
    pub failed: Vec<String>,
    /// Keys the tool skipped on either side (and failed on neither); not compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Keys implausible on either side, each with why (`a/bandwidth (implausible: … 5.9 TB/s >
    /// H200 HBM peak 4.8 TB/s)`); not compared.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub implausible: Vec<String>,
    /// Keys whose two sides differ in unit or direction, with why (`a/time (unit ns vs ms)`);
    /// not compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incompatible: Vec<String>,
    /// Environment fields that differ between the sides and matter (`gpu model: A vs B`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env_mismatch: Vec<String>,
    /// The environments differ and `--allow-env-mismatch` was not given: verdicts are shown
    /// but the comparison does not count.
    pub incomparable: bool,
    /// Code identical on both sides of the pair, not measured: the verdict `identical`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identical: Vec<crate::identical::IdenticalEntry>,
    /// The pair's time measured and the time its identical code saved, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<crate::identical::PairTime>,
    /// Each side whose run was measured on a contended machine, with why (`baseline (run
    /// 0193…): other runnable threads 1.8 ≥ 0.5`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contended: Vec<String>,
}

/// Counts per verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct VerdictCounts {
    pub regression: usize,
    pub improvement: usize,
    pub unchanged: usize,
    pub inconclusive: usize,
    /// Regressions and improvements in time whose cycles did not change (counted here, not
    /// as regressions or improvements).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_explained: usize,
    /// Kernels or suites whose code is identical on both sides (not measured).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub identical: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ComparisonReport {
    pub fn counts(&self) -> VerdictCounts {
        let mut c = VerdictCounts {
            identical: self.identical.len(),
            ..VerdictCounts::default()
        };
        for b in &self.benchmarks {
            if b.clock_explained() {
                c.clock_explained += 1;
                continue;
            }
            match b.comparison.verdict {
                Verdict::Regression => c.regression += 1,
                Verdict::Improvement => c.improvement += 1,
                Verdict::Unchanged => c.unchanged += 1,
                Verdict::Inconclusive => c.inconclusive += 1,
            }
        }
        c
    }

    pub fn has_regression(&self) -> bool {
        !self.incomparable && self.counts().regression > 0
    }

    /// A line saying how much replication the verdicts rest on, when it is less than an
    /// interleaved pair gives: one process per side, or sides measured separately.
    pub fn replication_line(&self) -> Option<String> {
        if self.benchmarks.is_empty() {
            return None;
        }
        if self.replicates <= 1 {
            Some(
                "warning: one process per side (1 replicate): noise between processes (code layout, heap placement, CPU frequency) is not captured, so these verdicts can claim more certainty than the data give; hint: measure with `pitwall run --base A --head B` (interleaved rounds, each in new processes)"
                    .to_string(),
            )
        } else if self.rounds.is_none() {
            Some(format!(
                "note: the sides were measured separately ({} or more processes each, not interleaved): drift between the two measurements is not captured",
                self.replicates
            ))
        } else {
            None
        }
    }

    /// One line naming the sides measured on a contended machine and why, when any was: their
    /// verdicts may be the load's, not the code's.
    pub fn contended_line(&self) -> Option<String> {
        (!self.contended.is_empty()).then(|| {
            format!(
                "warning: measured on a contended machine: {}; the verdicts may be the load's, not the code's",
                self.contended.join("; ")
            )
        })
    }

    /// `3 rounds`, `7 rounds (until decided, at most 15)`, or `measured separately`.
    pub fn rounds_text(&self) -> String {
        match (self.rounds, self.sequential) {
            (Some(r), Some(max)) => format!(
                "{r} interleaved round{} (until decided, at most {max})",
                if r == 1 { "" } else { "s" }
            ),
            (Some(r), None) => format!("{r} interleaved round{}", if r == 1 { "" } else { "s" }),
            (None, _) => "sides measured separately".to_string(),
        }
    }

    /// A line saying the environments differ, when they do.
    pub fn mismatch_line(&self) -> Option<String> {
        if self.env_mismatch.is_empty() {
            return None;
        }
        let what = self.env_mismatch.join("; ");
        Some(if self.incomparable {
            format!(
                "INCOMPARABLE: the environments differ ({what}); hint: compare runs from the same machine setup, or pass --allow-env-mismatch"
            )
        } else {
            format!("warning: the environments differ ({what})")
        })
    }

    /// The regression that is worst by relative change.
    pub fn worst_regression(&self) -> Option<&ComparedBenchmark> {
        self.benchmarks
            .iter()
            .filter(|b| b.comparison.verdict == Verdict::Regression && !b.clock_explained())
            .max_by(|a, b| a.worse_by().total_cmp(&b.worse_by()))
    }

    /// `2 regressions, 1 improvement, 30 unchanged, 3 inconclusive; worst: … +8.1%`.
    pub fn summary_line(&self) -> String {
        let c = self.counts();
        if self.incomparable {
            return format!(
                "incomparable: environments differ ({})",
                self.env_mismatch.join("; ")
            );
        }
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut s = format!(
            "{}, {}, {} unchanged, {} inconclusive",
            plural(c.regression, "regression", "regressions"),
            plural(c.improvement, "improvement", "improvements"),
            c.unchanged,
            c.inconclusive
        );
        if c.clock_explained > 0 {
            s.push_str(&format!(", {} clock-explained", c.clock_explained));
        }
        if c.identical > 0 {
            s.push_str(&format!(", {} identical", c.identical));
        }
        if !self.implausible.is_empty() {
            s.push_str(&format!(", {} implausible", self.implausible.len()));
        }
        if let Some(w) = self.worst_regression() {
            s.push_str(&format!("; worst: {} {}", w.key(), change(w)));
        }
        if let Some(x) = self.ruled_out_pct() {
            s.push_str(&format!("; no other change beyond ±{x:.1}%"));
        }
        s
    }

    /// What the `unchanged` verdicts ruled out: the largest `resolution_pct` among them (no
    /// change beyond it in any of them is compatible with the data). `None` without any.
    pub fn ruled_out_pct(&self) -> Option<f64> {
        self.benchmarks
            .iter()
            .filter(|b| b.comparison.verdict == Verdict::Unchanged)
            .filter_map(|b| b.comparison.resolution_pct)
            .reduce(f64::max)
    }
}

/// `+1.5%`, or `-` when there is no number (a zero baseline leaves the ratio undefined).
pub fn signed_pct(fraction: f64) -> String {
    if !fraction.is_finite() {
        return "-".to_string();
    }
    let p = pct(fraction);
    if fraction > 0.0 { format!("+{p}") } else { p }
}

/// Change as a signed percentage of the median (candidate vs baseline), as measured.
pub fn change(b: &ComparedBenchmark) -> String {
    signed_pct(b.comparison.ratio - 1.0)
}
