//! The index of `pitwall serve` (issue 30): the report's `index.html` (the same template),
//! made from the series' summaries the store keeps (`pitwall_analysis::summary`), not from
//! every history, so it stays fast however many runs there are. Each row links to the series'
//! live page; its trend line is the newest points of the history.

use minijinja::context;
use minijinja::value::Serde;
use pitwall_analysis::number::{DisplayUnit, sig};
use pitwall_analysis::order::{bench_cmp, natural_cmp};
use pitwall_analysis::summary::SeriesSummary;
use pitwall_schema::Alert;

use super::live::{Viewer, url_component};
use super::model::signed_pct;
use super::pages::{ChangeView, IndexRow, assemble_index};
use super::site::{HtmlError, render_template};

fn row(s: &SeriesSummary) -> IndexRow {
    let unit = DisplayUnit::for_value(&s.unit, s.latest_median);
    let n = s.recent_medians.len();
    let mark = s.last_change.as_ref().and_then(|c| {
        let after = c.recent_after?;
        let class = if c.worse { "worse" } else { "better" };
        Some(((n - after) as f64, class))
    });
    IndexRow {
        slug: String::new(),
        href: Some(format!(
            "bench?key={}&testbed={}&branch={}",
            url_component(&s.key),
            url_component(&s.testbed),
            url_component(&s.branch)
        )),
        suite: s.suite.clone(),
        testbed: s.testbed.clone(),
        branch: s.branch.clone(),
        label: s.label.clone(),
        measure: s.measure.clone(),
        unit: unit.name().to_string(),
        latest: unit.num(s.latest_median),
        runs: n,
        spark: super::svg::spark_svg(&s.recent_medians, mark),
        change: s.last_change.as_ref().map(|c| ChangeView {
            change: signed_pct(c.rel_change),
            class: if c.worse { "worse" } else { "better" },
            before: unit.num(c.before),
            after: unit.num(c.after),
            from: c.from.clone(),
            from_subject: c.from_subject.clone(),
            to: c.to.clone(),
            to_subject: c.to_subject.clone(),
            p_value: sig(c.p_value, 2),
        }),
    }
}

/// `/p/<project>/`: the index of `summaries` (the project's), with its `alerts`, for
/// `history_branch`. Links are relative to `/p/<project>/`.
pub fn index_page(
    project: &str,
    mut summaries: Vec<SeriesSummary>,
    alerts: &[Alert],
    history_branch: &str,
    viewer: &Viewer,
    generated_at: &str,
) -> Result<String, HtmlError> {
    summaries.sort_by(|a, b| {
        bench_cmp(a.bench_ref(), b.bench_ref())
            .then_with(|| natural_cmp(&a.testbed, &b.testbed))
            .then_with(|| (a.branch != history_branch).cmp(&(b.branch != history_branch)))
            .then_with(|| a.branch.cmp(&b.branch))
    });
    let rows = summaries.iter().map(row).collect();
    let mut page = assemble_index(rows, None, &[], alerts, history_branch);
    super::live::link_alert_rows(&mut page.alerts);
    render_template(
        "index.html",
        context! {
            page => Serde(&page),
            project => project,
            generated_at => generated_at,
            root => "",
            title => "benchmarks",
            live => true,
            viewer => Serde(viewer),
        },
    )
}
