//! The quarterly write-up (`pitwall writeup`) rendered: paste-ready GitHub-flavoured Markdown
//! (`markdown`) and a self-contained HTML page with inline SVG charts (`html`), both from the
//! one `pitwall_analysis::writeup::Writeup`, both escaping every text that comes from data
//! (benchmark names, notes, commit subjects, authors, host names).

mod html;
mod markdown;
#[cfg(test)]
mod tests;

pub use html::render_html;
pub use markdown::render_markdown;

use pitwall_analysis::writeup::{
    CommitMeta, EnvField, LedgerEntry, LedgerGroup, Runner, SuiteSummary, Writeup,
};

/// The escaping of one output format, applied to every text that comes from data.
type Escape = fn(&str) -> String;

/// The columns of a ledger group's table, in order.
const LEDGER_COLUMNS: [&str; 8] = [
    "benchmark",
    "testbed",
    "kind",
    "change of the value",
    "95% interval",
    "alert",
    "status",
    "note",
];

/// The columns of the methodology's runner table, in order.
const RUNNER_COLUMNS: [&str; 9] = [
    "testbed", "runs", "host", "CPU", "GPU", "driver", "CUDA", "NCCL", "clocks",
];

/// The cells of a runner's row, escaped, in `RUNNER_COLUMNS` order.
fn runner_row(r: &Runner, esc: Escape) -> [String; 9] {
    let v = |f: EnvField| esc(env_value(&r.env, f));
    [
        esc(&r.testbed),
        r.runs.to_string(),
        esc(&r.hostname),
        esc(&r.cpu_model),
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
fn methodology_items(w: &Writeup, esc: Escape, amp: &str) -> (Vec<String>, Vec<String>) {
    let m = &w.methodology;
    let noise = w
        .summaries
        .iter()
        .map(|s| {
            format!(
                "{} on {}: {}",
                esc(&s.suite),
                esc(&s.testbed),
                noise_and_samples(s)
            )
        })
        .collect();
    let mut tests: Vec<String> = m
        .settings
        .iter()
        .map(|(name, value)| format!("{}: {}", esc(name), esc(value)))
        .collect();
    let mut thresholds = format!("thresholds: {}% (compare's threshold)", m.threshold_pct);
    for (suite, pct) in &m.suite_threshold_pct {
        thresholds.push_str(&format!("; {}: {pct}%", esc(suite)));
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
fn ledger_heading(g: &LedgerGroup, esc: Escape) -> String {
    let title = g
        .commit
        .as_ref()
        .map(|c| format!(": {}", esc(&commit_title(c))))
        .unwrap_or_default();
    format!("{} · {}{}", group_day(g), esc(short(&g.first_bad)), title)
}

/// The line under a group's heading: its commit range, author, bisected culprit and size.
fn ledger_commits(g: &LedgerGroup, esc: Escape) -> String {
    let mut line = format!(
        "Commits {}..{}",
        esc(short(&g.last_good)),
        esc(short(&g.first_bad))
    );
    if let Some(c) = &g.commit {
        line.push_str(&format!(" · author {}", esc(&c.author)));
    }
    if let Some(c) = &g.culprit {
        line.push_str(&format!(" · culprit (bisected) {}", esc(short(&c.sha))));
        if !c.subject.is_empty() {
            line.push_str(&format!(" {}", esc(&c.subject)));
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
fn ledger_row(x: &LedgerEntry, esc: Escape) -> [String; 8] {
    let (id, status, note) = match &x.alert {
        Some(a) => (
            esc(&a.id),
            a.status.as_str().to_string(),
            a.note.as_deref().map(esc).unwrap_or_default(),
        ),
        None if x.beyond_threshold => ("—".into(), "no alert stored".into(), String::new()),
        None => ("—".into(), "below threshold".into(), String::new()),
    };
    [
        esc(&x.key),
        esc(&x.testbed),
        x.kind.as_str().to_string(),
        signed_pct(x.rel_change),
        interval(x.ci),
        id,
        status,
        note,
    ]
}

/// Characters of a commit id shown.
const SHORT_SHA: usize = 10;

/// A signed percentage with one decimal (`+4.2%`, `-10.0%`).
/// `one` for one, `many` otherwise (`plural(n, "entry", "entries")`, `plural(n, "", "s")`).
fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

fn signed_pct(fraction: f64) -> String {
    if !fraction.is_finite() {
        return "n/a".into();
    }
    let v = fraction * 100.0;
    // No "-0.0%": a change that rounds to nothing has no sign.
    if v.abs() < 0.05 {
        "0.0%".into()
    } else {
        format!("{v:+.1}%")
    }
}

/// `lo … hi` of an interval of fractions, signed percentages.
fn interval(ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((lo, hi)) => format!("{} … {}", signed_pct(lo), signed_pct(hi)),
        None => "n/a".into(),
    }
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

/// The events of the period in date order: each ledger group and each environment change,
/// as (day, is environment, index into `ledger` or `env_changes`).
fn timeline(w: &Writeup) -> Vec<(String, bool, usize)> {
    let mut out: Vec<(String, bool, usize)> = w
        .ledger
        .iter()
        .enumerate()
        .map(|(i, g)| (group_day(g).to_string(), false, i))
        .collect();
    for (i, c) in w.env_changes.iter().enumerate() {
        let date = w
            .ledger
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
