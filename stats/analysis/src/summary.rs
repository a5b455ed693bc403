//! A series' summary for the index of `pitwall serve` (issue 30): what its row shows (the
//! latest median, the trend of the recent points, the last change point) computed when the
//! series is re-detected after runs are stored, and kept in the store, so the index reads 200
//! small rows instead of every history. Only what the analysis already found is summarized;
//! the pages render it (`pitwall_reports::html::live`).

use std::collections::BTreeMap;

use pitwall_schema::{Direction, Run};
use serde::{Deserialize, Serialize};

use crate::history::Series;

/// The last change point of a series, as its index row shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeSummary {
    pub rel_change: f64,
    pub before: f64,
    pub after: f64,
    pub p_value: f64,
    /// Whether the change is for the worse, by the series' direction.
    pub worse: bool,
    /// The runs either side of it: commit (short) or run id, and the commit's subject.
    pub from: String,
    pub from_subject: String,
    pub to: String,
    pub to_subject: String,
    /// Points of `recent_medians` after the change (its place on the sparkline); `None` when it
    /// lies before them.
    pub recent_after: Option<usize>,
}

/// One series' summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    pub project: String,
    pub key: String,
    pub testbed: String,
    pub branch: String,
    pub suite: String,
    pub name: String,
    pub label: String,
    pub measure: String,
    pub unit: String,
    pub direction: Direction,
    pub params: BTreeMap<String, String>,
    /// The median of the newest point.
    pub latest_median: f64,
    /// The medians of the newest points (at most the `recent` asked for), oldest first.
    pub recent_medians: Vec<f64>,
    pub last_change: Option<ChangeSummary>,
    /// RFC 3339: when it was made.
    pub updated_at: String,
}

impl SeriesSummary {
    /// Its benchmark, for listing in the order every page lists benchmarks.
    pub fn bench_ref(&self) -> crate::order::BenchRef<'_> {
        crate::order::BenchRef {
            suite: &self.suite,
            name: &self.name,
            params: &self.params,
            measure: &self.measure,
        }
    }
}

fn subject(run: &Run) -> String {
    run.commit_info
        .as_ref()
        .map(|c| c.subject.clone())
        .unwrap_or_default()
}

fn label_of(run: &Run) -> String {
    if run.commit.is_empty() {
        run.id.chars().take(8).collect()
    } else {
        run.commit.chars().take(10).collect()
    }
}

/// The summary of `s` (a series over `runs`) of `project`, with the newest `recent` points'
/// medians; `None` for a series without points. `s` may be only the newest part of a history
/// (alert detection reads a window): then its last change point is the last within it, and
/// [`keep_older_change`] keeps one found earlier.
pub fn summarize(
    s: &Series,
    runs: &[Run],
    project: &str,
    recent: usize,
    now: &str,
) -> Option<SeriesSummary> {
    let latest = s.points.last()?;
    let first_recent = s.points.len().saturating_sub(recent);
    let last_change = s.changes.last().map(|cp| {
        let from = &runs[s.points[cp.index - 1].run];
        let to = &runs[s.points[cp.index].run];
        ChangeSummary {
            rel_change: cp.rel_change,
            before: cp.before,
            after: cp.after,
            p_value: cp.p_value,
            worse: s.is_worse(cp.rel_change),
            from: label_of(from),
            from_subject: subject(from),
            to: label_of(to),
            to_subject: subject(to),
            recent_after: (cp.index >= first_recent).then(|| s.points.len() - cp.index),
        }
    });
    Some(SeriesSummary {
        project: project.to_string(),
        key: s.key.clone(),
        testbed: s.testbed.clone(),
        branch: s.branch.clone(),
        suite: s.suite.clone(),
        name: s.name.clone(),
        label: s.label(),
        measure: s.measure.clone(),
        unit: s.unit.clone(),
        direction: s.direction,
        params: s.params.clone(),
        latest_median: latest.median,
        recent_medians: s.points[first_recent..].iter().map(|p| p.median).collect(),
        last_change,
        updated_at: now.to_string(),
    })
}

/// `new` with the last change of `old` (the stored summary of the same series) when `new`,
/// made from a window of the newest runs, found none: a change older than the window is still
/// the series' last. Its place on the sparkline is then unknown (before the recent points).
pub fn keep_older_change(mut new: SeriesSummary, old: Option<&SeriesSummary>) -> SeriesSummary {
    if new.last_change.is_none() {
        new.last_change = old.and_then(|o| o.last_change.clone()).map(|mut c| {
            c.recent_after = None;
            c
        });
    }
    new
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{HistoryFilter, series};
    use pitwall_stats::changepoint::DetectConfig;

    use pitwall_schema::{BenchmarkResult, Fingerprint, ResultStatus, RunStatus, Unit};

    /// One run per level, commit order as given, each with three samples around it.
    fn runs(levels: &[f64]) -> Vec<Run> {
        levels
            .iter()
            .enumerate()
            .map(|(i, &m)| Run {
                exclusion: None,
                contention: None,
                id: format!("run-{i}"),
                project: "shop".into(),
                commit: format!("{i:040x}"),
                branch: None,
                testbed: None,
                role: None,
                started_at: format!("2026-01-01T00:00:{i:02}Z"),
                finished_at: String::new(),
                config_hash: String::new(),
                fingerprint: Fingerprint::default(),
                status: RunStatus::Complete,
                commit_info: None,
                error: None,
                pair: None,
                results: vec![BenchmarkResult {
                    suite: "kernel".into(),
                    name: "sort".into(),
                    params: BTreeMap::new(),
                    measure: "time".into(),
                    unit: Unit::new(Unit::NANOSECONDS),
                    direction: Direction::LowerIsBetter,
                    status: ResultStatus::Ok,
                    error: None,
                    samples: vec![m * 0.995, m, m * 1.005],
                    sample_meta: Vec::new(),
                    replicates: Vec::new(),
                    summary: None,
                }],
            })
            .collect()
    }

    #[test]
    fn a_summary_has_the_latest_median_recent_trend_and_last_change() {
        let mut levels = vec![100.0; 12];
        levels.extend(vec![120.0; 12]);
        let all = runs(&levels);
        let s = &series(
            &all,
            &HistoryFilter::branch("main"),
            &DetectConfig::default(),
        )[0];
        let sum = summarize(s, &all, "shop", 5, "2026-12-06T00:00:00Z").unwrap();
        assert!((sum.latest_median - 120.0).abs() < 1.0, "{sum:?}");
        assert_eq!(sum.recent_medians.len(), 5);
        let c = sum.last_change.clone().unwrap();
        assert!(c.worse && c.rel_change > 0.15, "{c:?}");
        assert_eq!(
            c.recent_after, None,
            "12 points back: before the 5 recent ones"
        );
        let wide = summarize(s, &all, "shop", 30, "now").unwrap();
        assert_eq!(wide.last_change.unwrap().recent_after, Some(12));
        // A later window without the change keeps it.
        let flat = runs(&[120.0; 10]);
        let s2 = &series(
            &flat,
            &HistoryFilter::branch("main"),
            &DetectConfig::default(),
        )[0];
        let later = summarize(s2, &flat, "shop", 5, "later").unwrap();
        assert_eq!(later.last_change, None);
        let kept = keep_older_change(later, Some(&sum));
        assert_eq!(kept.last_change.unwrap().rel_change, c.rel_change);
    }
}
