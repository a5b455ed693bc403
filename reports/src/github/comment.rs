//! The sticky pull-request comment: a hidden marker, a one-line verdict, the changed
//! benchmarks as a table, the rest folded, warnings, and a size bound that GitHub accepts.
//!
//! Everything that comes from the benchmarks (names, parameters, units, run labels, commit
//! subjects) is untrusted: it goes through the one Markdown escaper (`crate::markdown`), so
//! that it can neither split a table cell, open an HTML tag, start a code span or a link, nor
//! mention a user.

use pitwall_stats::ab::{RecordUse, Verdict};

use crate::compare::{
    ComparedBenchmark, ComparisonReport, change, interval, ordered, verdict_text,
};
use crate::markdown;
use pitwall_analysis::number::sig;

/// First line of every pitwall comment; the forge's `publish_comment` finds its earlier
/// comment by it.
pub use pitwall_schema::forge::MARKER;

/// GitHub refuses comment bodies longer than this many characters.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;

/// Longest piece of untrusted text shown in one place, in characters.
const MAX_CELL_CHARS: usize = 200;
/// Keys listed per "only in baseline" / "failed" line before "and N more".
const MAX_LISTED_KEYS: usize = 20;

/// How [`render_pr_comment`] renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentOptions {
    /// Link to the full (HTML) report, when one is published.
    pub report_url: Option<String>,
    /// How many samples were flagged throttled on either side.
    pub throttled_samples: usize,
    /// Upper bound on the body, in bytes (bytes ≥ characters, so it also bounds characters).
    pub max_bytes: usize,
}

impl Default for CommentOptions {
    fn default() -> Self {
        Self {
            report_url: None,
            throttled_samples: 0,
            max_bytes: GITHUB_COMMENT_LIMIT,
        }
    }
}

const TABLE_HEADER: &str = "| benchmark | baseline | candidate | change | ratio | interval | verdict |\n|---|---:|---:|---:|---:|---:|---|\n";

/// Markdown for the sticky PR comment; never longer than `opts.max_bytes`.
///
/// When the whole comparison does not fit, rows are dropped from the folded section first,
/// then from the changed table (worst regressions are kept longest), and a note says how many
/// benchmarks are not shown.
pub fn render_pr_comment(report: &ComparisonReport, opts: &CommentOptions) -> String {
    let (changed, rest): (Vec<&ComparedBenchmark>, Vec<&ComparedBenchmark>) =
        ordered(report).into_iter().partition(|b| {
            matches!(
                b.comparison.verdict,
                Verdict::Regression | Verdict::Improvement
            )
        });
    let changed_rows: Vec<String> = changed.iter().map(|b| row(b)).collect();
    let mut rest_rows: Vec<String> = rest.iter().map(|b| row(b)).collect();
    rest_rows.extend(report.identical.iter().map(identical_row));
    let identical = !report.identical.is_empty();
    let head = head(report, opts);
    let tail = tail(report, opts);
    let total = changed_rows.len() + rest_rows.len();

    // Room for the rows: everything else is fixed except the note, sized for the worst case.
    let fixed = head.len()
        + tail.len()
        + 2 * (TABLE_HEADER.len() + 1)
        + details_open(rest_rows.len(), identical).len()
        + DETAILS_CLOSE.len()
        + omitted_note(total, opts).len();
    let mut budget = opts.max_bytes.saturating_sub(fixed);
    let all_fit = changed_rows
        .iter()
        .chain(&rest_rows)
        .map(String::len)
        .sum::<usize>()
        + fixed
        - omitted_note(total, opts).len()
        <= opts.max_bytes;
    let take = |rows: &[String], budget: &mut usize| -> usize {
        let mut n = 0;
        for r in rows {
            if r.len() > *budget {
                break;
            }
            *budget -= r.len();
            n += 1;
        }
        n
    };
    let (n_changed, n_rest) = if all_fit {
        (changed_rows.len(), rest_rows.len())
    } else {
        let n_changed = take(&changed_rows, &mut budget);
        let n_rest = if n_changed == changed_rows.len() {
            take(&rest_rows, &mut budget)
        } else {
            0
        };
        (n_changed, n_rest)
    };

    let mut out = head;
    if n_changed > 0 {
        out.push_str(TABLE_HEADER);
        for r in &changed_rows[..n_changed] {
            out.push_str(r);
        }
        out.push('\n');
    }
    if n_rest > 0 {
        out.push_str(&details_open(rest_rows.len(), identical));
        out.push_str(TABLE_HEADER);
        for r in &rest_rows[..n_rest] {
            out.push_str(r);
        }
        out.push_str(DETAILS_CLOSE);
    }
    let hidden = total - n_changed - n_rest;
    if hidden > 0 {
        out.push_str(&omitted_note(hidden, opts));
    }
    out.push_str(&tail);
    clamp(out, opts.max_bytes)
}

const DETAILS_CLOSE: &str = "\n</details>\n\n";

fn details_open(n: usize, identical: bool) -> String {
    let what = if identical {
        "unchanged, inconclusive or identical"
    } else {
        "unchanged or inconclusive"
    };
    format!("<details><summary>{n} other benchmarks ({what})</summary>\n\n")
}

/// The row of code identical on both sides, not measured: no numbers, the verdict `identical`.
fn identical_row(e: &pitwall_analysis::identical::IdenticalEntry) -> String {
    format!(
        "| {} | - | - | - | - | - | {} |\n",
        code_cell(&e.shown()),
        e.verdict
    )
}

fn omitted_note(hidden: usize, opts: &CommentOptions) -> String {
    let see = match opts.report_url.as_deref().and_then(link_target) {
        Some(url) => format!("[the full report]({url})"),
        None => "the full report".to_string(),
    };
    format!("_… {hidden} more benchmarks not shown; see {see}._\n\n")
}

/// Marker, title, verdict line, warnings, sides.
fn head(r: &ComparisonReport, opts: &CommentOptions) -> String {
    let mut out = format!("{MARKER}\n### pitwall: benchmark comparison\n\n");
    out.push_str(&format!("**{}**\n\n", esc(&r.summary_line())));
    if let Some(time) = &r.time {
        out.push_str(&format!("{}\n\n", esc(&time.line())));
    }
    if !r.env_mismatch.is_empty() {
        let what = esc(&r.env_mismatch.join("; "));
        if r.incomparable {
            out.push_str(&format!(
                "> [!CAUTION]\n> **Incomparable:** the environments differ ({what}). The verdicts below do not count; hint: compare runs from the same machine setup, or pass `--allow-env-mismatch`.\n\n"
            ));
        } else {
            out.push_str(&format!(
                "> [!WARNING]\n> The environments differ ({what}).\n\n"
            ));
        }
    }
    if !r.contended.is_empty() {
        out.push_str(&format!(
            "> [!WARNING]\n> Measured on a contended machine: {}. The verdicts may be the load's, not the code's.\n\n",
            crate::markdown::text(&r.contended.join("; "))
        ));
    }
    if opts.throttled_samples > 0 {
        let n = opts.throttled_samples;
        out.push_str(&format!(
            "> [!WARNING]\n> {n} {} flagged as throttled (clock, power or thermal limits); those timings may be slow and the comparison less reliable.\n\n",
            if n == 1 { "sample was" } else { "samples were" }
        ));
    }
    if let Some(line) = r.replication_line() {
        out.push_str(&format!("> [!WARNING]\n> {}\n\n", esc(&line)));
    }
    out.push_str(&format!(
        "Baseline: {}<br>\nCandidate: {}<br>\nRounds: {}\n\n",
        esc(&r.baseline),
        esc(&r.candidate),
        esc(&r.rounds_text())
    ));
    out
}

/// Keys compared on one side only or failed, and the report link.
fn tail(r: &ComparisonReport, opts: &CommentOptions) -> String {
    let mut out = String::new();
    let why: Vec<String> = ordered(r)
        .into_iter()
        .filter_map(|b| {
            let reason = b.unobvious_reason()?;
            Some(format!("- {}: {}\n", code(&b.key()), esc(reason)))
        })
        .collect();
    if !why.is_empty() {
        out.push_str("Why (verdicts the interval alone does not explain):\n\n");
        for line in why.iter().take(MAX_LISTED_KEYS) {
            out.push_str(line);
        }
        if why.len() > MAX_LISTED_KEYS {
            out.push_str(&format!("- and {} more\n", why.len() - MAX_LISTED_KEYS));
        }
        out.push('\n');
    }
    out.push_str(&noise_lines(r));
    for (label, keys) in [
        ("Only in baseline", &r.only_baseline),
        ("Only in candidate", &r.only_candidate),
        ("Failed, not compared", &r.failed),
        ("Skipped by the tool", &r.skipped),
        ("Implausible, not compared", &r.implausible),
        ("Not compared, units or directions differ", &r.incompatible),
    ] {
        if keys.is_empty() {
            continue;
        }
        let mut list: Vec<String> = keys.iter().take(MAX_LISTED_KEYS).map(|k| code(k)).collect();
        if keys.len() > MAX_LISTED_KEYS {
            list.push(format!("and {} more", keys.len() - MAX_LISTED_KEYS));
        }
        out.push_str(&format!(
            "{label} ({}): {}\n\n",
            keys.len(),
            list.join(", ")
        ));
    }
    if let Some(url) = &opts.report_url {
        match link_target(url) {
            Some(target) => out.push_str(&format!("[Full report]({target})\n")),
            None => out.push_str(&format!("Full report: {}\n", code(url))),
        }
    }
    out
}

/// The benchmarks whose threshold `threshold_pct = "auto"` raised, by how much, and those
/// whose noise record was set aside because it disagreed with this pair.
fn noise_lines(r: &ComparisonReport) -> String {
    let mut out = String::new();
    let raised: Vec<String> = ordered(r)
        .into_iter()
        .filter_map(|b| {
            let from = b.threshold_raised_from_pct?;
            Some(format!(
                "{} ±{from:.1}% → ±{:.1}%",
                code(&b.key()),
                100.0 * b.comparison.threshold
            ))
        })
        .collect();
    let ignored: Vec<String> = ordered(r)
        .into_iter()
        .filter(|b| {
            matches!(
                b.comparison.noise_record,
                Some(RecordUse::Ignored { .. } | RecordUse::IgnoredAll { .. })
            )
        })
        .map(|b| code(&b.key()))
        .collect();
    for (label, list) in [
        (
            "Thresholds raised by noise (`threshold_pct = \"auto\"`: what the benchmark can resolve within its round budget)",
            raised,
        ),
        (
            "Noise record set aside (it disagreed with this pair's variance)",
            ignored,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let mut shown: Vec<String> = list.iter().take(MAX_LISTED_KEYS).cloned().collect();
        if list.len() > MAX_LISTED_KEYS {
            shown.push(format!("and {} more", list.len() - MAX_LISTED_KEYS));
        }
        out.push_str(&format!(
            "{label} ({}): {}\n\n",
            list.len(),
            shown.join(", ")
        ));
    }
    out
}

fn row(b: &ComparedBenchmark) -> String {
    let c = &b.comparison;
    let shown = crate::compare::display_unit(b);
    let unit = esc(shown.name());
    let verdict = match c.verdict {
        Verdict::Regression if !b.clock_explained() => "**regression**".to_string(),
        _ => esc(&verdict_text(b)),
    };
    format!(
        "| {} | {} {unit} | {} {unit} | {} | {}× | {} | {verdict} |\n",
        code_cell(&b.key()),
        shown.num(c.base_median),
        shown.num(c.cand_median),
        change(b),
        sig(c.ratio, 4),
        interval(b),
    )
}

/// An identifier (a benchmark key, a URL not linked) as a code span, cut to
/// `MAX_CELL_CHARS`, outside a table.
fn code(s: &str) -> String {
    markdown::code_span(&markdown::cut(s, MAX_CELL_CHARS))
}

/// An identifier as a code span in a table cell.
fn code_cell(s: &str) -> String {
    markdown::code_cell(&markdown::cut(s, MAX_CELL_CHARS))
}

/// Free text (summary lines, reasons, side labels, units) as escaped prose on one line, cut to
/// `MAX_CELL_CHARS`.
fn esc(s: &str) -> String {
    markdown::text(&markdown::cut(s, MAX_CELL_CHARS))
}

/// A link target for `[text](target)`, or `None` when `url` is not plain http(s).
fn link_target(url: &str) -> Option<String> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return None;
    }
    let mut out = String::with_capacity(url.len());
    for ch in url.chars() {
        match ch {
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '"' => out.push_str("%22"),
            '\'' => out.push_str("%27"),
            '`' => out.push_str("%60"),
            '\\' => out.push_str("%5C"),
            '|' => out.push_str("%7C"),
            '[' => out.push_str("%5B"),
            ']' => out.push_str("%5D"),
            c if c.is_whitespace() || c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// Last resort when even the fixed parts exceed `max`: cut at a character boundary.
fn clamp(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    const CUT: &str = "\n\n_… cut to fit GitHub's comment limit._\n";
    let mut end = max.saturating_sub(CUT.len());
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    if s.len() + CUT.len() <= max {
        s.push_str(CUT);
    }
    s
}
