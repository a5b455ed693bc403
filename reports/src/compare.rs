//! Rendering of an A/B comparison (`pitwall compare`): a table for terminals, JSON for
//! machines and Markdown for pull-request comments. A simple verdict first, details after.

use pitwall_analysis::order::bench_cmp;
use pitwall_stats::ab::Verdict;
use serde::Serialize;

pub(crate) use pitwall_analysis::comparison::change;
use pitwall_analysis::comparison::signed_pct;
pub use pitwall_analysis::comparison::{ComparedBenchmark, ComparisonReport, VerdictCounts};

use crate::markdown as md;
use crate::table::Table;
use pitwall_analysis::identical::{IdenticalEntry, PairTime};
use pitwall_analysis::number::{DisplayUnit, sig};

pub(crate) fn interval(b: &ComparedBenchmark) -> String {
    let (lo, hi) = b.comparison.ci;
    format!("[{}, {}]", signed_pct(lo - 1.0), signed_pct(hi - 1.0))
}

fn p_value(p: f64) -> String {
    if p < 1e-4 {
        "<0.0001".to_string()
    } else {
        sig(p, 2)
    }
}

/// Terminal table: every benchmark, regressions first.
pub fn render_table(r: &ComparisonReport) -> String {
    let esc = crate::table::escape_controls;
    let mut out = format!(
        "baseline:  {}\ncandidate: {}\nrounds:    {}\n\n",
        esc(&r.baseline),
        esc(&r.candidate),
        r.rounds_text()
    );
    for line in [r.mismatch_line(), r.contended_line(), r.replication_line()]
        .into_iter()
        .flatten()
    {
        out.push_str(&line);
        out.push_str("\n\n");
    }
    let mut t = Table::new(&[
        "BENCHMARK",
        ">BASE",
        ">CAND",
        "UNIT",
        ">CHANGE",
        ">INTERVAL",
        ">Q",
        "VERDICT",
    ]);
    for b in ordered(r) {
        let c = &b.comparison;
        let unit = display_unit(b);
        t.row(vec![
            b.key(),
            unit.num(c.base_median),
            unit.num(c.cand_median),
            unit.name().to_string(),
            change(b),
            interval(b),
            p_value(c.q_value),
            verdict_text(b),
        ]);
    }
    for e in &r.identical {
        let mut row = vec![e.shown()];
        row.extend(["-", "-", "", "-", "-", "-"].map(String::from));
        row.push(e.verdict.to_string());
        t.row(row);
    }
    if !t.is_empty() {
        out.push_str(&t.render());
        out.push('\n');
    }
    let why: Vec<String> = ordered(r)
        .into_iter()
        .filter_map(|b| Some(format!("  {}: {}", b.key(), b.unobvious_reason()?)))
        .collect();
    if !why.is_empty() {
        out.push_str("why (verdicts the interval alone does not explain):\n");
        for line in why {
            out.push_str(&esc(&line));
            out.push('\n');
        }
    }
    for (label, keys) in [
        ("only in baseline", &r.only_baseline),
        ("only in candidate", &r.only_candidate),
        ("failed, not compared", &r.failed),
        ("skipped by the tool", &r.skipped),
        ("implausible, not compared", &r.implausible),
        ("not compared, units or directions differ", &r.incompatible),
    ] {
        if !keys.is_empty() {
            out.push_str(&format!("{label}: {}\n", esc(&keys.join(", "))));
        }
    }
    out.push_str(&format!("summary: {}\n", esc(&r.summary_line())));
    if let Some(time) = &r.time {
        out.push_str(&format!("{}\n", time.line()));
    }
    out
}

/// A Markdown row of code identical on both sides (not measured).
pub(crate) fn identical_row(e: &IdenticalEntry) -> String {
    format!(
        "| {} | - | - | - | - | {} |\n",
        md::code_cell(&e.shown()),
        e.verdict
    )
}

/// The unit both sides of a row are shown in, chosen by the baseline's median.
pub(crate) fn display_unit(b: &ComparedBenchmark) -> DisplayUnit {
    DisplayUnit::for_value(&b.unit, b.comparison.base_median)
}

pub(crate) fn verdict_text(b: &ComparedBenchmark) -> String {
    let c = &b.comparison;
    if b.clock_explained() {
        return format!("{} (clock-explained)", c.verdict.as_str());
    }
    // An undecided benchmark says what it could still be: its interval, as a resolution.
    let undecided = if c.ci.0.is_finite() && c.ci.1.is_finite() {
        format!(
            "not resolved: between {} and {}",
            signed_pct(c.ci.0 - 1.0),
            signed_pct(c.ci.1 - 1.0)
        )
    } else {
        "inconclusive".to_string()
    };
    match (c.verdict, c.more_rounds, c.more_samples) {
        (Verdict::Inconclusive, Some(n), _) => format!("{undecided} (~{n} rounds needed)"),
        (Verdict::Inconclusive, None, _) if c.reason.starts_with("given up") => {
            format!("{undecided} (given up)")
        }
        (Verdict::Inconclusive, None, Some(n)) => {
            format!("{undecided} (~{n} samples/side needed)")
        }
        (Verdict::Inconclusive, None, None) => undecided,
        (v, _, _) => v.as_str().to_string(),
    }
}

/// The order every output lists a comparison in (terminal, Markdown, PR comment, report):
/// regressions (worst first), improvements, inconclusive (closest to worse first), then the
/// unchanged in the order benchmarks are listed (`order::bench_cmp`: `bytes=2097152` before
/// `bytes=16777216`), where a ranking by noise would only scatter a sweep.
pub(crate) fn ordered(r: &ComparisonReport) -> Vec<&ComparedBenchmark> {
    let rank = |v: Verdict| match v {
        Verdict::Regression => 0,
        Verdict::Improvement => 1,
        Verdict::Inconclusive => 2,
        Verdict::Unchanged => 3,
    };
    let mut v: Vec<&ComparedBenchmark> = r.benchmarks.iter().collect();
    v.sort_by(|a, b| {
        let by_severity = if a.comparison.verdict == Verdict::Unchanged {
            std::cmp::Ordering::Equal
        } else {
            b.worse_by().total_cmp(&a.worse_by())
        };
        rank(a.comparison.verdict)
            .cmp(&rank(b.comparison.verdict))
            .then(by_severity)
            .then_with(|| bench_cmp(a.bench_ref(), b.bench_ref()))
    });
    v
}

#[derive(Serialize)]
struct JsonBench<'a> {
    key: String,
    #[serde(flatten)]
    bench: &'a ComparedBenchmark,
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    baseline: &'a str,
    candidate: &'a str,
    /// Interleaved rounds measured; null for separately measured sides.
    rounds: Option<u32>,
    /// `max_rounds` of an until-decided pair, else null.
    until_decided_max_rounds: Option<u32>,
    /// Fewest replicates per side behind any verdict (1: between-process noise not captured).
    replicates: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    replication_warning: Option<String>,
    summary: String,
    counts: VerdictCounts,
    benchmarks: Vec<JsonBench<'a>>,
    only_baseline: &'a [String],
    only_candidate: &'a [String],
    failed: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    skipped: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    implausible: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    incompatible: &'a [String],
    env_mismatch: &'a [String],
    incomparable: bool,
    /// Code identical on both sides, not measured, each with the verdict `identical`.
    #[serde(skip_serializing_if = "<[IdenticalEntry]>::is_empty")]
    identical: &'a [IdenticalEntry],
    /// The pair's time measured and saved, with its line, when code was identical.
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<&'a PairTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_line: Option<String>,
    /// The sides measured on a contended machine, with why.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    contended: &'a [String],
}

/// `{"benchmarks": [{"name": …, "verdict": …, "ratio": …, "ci": [lo, hi], "p_value": …}], …}`.
pub fn render_json(r: &ComparisonReport) -> String {
    let doc = JsonDoc {
        baseline: &r.baseline,
        candidate: &r.candidate,
        rounds: r.rounds,
        until_decided_max_rounds: r.sequential,
        replicates: r.replicates,
        replication_warning: r.replication_line(),
        summary: r.summary_line(),
        counts: r.counts(),
        benchmarks: r
            .benchmarks
            .iter()
            .map(|b| JsonBench {
                key: b.key(),
                bench: b,
            })
            .collect(),
        only_baseline: &r.only_baseline,
        only_candidate: &r.only_candidate,
        failed: &r.failed,
        skipped: &r.skipped,
        implausible: &r.implausible,
        incompatible: &r.incompatible,
        env_mismatch: &r.env_mismatch,
        incomparable: r.incomparable,
        identical: &r.identical,
        time: r.time.as_ref(),
        time_line: r.time.as_ref().map(PairTime::line),
        contended: &r.contended,
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("comparison serializes");
    s.push('\n');
    s
}

/// Markdown for a pull-request comment: summary line, changed benchmarks, the rest folded.
pub fn render_markdown(r: &ComparisonReport) -> String {
    let mut out = String::from("### pitwall: benchmark comparison\n\n");
    out.push_str(&format!("**{}**\n\n", md::text(&r.summary_line())));
    if let Some(time) = &r.time {
        out.push_str(&format!("{}\n\n", md::text(&time.line())));
    }
    for line in [r.mismatch_line(), r.contended_line(), r.replication_line()]
        .into_iter()
        .flatten()
    {
        out.push_str(&format!("> {}\n\n", md::text(&line)));
    }
    out.push_str(&format!(
        "Baseline: {}  \nCandidate: {}  \nRounds: {}\n\n",
        md::text(&r.baseline),
        md::text(&r.candidate),
        md::text(&r.rounds_text())
    ));
    let header = "| benchmark | baseline | candidate | change | interval | verdict |\n|---|---:|---:|---:|---:|---|\n";
    let row = |b: &ComparedBenchmark| {
        let unit = display_unit(b);
        format!(
            "| {} | {} {} | {} {} | {} | {} | {} |\n",
            md::code_cell(&b.key()),
            unit.num(b.comparison.base_median),
            md::text(unit.name()),
            unit.num(b.comparison.cand_median),
            md::text(unit.name()),
            change(b),
            interval(b),
            verdict_text(b)
        )
    };
    let (changed, rest): (Vec<&ComparedBenchmark>, Vec<&ComparedBenchmark>) =
        ordered(r).into_iter().partition(|b| {
            matches!(
                b.comparison.verdict,
                Verdict::Regression | Verdict::Improvement
            )
        });
    if !changed.is_empty() {
        out.push_str(header);
        for b in &changed {
            out.push_str(&row(b));
        }
        out.push('\n');
    }
    if !rest.is_empty() || !r.identical.is_empty() {
        out.push_str(&format!(
            "<details><summary>{} other benchmarks</summary>\n\n{header}",
            rest.len() + r.identical.len()
        ));
        for b in &rest {
            out.push_str(&row(b));
        }
        for e in &r.identical {
            out.push_str(&identical_row(e));
        }
        out.push_str("\n</details>\n");
    }
    out.push_str(&why_markdown(r));
    for (label, keys) in [
        ("Only in baseline", &r.only_baseline),
        ("Only in candidate", &r.only_candidate),
        ("Failed, not compared", &r.failed),
        ("Skipped by the tool", &r.skipped),
        ("Implausible, not compared", &r.implausible),
        ("Not compared, units or directions differ", &r.incompatible),
    ] {
        if !keys.is_empty() {
            let list: Vec<String> = keys.iter().map(|k| md::code_span(k)).collect();
            out.push_str(&format!("\n{label}: {}\n", list.join(", ")));
        }
    }
    out
}

/// The reasons of the verdicts their interval does not explain, as a Markdown list (empty
/// when there are none); shared by `compare --format markdown` and the PR comment.
pub(crate) fn why_markdown(r: &ComparisonReport) -> String {
    let lines: Vec<String> = ordered(r)
        .into_iter()
        .filter_map(|b| {
            Some(format!(
                "- {}: {}\n",
                md::code_span(&b.key()),
                md::text(b.unobvious_reason()?)
            ))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nWhy (verdicts the interval alone does not explain):\n\n{}",
        lines.concat()
    )
}

#[cfg(test)]
mod tests;
