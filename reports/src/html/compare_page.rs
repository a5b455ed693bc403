//! The comparison page: verdict table (in the order every output lists a comparison), side-by-side box plots of the two
//! sides' raw samples, found in the report's runs by the run id in each side's label (only the
//! medians are drawn when the samples are not among the runs), and environment differences.

use std::collections::BTreeMap;

use pitwall_schema::Run;
use serde::Serialize;

use super::model::{Series, signed_pct};
use super::svg::{self, Five};
use crate::compare::{ComparedBenchmark, ComparisonReport};
use pitwall_analysis::number::sig;

#[derive(Debug, Serialize)]
pub(crate) struct CompareRow {
    pub key: String,
    pub slug: Option<String>,
    pub base: String,
    pub cand: String,
    pub unit: String,
    pub change: String,
    pub interval: String,
    pub q_value: String,
    pub verdict: &'static str,
    /// A regression or improvement in time whose cycles did not change.
    pub clock_explained: bool,
    pub reason: String,
    pub boxes: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct ComparePage {
    pub title: String,
    pub baseline: String,
    pub candidate: String,
    pub summary: String,
    pub incomparable: bool,
    pub env_mismatch: Vec<String>,
    /// `3 interleaved rounds (until decided, at most 15)` or `sides measured separately`.
    pub rounds: String,
    /// Said when the verdicts rest on one process per side, or sides measured separately.
    pub replication: Option<String>,
    /// The pair's time line, when it left identical code unmeasured.
    pub time: Option<String>,
    pub rows: Vec<CompareRow>,
    pub only_baseline: Vec<String>,
    pub only_candidate: Vec<String>,
    pub failed: Vec<String>,
    pub skipped: Vec<String>,
    pub implausible: Vec<String>,
    pub incompatible: Vec<String>,
    pub samples_missing: usize,
}

/// The run a comparison side's label names (`run <id>`, `commit … (run <id>)`), newest first.
fn side_run<'a>(label: &str, runs: &'a [Run]) -> Option<&'a Run> {
    runs.iter()
        .rev()
        .find(|r| !r.id.is_empty() && label.contains(&r.id))
}

fn side_samples<'a>(run: Option<&'a Run>, b: &ComparedBenchmark) -> Option<&'a [f64]> {
    run?.results
        .iter()
        .find(|r| {
            (b.suite.is_empty() || r.suite == b.suite)
                && r.name == b.name
                && r.params == b.params
                && r.measure == b.measure
        })
        .map(|r| r.samples.as_slice())
}

pub(crate) fn compare(
    title: &str,
    r: &ComparisonReport,
    series: &[Series],
    runs: &[Run],
) -> ComparePage {
    let slugs: BTreeMap<&str, &str> = series
        .iter()
        .map(|s| (s.key.as_str(), s.slug.as_str()))
        .collect();
    let (base_run, cand_run) = (side_run(&r.baseline, runs), side_run(&r.candidate, runs));
    let mut missing = 0;
    let mut rows: Vec<CompareRow> = crate::compare::ordered(r)
        .into_iter()
        .map(|b| {
            let c = &b.comparison;
            let mut five = |run, median, n| match side_samples(run, b).and_then(Five::of) {
                Some(f) => f,
                None => {
                    missing += 1;
                    Five::median_only(median, n)
                }
            };
            let base = five(base_run, c.base_median, c.base_n);
            let cand = five(cand_run, c.cand_median, c.cand_n);
            let key = b.key();
            let unit = crate::compare::display_unit(b);
            CompareRow {
                slug: slugs.get(key.as_str()).map(|s| s.to_string()),
                key,
                base: unit.num(c.base_median),
                cand: unit.num(c.cand_median),
                unit: unit.name().to_string(),
                change: signed_pct(c.ratio - 1.0),
                interval: format!(
                    "[{}, {}]",
                    signed_pct(c.ci.0 - 1.0),
                    signed_pct(c.ci.1 - 1.0)
                ),
                q_value: if c.q_value < 1e-4 {
                    "<0.0001".into()
                } else {
                    sig(c.q_value, 2)
                },
                verdict: c.verdict.as_str(),
                clock_explained: b.clock_explained(),
                reason: c.reason.clone(),
                boxes: svg::boxes(base, cand, &unit),
            }
        })
        .collect();
    rows.extend(r.identical.iter().map(|e| CompareRow {
        key: e.shown(),
        slug: None,
        base: "-".into(),
        cand: "-".into(),
        unit: String::new(),
        change: "-".into(),
        interval: "-".into(),
        q_value: "-".into(),
        verdict: e.verdict,
        clock_explained: false,
        reason: format!("not measured: {}", e.code.basis.describe()),
        boxes: String::new(),
    }));
    ComparePage {
        title: title.to_string(),
        baseline: r.baseline.clone(),
        candidate: r.candidate.clone(),
        summary: r.summary_line(),
        incomparable: r.incomparable,
        env_mismatch: r.env_mismatch.clone(),
        rounds: r.rounds_text(),
        replication: r.replication_line(),
        time: r.time.as_ref().map(|t| t.line()),
        rows,
        only_baseline: r.only_baseline.clone(),
        only_candidate: r.only_candidate.clone(),
        failed: r.failed.clone(),
        skipped: r.skipped.clone(),
        implausible: r.implausible.clone(),
        incompatible: r.incompatible.clone(),
        samples_missing: missing,
    }
}
