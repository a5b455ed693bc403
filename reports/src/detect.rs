//! Rendering of change points (`pitwall detect`): a table for people and one JSON object per
//! series per line for machines.

use serde::Serialize;

pub use pitwall_analysis::history::{
    DetectedChange, DetectedSuspect, RecordOffered, SeriesDetection, SeriesSource,
};

use crate::table::Table;
use pitwall_analysis::number::{DisplayUnit, pct, sig};

#[derive(Serialize)]
struct JsonLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    benchmark: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unit: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    testbed: Option<&'a str>,
    points: usize,
    change_points: &'a [DetectedChange],
    /// A step at the tip too recent to confirm (only when there is one).
    #[serde(skip_serializing_if = "Option::is_none")]
    suspected: Option<&'a DetectedSuspect>,
    /// Points of contended runs left out of detection (only when there are some).
    #[serde(skip_serializing_if = "is_zero")]
    contended_points: usize,
    /// The testbed's noise record offered to detection (only when there is one).
    #[serde(skip_serializing_if = "Option::is_none")]
    noise_record: Option<RecordOffered>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One JSON object per series, one per line.
pub fn render_json_lines(series: &[SeriesDetection]) -> String {
    let mut out = String::new();
    for s in series {
        let (file, benchmark, unit) = match &s.source {
            SeriesSource::File(f) => (Some(f.as_str()), None, None),
            SeriesSource::Benchmark { key, unit, .. } => {
                (None, Some(key.as_str()), Some(unit.as_str()))
            }
        };
        let testbed = match &s.source {
            SeriesSource::Benchmark { testbed, .. } => Some(testbed.as_str()),
            SeriesSource::File(_) => None,
        };
        let line = JsonLine {
            file,
            benchmark,
            unit,
            testbed,
            points: s.points,
            change_points: &s.changes,
            suspected: s.suspected.as_ref(),
            contended_points: s.contended,
            noise_record: s.record,
        };
        out.push_str(&serde_json::to_string(&line).expect("detection serializes"));
        out.push('\n');
    }
    out
}

/// A table of every change point, then the series without any.
pub fn render_table(series: &[SeriesDetection]) -> String {
    let mut t = Table::new(&[
        "SERIES", ">POINTS", ">INDEX", ">BEFORE", ">AFTER", ">CHANGE", ">P", "COMMITS",
    ]);
    let mut quiet = Vec::new();
    let mut suspected = Vec::new();
    let mut contended = Vec::new();
    // A series is named by its testbed too when the output holds several.
    let mut testbeds: Vec<&str> = series
        .iter()
        .filter_map(|s| match &s.source {
            SeriesSource::Benchmark { testbed, .. } => Some(testbed.as_str()),
            SeriesSource::File(_) => None,
        })
        .collect();
    testbeds.sort_unstable();
    testbeds.dedup();
    for s in series {
        let (name, unit) = match &s.source {
            SeriesSource::File(f) => (f.clone(), None),
            SeriesSource::Benchmark {
                key, unit, testbed, ..
            } if testbeds.len() > 1 => (format!("{key} @ {testbed}"), Some(unit.as_str())),
            SeriesSource::Benchmark { key, unit, .. } => (key.clone(), Some(unit.as_str())),
        };
        if let Some(sus) = &s.suspected {
            suspected.push(suspect_line(&name, unit, sus));
        }
        if s.contended > 0 {
            contended.push(format!(
                "contended: {name}: {} {} of contended runs left out of detection\n",
                s.contended,
                if s.contended == 1 { "point" } else { "points" }
            ));
        }
        if s.changes.is_empty() {
            quiet.push(name);
            continue;
        }
        for c in &s.changes {
            let commits = match (&c.commit_before, &c.commit_after) {
                (Some(b), Some(a)) => format!("{}..{}", short(b), short(a)),
                (None, Some(a)) => short(a).to_string(),
                _ => "-".to_string(),
            };
            let change = c.change.rel_change;
            // Both levels in the unit that reads best for the level before.
            let level = |v: f64| match unit {
                Some(u) => DisplayUnit::for_value(u, c.change.before).show(v),
                None => sig(v, 4),
            };
            t.row(vec![
                name.clone(),
                s.points.to_string(),
                c.change.index.to_string(),
                level(c.change.before),
                level(c.change.after),
                if change > 0.0 {
                    format!("+{}", pct(change))
                } else {
                    pct(change)
                },
                if c.change.p_value < 1e-4 {
                    "<0.0001".to_string()
                } else {
                    sig(c.change.p_value, 2)
                },
                commits,
            ]);
        }
    }
    let mut out = String::new();
    if !t.is_empty() {
        out.push_str(&t.render());
    }
    if !quiet.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("no change points: {}\n", quiet.join(", ")));
    }
    for line in suspected.into_iter().chain(contended) {
        out.push_str(&line);
    }
    out.push_str(&record_line(series));
    out
}

/// `noise record: 3 of 4 series …`: how many series detection had the testbed's noise record
/// for (pooled with the points' own variance on short histories where the two agree); empty
/// when none had.
fn record_line(series: &[SeriesDetection]) -> String {
    let with: Vec<&RecordOffered> = series.iter().filter_map(|s| s.record.as_ref()).collect();
    let Some(most) = with.iter().map(|r| r.pairs).max() else {
        return String::new();
    };
    format!(
        "noise record: {} of {} series had the testbed's record of earlier pairs (up to {most}) to pool on short histories where the points agree with it\n",
        with.len(),
        series.len()
    )
}

/// `suspected: SERIES: +13.9% (10.21 → 11.52) from point 5 (commits a..b), 2 points after
/// it; 3 more would confirm or clear it`: a step at the tip too recent to be a change point.
fn suspect_line(name: &str, unit: Option<&str>, sus: &DetectedSuspect) -> String {
    let c = &sus.change;
    let level = |v: f64| match unit {
        Some(u) => DisplayUnit::for_value(u, c.before).show(v),
        None => sig(v, 4),
    };
    let change = if c.rel_change > 0.0 {
        format!("+{}", pct(c.rel_change))
    } else {
        pct(c.rel_change)
    };
    let commits = match (&sus.commit_before, &sus.commit_after) {
        (Some(b), Some(a)) => format!(" (commits {}..{})", short(b), short(a)),
        (None, Some(a)) => format!(" (commit {})", short(a)),
        _ => String::new(),
    };
    // Points of stored history are commits; of a file, its values.
    let what = if unit.is_some() { "commits" } else { "points" };
    format!(
        "suspected: {name}: {change} ({} -> {}) from point {}{commits}, {} {what} after it; {} more {what} would confirm or clear it\n",
        level(c.before),
        level(c.after),
        c.index,
        c.points_after,
        c.more_points,
    )
}

fn short(commit: &str) -> &str {
    if commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()) {
        &commit[..12]
    } else {
        commit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_stats::changepoint::ChangePoint;

    fn cp(index: usize, before: f64, after: f64) -> ChangePoint {
        ChangePoint {
            index,
            before,
            after,
            rel_change: after / before - 1.0,
            p_value: 1e-6,
        }
    }

    fn series() -> Vec<SeriesDetection> {
        vec![
            SeriesDetection {
                source: SeriesSource::File("step.csv".into()),
                points: 120,
                changes: vec![DetectedChange {
                    change: cp(60, 100.0, 130.0),
                    commit_before: None,
                    commit_after: None,
                    run_after: None,
                }],
                suspected: None,
                contended: 0,
                record: None,
            },
            SeriesDetection {
                source: SeriesSource::Benchmark {
                    key: "kernel/gemm_f32[n=64]/throughput".into(),
                    unit: "GFLOP/s".into(),
                    testbed: "cpu-box".into(),
                },
                points: 40,
                changes: vec![DetectedChange {
                    change: cp(25, 190.0, 171.0),
                    commit_before: Some("a".repeat(40)),
                    commit_after: Some("b".repeat(40)),
                    run_after: Some("0190-run".into()),
                }],
                suspected: None,
                contended: 0,
                record: Some(RecordOffered {
                    pairs: 3,
                    dof: 21.5,
                    point_cv_pct: 0.8,
                }),
            },
            SeriesDetection {
                source: SeriesSource::Benchmark {
                    key: "kernel/stream[bytes=2097152]/time".into(),
                    unit: "ns".into(),
                    testbed: "cpu-box".into(),
                },
                points: 30,
                changes: vec![DetectedChange {
                    change: cp(12, 149_690.0, 152_000.0),
                    commit_before: Some("c".repeat(40)),
                    commit_after: Some("d".repeat(40)),
                    run_after: Some("0191-run".into()),
                }],
                suspected: None,
                contended: 0,
                record: None,
            },
            SeriesDetection {
                source: SeriesSource::File("flat.json".into()),
                points: 50,
                changes: vec![],
                suspected: None,
                contended: 0,
                record: None,
            },
        ]
    }

    #[test]
    fn a_suspected_step_says_how_many_more_points_settle_it() {
        let sus = DetectedSuspect {
            change: pitwall_stats::changepoint::SuspectedChange {
                index: 5,
                before: 10_190_000.0,
                after: 11_515_000.0,
                rel_change: 0.13,
                p_value: 1e-4,
                points_after: 2,
                more_points: 3,
            },
            commit_before: Some("a".repeat(40)),
            commit_after: Some("b".repeat(40)),
        };
        let s = vec![SeriesDetection {
            source: SeriesSource::Benchmark {
                key: "c/sort/time".into(),
                unit: "ns".into(),
                testbed: "cpu-box".into(),
            },
            points: 7,
            changes: vec![],
            suspected: Some(sus),
            contended: 0,
            record: None,
        }];
        let table = render_table(&s);
        assert!(table.contains("no change points: c/sort/time\n"), "{table}");
        assert!(!table.contains("contended"), "{table}");
        assert!(
            table.contains(&format!(
                "suspected: c/sort/time: +13% (10.19 ms -> 11.52 ms) from point 5 (commits {}..{}), 2 commits after it; 3 more commits would confirm or clear it\n",
                "a".repeat(12),
                "b".repeat(12)
            )),
            "{table}"
        );
        let json: serde_json::Value = serde_json::from_str(render_json_lines(&s).trim()).unwrap();
        assert_eq!(json["suspected"]["index"], 5);
        assert_eq!(json["suspected"]["more_points"], 3);
        assert_eq!(json["suspected"]["commit_after"], "b".repeat(40));
    }

    #[test]
    fn table_snapshot() {
        let out = render_table(&series());
        // Times read as the CLI's run table and the report show them.
        assert!(
            out.contains("149.7 µs") && out.contains("152.0 µs"),
            "{out}"
        );
        insta::assert_snapshot!(out);
    }

    #[test]
    fn json_lines_snapshot() {
        let out = render_json_lines(&series());
        assert_eq!(out.lines().count(), 4);
        for line in out.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
        insta::assert_snapshot!(out);
    }

    #[test]
    fn contended_points_left_out_are_said() {
        let mut s = series();
        s[1].contended = 3;
        let table = render_table(&s);
        assert!(
            table.contains(
                "contended: kernel/gemm_f32[n=64]/throughput: 3 points of contended runs left out of detection\n"
            ),
            "{table}"
        );
        let json = render_json_lines(&s);
        assert_eq!(json.matches("\"contended_points\":3").count(), 1, "{json}");
    }
}
