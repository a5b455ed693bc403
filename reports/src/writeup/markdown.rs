//! The write-up as GitHub-flavoured Markdown, ready to paste into an issue, a wiki page or a
//! document: every text from data through the one Markdown escaper (`crate::markdown`:
//! identifiers in code spans, free text backslash-escaped, mentions and references in code
//! spans), so a benchmark name or a note cannot open a table cell, a link or HTML, or ping
//! anyone. The headline names confirmed steps only; suspected steps and steps from contended
//! runs have their own section.

use std::fmt::Write;

use pitwall_analysis::number::with_unit;
use pitwall_analysis::writeup::{BenchChange, LedgerGroup, SuiteSummary, Writeup};
use pitwall_schema::Direction;

use super::{
    APART_COLUMNS, LEDGER_COLUMNS, MARKDOWN, RUNNER_COLUMNS, apart_row, change_words, day,
    headline, interval, ledger_commits, ledger_heading, ledger_row, methodology_items, plural,
    runner_row, short, text_sparkline, timeline,
};
use crate::markdown::{code_cell, code_span, text};

/// The whole write-up as Markdown.
pub fn render_markdown(w: &Writeup) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Performance write-up, {} to {}\n",
        date(&w.period.from),
        date(&w.period.to)
    );
    let confirmed = w.confirmed();
    let apart = w.listed_apart();
    let _ = writeln!(
        out,
        "Branch {}: {} history run{} with commits in the period, {} change point{} or alert{} in the ledger, {} listed apart, {} environment change{}. Drafted by pitwall from its stored history.\n",
        code_span(&w.branch),
        w.runs_in_period,
        plural(w.runs_in_period, "", "s"),
        confirmed.len(),
        plural(confirmed.len(), "", "s"),
        plural(confirmed.len(), "", "s"),
        apart.len(),
        w.env_changes.len(),
        plural(w.env_changes.len(), "", "s"),
    );
    let _ = writeln!(out, "## Headline\n");
    for item in headline(w, MARKDOWN) {
        let _ = writeln!(out, "- {item}");
    }
    let _ = writeln!(out);
    summary(&mut out, w);
    ledger(&mut out, &confirmed);
    listed_apart(&mut out, &apart);
    environment(&mut out, w, &confirmed);
    methodology(&mut out, w);
    out
}

/// A day as it is (`2026-01-21`) when it is one, else escaped text.
fn date(d: &str) -> String {
    if pitwall_analysis::writeup::parse_date(d).is_some() {
        d.to_string()
    } else {
        text(d)
    }
}

fn summary(out: &mut String, w: &Writeup) {
    let _ = writeln!(out, "## Executive summary\n");
    if w.summaries.is_empty() {
        let _ = writeln!(
            out,
            "No benchmark was measured on a commit of this period: nothing to summarise.\n"
        );
        return;
    }
    let _ = writeln!(
        out,
        "Change from the start of the period to its end: each benchmark's level in its first and last segment (between change points) within the period. A time \"X% slower\" is its start × (1 + X/100), \"X% faster\" its start × (1 − X/100); a throughput is \"X% higher\" or \"lower\". The geomean combines the benchmarks' changes of time (a throughput's as its time per unit) as a geometric mean with a 95% bootstrap interval over benchmarks.\n"
    );
    let _ = writeln!(
        out,
        "| suite | testbed | benchmarks | geomean change | 95% interval | regressions | improvements | trend (time) |"
    );
    let _ = writeln!(out, "|---|---|--:|--:|---|--:|--:|---|");
    for s in &w.summaries {
        let trend: Vec<f64> = s.trend.iter().map(|t| t.relative).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            code_cell(&s.suite),
            code_cell(&s.testbed),
            s.benchmarks.len(),
            change_words(s.geomean_change, Direction::LowerIsBetter),
            interval(s.ci, Direction::LowerIsBetter),
            s.regressions,
            s.improvements,
            text_sparkline(&trend)
        );
    }
    let _ = writeln!(out);
    for s in &w.summaries {
        suite_details(out, s);
    }
}

fn suite_details(out: &mut String, s: &SuiteSummary) {
    let _ = writeln!(
        out,
        "### {} on {}\n",
        code_span(&s.suite),
        code_span(&s.testbed)
    );
    let _ = writeln!(
        out,
        "Threshold {}%; a regression or improvement is a change beyond it.\n",
        s.threshold_pct
    );
    for (title, list) in [
        ("Largest regressions", &s.worst),
        ("Largest improvements", &s.best),
    ] {
        if list.is_empty() {
            let _ = writeln!(out, "{title}: none.\n");
            continue;
        }
        let _ = writeln!(out, "{title}:\n");
        for b in list {
            let _ = writeln!(
                out,
                "- {} ({}): {} → {}, {}",
                code_span(&b.label),
                text(&b.measure),
                text(&with_unit(b.first_level, &b.unit)),
                text(&with_unit(b.last_level, &b.unit)),
                change_words(b.rel_change, b.direction)
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "<details><summary>Every benchmark ({})</summary>\n",
        s.benchmarks.len()
    );
    let _ = writeln!(out, "| benchmark | start | end | change | in the period |");
    let _ = writeln!(out, "|---|--:|--:|--:|---|");
    for b in &s.benchmarks {
        bench_row(out, b);
    }
    let _ = writeln!(out, "\n</details>\n");
}

fn bench_row(out: &mut String, b: &BenchChange) {
    let _ = writeln!(
        out,
        "| {} ({}) | {} | {} | {} | {} |",
        code_cell(&b.label),
        text(&b.measure),
        text(&with_unit(b.first_level, &b.unit)),
        text(&with_unit(b.last_level, &b.unit)),
        change_words(b.rel_change, b.direction),
        text_sparkline(&b.medians)
    );
}

fn ledger(out: &mut String, confirmed: &[LedgerGroup]) {
    let _ = writeln!(out, "## Ledger\n");
    if confirmed.is_empty() {
        let _ = writeln!(out, "No change point and no alert in the period.\n");
        return;
    }
    for g in confirmed {
        group(out, g);
    }
}

fn group(out: &mut String, g: &LedgerGroup) {
    let _ = writeln!(out, "### {}\n", ledger_heading(g, MARKDOWN));
    let _ = writeln!(out, "{}\n", ledger_commits(g, MARKDOWN));
    let _ = writeln!(out, "| {} |", LEDGER_COLUMNS.join(" | "));
    let _ = writeln!(out, "|---|---|---|--:|---|---|---|---|");
    for x in &g.entries {
        let _ = writeln!(out, "| {} |", ledger_row(x, MARKDOWN).join(" | "));
    }
    let _ = writeln!(out);
}

/// The steps that count nowhere above: suspected, or found in contended runs.
fn listed_apart(out: &mut String, apart: &[LedgerGroup]) {
    if apart.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Listed apart: suspected steps and contended runs\n");
    let _ = writeln!(
        out,
        "Steps not yet confirmed (too few runs after them) or found in runs taken while other work shared the machine. They are in neither the headline nor the ledger.\n"
    );
    let _ = writeln!(out, "| {} |", APART_COLUMNS.join(" | "));
    let _ = writeln!(out, "|---|---|---|---|--:|---|");
    for g in apart {
        for x in &g.entries {
            let _ = writeln!(out, "| {} |", apart_row(g, x, MARKDOWN).join(" | "));
        }
    }
    let _ = writeln!(out);
}

fn environment(out: &mut String, w: &Writeup, confirmed: &[LedgerGroup]) {
    let _ = writeln!(out, "## Environment changes\n");
    if w.env_changes.is_empty() {
        let _ = writeln!(
            out,
            "No change of driver, CUDA, NCCL, GPU model or clock policy in the period.\n"
        );
    } else {
        let _ = writeln!(
            out,
            "| date | testbed | what | before | after | commit | change points within 3 runs |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|");
        for c in &w.env_changes {
            let near: Vec<String> = c.near.iter().map(|s| code_cell(short(s))).collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                date(day(&c.date)),
                code_cell(&c.testbed),
                c.field.as_str(),
                text(&c.before),
                text(&c.after),
                code_cell(short(&c.commit)),
                if near.is_empty() {
                    "none".to_string()
                } else {
                    near.join(", ")
                }
            );
        }
        let _ = writeln!(out);
    }
    if confirmed.is_empty() && w.env_changes.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Timeline\n");
    for (date, is_env, i) in timeline(w, confirmed) {
        let date = self::date(&date);
        if is_env {
            let c = &w.env_changes[i];
            let _ = writeln!(
                out,
                "- {date} · environment · {} on {}: {} → {}",
                c.field.as_str(),
                code_span(&c.testbed),
                text(&c.before),
                text(&c.after)
            );
        } else {
            let g = &confirmed[i];
            let _ = writeln!(
                out,
                "- {date} · change · {}: {} benchmark{}, largest {}",
                code_span(short(&g.first_bad)),
                g.entries.len(),
                plural(g.entries.len(), "", "s"),
                g.entries
                    .first()
                    .map_or("n/a".into(), |x| change_words(x.rel_change, x.direction))
            );
        }
    }
    let _ = writeln!(out);
}

fn methodology(out: &mut String, w: &Writeup) {
    let m = &w.methodology;
    let _ = writeln!(out, "## Methodology\n");
    let _ = writeln!(out, "### Runners\n");
    if m.runners.is_empty() {
        let _ = writeln!(out, "No runner measured in the period.\n");
    } else {
        let _ = writeln!(out, "| {} |", RUNNER_COLUMNS.join(" | "));
        let _ = writeln!(out, "|---|--:|---|---|---|---|---|---|---|");
        for r in &m.runners {
            let _ = writeln!(out, "| {} |", runner_row(r, MARKDOWN).join(" | "));
        }
        let _ = writeln!(out);
    }
    let (noise, tests) = methodology_items(w, MARKDOWN, "&");
    let _ = writeln!(out, "### Noise and samples\n");
    if w.summaries.is_empty() {
        let _ = writeln!(out, "No measurements in the period.\n");
    } else {
        let _ = writeln!(
            out,
            "Noise: the median over a suite's benchmarks of the coefficient of variation of the per-run medians within each segment (run-to-run noise, steps left out). Samples: how many each benchmark had in each run, as stored.\n"
        );
        for item in noise {
            let _ = writeln!(out, "- {item}");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "### Tests and thresholds\n");
    for item in tests {
        let _ = writeln!(out, "- {item}");
    }
}
