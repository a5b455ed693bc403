//! The write-up as one self-contained HTML page (inline CSS and SVG, no script, nothing
//! fetched), like the report: the sections of the Markdown, with a trend chart per suite
//! normalised to the start of the period and a sparkline per benchmark. Every text from data
//! goes through the report's `esc`.

use std::fmt::Write;

use pitwall_analysis::number::with_unit;
use pitwall_analysis::writeup::{LedgerGroup, SuiteSummary, Writeup};

use super::{
    LEDGER_COLUMNS, RUNNER_COLUMNS, chart_range, interval, ledger_commits, ledger_heading,
    ledger_row, methodology_items, plural, runner_row, short, signed_pct, timeline,
};
use crate::html::esc as e;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}\
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}.worse{color:#b00}.better{color:#070}\
svg{vertical-align:middle}.muted{color:#777}h3{margin-top:1.5rem}";

/// The whole write-up as an HTML page.
pub fn render_html(w: &Writeup) -> String {
    let mut out = String::new();
    let title = format!("Performance write-up, {} to {}", w.period.from, w.period.to);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        e(&title),
        e(&title)
    );
    let _ = writeln!(
        out,
        "<p>Branch {}: {} history {} with commits in the period, {} ledger {}, {} environment {}. Drafted by pitwall from its stored history.</p>",
        e(&w.branch),
        w.runs_in_period,
        plural(w.runs_in_period, "run", "runs"),
        w.ledger.len(),
        plural(w.ledger.len(), "entry", "entries"),
        w.env_changes.len(),
        plural(w.env_changes.len(), "change", "changes")
    );
    summary(&mut out, w);
    let _ = writeln!(out, "<h2>Ledger</h2>");
    if w.ledger.is_empty() {
        let _ = writeln!(out, "<p>No change point and no alert in the period.</p>");
    }
    for g in &w.ledger {
        group(&mut out, g);
    }
    environment(&mut out, w);
    methodology(&mut out, w);
    out.push_str("</body></html>\n");
    out
}

fn class_of(speedup: f64) -> &'static str {
    if speedup * 100.0 <= -0.05 {
        "worse"
    } else if speedup * 100.0 >= 0.05 {
        "better"
    } else {
        "same"
    }
}

fn summary(out: &mut String, w: &Writeup) {
    let _ = writeln!(out, "<h2>Executive summary</h2>");
    if w.summaries.is_empty() {
        let _ = writeln!(
            out,
            "<p>No benchmark was measured on a commit of this period: nothing to summarise.</p>"
        );
        return;
    }
    let _ = writeln!(
        out,
        "<p>Each benchmark's level in its first and last segment (between change points) within the period, as a speedup (positive: faster), combined as a geometric mean with a 95% bootstrap interval over benchmarks.</p>\n<table><tr><th>suite</th><th>testbed</th><th>benchmarks</th><th>geomean speedup</th><th>95% interval</th><th>regressions</th><th>improvements</th></tr>"
    );
    for s in &w.summaries {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n {}\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            e(&s.suite),
            e(&s.testbed),
            s.benchmarks.len(),
            class_of(s.geomean_speedup),
            signed_pct(s.geomean_speedup),
            interval(s.ci),
            s.regressions,
            s.improvements
        );
    }
    let _ = writeln!(out, "</table>");
    for s in &w.summaries {
        suite(out, s);
    }
}

fn suite(out: &mut String, s: &SuiteSummary) {
    let _ = writeln!(out, "<h3>{} on {}</h3>", e(&s.suite), e(&s.testbed));
    let trend: Vec<f64> = s.trend.iter().map(|t| t.relative).collect();
    let _ = writeln!(
        out,
        "<p>Trend, normalised to the start of the period (1 = start, higher is faster):</p>\n{}",
        chart(&trend, 640.0, 160.0, true)
    );
    let _ = writeln!(
        out,
        "<table><tr><th>benchmark</th><th>start</th><th>end</th><th>speedup</th><th>in the period</th></tr>"
    );
    for b in &s.benchmarks {
        let _ = writeln!(
            out,
            "<tr><td>{} ({})</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n {}\">{}</td><td>{}</td></tr>",
            e(&b.label),
            e(&b.measure),
            e(&with_unit(b.first_level, &b.unit)),
            e(&with_unit(b.last_level, &b.unit)),
            class_of(b.speedup),
            signed_pct(b.speedup),
            chart(&b.medians, 120.0, 28.0, false)
        );
    }
    let _ = writeln!(out, "</table>");
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

fn group(out: &mut String, g: &LedgerGroup) {
    let _ = writeln!(out, "<h3>{}</h3>", ledger_heading(g, e));
    let _ = write!(out, "<p>{}</p>\n<table><tr>", ledger_commits(g, e));
    for c in LEDGER_COLUMNS {
        let _ = write!(out, "<th>{c}</th>");
    }
    let _ = writeln!(out, "</tr>");
    for x in &g.entries {
        let cells = ledger_row(x, e);
        let _ = write!(out, "<tr>");
        for (i, c) in cells.iter().enumerate() {
            // The change of the value is a number: right-aligned like the summary's.
            let class = if i == 3 { " class=\"n\"" } else { "" };
            let _ = write!(out, "<td{class}>{c}</td>");
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</table>");
}

fn environment(out: &mut String, w: &Writeup) {
    let _ = writeln!(out, "<h2>Environment changes</h2>");
    if w.env_changes.is_empty() {
        let _ = writeln!(
            out,
            "<p>No change of driver, CUDA, NCCL, GPU model or clock policy in the period.</p>"
        );
    }
    if w.ledger.is_empty() && w.env_changes.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<table><tr><th>date</th><th>event</th><th>testbed</th><th>what</th><th>detail</th></tr>"
    );
    for (date, is_env, i) in timeline(w) {
        if is_env {
            let c = &w.env_changes[i];
            let near: Vec<String> = c.near.iter().map(|s| e(short(s))).collect();
            let _ = writeln!(
                out,
                "<tr><td>{date}</td><td><b>environment</b></td><td>{}</td><td>{}</td><td>{} → {} at {}; change points within 3 runs: {}</td></tr>",
                e(&c.testbed),
                c.field.as_str(),
                e(&c.before),
                e(&c.after),
                e(short(&c.commit)),
                if near.is_empty() {
                    "none".to_string()
                } else {
                    near.join(", ")
                }
            );
        } else {
            let g = &w.ledger[i];
            let testbeds: std::collections::BTreeSet<&str> =
                g.entries.iter().map(|x| x.testbed.as_str()).collect();
            let _ = writeln!(
                out,
                "<tr><td>{date}</td><td>change</td><td>{}</td><td>{}</td><td>{} {}, largest {}</td></tr>",
                e(&testbeds.into_iter().collect::<Vec<_>>().join(", ")),
                e(short(&g.first_bad)),
                g.entries.len(),
                plural(g.entries.len(), "benchmark", "benchmarks"),
                g.entries
                    .first()
                    .map_or("n/a".into(), |x| signed_pct(x.rel_change))
            );
        }
    }
    let _ = writeln!(out, "</table>");
}

fn methodology(out: &mut String, w: &Writeup) {
    let m = &w.methodology;
    let _ = writeln!(out, "<h2>Methodology</h2>\n<h3>Runners</h3>");
    if m.runners.is_empty() {
        let _ = writeln!(out, "<p>No runner measured in the period.</p>");
    } else {
        let _ = write!(out, "<table><tr>");
        for c in RUNNER_COLUMNS {
            let _ = write!(out, "<th>{c}</th>");
        }
        let _ = writeln!(out, "</tr>");
        for r in &m.runners {
            let _ = write!(out, "<tr>");
            for (i, c) in runner_row(r, e).iter().enumerate() {
                // The number of runs is a number: right-aligned.
                let class = if i == 1 { " class=\"n\"" } else { "" };
                let _ = write!(out, "<td{class}>{c}</td>");
            }
            let _ = writeln!(out, "</tr>");
        }
        let _ = writeln!(out, "</table>");
    }
    let _ = writeln!(
        out,
        "<h3>Noise and samples</h3>\n<p>Noise: the median over a suite's benchmarks of the coefficient of variation of the per-run medians within each segment. Samples: how many each benchmark had in each run, as stored.</p>\n<ul>"
    );
    let (noise, tests) = methodology_items(w, e, "&amp;");
    for item in noise {
        let _ = writeln!(out, "<li>{item}</li>");
    }
    let _ = writeln!(out, "</ul>\n<h3>Tests and thresholds</h3>\n<ul>");
    for item in tests {
        let _ = writeln!(out, "<li>{item}</li>");
    }
    let _ = writeln!(out, "</ul>");
}
