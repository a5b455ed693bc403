//! Tests of the comparison renderers: verdict order and summary, snapshots of the table, JSON
//! and Markdown, and hostile benchmark names in Markdown.

use super::*;
use crate::github::{CommentOptions, render_pr_comment};
use pitwall_stats::ab::{AbConfig, PairInput, compare_all};
use std::collections::BTreeMap;

fn samples(level: f64, n: usize, salt: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| level * (1.0 + 0.01 * (((i * 7919 + salt * 104_729) % 1000) as f64 / 500.0 - 1.0)))
        .collect()
}

/// A report from real verdicts on deterministic data: one regression (time +15%), one
/// improvement (throughput +15%), one unchanged, one inconclusive (3 samples).
fn report() -> ComparisonReport {
    let data = [
        (
            "parse",
            "time",
            "ns",
            false,
            samples(100.0, 20, 1),
            samples(115.0, 20, 2),
        ),
        (
            "rate",
            "throughput",
            "items/s",
            true,
            samples(1000.0, 20, 3),
            samples(1150.0, 20, 4),
        ),
        (
            "steady",
            "time",
            "ns",
            false,
            samples(50.0, 20, 5),
            samples(50.0, 20, 6),
        ),
        (
            "short",
            "time",
            "ns",
            false,
            samples(10.0, 3, 7),
            samples(12.0, 3, 8),
        ),
    ];
    let pairs: Vec<PairInput<'_>> = data
        .iter()
        .map(|d| PairInput {
            base: &d.4,
            cand: &d.5,
            higher_is_better: d.3,
            threshold: None,
        })
        .collect();
    let comparisons = compare_all(&pairs, &AbConfig::default());
    let benchmarks = data
        .iter()
        .zip(comparisons)
        .map(|(d, comparison)| ComparedBenchmark {
            suite: "toy".into(),
            name: d.0.into(),
            params: BTreeMap::from([("size".to_string(), "64".to_string())]),
            measure: d.1.into(),
            unit: d.2.into(),
            higher_is_better: d.3,
            comparison,
            cycles_verdict: None,
            threshold_raised_from_pct: None,
        })
        .collect();
    ComparisonReport {
        // Two files: one process a side, so the replication warning shows in every format.
        rounds: None,
        sequential: None,
        replicates: 1,
        baseline: "run 0190-base".into(),
        candidate: "file <cand>.json".into(),
        benchmarks,
        only_baseline: vec!["toy/gone/time".into()],
        only_candidate: vec![],
        failed: vec!["toy/broken/time".into()],
        skipped: vec!["toy/needs_gpu/time".into()],
        implausible: vec![],
        incompatible: vec!["toy/copy/time (unit ns vs ms)".into()],
        env_mismatch: vec![],
        incomparable: false,
        identical: vec![],
        time: None,
        contended: Vec::new(),
    }
}

#[test]
fn verdicts_and_summary() {
    let r = report();
    let verdicts: Vec<Verdict> = r.benchmarks.iter().map(|b| b.comparison.verdict).collect();
    assert_eq!(
        verdicts,
        [
            Verdict::Regression,
            Verdict::Improvement,
            Verdict::Unchanged,
            Verdict::Inconclusive
        ]
    );
    assert!(r.has_regression());
    assert!(r.summary_line().starts_with("1 regression, 1 improvement, 1 unchanged, 1 inconclusive; worst: toy/parse[size=64]/time +15%"), "{}", r.summary_line());
}

#[test]
fn table_snapshot() {
    insta::assert_snapshot!(render_table(&report()));
}

#[test]
fn markdown_snapshot_escapes_untrusted_text() {
    let md = render_markdown(&report());
    assert!(md.contains("file \\<cand\\>.json"), "{md}");
    assert!(
        !md.contains("&lt;") && !md.contains("&#"),
        "no HTML entity: {md}"
    );
    insta::assert_snapshot!(md);
}

#[test]
fn hostile_names_cannot_break_out_in_markdown() {
    let mut r = report();
    let evil = "n\n# H @octocat ![i](http://e.example/p.png) `x` | y";
    r.benchmarks[0].name = evil.into();
    r.only_baseline = vec![format!("{evil}/time")];
    r.candidate = format!("file {evil}.json");
    let md = render_markdown(&r);
    // No line may start with untrusted text; no live image, link, mention or heading.
    for line in md.lines() {
        assert!(!line.starts_with("# H"), "{line}");
    }
    // Outside code spans (whose content renders literally).
    let prose = crate::markdown::markup(&md);
    assert!(!prose.contains("![i](http"), "{prose}");
    assert!(!prose.contains("@octocat"), "{prose}");
    assert!(md.contains("`@octocat`"), "{md}");
    // Every table row still has its 7 cell separators.
    for line in md.lines().filter(|l| l.starts_with("| `")) {
        let bars = line.replace("\\|", "").matches('|').count();
        assert_eq!(bars, 7, "{line}");
    }
    // The summary line (worst: …) is escaped too.
    let summary = md.lines().find(|l| l.starts_with("**")).unwrap();
    assert!(
        !crate::markdown::markup(summary).contains("![i]("),
        "{summary}"
    );
}

#[test]
fn json_snapshot() {
    let json = render_json(&report());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["benchmarks"][0]["verdict"], "regression");
    assert_eq!(v["benchmarks"][0]["name"], "parse");
    assert!(v["benchmarks"][0]["ci"].as_array().unwrap().len() == 2);
    insta::assert_snapshot!(json);
}

#[test]
fn times_are_scaled_alike_in_every_format_and_unchanged_rows_list_numbers_as_numbers() {
    let mut r = report();
    // `parse` at about 100 µs; three unchanged sizes whose text order is not their numeric one.
    for b in &mut r.benchmarks {
        if b.name == "parse" {
            b.comparison.base_median *= 1000.0;
            b.comparison.cand_median *= 1000.0;
        }
    }
    let steady = r
        .benchmarks
        .iter()
        .find(|b| b.name == "steady")
        .unwrap()
        .clone();
    for size in ["16777216", "2097152", "262144"] {
        let mut b = steady.clone();
        b.params.insert("size".into(), size.into());
        r.benchmarks.push(b);
    }
    let base = r.benchmarks[0].comparison.base_median;
    let shown = pitwall_analysis::number::with_unit(base, "ns");
    assert!(shown.ends_with(" µs"), "{shown}");
    let table = render_table(&r);
    let row = table.lines().find(|l| l.contains("parse")).unwrap();
    assert!(
        row.contains(shown.trim_end_matches(" µs")) && row.contains(" µs "),
        "{row}"
    );
    let md = render_markdown(&r);
    assert!(md.contains(&shown), "{md}");
    let comment = render_pr_comment(&r, &CommentOptions::default());
    assert!(comment.contains(&shown), "{comment}");
    // Unchanged rows: size=64 (the original), then 262144, 2097152, 16777216.
    let sizes: Vec<&str> = table
        .lines()
        .filter(|l| l.contains("steady"))
        .map(|l| &l[l.find("size=").unwrap() + 5..l.find(']').unwrap()])
        .collect();
    assert_eq!(sizes, ["64", "262144", "2097152", "16777216"]);
}

/// What a GPU run adds to every format: a regression in time whose cycles did not move
/// (`regression (clock-explained)`, not counted as a regression) and an implausible result
/// listed with its reason.
#[test]
fn clock_explained_and_implausible_snapshot() {
    let mut r = report();
    r.benchmarks[0].cycles_verdict = Some(Verdict::Unchanged);
    r.implausible =
        vec!["toy/skinny/bandwidth (implausible: skinny 5.9 TB/s > H200 HBM peak 4.8 TB/s)".into()];
    assert!(!r.has_regression(), "clock-explained: no exit 1");
    assert_eq!(
        verdict_text(&r.benchmarks[0]),
        "regression (clock-explained)"
    );
    let all = format!(
        "--- table\n{}\n--- markdown\n{}\n--- json\n{}",
        render_table(&r),
        render_markdown(&r),
        render_json(&r)
    );
    insta::assert_snapshot!(all);
}

/// Issue 26 item 5: a pair that left a kernel and a whole suite unmeasured as identical shows
/// them with the verdict `identical` and its time line in every format; identical code is never
/// a regression.
fn with_identical() -> ComparisonReport {
    use pitwall_analysis::identical::{IDENTICAL, IdenticalEntry, PairTime};
    use pitwall_schema::{IdenticalBasis, IdenticalCode};
    let mut r = report();
    r.benchmarks.retain(|b| b.name == "steady");
    r.rounds = Some(3);
    r.replicates = 3;
    r.only_baseline.clear();
    r.failed.clear();
    r.skipped.clear();
    r.incompatible.clear();
    r.identical = vec![
        IdenticalEntry {
            code: IdenticalCode {
                suite: "kernels".into(),
                kernel: Some("saxpy|<b>".into()),
                basis: IdenticalBasis::Cubin,
            },
            verdict: IDENTICAL,
        },
        IdenticalEntry {
            code: IdenticalCode {
                suite: "build".into(),
                kernel: None,
                basis: IdenticalBasis::Artifacts,
            },
            verdict: IDENTICAL,
        },
    ];
    r.time = Some(PairTime {
        measured_ms: Some(240_000),
        saved_ms_estimate: Some(660_000),
        gpu: true,
        identical: true,
    });
    r
}

#[test]
fn identical_code_shows_in_every_format() {
    let r = with_identical();
    assert!(!r.has_regression());
    assert_eq!(r.counts().identical, 2);
    assert!(
        r.summary_line().contains(", 2 identical"),
        "{}",
        r.summary_line()
    );
    let table = render_table(&r);
    assert!(table.contains("GPU time: 4 min measured, ~11 min skipped: identical kernels"));
    insta::assert_snapshot!("identical_table", table);
    insta::assert_snapshot!("identical_markdown", render_markdown(&r));
    insta::assert_snapshot!("identical_json", render_json(&r));
    insta::assert_snapshot!(
        "identical_pr_comment",
        render_pr_comment(&r, &CommentOptions::default())
    );
}

#[test]
fn contended_sides_are_named_in_every_format() {
    let mut r = report();
    assert!(r.contended_line().is_none());
    r.contended = vec!["baseline (a.json): other runnable threads 2.0 ≥ 0.5".into()];
    let line = "warning: measured on a contended machine: baseline (a.json): other runnable threads 2.0 ≥ 0.5; the verdicts may be the load's, not the code's";
    assert!(render_table(&r).contains(&format!("{line}\n\n")));
    assert!(
        render_markdown(&r)
            .contains("> warning: measured on a contended machine: baseline (a.json)"),
        "{}",
        render_markdown(&r)
    );
    let json: serde_json::Value = serde_json::from_str(&render_json(&r)).unwrap();
    assert_eq!(
        json["contended"][0],
        "baseline (a.json): other runnable threads 2.0 ≥ 0.5"
    );
    assert!(render_json(&report()).find("contended").is_none());
}
