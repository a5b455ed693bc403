//! The sticky PR comment: its layout (snapshots), escaping of untrusted text, and the size
//! bound with 2,000 benchmarks.

use std::collections::BTreeMap;

use pitwall_reports::compare::{ComparedBenchmark, ComparisonReport, render_markdown};
use pitwall_reports::github::{CommentOptions, MARKER, render_pr_comment};
use pitwall_reports::markdown::{cut, markup, text};
use pitwall_stats::ab::{Comparison, Verdict};

fn bench(name: &str, verdict: Verdict, ratio: f64) -> ComparedBenchmark {
    ComparedBenchmark {
        suite: "toy".into(),
        name: name.into(),
        params: BTreeMap::from([("size".to_string(), "64".to_string())]),
        measure: "time".into(),
        unit: "ns".into(),
        higher_is_better: false,
        comparison: Comparison {
            verdict,
            ratio,
            ci: (ratio - 0.02, ratio + 0.02),
            p_value: 0.001,
            q_value: 0.002,
            welch_p: 0.001,
            hodges_lehmann: (ratio - 1.0) * 100.0,
            base_median: 100.0,
            cand_median: 100.0 * ratio,
            base_n: 20,
            cand_n: 20,
            threshold: 0.02,
            more_samples: (verdict == Verdict::Inconclusive).then_some(60),
            reason: String::new(),
            method: pitwall_stats::ab::Method::Replicates,
            base_replicates: 3,
            cand_replicates: 3,
            decided_at_round: (verdict != Verdict::Inconclusive).then_some(3),
            more_rounds: (verdict == Verdict::Inconclusive).then_some(9),
            resolution_pct: Some(100.0 * ((ratio - 1.0).abs() + 0.02)),
            noise_record: None,
        },
        cycles_verdict: None,
        threshold_raised_from_pct: None,
    }
}

fn report(benchmarks: Vec<ComparedBenchmark>) -> ComparisonReport {
    ComparisonReport {
        rounds: Some(3),
        sequential: None,
        replicates: 3,
        baseline: "commit 0190abc (main)".into(),
        candidate: "commit 77ee001 \"speed up <parse>\"".into(),
        benchmarks,
        only_baseline: vec!["toy/gone/time".into()],
        only_candidate: vec![],
        failed: vec!["toy/broken/time".into()],
        skipped: vec!["toy/needs_gpu/time".into()],
        implausible: vec![],
        incompatible: vec![],
        env_mismatch: vec![],
        incomparable: false,
        identical: vec![],
        time: None,
        contended: Vec::new(),
    }
}

fn typical() -> ComparisonReport {
    report(vec![
        bench("parse", Verdict::Regression, 1.15),
        bench("lex", Verdict::Regression, 1.04),
        bench("emit", Verdict::Improvement, 0.9),
        bench("steady", Verdict::Unchanged, 1.001),
        bench("short", Verdict::Inconclusive, 1.03),
    ])
}

fn table_rows(md: &str) -> Vec<&str> {
    md.lines().filter(|l| l.starts_with("| `")).collect()
}

/// The cells a GFM table row splits into: `|` not after a backslash (cmark-gfm's scanner).
fn cell_separators(row: &str) -> usize {
    let mut n = 0;
    let mut chars = row.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '|' => n += 1,
            _ => {}
        }
    }
    n
}

#[test]
fn typical_comment_snapshot() {
    let opts = CommentOptions {
        report_url: Some("https://ci.example/runs/12/report.html".into()),
        throttled_samples: 3,
        ..CommentOptions::default()
    };
    let md = render_pr_comment(&typical(), &opts);
    assert!(md.starts_with(&format!("{MARKER}\n")));
    insta::assert_snapshot!(md);
}

#[test]
fn mismatch_and_incomparable_snapshot() {
    let mut r = typical();
    r.env_mismatch = vec!["gpu model: H100 vs H200".into()];
    let warned = render_pr_comment(&r, &CommentOptions::default());
    assert!(warned.contains("> [!WARNING]\n> The environments differ (gpu model: H100 vs H200)."));
    r.incomparable = true;
    let md = render_pr_comment(&r, &CommentOptions::default());
    assert!(md.contains("**Incomparable:**"), "{md}");
    insta::assert_snapshot!(md);
}

#[test]
fn untrusted_names_cannot_break_the_table_or_inject_html() {
    let evil =
        "a|b</code><script>alert(1)</script>`x`\\|[link](http://evil) @team *b* _i_\n| new row |";
    let mut r = report(vec![
        bench(evil, Verdict::Regression, 1.2),
        bench(evil, Verdict::Unchanged, 1.0),
    ]);
    r.candidate = "commit subject </details><img src=x onerror=alert(1)>".into();
    r.only_baseline = vec![evil.into()];
    let opts = CommentOptions {
        report_url: Some("https://ci.example/r) [x](javascript:alert(1)".into()),
        ..CommentOptions::default()
    };
    let md = render_pr_comment(&r, &opts);
    let read = markup(&md);
    for bad in [
        "<script",
        "<img",
        "</details><img",
        "`",
        "@team",
        "[link]",
        "*b*",
        "_i_",
        "&#",
        "&lt;",
    ] {
        assert!(!read.contains(bad), "{bad:?} survived:\n{md}");
    }
    assert!(!md.contains("&#") && !md.contains("&lt;"), "{md}");
    let rows = table_rows(&md);
    assert_eq!(rows.len(), 2, "{md}");
    for row in rows {
        // 7 columns: exactly 8 cell separators, none escaped away or added, the key one code
        // span.
        assert_eq!(cell_separators(row), 8, "{row}");
        assert!(markup(row).starts_with("| C | "), "{row}");
    }
    assert!(
        md.contains("[Full report](https://ci.example/r%29%20%5Bx%5D%28javascript:alert%281%29)"),
        "{md}"
    );
    let not_http = CommentOptions {
        report_url: Some("javascript:alert(1)".into()),
        ..CommentOptions::default()
    };
    let md = render_pr_comment(&r, &not_http);
    assert!(!md.contains("](javascript"), "{md}");
    assert!(md.contains("Full report: `javascript:alert(1)`"), "{md}");
}

#[test]
fn cut_text_is_short_and_on_one_line() {
    let long = "x".repeat(500);
    let e = text(&cut(&long, 200));
    assert_eq!(e.chars().count(), 200);
    assert!(e.ends_with('…'));
    assert_eq!(text("a\nb\r\tc\u{7}"), "a b  cU+0007");
}

#[test]
fn two_thousand_benchmarks_drop_folded_rows_first() {
    let mut v = Vec::new();
    for i in 0..100 {
        v.push(bench(
            &format!("kernel_{i:04}_with_a_fairly_long_name"),
            Verdict::Regression,
            1.1 + i as f64 * 1e-3,
        ));
    }
    for i in 0..1900 {
        v.push(bench(
            &format!("steady_{i:04}_with_a_fairly_long_name"),
            Verdict::Unchanged,
            1.0,
        ));
    }
    let opts = CommentOptions {
        report_url: Some("https://ci.example/report.html".into()),
        ..CommentOptions::default()
    };
    let md = render_pr_comment(&report(v), &opts);
    assert!(md.len() <= 65_536, "{}", md.len());
    let rows = table_rows(&md);
    let regressions = rows.iter().filter(|r| r.contains("**regression**")).count();
    assert_eq!(regressions, 100, "every changed row is kept");
    let hidden = 2000 - rows.len();
    assert!(hidden > 0);
    assert!(
        md.contains(&format!("_… {hidden} more benchmarks not shown; see [the full report](https://ci.example/report.html)._")),
        "{hidden}"
    );
    assert!(md.contains("<details><summary>1900 other benchmarks"));
    // The worst regression survives: rows are ordered worst first.
    assert!(rows[0].contains("kernel_0099"), "{}", rows[0]);
    assert!(
        md.len() > 60_000,
        "the budget is used, not wasted: {}",
        md.len()
    );
}

#[test]
fn two_thousand_regressions_drop_changed_rows_after_the_folded_ones() {
    let v = (0..2000)
        .map(|i| {
            bench(
                &format!("kernel_{i:04}_with_a_fairly_long_name"),
                Verdict::Regression,
                1.1 + i as f64 * 1e-4,
            )
        })
        .collect();
    let md = render_pr_comment(&report(v), &CommentOptions::default());
    assert!(md.len() <= 65_536);
    let shown = table_rows(&md).len();
    assert!(shown > 100 && shown < 2000, "{shown}");
    assert!(md.contains(&format!(
        "_… {} more benchmarks not shown; see the full report._",
        2000 - shown
    )));
    assert!(!md.contains("<details>"));
    assert!(table_rows(&md)[0].contains("kernel_1999"));
}

#[test]
fn a_tiny_limit_is_still_respected() {
    for max in [0, 50, 300, 1000] {
        let opts = CommentOptions {
            max_bytes: max,
            ..CommentOptions::default()
        };
        let md = render_pr_comment(&typical(), &opts);
        assert!(md.len() <= max, "{max}: {}", md.len());
    }
}

#[test]
fn legacy_markdown_keeps_pipes_inside_their_cell() {
    let md = render_markdown(&report(vec![bench("a|b\\|c", Verdict::Regression, 1.2)]));
    let row = md.lines().find(|l| l.starts_with("| `")).unwrap();
    // Unescaped separators only: 7 of them for 6 columns.
    let bare = row.replace("\\\\", "").replace("\\|", "");
    assert_eq!(bare.matches('|').count(), 7, "{row}");
}

#[test]
fn one_process_per_side_is_flagged_in_the_comment() {
    let mut r = report(vec![bench("short", Verdict::Regression, 1.2)]);
    r.rounds = None;
    r.replicates = 1;
    let body = render_pr_comment(&r, &CommentOptions::default());
    assert!(
        body.contains("> [!WARNING]\n> warning: one process per side (1 replicate)"),
        "{body}"
    );
    assert!(body.contains("Rounds: sides measured separately"), "{body}");
    // An interleaved pair with replicates says how many rounds and warns about nothing.
    let body = render_pr_comment(
        &report(vec![bench("short", Verdict::Regression, 1.2)]),
        &CommentOptions::default(),
    );
    assert!(body.contains("Rounds: 3 interleaved rounds"), "{body}");
    assert!(!body.contains("1 replicate"), "{body}");
}

#[test]
fn a_verdict_its_interval_does_not_explain_carries_its_reason() {
    // issue 25: an undecided benchmark whose whole interval lies above the threshold, and a
    // call whose interval reaches inside it, say why; the obvious ones say nothing more.
    let mut odd = bench("odd", Verdict::Inconclusive, 1.08);
    odd.comparison.ci = (1.05, 1.11);
    odd.comparison.reason = "too few samples <b>here</b>".into();
    let mut close = bench("close", Verdict::Regression, 1.03);
    close.comparison.ci = (1.01, 1.05);
    close.comparison.reason = "up 3.0% beyond a 0.6% change".into();
    let mut plain = bench("plain", Verdict::Regression, 1.15);
    plain.comparison.reason = "up 15% (obvious)".into();
    assert_eq!(plain.unobvious_reason(), None);
    assert!(odd.unobvious_reason().is_some() && close.unobvious_reason().is_some());
    let r = report(vec![odd, close, plain]);
    let comment = render_pr_comment(&r, &CommentOptions::default());
    assert!(
        comment.contains("Why (verdicts the interval alone does not explain):"),
        "{comment}"
    );
    assert!(
        comment.contains("up 3.0% beyond a 0.6% change"),
        "{comment}"
    );
    assert!(
        !comment.contains("<b>here"),
        "untrusted reason text is escaped: {comment}"
    );
    assert!(!comment.contains("(obvious)"), "{comment}");
    let md = render_markdown(&r);
    assert!(md.contains("too few samples"), "{md}");
    assert!(!md.contains("(obvious)"), "{md}");
}

#[test]
fn raised_thresholds_and_set_aside_records_are_named() {
    let mut raised = bench("noisy", Verdict::Unchanged, 1.01);
    raised.threshold_raised_from_pct = Some(2.0);
    raised.comparison.threshold = 0.034;
    let mut ignored = bench("moved", Verdict::Inconclusive, 1.03);
    ignored.comparison.noise_record = Some(pitwall_stats::ab::RecordUse::Ignored {
        ratio: 4.1,
        p: 0.001,
    });
    let md = render_pr_comment(
        &report(vec![
            raised,
            ignored,
            bench("quiet", Verdict::Unchanged, 1.0),
        ]),
        &CommentOptions::default(),
    );
    assert!(
        md.contains("(1): `toy/noisy[size=64]/time` ±2.0% → ±3.4%"),
        "{md}"
    );
    assert!(
        md.contains("Noise record set aside (it disagreed with this pair's variance) (1): `toy/moved[size=64]/time`"),
        "{md}"
    );
    assert!(!md.contains("quiet[size=64]/time` ±"), "{md}");
    insta::assert_snapshot!(md);
}

/// A secret that reached a commit subject is written backslash-escaped in the comment; the
/// Redactor, which the forge runs over every body it sends, finds it in that form too.
#[test]
fn a_secret_in_a_subject_is_redacted_in_its_escaped_form() {
    let secret = "ab_c*d[e]-s3cr3t";
    let mut r = typical();
    r.candidate = format!("commit 77ee001 \"rotate {secret} now\"");
    let md = render_pr_comment(&r, &CommentOptions::default());
    let escaped = text(secret);
    assert_eq!(escaped, "ab\\_c\\*d\\[e\\]\\-s3cr3t");
    assert!(md.contains(&escaped), "{md}");
    let redacted = pitwall_schema::Redactor::new([secret]).redact(&md);
    assert!(
        !redacted.contains(&escaped) && !redacted.contains("s3cr3t"),
        "{redacted}"
    );
    assert!(redacted.contains("\"rotate *** now\""), "{redacted}");
}

#[test]
fn contended_sides_are_warned_about_snapshot() {
    let mut r = typical();
    r.contended = vec![
        "candidate (run 0193a1b2-0000-7000-8000-000000000002): other runnable threads 1.8 ≥ 0.5, steal 3.0% ≥ 2%".into(),
    ];
    let md = render_pr_comment(&r, &CommentOptions::default());
    assert!(
        md.contains("> [!WARNING]\n> Measured on a contended machine: candidate (run 0193a1b2\\-0000\\-7000\\-8000\\-000000000002): other runnable threads 1.8 ≥ 0.5, steal 3.0% ≥ 2%. The verdicts may be the load's, not the code's.\n"),
        "{md}"
    );
    insta::assert_snapshot!(md);
}
