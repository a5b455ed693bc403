//! What each page shows, as plain serializable structs built from the runs: the templates
//! only lay these out. Charts arrive here as finished (escaped) SVG strings.

use std::collections::{BTreeMap, BTreeSet};

use pitwall_schema::{Direction, Fingerprint, Run};
use serde::Serialize;

use super::history_chart;
use super::model::{
    PageComparison, Series, display_unit, numeric_param, run_label, short_commit, signed_pct,
};
use super::svg::{self, SweepPoint};
use pitwall_analysis::number::{DisplayUnit, sig};
use pitwall_analysis::precision;

/// Rows of the recent-runs table on a benchmark page.
const RECENT_RUNS: usize = 20;

fn subject(run: &Run) -> String {
    run.commit_info
        .as_ref()
        .map(|c| c.subject.clone())
        .unwrap_or_default()
}

/// A change point as a row shows it (levels in the page's unit).
#[derive(Debug, Serialize)]
pub(crate) struct ChangeView {
    pub change: String,
    pub class: &'static str,
    pub before: String,
    pub after: String,
    pub from: String,
    pub from_subject: String,
    pub to: String,
    pub to_subject: String,
    pub p_value: String,
}

pub(crate) fn change_view(
    s: &Series,
    cp: &pitwall_stats::changepoint::ChangePoint,
    runs: &[Run],
    unit: &DisplayUnit,
) -> ChangeView {
    let from = &runs[s.points[cp.index - 1].run];
    let to = &runs[s.points[cp.index].run];
    ChangeView {
        change: signed_pct(cp.rel_change),
        class: if s.is_worse(cp.rel_change) {
            "worse"
        } else {
            "better"
        },
        before: unit.num(cp.before),
        after: unit.num(cp.after),
        from: run_label(from),
        from_subject: subject(from),
        to: run_label(to),
        to_subject: subject(to),
        p_value: sig(cp.p_value, 2),
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct IndexRow {
    pub slug: String,
    /// The row's link when it is not `bench/<slug>.html` (`pitwall serve`'s live pages).
    pub href: Option<String>,
    pub suite: String,
    pub testbed: String,
    pub branch: String,
    pub label: String,
    pub measure: String,
    pub unit: String,
    pub latest: String,
    pub runs: usize,
    pub spark: String,
    pub change: Option<ChangeView>,
}

#[derive(Debug, Serialize)]
pub(crate) struct CompareLink {
    /// The page's file name under `compare/`, without `.html`.
    pub page: String,
    pub title: String,
    pub summary: String,
    pub regressions: usize,
    pub incomparable: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct IndexPage {
    /// The stored alerts, open ones first.
    pub alerts: Vec<super::alert_list::AlertRow>,
    pub rows: Vec<IndexRow>,
    pub suites: Vec<String>,
    /// Every testbed with a series (the index's testbed selector).
    pub testbeds: Vec<String>,
    /// The history branch first, then every other branch with a series (the selector).
    pub branches: Vec<String>,
    pub history_branch: String,
    /// Rows of the history branch (what the verdict box counts).
    pub history_rows: usize,
    pub comparisons: Vec<CompareLink>,
    /// The history runs the rows are over; `None` where the page does not count them (the
    /// live index, made from the series' summaries).
    pub runs: Option<usize>,
    pub latest_worse: usize,
    pub latest_better: usize,
    /// The one banner's class: `worse` when a comparison found a regression or a measure's
    /// latest change point is worse, `incomparable` when a comparison could not be made,
    /// else `ok`. Comparisons and history tell one story in one box.
    pub status: &'static str,
    /// The latest local run (the working tree's), shown apart; set by the site.
    pub local: Option<super::local_run::LocalRunView>,
}

pub(crate) fn index(
    series: &[Series],
    runs: &[Run],
    comparisons: &[PageComparison],
    alerts: &[pitwall_schema::Alert],
    history_branch: &str,
) -> IndexPage {
    let rows: Vec<IndexRow> = series
        .iter()
        .map(|s| {
            let unit = display_unit(s);
            IndexRow {
                slug: s.slug.clone(),
                href: None,
                suite: s.suite.clone(),
                testbed: s.testbed.clone(),
                branch: s.branch.clone(),
                label: s.label(),
                measure: s.measure.clone(),
                unit: unit.name().to_string(),
                latest: s
                    .points
                    .last()
                    .map(|p| unit.num(p.median))
                    .unwrap_or_default(),
                runs: super::model::history_runs(s),
                spark: svg::sparkline(s),
                change: s.changes.last().map(|cp| change_view(s, cp, runs, &unit)),
            }
        })
        .collect();
    let runs = Some(super::model::history_runs_of(series, history_branch));
    assemble_index(rows, runs, comparisons, alerts, history_branch)
}

/// The index of `rows` (one per series, in the order listed): the verdict box for the history
/// branch, the selectors, the alerts and the comparisons' links.
pub(crate) fn assemble_index(
    rows: Vec<IndexRow>,
    runs: Option<usize>,
    comparisons: &[PageComparison],
    alerts: &[pitwall_schema::Alert],
    history_branch: &str,
) -> IndexPage {
    // The verdict box speaks for the history branch; other branches' rows are shown on request.
    let main_rows = || rows.iter().filter(|r| r.branch == history_branch);
    let worse = main_rows()
        .filter(|r| r.change.as_ref().is_some_and(|c| c.class == "worse"))
        .count();
    let changed = main_rows().filter(|r| r.change.is_some()).count();
    let main_count = main_rows().count();
    let status = if comparisons.iter().any(|c| c.report.incomparable) {
        "incomparable"
    } else if worse > 0 || comparisons.iter().any(|c| c.report.counts().regression > 0) {
        "worse"
    } else {
        "ok"
    };
    IndexPage {
        alerts: super::alert_list::rows(alerts),
        status,
        suites: rows
            .iter()
            .map(|r| r.suite.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        comparisons: comparisons
            .iter()
            .map(|c| CompareLink {
                page: c.page(),
                title: c.title.clone(),
                summary: c.report.summary_line(),
                regressions: c.report.counts().regression,
                incomparable: c.report.incomparable,
            })
            .collect(),
        testbeds: rows
            .iter()
            .map(|r| r.testbed.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        branches: std::iter::once(history_branch.to_string())
            .chain(
                rows.iter()
                    .map(|r| r.branch.clone())
                    .filter(|b| b != history_branch)
                    .collect::<BTreeSet<_>>(),
            )
            .collect(),
        history_branch: history_branch.to_string(),
        history_rows: main_count,
        runs,
        latest_worse: worse,
        latest_better: changed - worse,
        rows,
        local: None,
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct RunRow {
    pub commit: String,
    pub subject: String,
    pub started_at: String,
    pub median: String,
    pub ci: String,
    /// Set when the interval is wider than the run's sampling target: what it reached
    /// against the target (`pitwall_analysis::precision`).
    pub noisy: Option<String>,
    pub spread: String,
    pub n: usize,
    pub throttled: usize,
}

#[derive(Debug, Serialize)]
pub(crate) struct SweepView {
    pub param: String,
    pub chart: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct BenchPage {
    pub key: String,
    pub suite: String,
    pub label: String,
    pub measure: String,
    pub unit: String,
    pub better: &'static str,
    pub chart: String,
    /// The interactive chart's data (`chart_data::history_json`), JSON escaped for a
    /// `<script>` element.
    pub chart_data: String,
    /// The same key and branch on every testbed, when it has a history on two or more.
    pub testbeds: Option<String>,
    /// The branch whose history this is.
    pub branch: String,
    pub testbed: String,
    pub changes: Vec<ChangeView>,
    pub sweeps: Vec<SweepView>,
    pub recent: Vec<RunRow>,
    pub runs: usize,
    pub throttled_runs: usize,
    /// Points of contended runs, drawn grey and left out of detection.
    pub contended_points: usize,
}

/// Groups series by suite, name and measure (the candidates for parameter sweeps).
pub(crate) fn sweep_groups(series: &[Series]) -> BTreeMap<(&str, &str, &str), Vec<usize>> {
    let mut g: BTreeMap<(&str, &str, &str), Vec<usize>> = BTreeMap::new();
    for (i, s) in series.iter().enumerate() {
        g.entry((&s.suite, &s.name, &s.measure))
            .or_default()
            .push(i);
    }
    g
}

/// One chart per numeric parameter of `s` along which at least two benchmarks differ while
/// every other parameter matches.
fn sweeps(s: &Series, series: &[Series], group: &[usize]) -> Vec<SweepView> {
    let mut out = Vec::new();
    for (k, v) in &s.params {
        if numeric_param(v).is_none() {
            continue;
        }
        let mut pts: Vec<SweepPoint> = group
            .iter()
            .map(|&j| &series[j])
            .filter(|t| {
                t.testbed == s.testbed
                    && t.branch == s.branch
                    && t.params.len() == s.params.len()
                    && t.params
                        .iter()
                        .all(|(tk, tv)| tk == k || s.params.get(tk) == Some(tv))
            })
            .filter_map(|t| {
                let tv = t.params.get(k)?;
                Some(SweepPoint {
                    x: numeric_param(tv)?,
                    y: t.points.last()?.median,
                    label: tv.clone(),
                    current: t.key == s.key,
                })
            })
            .collect();
        if pts.len() < 2 {
            continue;
        }
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        out.push(SweepView {
            param: k.clone(),
            chart: svg::sweep(&pts, k, &s.unit),
        });
    }
    out
}

/// A benchmark page. `static_chart`: with the SVG history chart, which the page shows without
/// JavaScript (the static report's pages, opened from anywhere); the live server's pages, whose
/// chart script is always there, leave it out (at 10,000 runs it is half the page).
pub(crate) fn bench(
    s: &Series,
    series: &[Series],
    group: &[usize],
    runs: &[Run],
    alerts: &[pitwall_schema::Alert],
    static_chart: bool,
) -> BenchPage {
    let unit = display_unit(s);
    let recent = s
        .points
        .iter()
        .rev()
        .take(RECENT_RUNS)
        .map(|p| {
            let run = &runs[p.run];
            RunRow {
                commit: short_commit(&run.commit).to_string(),
                subject: subject(run),
                started_at: run.started_at.clone(),
                median: unit.num(p.median),
                ci: p
                    .ci
                    .map(|(a, b)| format!("{} – {}", unit.num(a), unit.num(b)))
                    .unwrap_or_else(|| "n < 6".into()),
                noisy: p
                    .ci
                    .zip(precision::target_pct(run, &s.suite))
                    .and_then(|(ci, target)| precision::of_interval(p.median, ci, target))
                    .filter(precision::Precision::noisy)
                    .map(|p| p.describe()),
                spread: format!("{} – {}", unit.num(p.min), unit.num(p.max)),
                n: p.n,
                throttled: p.throttled,
            }
        })
        .collect();
    BenchPage {
        key: s.key.clone(),
        suite: s.suite.clone(),
        label: s.label(),
        measure: s.measure.clone(),
        unit: unit.name().to_string(),
        better: match s.direction {
            Direction::LowerIsBetter => "lower is better",
            Direction::HigherIsBetter => "higher is better",
        },
        chart: if static_chart {
            history_chart::history(s, runs, &unit)
        } else {
            String::new()
        },
        chart_data: super::chart_data::history_json(
            s,
            &series
                .iter()
                .filter(|o| o.key == s.key && (o.testbed != s.testbed || o.branch != s.branch))
                .collect::<Vec<_>>(),
            runs,
            alerts,
            &unit,
        ),
        testbeds: super::testbeds_chart::testbeds(s, series, runs, &unit),
        branch: s.branch.clone(),
        testbed: s.testbed.clone(),
        changes: s
            .changes
            .iter()
            .rev()
            .map(|cp| change_view(s, cp, runs, &unit))
            .collect(),
        sweeps: sweeps(s, series, group),
        recent,
        runs: super::model::history_runs(s),
        throttled_runs: s.points.iter().filter(|p| p.throttled > 0).count(),
        contended_points: s.contended.len(),
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct EnvField {
    pub name: String,
    pub value: String,
    /// The value differs between the environments shown.
    pub differs: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct EnvView {
    pub run_id: String,
    pub commit: String,
    pub started_at: String,
    pub runs: usize,
    pub fields: Vec<EnvField>,
}

fn flatten(f: &Fingerprint) -> Vec<(String, String)> {
    let mut v = vec![
        ("hostname".to_string(), f.hostname.clone()),
        ("os".into(), f.os.clone()),
        ("arch".into(), f.arch.clone()),
        ("kernel".into(), f.kernel.clone()),
        ("cpu model".into(), f.cpu_model.clone()),
        ("logical cpus".into(), f.logical_cpus.to_string()),
        (
            "memory".into(),
            format!("{:.1} GiB", f.memory_bytes as f64 / (1u64 << 30) as f64),
        ),
        (
            "cpu governor".into(),
            f.cpu_governor.clone().unwrap_or_default(),
        ),
        ("pitwall".into(), f.pitwall_version.clone()),
    ];
    for (i, g) in f.gpus.iter().enumerate() {
        v.push((format!("gpu {i} model"), g.model.clone()));
        v.push((
            format!("gpu {i} driver"),
            g.driver.clone().unwrap_or_default(),
        ));
        v.push((format!("gpu {i} uuid"), g.uuid.clone().unwrap_or_default()));
        for (k, x) in &g.extra {
            v.push((format!("gpu {i} {k}"), x.to_string()));
        }
    }
    v.extend(f.env.iter().map(|(k, x)| (format!("env {k}"), x.clone())));
    v.extend(f.extra.iter().map(|(k, x)| (k.clone(), x.to_string())));
    v
}

/// The latest run of every distinct fingerprint, newest first, with the fields that differ
/// between them marked.
pub(crate) fn envs(runs: &[Run]) -> Vec<EnvView> {
    let mut seen: Vec<(&Fingerprint, usize)> = Vec::new();
    let mut views: Vec<EnvView> = Vec::new();
    for run in runs.iter().rev() {
        if let Some(s) = seen.iter_mut().find(|(f, _)| **f == run.fingerprint) {
            views[s.1].runs += 1;
            continue;
        }
        seen.push((&run.fingerprint, views.len()));
        views.push(EnvView {
            run_id: run.id.clone(),
            commit: short_commit(&run.commit).to_string(),
            started_at: run.started_at.clone(),
            runs: 1,
            fields: flatten(&run.fingerprint)
                .into_iter()
                .map(|(name, value)| EnvField {
                    name,
                    value,
                    differs: false,
                })
                .collect(),
        });
    }
    // A field differs when its values disagree or when some environments lack it.
    let mut values: BTreeMap<String, (BTreeSet<String>, usize)> = BTreeMap::new();
    for v in &views {
        for f in &v.fields {
            let e = values.entry(f.name.clone()).or_default();
            e.0.insert(f.value.clone());
            e.1 += 1;
        }
    }
    let total = views.len();
    for v in &mut views {
        for f in &mut v.fields {
            f.differs = values
                .get(&f.name)
                .is_some_and(|(set, n)| set.len() > 1 || *n < total);
        }
    }
    views
}
