//! Snapshots of both renderings of a planted write-up (two steps, one acknowledged with a
//! note, a driver change, a pull request, hostile text in names and notes) and of an empty
//! period, and checks that untrusted text is escaped.

use std::collections::BTreeMap;

use pitwall_analysis::alerts::AlertRules;
use pitwall_analysis::history::{HistoryFilter, series};
use pitwall_analysis::writeup::{
    CommitMeta, Period, PullRequest, Writeup, WriteupInput, build, parse_date,
};
use pitwall_schema::sections::Clocks;
use pitwall_schema::{
    Alert, AlertKind, AlertSeries, AlertStatus, BenchmarkResult, CommitInfo, Direction,
    Fingerprint, GpuInfo, ResultStatus, Run, RunStatus, Unit,
};
use pitwall_stats::changepoint::DetectConfig;

use super::{render_html, render_markdown};

const HOSTILE: &str = "gemm|<script>alert(1)</script>*x*";

fn result(name: &str, level: f64, i: usize) -> BenchmarkResult {
    BenchmarkResult {
        suite: "kernel".into(),
        name: name.into(),
        params: BTreeMap::new(),
        measure: "time".into(),
        unit: Unit::new(Unit::NANOSECONDS),
        direction: Direction::LowerIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples: (0..5)
            .map(|k| {
                let run = 1.0 + 0.002 * ((i * 13 % 7) as f64 - 3.0);
                level * run * (1.0 + 0.002 * ((i * 7 + k * 3) % 5) as f64)
            })
            .collect(),
        sample_meta: Vec::new(),
        replicates: Vec::new(),
        summary: None,
    }
}

fn date(i: usize) -> String {
    let t = parse_date("2026-01-01").unwrap() as i64 + i as i64 * 86_400;
    let d = (t - parse_date("2026-01-01").unwrap() as i64) / 86_400;
    let (m, d) = if d < 31 { (1, d + 1) } else { (2, d - 30) };
    format!("2026-{m:02}-{d:02}T12:00:00+00:00")
}

/// 40 daily runs: `HOSTILE` 100 → 110 ns at run 20, `reduce` 200 → 160 ns at run 25, `copy`
/// flat; the driver changes at run 21 and the clocks are locked throughout.
fn runs() -> Vec<Run> {
    (0..40)
        .map(|i| {
            let mut fingerprint = Fingerprint {
                hostname: "gpu-node-1".into(),
                cpu_model: "EPYC 9654".into(),
                gpus: vec![GpuInfo {
                    model: "NVIDIA H200".into(),
                    uuid: None,
                    driver: Some(if i < 21 { "550.54" } else { "560.28" }.into()),
                    extra: BTreeMap::new(),
                }],
                ..Fingerprint::default()
            };
            fingerprint.set_section(&Clocks {
                mode: Some("locked".into()),
                locked_sm_mhz: Some(1755),
                ..Clocks::default()
            });
            Run {
                exclusion: None,
                contention: None,
                id: format!("run-{i}"),
                project: "p".into(),
                commit: format!("{i:02}{}", "c".repeat(38)),
                branch: Some("main".into()),
                testbed: Some("h200".into()),
                role: None,
                started_at: date(i).replace("+00:00", "Z"),
                finished_at: String::new(),
                config_hash: String::new(),
                fingerprint,
                status: RunStatus::Complete,
                commit_info: Some(CommitInfo {
                    first_parent_position: None,
                    author: "Ada <ada@example.com>".into(),
                    date: date(i),
                    subject: format!("change {i}"),
                }),
                error: None,
                pair: None,
                results: vec![
                    result(HOSTILE, if i < 20 { 100.0 } else { 110.0 }, i),
                    result("reduce", if i < 25 { 200.0 } else { 160.0 }, i),
                    result("copy", 50.0, i),
                ],
            }
        })
        .collect()
}

fn rules() -> AlertRules {
    AlertRules {
        threshold_pct: 2.0,
        suite_threshold_pct: BTreeMap::new(),
        resamples: 500,
        level: 0.95,
        seed: 7,
        match_window: 3,
    }
}

fn writeup(from: &str, to: &str) -> Writeup {
    let runs = runs();
    let period = Period::new(from, to).unwrap();
    let series = series(
        &runs,
        &HistoryFilter::branch("main"),
        &DetectConfig::default(),
    );
    let alert = Alert {
        id: "a1b2c3d4e5f6".into(),
        status: AlertStatus::Acknowledged,
        kind: AlertKind::Regression,
        series: AlertSeries {
            project: "p".into(),
            testbed: "h200".into(),
            branch: "main".into(),
            key: format!("kernel/{HOSTILE}/time"),
            measure: "time".into(),
        },
        last_good: runs[19].commit.clone(),
        first_bad: runs[20].commit.clone(),
        first_bad_run: runs[20].id.clone(),
        before: 100.0,
        after: 110.0,
        rel_change: 0.1,
        ci: None,
        note: Some("new allocator | see <b>#42</b>".into()),
        culprit: Some(runs[20].commit.clone()),
        more_points: None,
        label: None,
        created_at: String::new(),
        updated_at: String::new(),
    };
    let mut commits = BTreeMap::new();
    for r in &runs {
        let c = r.commit_info.clone().unwrap();
        commits.insert(
            r.commit.clone(),
            CommitMeta {
                sha: r.commit.clone(),
                author: c.author,
                date: c.date,
                subject: c.subject,
                pr: (r.id == "run-20").then(|| PullRequest {
                    number: 42,
                    title: "Swap the <allocator>".into(),
                }),
            },
        );
    }
    build(&WriteupInput {
        period: &period,
        filter: &HistoryFilter::branch("main"),
        runs: &runs,
        series: &series,
        alerts: &[alert],
        commits: &commits,
        rules: &rules(),
        settings: vec![("sampling".into(), "10–100000 samples".into())],
    })
}

#[test]
fn markdown_of_a_planted_period() {
    let md = render_markdown(&writeup("2026-01-01", "2026-02-09"));
    assert!(
        !md.contains("&#") && !md.contains("&lt;"),
        "no HTML entity: {md}"
    );
    assert!(md.contains("new allocator \\| see `<b>#42</b>`"), "{md}");
    assert!(md.contains("PR `#42:` Swap the \\<allocator\\>"), "{md}");
    let read = crate::markdown::markup(&md);
    assert!(!read.contains("<script") && !read.contains("<b>"), "{md}");
    // The hostile key is a code span, its `|` escaped for the table.
    assert!(
        md.contains("`kernel/gemm\\|<script>alert(1)</script>*x*/time`"),
        "{md}"
    );
    insta::assert_snapshot!(md);
}

#[test]
fn html_of_a_planted_period() {
    let html = render_html(&writeup("2026-01-01", "2026-02-09"));
    assert!(
        !html.contains("<script>") && !html.contains("<b>#42"),
        "{html}"
    );
    assert!(html.contains("&lt;script&gt;"), "{html}");
    assert!(
        !html.contains("src=") && !html.contains("href="),
        "self-contained"
    );
    insta::assert_snapshot!(html);
}

#[test]
fn an_empty_period_is_short_in_both() {
    let w = writeup("2025-01-01", "2025-03-31");
    let md = render_markdown(&w);
    assert!(md.contains("nothing to summarise") && md.contains("No change point"));
    assert!(md.lines().count() < 40, "{md}");
    insta::assert_snapshot!("empty_markdown", md);
    insta::assert_snapshot!("empty_html", render_html(&w));
}

#[test]
fn a_period_without_change_points_says_so() {
    let md = render_markdown(&writeup("2026-01-02", "2026-01-12"));
    assert!(
        md.contains("No change point and no alert in the period."),
        "{md}"
    );
    assert!(md.contains("| `kernel` | `h200` | 3 | no change |"), "{md}");
    insta::assert_snapshot!(md);
}

/// The same step in the same words and numbers in the headline, the summary and the ledger:
/// the planted 100 → 110 ns step of the hostile benchmark is "10.0% slower" everywhere, the
/// 200 → 160 ns one "20.0% faster".
#[test]
fn headline_summary_and_ledger_say_the_same() {
    let w = writeup("2026-01-01", "2026-02-09");
    let md = render_markdown(&w);
    let section = |title: &str| {
        let from = md.find(title).unwrap();
        let rest = &md[from + title.len()..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    };
    let (head, summary, ledger) = (
        section("## Headline"),
        section("## Executive summary"),
        section("## Ledger"),
    );
    for part in [&head, &summary, &ledger] {
        assert!(
            part.contains("% slower") && part.contains("% faster"),
            "{part}"
        );
        assert!(!part.contains("speedup") && !part.contains("+10"), "{part}");
    }
    let slower = |s: &str| {
        let at = s.find("% slower").unwrap();
        s[..at].rsplit(' ').next().unwrap().to_string()
    };
    assert_eq!(slower(&head), slower(&ledger), "{head}\n{ledger}");
    assert!(
        summary.contains(&format!("{}% slower", slower(&ledger))),
        "{summary}"
    );
    let geomean = w.summaries[0].geomean_change;
    assert!(
        geomean < 0.0,
        "a 10% slower and a 20% faster: faster overall"
    );
    assert!(
        head.contains(&format!("geomean {:.1}% faster", -geomean * 100.0)),
        "{head}"
    );
    assert!(
        summary.contains(&format!("| {:.1}% faster |", -geomean * 100.0)),
        "{summary}"
    );
}

/// Suspected and contended steps leave the headline and the ledger for their own section, in
/// both renderings.
#[test]
fn suspected_and_contended_steps_are_listed_apart() {
    use pitwall_analysis::writeup::StepStanding;
    let mut w = writeup("2026-01-01", "2026-02-09");
    let mut standings = [StepStanding::Suspected, StepStanding::Contended].into_iter();
    for g in &mut w.ledger {
        for x in &mut g.entries {
            x.standing = standings.next().unwrap_or(StepStanding::Contended);
        }
    }
    let md = render_markdown(&w);
    assert!(
        md.contains("## Listed apart: suspected steps and contended runs"),
        "{md}"
    );
    assert!(
        md.contains("- no confirmed step beyond its threshold in the period"),
        "{md}"
    );
    assert!(md.contains("| suspected | `kernel/gemm"), "{md}");
    assert!(md.contains("| contended | `kernel/reduce/time`"), "{md}");
    assert!(
        md.contains("No change point and no alert in the period."),
        "{md}"
    );
    insta::assert_snapshot!("listed_apart_markdown", md);
    let html = render_html(&w);
    assert!(html.contains("<h2>Listed apart: suspected steps and contended runs</h2>"));
    assert!(html.contains("<td>suspected</td>") && html.contains("<td>contended</td>"));
}

/// A secret in a commit subject is redacted from the write-up in its escaped form.
#[test]
fn a_secret_in_a_subject_is_redacted_from_the_writeup() {
    let secret = "ab_c*d[e]-s3cr3t";
    let mut w = writeup("2026-01-01", "2026-02-09");
    let g = w
        .ledger
        .iter_mut()
        .find(|g| g.commit.as_ref().is_some_and(|c| c.pr.is_none()))
        .unwrap();
    g.commit.as_mut().unwrap().subject = format!("leak {secret} here");
    let md = render_markdown(&w);
    assert!(md.contains("leak ab\\_c\\*d\\[e\\]\\-s3cr3t here"), "{md}");
    let redacted = pitwall_schema::Redactor::new([secret]).redact(&md);
    assert!(!redacted.contains("s3cr3t"), "{redacted}");
    assert!(redacted.contains("leak *** here"), "{redacted}");
}

/// The one sign convention: a time's relative change is "faster" or "slower", a throughput's
/// "higher" or "lower", the number always the size of the change of the value.
#[test]
fn changes_are_said_in_one_convention() {
    use super::{change_words, interval};
    let (time, rate) = (Direction::LowerIsBetter, Direction::HigherIsBetter);
    // 10 ms → 5.65 ms: the time × (1 − 0.435), never "+76.9%".
    assert_eq!(change_words(5.65 / 10.0 - 1.0, time), "43.5% faster");
    assert_eq!(change_words(0.14, time), "14.0% slower");
    assert_eq!(change_words(-0.2, rate), "20.0% lower");
    assert_eq!(change_words(0.031, rate), "3.1% higher");
    assert_eq!(change_words(0.0004, time), "no change");
    assert_eq!(change_words(f64::NAN, time), "n/a");
    assert_eq!(
        interval(Some((-0.12, 0.02)), time),
        "12.0% faster to 2.0% slower"
    );
    assert_eq!(interval(None, rate), "n/a");
}
