//! Per-benchmark histories for the pages: the series and change points of
//! `pitwall_analysis::history` (one point per run: median, its 95% interval, the raw min–max
//! spread, throttling), with stable slugs and the labels pages show.

use pitwall_schema::Run;
use pitwall_stats::changepoint::DetectConfig;

use crate::compare::ComparisonReport;
use pitwall_analysis::number::{DisplayUnit, pct};

/// A benchmark's history as `pitwall_analysis::history::series` built it, with the slug that
/// names its page. Reads as the analysis series (`s.points`, `s.changes`, `s.key`).
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub slug: String,
    pub history: pitwall_analysis::Series,
}

impl std::ops::Deref for Series {
    type Target = pitwall_analysis::Series;

    fn deref(&self) -> &Self::Target {
        &self.history
    }
}

/// The runs' series on the history `branch`, one per benchmark measure and testbed, in the
/// order benchmarks are listed (numbers as numbers), each in commit order, with the default
/// change-point settings: the same series and change points `pitwall detect --benchmark`
/// shows (one analysis, one rule for duplicate keys). With several testbeds, each series' slug
/// names its testbed too, so their pages do not overwrite each other.
pub(crate) fn collect(runs: &[Run], branch: &str) -> Vec<Series> {
    let filter = pitwall_analysis::HistoryFilter::branch(branch);
    with_slugs(
        pitwall_analysis::history::series(runs, &filter, &DetectConfig::default()),
        branch,
    )
}

/// How many history runs a series' points pool (several runs of one commit are one point):
/// what every page says a series is "over".
pub(crate) fn history_runs(s: &pitwall_analysis::Series) -> usize {
    s.points.iter().map(|p| p.runs.len()).sum()
}

/// How many distinct runs the series of the history `branch` are over: the index's count, of
/// the same runs the benchmark pages count (never a pull request's or another branch's run).
pub(crate) fn history_runs_of(series: &[Series], branch: &str) -> usize {
    series
        .iter()
        .filter(|s| s.branch == branch)
        .flat_map(|s| s.points.iter().flat_map(|p| p.runs.iter().copied()))
        .collect::<std::collections::BTreeSet<usize>>()
        .len()
}

/// The series with their page slugs (see [`collect`]): the key, with the testbed when there
/// are several, and with the branch for a branch other than the history branch (whose pages
/// keep the names they had before other branches were shown).
pub(crate) fn with_slugs(all: Vec<pitwall_analysis::Series>, history_branch: &str) -> Vec<Series> {
    let several = all.iter().any(|s| s.testbed != all[0].testbed);
    all.into_iter()
        .map(|history| {
            let mut name = history.key.clone();
            if several {
                name = format!("{name}@{}", history.testbed);
            }
            if history.branch != history_branch {
                name = format!("{name}~{}", history.branch);
            }
            Series {
                slug: slug(&name),
                history,
            }
        })
        .collect()
}

/// File-name-safe, stable slug of a key: lower-case alphanumerics and dashes (at most 60),
/// then 8 hex digits of a hash of the whole key so that distinct keys never share a page.
pub(crate) fn slug(key: &str) -> String {
    let mut s = String::new();
    for c in key.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
        if s.len() >= 60 {
            break;
        }
    }
    let s = s.trim_end_matches('-');
    format!("{s}-{:08x}", fnv1a(key))
}

/// 32-bit FNV-1a: small, stable across versions and platforms.
fn fnv1a(s: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// First 10 characters of a commit (the whole text when it is not a sha).
pub(crate) fn short_commit(commit: &str) -> &str {
    if commit.len() >= 12 && commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        &commit[..10]
    } else {
        commit
    }
}

/// How a run is named where several runs of the same commit may stand side by side (a change
/// point's ends): its short sha, or for runs without one (`working tree`, imported results)
/// the commit label and the minute it started (`working tree 2026-12-02 10:00`).
pub(crate) fn run_label(run: &pitwall_schema::Run) -> String {
    let short = short_commit(&run.commit);
    if short.len() == 10 && short != run.commit {
        return short.to_string();
    }
    let minute = run
        .started_at
        .get(..16)
        .map(|t| t.replace('T', " "))
        .unwrap_or_default();
    format!("{short} {minute}").trim_end().to_string()
}

pub(crate) use pitwall_analysis::order::numeric_param;

/// The unit a benchmark's page and index row show its values in: the one that reads best for
/// its latest median (`149.7 µs`), as the CLI shows a run.
pub(crate) fn display_unit(s: &Series) -> DisplayUnit {
    DisplayUnit::for_value(&s.unit, s.points.last().map_or(0.0, |p| p.median))
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn slugs_are_safe_and_distinct() {
        let a = slug("kernel/gemm[n=512]/time");
        let b = slug("kernel/gemm[n=512]/time ");
        assert!(a.starts_with("kernel-gemm-n-512-time-"), "{a}");
        assert_ne!(a, b);
        let evil = slug("<script>alert(1)</script>/../../x");
        assert!(
            evil.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{evil}"
        );
        assert!(slug(&"x".repeat(500)).len() <= 69);
    }

    #[test]
    fn values_show_in_the_unit_of_the_latest_median() {
        let runs = crate::html::synthetic::runs(1, 3, 5);
        let mut s = collect(&runs, "main").remove(0);
        for (p, m) in s.history.points.iter_mut().zip([900.0, 1200.0, 149_690.0]) {
            p.median = m;
        }
        assert_eq!(display_unit(&s).show(149_690.0), "149.7 µs");
    }

    #[test]
    fn short_commits() {
        assert_eq!(short_commit(&"ab".repeat(20)), "ababababab");
        assert_eq!(short_commit("working tree"), "working tree");
        let mut run = crate::html::synthetic::runs(1, 1, 1).remove(0);
        run.commit = "ab".repeat(20);
        assert_eq!(run_label(&run), "ababababab");
        run.commit = "working tree".into();
        run.started_at = "2026-12-02T10:07:33.123456Z".into();
        assert_eq!(run_label(&run), "working tree 2026-12-02 10:07");
    }
}

/// One comparison of the report: the id its page is named by, a title, and the comparison.
#[derive(Debug, Clone)]
pub struct PageComparison {
    /// The pair's id, or another id stable for the same comparison (`runs-<a>-<b>`).
    pub id: String,
    pub title: String,
    pub report: ComparisonReport,
}

impl PageComparison {
    pub fn new(id: impl Into<String>, title: impl Into<String>, report: ComparisonReport) -> Self {
        PageComparison {
            id: id.into(),
            title: title.into(),
            report,
        }
    }

    /// The page's file name under `compare/` without `.html`: the id with every character
    /// other than ASCII letters, digits, `-` and `_` replaced by `-` (never empty).
    pub fn page(&self) -> String {
        let stem: String = self
            .id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .take(100)
            .collect();
        if stem.is_empty() {
            "comparison".into()
        } else {
            stem
        }
    }
}

/// A signed percentage of a fraction (`+4.2%`, `-1.0%`).
pub(crate) fn signed_pct(fraction: f64) -> String {
    let p = pct(fraction);
    if fraction > 0.0 { format!("+{p}") } else { p }
}
