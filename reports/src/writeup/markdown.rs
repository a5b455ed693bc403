//! The write-up as GitHub-flavoured Markdown, ready to paste into an issue, a wiki page or a
//! document: every text from data through `github::escape_text`, so a benchmark name or a note
//! cannot open a table cell, a link or HTML.

use std::fmt::Write;

use pitwall_analysis::number::with_unit;
use pitwall_analysis::writeup::{BenchChange, LedgerGroup, SuiteSummary, Writeup};

use super::{
    LEDGER_COLUMNS, RUNNER_COLUMNS, day, interval, ledger_commits, ledger_heading, ledger_row,
    methodology_items, plural, runner_row, short, signed_pct, text_sparkline, timeline,
};
use crate::github::escape_text as e;

/// The whole write-up as Markdown.
pub fn render_markdown(w: &Writeup) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Performance write-up, {} to {}\n",
        e(&w.period.from),
        e(&w.period.to)
    );
    let _ = writeln!(
        out,
        "Branch {}: {} history run{} with commits in the period, {} change point{} or alert{} in the ledger, {} environment change{}. Drafted by pitwall from its stored history.\n",
        e(&w.branch),
        w.runs_in_period,
        plural(w.runs_in_period, "", "s"),
        w.ledger.len(),
        plural(w.ledger.len(), "", "s"),
        plural(w.ledger.len(), "", "s"),
        w.env_changes.len(),
        plural(w.env_changes.len(), "", "s"),
    );
    summary(&mut out, w);
    ledger(&mut out, w);
    environment(&mut out, w);
    methodology(&mut out, w);
    out
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
        "Change from the start of the period to its end: each benchmark's level in its first and last segment (between change points) within the period, as a speedup (positive: faster or higher throughput), combined as a geometric mean with a 95% bootstrap interval over benchmarks.\n"
    );
    let _ = writeln!(
        out,
        "| suite | testbed | benchmarks | geomean speedup | 95% interval | regressions | improvements | trend |"
    );
    let _ = writeln!(out, "|---|---|--:|--:|---|--:|--:|---|");
    for s in &w.summaries {
        let trend: Vec<f64> = s.trend.iter().map(|t| t.relative).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            e(&s.suite),
            e(&s.testbed),
            s.benchmarks.len(),
            signed_pct(s.geomean_speedup),
            interval(s.ci),
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
    let _ = writeln!(out, "### {} on {}\n", e(&s.suite), e(&s.testbed));
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
                e(&b.label),
                e(&b.measure),
                e(&with_unit(b.first_level, &b.unit)),
                e(&with_unit(b.last_level, &b.unit)),
                signed_pct(b.speedup)
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "<details><summary>Every benchmark ({})</summary>\n",
        s.benchmarks.len()
    );
    let _ = writeln!(out, "| benchmark | start | end | speedup | in the period |");
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
        e(&b.label),
        e(&b.measure),
        e(&with_unit(b.first_level, &b.unit)),
        e(&with_unit(b.last_level, &b.unit)),
        signed_pct(b.speedup),
        text_sparkline(&b.medians)
    );
}

fn ledger(out: &mut String, w: &Writeup) {
    let _ = writeln!(out, "## Ledger\n");
    if w.ledger.is_empty() {
        let _ = writeln!(out, "No change point and no alert in the period.\n");
        return;
    }
    for g in &w.ledger {
        group(out, g);
    }
}

fn group(out: &mut String, g: &LedgerGroup) {
    let _ = writeln!(out, "### {}\n", ledger_heading(g, e));
    let _ = writeln!(out, "{}\n", ledger_commits(g, e));
    let _ = writeln!(out, "| {} |", LEDGER_COLUMNS.join(" | "));
    let _ = writeln!(out, "|---|---|---|--:|---|---|---|---|");
    for x in &g.entries {
        let _ = writeln!(out, "| {} |", ledger_row(x, e).join(" | "));
    }
    let _ = writeln!(out);
}

fn environment(out: &mut String, w: &Writeup) {
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
            let near: Vec<String> = c.near.iter().map(|s| e(short(s))).collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                day(&c.date),
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
        }
        let _ = writeln!(out);
    }
    if w.ledger.is_empty() && w.env_changes.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Timeline\n");
    for (date, is_env, i) in timeline(w) {
        if is_env {
            let c = &w.env_changes[i];
            let _ = writeln!(
                out,
                "- {date} · environment · {} on {}: {} → {}",
                c.field.as_str(),
                e(&c.testbed),
                e(&c.before),
                e(&c.after)
            );
        } else {
            let g = &w.ledger[i];
            let _ = writeln!(
                out,
                "- {date} · change · {}: {} benchmark{}, largest {}",
                e(short(&g.first_bad)),
                g.entries.len(),
                plural(g.entries.len(), "", "s"),
                g.entries
                    .first()
                    .map_or("n/a".into(), |x| signed_pct(x.rel_change))
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
            let _ = writeln!(out, "| {} |", runner_row(r, e).join(" | "));
        }
        let _ = writeln!(out);
    }
    let (noise, tests) = methodology_items(w, e, "&");
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
