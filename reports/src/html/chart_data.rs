//! The data of a benchmark page's interactive history chart (`assets/history.js`, drawn with
//! the vendored uPlot): the points, change points, alerts and set-apart runs of one series as
//! JSON for a `<script type="application/json">` element. Only rendering: every number comes
//! from the analysis' series; this module lays it out and escapes it for that sink.

use std::collections::HashMap;

use pitwall_schema::{Alert, Run};
use serde::Serialize;

use super::model::{Series, run_label, short_commit};
use pitwall_analysis::number::DisplayUnit;

/// The clean points of the history, a column per field (x is a point's index in commit
/// order): a thousand runs make a page of about 150 KB rather than twice that. Texts of the
/// runs are borrowed, not copied: a page has 10,000 points.
#[derive(Debug, Serialize)]
struct Points<'a> {
    commit: Vec<&'a str>,
    subject: Vec<&'a str>,
    run: Vec<&'a str>,
    /// Values in the page's unit, as numbers for the axes.
    median: Vec<f64>,
    ci_lo: Vec<Option<f64>>,
    ci_hi: Vec<Option<f64>>,
    min: Vec<f64>,
    max: Vec<f64>,
    /// As the tooltip shows them, without the unit (`149.7`, `148.1–151.2`).
    median_text: Vec<String>,
    ci_text: Vec<String>,
    n: Vec<usize>,
    throttled: Vec<usize>,
}

impl<'a> Points<'a> {
    fn with_capacity(n: usize) -> Self {
        Points {
            commit: Vec::with_capacity(n),
            subject: Vec::with_capacity(n),
            run: Vec::with_capacity(n),
            median: Vec::with_capacity(n),
            ci_lo: Vec::with_capacity(n),
            ci_hi: Vec::with_capacity(n),
            min: Vec::with_capacity(n),
            max: Vec::with_capacity(n),
            median_text: Vec::with_capacity(n),
            ci_text: Vec::with_capacity(n),
            n: Vec::with_capacity(n),
            throttled: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, p: &pitwall_analysis::history::Point, run: &'a Run, unit: &DisplayUnit) {
        let scaled = |v: f64| round6(unit.scale(v));
        self.commit.push(short_commit(&run.commit));
        self.subject.push(subject_of(run));
        self.run.push(&run.id);
        self.median.push(scaled(p.median));
        self.ci_lo.push(p.ci.map(|c| scaled(c.0)));
        self.ci_hi.push(p.ci.map(|c| scaled(c.1)));
        self.min.push(scaled(p.min));
        self.max.push(scaled(p.max));
        self.median_text.push(unit.num(p.median));
        self.ci_text.push(p.ci.map_or_else(
            || "n < 6".into(),
            |(a, b)| {
                let mut text = unit.num(a);
                text.push('–');
                text.push_str(&unit.num(b));
                text
            },
        ));
        self.n.push(p.n);
        self.throttled.push(p.throttled);
    }
}

/// A contended or excluded point, drawn grey at `x` (between the clean points around it).
#[derive(Debug, Serialize)]
struct ApartView {
    x: f64,
    commit: String,
    subject: String,
    run: String,
    median: f64,
    median_text: String,
    why: String,
}

/// A vertical mark between two points (`x` half-way) or at one: a change point or an alert.
#[derive(Debug, Serialize)]
struct MarkView {
    x: f64,
    /// `worse` or `better` for a change point; the alert's status for an alert.
    class: String,
    /// Drawn beside the line (`+10.0%`, `alert`).
    short: String,
    /// The tooltip's line for it.
    label: String,
}

/// Another testbed's or branch's series of the same benchmark measure, which the reader can
/// overlay on the chart: each point at the x of the same commit in this series, else between
/// the points of this series measured before and after it.
#[derive(Debug, Serialize)]
struct Overlay {
    /// `testbed h100-b`, `branch release`, or both.
    label: String,
    x: Vec<f64>,
    commit: Vec<String>,
    run: Vec<String>,
    median: Vec<f64>,
    median_text: Vec<String>,
}

/// Everything `history.js` draws.
#[derive(Debug, Serialize)]
struct ChartData<'a> {
    key: String,
    unit: String,
    points: Points<'a>,
    apart: Vec<ApartView>,
    changes: Vec<MarkView>,
    alerts: Vec<MarkView>,
    overlays: Vec<Overlay>,
}

/// Steps between two overlay points that would share an x.
const OVERLAY_NUDGE: f64 = 0.01;

/// `other` laid over `s`'s x axis (see [`Overlay`]); its x strictly increasing.
fn overlay(s: &Series, other: &Series, runs: &[Run], unit: &DisplayUnit) -> Overlay {
    let mut label = Vec::new();
    if other.testbed != s.testbed {
        label.push(format!("testbed {}", other.testbed));
    }
    if other.branch != s.branch {
        label.push(format!("branch {}", other.branch));
    }
    let mut o = Overlay {
        label: label.join(", "),
        x: Vec::new(),
        commit: Vec::new(),
        run: Vec::new(),
        median: Vec::new(),
        median_text: Vec::new(),
    };
    // Where each commit of `s` first is, and when its points started, sorted: an overlay of
    // 10,000 points over 10,000 is placed in milliseconds, not by comparing every pair.
    let mut at_commit: HashMap<&str, usize> = HashMap::new();
    for (i, q) in s.points.iter().enumerate() {
        at_commit.entry(runs[q.run].commit.as_str()).or_insert(i);
    }
    let mut started: Vec<&str> = s
        .points
        .iter()
        .map(|q| runs[q.run].started_at.as_str())
        .collect();
    started.sort_unstable();
    for p in &other.points {
        let run = &runs[p.run];
        let x = at_commit.get(run.commit.as_str()).map_or_else(
            || {
                let before = started.partition_point(|&t| t <= run.started_at.as_str());
                before as f64 - 0.5
            },
            |&i| i as f64,
        );
        let x = match o.x.last() {
            Some(&prev) if x <= prev => prev + OVERLAY_NUDGE,
            _ => x,
        };
        o.x.push(x);
        o.commit.push(short_commit(&run.commit).to_string());
        o.run.push(run.id.clone());
        o.median.push(round6(unit.scale(p.median)));
        o.median_text.push(unit.num(p.median));
    }
    o
}

/// `v` to 6 significant digits: more than a chart can show, and a shorter page.
fn round6(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let m = 10f64.powi(5 - v.abs().log10().floor() as i32);
    (v * m).round() / m
}

fn subject(run: &Run) -> String {
    subject_of(run).to_string()
}

/// The subject of the run's commit, or nothing.
fn subject_of(run: &Run) -> &str {
    run.commit_info.as_ref().map_or("", |c| c.subject.as_str())
}

/// The alerts of this series (same testbed, branch and key), each at the point of its first
/// bad run (else of its first bad commit); an alert whose point is not in the history is left
/// out.
fn alert_marks(s: &Series, runs: &[Run], alerts: &[Alert]) -> Vec<MarkView> {
    alerts
        .iter()
        .filter(|a| {
            a.series.testbed == s.testbed && a.series.branch == s.branch && a.series.key == s.key
        })
        .filter_map(|a| {
            let at = s
                .points
                .iter()
                .position(|p| p.runs.iter().any(|&r| runs[r].id == a.first_bad_run))
                .or_else(|| {
                    s.points
                        .iter()
                        .position(|p| runs[p.run].commit == a.first_bad)
                })?;
            // At the first bad point itself: a change point's line lies half-way before it.
            Some(MarkView {
                x: at as f64,
                class: format!("{:?}", a.status).to_lowercase(),
                short: "alert".into(),
                label: format!(
                    "alert {} ({:?}, {:?}): {}",
                    a.id,
                    a.kind,
                    a.status,
                    super::model::signed_pct(a.rel_change)
                ),
            })
        })
        .collect()
}

/// The chart's data as JSON, safe inside a `<script type="application/json">` element: see
/// [`script_json`].
/// `others`: the series of the same benchmark measure on other testbeds or branches, which
/// the reader may overlay.
pub(crate) fn history_json(
    s: &Series,
    others: &[&Series],
    runs: &[Run],
    alerts: &[Alert],
    unit: &DisplayUnit,
) -> String {
    let mut points = Points::with_capacity(s.points.len());
    for p in &s.points {
        points.push(p, &runs[p.run], unit);
    }
    let contended = s.contended.iter().map(|c| (c, "contended: "));
    let apart = contended
        .chain(s.excluded.iter().map(|c| (c, "")))
        .map(|(c, why)| {
            let run = &runs[c.point.run];
            ApartView {
                x: c.after as f64 - 0.5,
                commit: short_commit(&run.commit).to_string(),
                subject: subject(run),
                run: run.id.clone(),
                median: round6(unit.scale(c.point.median)),
                median_text: unit.num(c.point.median),
                why: format!("{why}{}", c.reasons.join("; ")),
            }
        })
        .collect();
    let changes = s
        .changes
        .iter()
        .map(|cp| MarkView {
            x: cp.index as f64 - 0.5,
            short: super::model::signed_pct(cp.rel_change),
            class: if s.is_worse(cp.rel_change) {
                "worse"
            } else {
                "better"
            }
            .into(),
            label: format!(
                "change between {} and {}: {}",
                run_label(&runs[s.points[cp.index - 1].run]),
                run_label(&runs[s.points[cp.index].run]),
                super::model::signed_pct(cp.rel_change)
            ),
        })
        .collect();
    let data = ChartData {
        key: s.key.clone(),
        unit: unit.name().to_string(),
        points,
        apart,
        changes,
        alerts: alert_marks(s, runs, alerts),
        overlays: others.iter().map(|o| overlay(s, o, runs, unit)).collect(),
    };
    script_json(&serde_json::to_string(&data).expect("chart data serializes"))
}

/// JSON text made safe to place inside an HTML `<script>` element: `<`, `>` and `&` are written
/// `\u003c`, `\u003e`, `\u0026` (so no `</script>` or `<!--` can appear), and U+2028 and
/// U+2029 as `\u2028`, `\u2029`. Every one of them can only occur inside a JSON string, where
/// the escape means the same character.
pub(crate) fn script_json(json: &str) -> String {
    // Byte by byte, copying the text between escapes whole: a 10,000-point chart is a
    // megabyte of JSON. Every escaped character is ASCII or starts with the byte 0xE2, so the
    // text is only ever cut at a character's start.
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len() + json.len() / 32);
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let escape = match bytes[i] {
            b'<' => Some(("\\u003c", 1)),
            b'>' => Some(("\\u003e", 1)),
            b'&' => Some(("\\u0026", 1)),
            0xE2 if bytes.get(i + 1) == Some(&0x80) => match bytes.get(i + 2) {
                Some(0xA8) => Some(("\\u2028", 3)),
                Some(0xA9) => Some(("\\u2029", 3)),
                _ => None,
            },
            _ => None,
        };
        match escape {
            Some((text, len)) => {
                out.push_str(&json[start..i]);
                out.push_str(text);
                i += len;
                start = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&json[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{model, synthetic};

    #[test]
    fn script_json_cannot_close_its_element() {
        let hostile = "</script><img src=x onerror=alert(1)><!-- & \u{2028}\u{2029} 1–2 € é";
        let text = script_json(&serde_json::to_string(&hostile).unwrap());
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        assert!(!text.contains('\u{2028}') && !text.contains('\u{2029}'));
        let back: String = serde_json::from_str(&text).unwrap();
        assert_eq!(back, hostile);
        assert!(
            text.contains("1–2 € é"),
            "other characters are kept as they are: {text}"
        );
    }

    #[test]
    fn the_data_holds_points_marks_and_set_apart_runs() {
        let mut runs = synthetic::runs(1, 12, 5);
        runs[11].commit_info.as_mut().unwrap().subject = "</script><b>x</b>".into();
        runs[5].exclusion = Some(pitwall_schema::Exclusion {
            note: "rebooted <mid-run>".into(),
            at: "2026-12-01T00:00:00Z".into(),
        });
        let s = model::collect(&runs, "main").remove(0);
        let unit = model::display_unit(&s);
        let text = history_json(&s, &[], &runs, &[], &unit);
        assert!(!text.contains("</script>"), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["points"]["median"].as_array().unwrap().len(), 11);
        assert_eq!(v["points"]["subject"][10], "</script><b>x</b>");
        assert_eq!(v["apart"][0]["x"], 4.5);
        assert_eq!(
            v["apart"][0]["why"],
            "excluded from history: rebooted <mid-run>"
        );
        assert_eq!(v["unit"], unit.name());
    }

    /// Another testbed's series lies over this one: at the same commit's x where it has one,
    /// between the points measured around it otherwise, never two points at one x.
    #[test]
    fn an_overlay_shares_the_commits_x_and_fits_between_the_others() {
        let mut runs = synthetic::runs(1, 6, 5);
        let mut other: Vec<Run> = runs.iter().take(3).cloned().collect();
        for (i, r) in other.iter_mut().enumerate() {
            r.id = format!("other-{i}");
            r.testbed = Some("h100-b".into());
        }
        // The third run of the other testbed measured a commit this one never did, last.
        other[2].commit = "f".repeat(40);
        other[2].started_at = "2099-01-01T00:00:00Z".into();
        runs.extend(other);
        let all = model::collect(&runs, "main");
        let (main, b): (Vec<_>, Vec<_>) = all.iter().partition(|s| s.testbed != "h100-b");
        let unit = model::display_unit(main[0]);
        let text = history_json(main[0], &b, &runs, &[], &unit);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let o = &v["overlays"][0];
        assert_eq!(o["label"], "testbed h100-b");
        assert_eq!(o["x"], serde_json::json!([0.0, 1.0, 5.5]));
        assert_eq!(o["run"][2], "other-2");
    }
}
