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
    assert!(!md.contains("<script>") && !md.contains("<b>"), "{md}");
    assert!(
        md.contains("new allocator &#124; see &lt;b&gt;#42&lt;/b&gt;"),
        "{md}"
    );
    assert!(md.contains("PR #42: Swap the &lt;allocator&gt;"), "{md}");
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
    assert!(md.contains("| kernel | h200 | 3 | 0.0% |"), "{md}");
    insta::assert_snapshot!(md);
}
