//! Rendering of change points (`pitwall detect`): a table for people and one JSON object per
//! series per line for machines.

use serde::Serialize;

pub use pitwall_analysis::history::{DetectedChange, SeriesDetection, SeriesSource};

use crate::number::{DisplayUnit, pct, sig};
use crate::table::Table;

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
    out
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
            },
            SeriesDetection {
                source: SeriesSource::File("flat.json".into()),
                points: 50,
                changes: vec![],
            },
        ]
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
}
