//! The quarterly write-up (`pitwall writeup`) rendered: paste-ready GitHub-flavoured Markdown
//! (`markdown`) and a self-contained HTML page with inline SVG charts (`html`), both from the
//! one `pitwall_analysis::writeup::Writeup`, both escaping every text that comes from data
//! (benchmark names, notes, commit subjects, authors, host names; Markdown through the one
//! escaper, `crate::markdown`), both saying every change in the same words ([`change_words`]:
//! a time "X% faster" or "slower", a throughput "X% higher" or "lower", of the value's relative
//! change) in the headline, the summary, the ledger and the timeline.

mod html;
mod markdown;
#[cfg(test)]
mod tests;

pub use html::render_html;
pub use markdown::render_markdown;

use pitwall_analysis::writeup::{
    CommitMeta, EnvField, LedgerEntry, LedgerGroup, Runner, SuiteSummary, Writeup,
};
use pitwall_schema::Direction;

/// The escaping of one output format, applied to every text that comes from data.
type Escape = fn(&str) -> String;

/// How one output format escapes each kind of text from data.
#[derive(Clone, Copy)]
struct Escapes {
    /// An identifier (benchmark key, suite, testbed, branch, commit id, alert id) in running
    /// text, a list item or a heading.
    id: Escape,
    /// An identifier in a table cell.
    cell: Escape,
    /// Free text: commit subjects and titles, authors, notes, environment values.
    text: Escape,
}

/// Markdown's: identifiers in code spans, free text backslash-escaped (`crate::markdown`).
const MARKDOWN: Escapes = Escapes {
    id: crate::markdown::code_span,
    cell: crate::markdown::code_cell,
    text: crate::markdown::text,
};

/// The columns of a ledger group's table, in order.
const LEDGER_COLUMNS: [&str; 8] = [
    "benchmark",
    "testbed",
    "kind",
    "change",
    "95% interval",
    "alert",
    "status",
    "note",
];

/// The columns of the table of steps listed apart, in order.
const APART_COLUMNS: [&str; 6] = [
    "standing",
    "benchmark",
    "testbed",
    "commits",
    "change",
    "95% interval",
];

/// How many confirmed steps the headline names, largest first.
const HEADLINE_STEPS: usize = 3;

/// A relative change of a value (after/before − 1) in the write-up's words: a time (lower is
/// better) `X% slower` when it is × (1 + X/100), `X% faster` when × (1 − X/100); a throughput
/// `X% higher` or `X% lower`; `no change` under 0.05%.
fn change_words(rel: f64, direction: Direction) -> String {
    if !rel.is_finite() {
        return "n/a".into();
    }
    let pct = rel.abs() * 100.0;
    if pct < 0.05 {
        return "no change".into();
    }
    let word = match (direction, rel < 0.0) {
        (Direction::LowerIsBetter, true) => "faster",
        (Direction::LowerIsBetter, false) => "slower",
        (Direction::HigherIsBetter, true) => "lower",
        (Direction::HigherIsBetter, false) => "higher",
    };
    format!("{pct:.1}% {word}")
}

/// An interval of relative changes in the same words (`12.0% faster to 2.0% faster`).
fn interval(ci: Option<(f64, f64)>, direction: Direction) -> String {
    match ci {
        Some((lo, hi)) => format!(
            "{} to {}",
            change_words(lo, direction),
            change_words(hi, direction)
        ),
        None => "n/a".into(),
    }
}

/// The headline's items: each suite's geometric mean as the summary gives it, the largest
/// confirmed steps beyond their threshold as the ledger gives them, and how many steps are
/// listed apart (suspected, or from contended runs), which count nowhere in it.
fn headline(w: &Writeup, esc: Escapes) -> Vec<String> {
    let mut items: Vec<String> = w
        .summaries
        .iter()
        .map(|s| {
            format!(
                "{} on {}: geomean {} over {} benchmark{} (95% interval {})",
                (esc.id)(&s.suite),
                (esc.id)(&s.testbed),
                change_words(s.geomean_change, Direction::LowerIsBetter),
                s.benchmarks.len(),
                plural(s.benchmarks.len(), "", "s"),
                interval(s.ci, Direction::LowerIsBetter)
            )
        })
        .collect();
    let confirmed = w.confirmed();
    let mut steps: Vec<(&LedgerGroup, &LedgerEntry)> = confirmed
        .iter()
        .flat_map(|g| g.entries.iter().map(move |x| (g, x)))
        .filter(|(_, x)| x.beyond_threshold)
        .collect();
    steps.sort_by(|a, b| b.1.rel_change.abs().total_cmp(&a.1.rel_change.abs()));
    for (g, x) in steps.iter().take(HEADLINE_STEPS) {
        let title = g
            .commit
            .as_ref()
            .map(|c| format!(" ({})", (esc.text)(&commit_title(c))))
            .unwrap_or_default();
        items.push(format!(
            "{} on {}: {} at {}{title}",
            (esc.id)(&x.key),
            (esc.id)(&x.testbed),
            change_words(x.rel_change, x.direction),
            (esc.id)(short(&g.first_bad)),
        ));
    }
    if steps.is_empty() {
        items.push("no confirmed step beyond its threshold in the period".into());
    }
    let apart: usize = w.listed_apart().iter().map(|g| g.entries.len()).sum();
    if apart > 0 {
        items.push(format!(
            "{apart} step{} suspected or from contended runs, listed apart and counted nowhere here",
            plural(apart, "", "s")
        ));
    }
    items
}

/// The cells of a step listed apart, in `APART_COLUMNS` order.
fn apart_row(g: &LedgerGroup, x: &LedgerEntry, esc: Escapes) -> [String; 6] {
    [
        x.standing.as_str().to_string(),
        (esc.cell)(&x.key),
        (esc.cell)(&x.testbed),
        format!(
            "{}..{}",
            (esc.cell)(short(&g.last_good)),
            (esc.cell)(short(&g.first_bad))
        ),
        change_words(x.rel_change, x.direction),
        interval(x.ci, x.direction),
    ]
}

/// The columns of the methodology's runner table, in order.
const RUNNER_COLUMNS: [&str; 9] = [
    "testbed", "runs", "host", "CPU", "GPU", "driver", "CUDA", "NCCL", "clocks",
];

/// The cells of a runner's row, escaped, in `RUNNER_COLUMNS` order.
fn runner_row(r: &Runner, esc: Escapes) -> [String; 9] {
    let v = |f: EnvField| (esc.text)(env_value(&r.env, f));
    [
        (esc.cell)(&r.testbed),
        r.runs.to_string(),
        (esc.cell)(&r.hostname),
        (esc.text)(&r.cpu_model),
        v(EnvField::GpuModel),
        v(EnvField::Driver),
        v(EnvField::Cuda),
        v(EnvField::Nccl),
        v(EnvField::ClockPolicy),
    ]
}

/// The methodology's items as they are listed, escaped with `esc`: per suite and testbed its
/// noise and samples, then the tests and thresholds (`amp`: how the format writes `&` in the
/// fixed text).
fn methodology_items(w: &Writeup, esc: Escapes, amp: &str) -> (Vec<String>, Vec<String>) {
    let m = &w.methodology;
    let noise = w
        .summaries
        .iter()
        .map(|s| {
            format!(
                "{} on {}: {}",
                (esc.id)(&s.suite),
                (esc.id)(&s.testbed),
                noise_and_samples(s)
            )
        })
        .collect();
    let mut tests: Vec<String> = m
        .settings
        .iter()
        .map(|(name, value)| format!("{}: {}", (esc.text)(name), (esc.text)(value)))
        .collect();
    let mut thresholds = format!("thresholds: {}% (compare's threshold)", m.threshold_pct);
    for (suite, pct) in &m.suite_threshold_pct {
        thresholds.push_str(&format!("; {}: {pct}%", (esc.id)(suite)));
    }
    tests.push(thresholds);
    tests.push(format!(
        "intervals: percentile bootstrap (Efron {amp} Tibshirani 1993, §13.3), {} resamples, {}% level, fixed seed; of a step: the ratio of the medians of the segments around it; of a geomean: the benchmarks resampled",
        m.resamples,
        m.level * 100.0
    ));
    (noise, tests)
}

/// A ledger group's heading: `2026-01-10 · 1edf08b8ac: PR #42: Swap the allocator`.
fn ledger_heading(g: &LedgerGroup, esc: Escapes) -> String {
    let title = g
        .commit
        .as_ref()
        .map(|c| format!(": {}", (esc.text)(&commit_title(c))))
        .unwrap_or_default();
    format!(
        "{} · {}{}",
        group_day(g),
        (esc.id)(short(&g.first_bad)),
        title
    )
}

/// The line under a group's heading: its commit range, author, bisected culprit and size.
fn ledger_commits(g: &LedgerGroup, esc: Escapes) -> String {
    let mut line = format!(
        "Commits {}..{}",
        (esc.id)(short(&g.last_good)),
        (esc.id)(short(&g.first_bad))
    );
    if let Some(c) = &g.commit {
        line.push_str(&format!(" · author {}", (esc.text)(&c.author)));
    }
    if let Some(c) = &g.culprit {
        line.push_str(&format!(
            " · culprit (bisected) {}",
            (esc.id)(short(&c.sha))
        ));
        if !c.subject.is_empty() {
            line.push_str(&format!(" {}", (esc.text)(&c.subject)));
        }
    }
    let n = g.entries.len();
    line.push_str(&format!(
        " · {n} benchmark{}",
        if n == 1 { "" } else { "s" }
    ));
    line
}

/// The cells of a ledger row, escaped, in `LEDGER_COLUMNS` order.
fn ledger_row(x: &LedgerEntry, esc: Escapes) -> [String; 8] {
    let (id, status, note) = match &x.alert {
        Some(a) => (
            (esc.cell)(&a.id),
            a.status.as_str().to_string(),
            a.note.as_deref().map(esc.text).unwrap_or_default(),
        ),
        None if x.beyond_threshold => ("—".into(), "no alert stored".into(), String::new()),
        None => ("—".into(), "below threshold".into(), String::new()),
    };
    [
        (esc.cell)(&x.key),
        (esc.cell)(&x.testbed),
        x.kind.as_str().to_string(),
        change_words(x.rel_change, x.direction),
        interval(x.ci, x.direction),
        id,
        status,
        note,
    ]
}

/// Characters of a commit id shown.
const SHORT_SHA: usize = 10;

/// `one` for one, `many` otherwise (`plural(n, "entry", "entries")`, `plural(n, "", "s")`).
fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// What the methodology says of a suite's noise and of the samples its points had (numbers
/// only: the caller escapes the suite and testbed names around it).
fn noise_and_samples(s: &SuiteSummary) -> String {
    let noise = s.noise_cv.map_or("noise n/a (too few runs)".into(), |c| {
        format!("noise {:.2}%", c * 100.0)
    });
    match s.samples_per_point {
        Some(n) if n.min == n.max => format!("{noise}; {} samples per benchmark and run", n.median),
        Some(n) => format!(
            "{noise}; {} samples per benchmark and run (median; {}–{})",
            n.median, n.min, n.max
        ),
        None => noise,
    }
}

fn short(sha: &str) -> &str {
    sha.get(..SHORT_SHA).unwrap_or(sha)
}

/// The day of an RFC 3339 time (`2026-01-21`), or `?`.
fn day(date: &str) -> &str {
    date.get(..10).unwrap_or("?")
}

/// When a ledger group's first bad commit was made.
fn group_day(g: &LedgerGroup) -> &str {
    day(&g.date)
}

/// `#12 title` of a commit's pull request, or its subject (unescaped).
fn commit_title(c: &CommitMeta) -> String {
    match &c.pr {
        Some(pr) => format!("PR #{}: {}", pr.number, pr.title),
        None => c.subject.clone(),
    }
}

/// Smallest vertical range of a chart, as a fraction of its middle value: a benchmark that
/// moved less than this in the period draws as nearly flat, not as its noise blown up.
const MIN_SPAN_FRACTION: f64 = 0.02;

/// The range a chart of `values` spans: theirs, widened around its middle to at least
/// `MIN_SPAN_FRACTION` of it (and to something for all-zero values).
fn chart_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let mid = (lo + hi) / 2.0;
    let half = ((hi - lo) / 2.0)
        .max(mid.abs() * MIN_SPAN_FRACTION / 2.0)
        .max(1e-12);
    (mid - half, mid + half)
}

/// Unicode block sparkline of `values` (at most 40 characters: bucket means beyond).
fn text_sparkline(values: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    const WIDTH: usize = 40;
    let n = values.len();
    if n == 0 {
        return String::new();
    }
    let buckets = n.min(WIDTH);
    let v: Vec<f64> = (0..buckets)
        .map(|b| {
            let (lo, hi) = (
                b * n / buckets,
                ((b + 1) * n / buckets).max(b * n / buckets + 1),
            );
            values[lo..hi].iter().sum::<f64>() / (hi - lo) as f64
        })
        .collect();
    let (min, max) = chart_range(v.iter().copied());
    v.iter()
        .map(|x| BARS[(((x - min) / (max - min)) * 7.0).round().clamp(0.0, 7.0) as usize])
        .collect()
}

/// The events of the period in date order: each group of `ledger` (the confirmed steps) and
/// each environment change, as (day, is environment, index into `ledger` or `env_changes`).
fn timeline(w: &Writeup, ledger: &[LedgerGroup]) -> Vec<(String, bool, usize)> {
    let mut out: Vec<(String, bool, usize)> = ledger
        .iter()
        .enumerate()
        .map(|(i, g)| (group_day(g).to_string(), false, i))
        .collect();
    for (i, c) in w.env_changes.iter().enumerate() {
        let date = ledger
            .iter()
            .find(|g| g.first_bad == c.commit)
            .map(|g| group_day(g).to_string())
            .unwrap_or_else(|| day(&c.date).to_string());
        out.push((date, true, i));
    }
    out.sort();
    out
}

/// The runner column values of one field.
fn env_value(env: &pitwall_analysis::writeup::EnvState, field: EnvField) -> &str {
    env.0.get(&field).map_or("—", String::as_str)
}
