//! The write-up as one self-contained HTML page (inline CSS and SVG, no script, nothing
//! fetched), like the report: the sections of the Markdown, with a trend chart per suite
//! normalised to the start of the period and a sparkline per benchmark. The page is
//! `templates/writeup.html`, rendered through the site's template environment; every text
//! from data is escaped here with the report's `esc` and handed to it as markup.

use std::fmt::Write;

use minijinja::{Value, context};
use pitwall_analysis::number::with_unit;
use pitwall_analysis::writeup::{LedgerGroup, SuiteSummary, Writeup};

use pitwall_schema::Direction;

use super::{
    APART_COLUMNS, Escapes, LEDGER_COLUMNS, RUNNER_COLUMNS, apart_row, change_words, chart_range,
    headline, interval, ledger_commits, ledger_heading, ledger_row, methodology_items, plural,
    runner_row, short, timeline,
};
use crate::html::esc as e;

/// HTML's: every text from data escaped the one way.
const HTML: Escapes = Escapes {
    id: e,
    cell: e,
    text: e,
};

/// Markup made here (escaped text, SVG) as the template is to show it, unescaped again.
fn markup(html: impl Into<String>) -> Value {
    Value::from_safe_string(html.into())
}

/// Each string of a list as markup.
fn markups<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Vec<Value> {
    items.into_iter().map(markup).collect()
}

/// The whole write-up as an HTML page.
pub fn render_html(w: &Writeup) -> String {
    let title = format!("Performance write-up, {} to {}", w.period.from, w.period.to);
    let m = &w.methodology;
    let (noise, tests) = methodology_items(w, HTML, "&amp;");
    let confirmed = w.confirmed();
    let apart: Vec<Vec<Value>> = w
        .listed_apart()
        .iter()
        .flat_map(|g| {
            g.entries
                .iter()
                .map(move |x| markups(apart_row(g, x, HTML)))
        })
        .collect();
    let ctx = context! {
        title => markup(e(&title)),
        branch => markup(e(&w.branch)),
        runs => w.runs_in_period,
        runs_word => plural(w.runs_in_period, "run", "runs"),
        entries_word => plural(confirmed.len(), "entry", "entries"),
        env_changes => w.env_changes.len(),
        changes_word => plural(w.env_changes.len(), "change", "changes"),
        headline => markups(headline(w, HTML)),
        summaries => w.summaries.iter().map(suite).collect::<Vec<_>>(),
        ledger_columns => LEDGER_COLUMNS,
        ledger => confirmed.iter().map(group).collect::<Vec<_>>(),
        apart_columns => APART_COLUMNS,
        apart => apart,
        timeline => timeline_rows(w, &confirmed),
        runner_columns => RUNNER_COLUMNS,
        runners => m.runners.iter().map(|r| markups(runner_row(r, HTML))).collect::<Vec<_>>(),
        noise => markups(noise),
        tests => markups(tests),
    };
    let mut page = crate::html::render_template("writeup.html", ctx)
        .expect("the write-up template is compiled in and renders every write-up");
    // The environment drops a template's final newline.
    page.push('\n');
    page
}

/// The class of a change of time (a throughput's as its time per unit): faster is better.
fn class_of(time_change: f64) -> &'static str {
    if time_change * 100.0 <= -0.05 {
        "better"
    } else if time_change * 100.0 >= 0.05 {
        "worse"
    } else {
        "same"
    }
}

/// A suite's row of the summary table, its trend chart and its benchmarks' rows.
fn suite(s: &SuiteSummary) -> Value {
    let trend: Vec<f64> = s.trend.iter().map(|t| t.relative).collect();
    let benchmarks: Vec<Value> = s
        .benchmarks
        .iter()
        .map(|b| {
            context! {
                label => markup(e(&b.label)),
                measure => markup(e(&b.measure)),
                start => markup(e(&with_unit(b.first_level, &b.unit))),
                end => markup(e(&with_unit(b.last_level, &b.unit))),
                class => class_of(b.time_change()),
                change => markup(change_words(b.rel_change, b.direction)),
                chart => markup(chart(&b.medians, 120.0, 28.0, false)),
            }
        })
        .collect();
    context! {
        suite => markup(e(&s.suite)),
        testbed => markup(e(&s.testbed)),
        benchmarks => benchmarks,
        class => class_of(s.geomean_change),
        change => markup(change_words(s.geomean_change, Direction::LowerIsBetter)),
        interval => markup(interval(s.ci, Direction::LowerIsBetter)),
        regressions => s.regressions,
        improvements => s.improvements,
        trend => markup(chart(&trend, 640.0, 160.0, true)),
    }
}

/// A line chart of `values` (`axis`: with the 1.0 line and the range written beside it).
fn chart(values: &[f64], w: f64, h: f64, axis: bool) -> String {
    if values.is_empty() {
        return String::new();
    }
    let with_one = axis.then_some(1.0);
    let (lo, hi) = chart_range(values.iter().copied().chain(with_one));
    let pad = if axis { 40.0 } else { 2.0 };
    let x = |i: usize| pad + (w - pad - 2.0) * i as f64 / (values.len().max(2) - 1) as f64;
    let y = |v: f64| h - 3.0 - (h - 6.0) * (v - lo) / (hi - lo);
    let mut s = format!(
        "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    if axis {
        let _ = write!(
            s,
            "<line x1=\"{pad}\" x2=\"{w}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#bbb\" stroke-dasharray=\"4 3\"/><text x=\"2\" y=\"{1:.1}\" font-size=\"10\">1.00</text><text x=\"2\" y=\"10\" font-size=\"10\">{2:.3}</text><text x=\"2\" y=\"{h}\" font-size=\"10\">{3:.3}</text>",
            y(1.0),
            y(1.0) + 3.0,
            hi,
            lo
        );
    }
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| format!("{:.1},{:.1}", x(i), y(v)))
        .collect();
    let _ = write!(
        s,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#36c\" stroke-width=\"1.5\"/></svg>",
        points.join(" ")
    );
    s
}

/// A ledger group: its heading, its commits and a row of cells per entry.
fn group(g: &LedgerGroup) -> Value {
    context! {
        heading => markup(ledger_heading(g, HTML)),
        commits => markup(ledger_commits(g, HTML)),
        rows => g.entries.iter().map(|x| markups(ledger_row(x, HTML))).collect::<Vec<_>>(),
    }
}

/// The rows of the environment section's table: environment changes and ledger groups by
/// date.
fn timeline_rows(w: &Writeup, confirmed: &[LedgerGroup]) -> Vec<Value> {
    timeline(w, confirmed)
        .into_iter()
        .map(|(date, is_env, i)| {
            if is_env {
                let c = &w.env_changes[i];
                let near: Vec<String> = c.near.iter().map(|s| e(short(s))).collect();
                context! {
                    environment => true,
                    date => markup(date),
                    testbed => markup(e(&c.testbed)),
                    field => markup(c.field.as_str()),
                    before => markup(e(&c.before)),
                    after => markup(e(&c.after)),
                    commit => markup(e(short(&c.commit))),
                    near => markup(if near.is_empty() {
                        "none".to_string()
                    } else {
                        near.join(", ")
                    }),
                }
            } else {
                let g = &confirmed[i];
                let testbeds: std::collections::BTreeSet<&str> =
                    g.entries.iter().map(|x| x.testbed.as_str()).collect();
                context! {
                    environment => false,
                    date => markup(date),
                    testbeds => markup(e(&testbeds.into_iter().collect::<Vec<_>>().join(", "))),
                    first_bad => markup(e(short(&g.first_bad))),
                    benchmarks => g.entries.len(),
                    benchmarks_word => plural(g.entries.len(), "benchmark", "benchmarks"),
                    largest => markup(
                        g.entries
                            .first()
                            .map_or("n/a".into(), |x| change_words(x.rel_change, x.direction)),
                    ),
                }
            }
        })
        .collect()
}
