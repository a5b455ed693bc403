//! Rendering of alerts (`pitwall alerts`, `pitwall alert …`): an aligned table for people,
//! whose cells escape control characters (benchmark names and notes are untrusted text), and
//! one JSON document `{"alerts": [...]}` for programs; one alert with its recorded changes
//! (`pitwall alert show`).

use pitwall_schema::{Alert, AlertChange, AlertStatus};
use serde::Serialize;

use crate::table::{Table, escape_controls};
use pitwall_analysis::number::pct;

/// One alert as JSON: the stored record with its series flattened and the interval as
/// `[low, high]` (null when none).
#[derive(Serialize)]
struct JsonAlert<'a> {
    id: &'a str,
    status: &'a str,
    kind: &'a str,
    project: &'a str,
    key: &'a str,
    measure: &'a str,
    branch: &'a str,
    testbed: &'a str,
    last_good: &'a str,
    first_bad: &'a str,
    first_bad_run: &'a str,
    before: f64,
    after: f64,
    rel_change: f64,
    ci: Option<[f64; 2]>,
    note: Option<&'a str>,
    culprit: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    more_points: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
    created_at: &'a str,
    updated_at: &'a str,
}

impl<'a> JsonAlert<'a> {
    fn of(a: &'a Alert) -> JsonAlert<'a> {
        JsonAlert {
            id: &a.id,
            status: a.status.as_str(),
            kind: a.kind.as_str(),
            project: &a.series.project,
            key: &a.series.key,
            measure: &a.series.measure,
            branch: &a.series.branch,
            testbed: &a.series.testbed,
            last_good: &a.last_good,
            first_bad: &a.first_bad,
            first_bad_run: &a.first_bad_run,
            before: a.before,
            after: a.after,
            rel_change: a.rel_change,
            ci: a.ci.map(|(l, h)| [l, h]),
            note: a.note.as_deref(),
            culprit: a.culprit.as_deref(),
            more_points: a.more_points,
            label: a.label.map(|l| l.as_str()),
            created_at: &a.created_at,
            updated_at: &a.updated_at,
        }
    }
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    alerts: Vec<JsonAlert<'a>>,
}

/// `{"alerts": [...]}`, pretty-printed, in the order given, with a final newline.
pub fn render_json(alerts: &[Alert]) -> String {
    let doc = JsonDoc {
        alerts: alerts.iter().map(JsonAlert::of).collect(),
    };
    let mut out = serde_json::to_string_pretty(&doc).expect("alerts serialize");
    out.push('\n');
    out
}

/// A signed percentage: `+8.1%`, `-3.2%`.
fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", pct(v))
    } else {
        pct(v)
    }
}

/// The interval of the change, `[+7.2%, +9.0%]`, or `-`.
fn interval(a: &Alert) -> String {
    a.ci.map_or_else(
        || "-".to_string(),
        |(l, h)| format!("[{}, {}]", signed(l), signed(h)),
    )
}

/// The first 12 characters of a full commit id; anything else as it is.
pub fn short(commit: &str) -> &str {
    if commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()) {
        &commit[..12]
    } else {
        commit
    }
}

/// One row per alert in the order given (the use case lists open alerts first), notes below
/// the table; `no alerts` when there are none.
pub fn render_table(alerts: &[Alert]) -> String {
    if alerts.is_empty() {
        return "no alerts\n".to_string();
    }
    let mut t = Table::new(&[
        "ID",
        "STATUS",
        "BENCHMARK",
        "TESTBED",
        "BRANCH",
        ">CHANGE",
        "95% CI",
        "COMMITS",
    ]);
    for a in alerts {
        t.row(vec![
            a.id.clone(),
            a.status.to_string(),
            a.series.key.clone(),
            a.series.testbed.clone(),
            a.series.branch.clone(),
            signed(a.rel_change),
            interval(a),
            format!("{}..{}", short(&a.last_good), short(&a.first_bad)),
        ]);
    }
    let mut out = t.render();
    let notes: Vec<&Alert> = alerts
        .iter()
        .filter(|a| {
            a.note.is_some() || a.culprit.is_some() || a.more_points.is_some() || a.label.is_some()
        })
        .collect();
    if !notes.is_empty() {
        out.push('\n');
    }
    for a in notes {
        if let Some(n) = a.more_points.filter(|_| a.status == AlertStatus::Suspected) {
            out.push_str(&format!(
                "{}: suspected: {n} more run(s) confirm or clear it\n",
                a.id
            ));
        }
        if let Some(l) = a.label {
            out.push_str(&format!("{}: {l}\n", a.id));
        }
        if let Some(c) = &a.culprit {
            out.push_str(&format!("{}: culprit {}\n", a.id, escape_controls(c)));
        }
        if let Some(n) = &a.note {
            out.push_str(&format!("{}: note: {}\n", a.id, escape_controls(n)));
        }
    }
    out
}

/// The one line `pitwall alert ack|dismiss|fix|expect` prints about the alert it changed.
pub fn render_triaged(a: &Alert) -> String {
    let note = a
        .note
        .as_deref()
        .map(|n| format!(" (note: {})", escape_controls(n)))
        .unwrap_or_default();
    format!(
        "alert {} is {}: {} on {} {}{}\n",
        escape_controls(&a.id),
        a.status,
        escape_controls(&a.series.key),
        escape_controls(&a.series.testbed),
        signed(a.rel_change),
        note
    )
}

/// `pitwall alert show`: the alert's row and notes, then its changes oldest first (when, who,
/// the status before and after, what note or culprit it set).
pub fn render_show_table(a: &Alert, changes: &[AlertChange]) -> String {
    let mut out = render_table(std::slice::from_ref(a));
    out.push('\n');
    if changes.is_empty() {
        out.push_str("no recorded changes\n");
        return out;
    }
    let mut t = Table::new(&["AT", "BY", "STATUS", "SET"]);
    for c in changes {
        let status = match (c.from, c.to) {
            (Some(f), Some(t)) => format!("{f} -> {t}"),
            (None, Some(t)) => format!("-> {t}"),
            _ => "-".to_string(),
        };
        let mut set = Vec::new();
        if let Some(n) = &c.note {
            set.push(format!("note: {n}"));
        }
        if let Some(k) = &c.culprit {
            set.push(format!("culprit {}", short(k)));
        }
        t.row(vec![
            c.at.clone(),
            c.by.clone().unwrap_or_else(|| "-".into()),
            status,
            if set.is_empty() {
                "-".into()
            } else {
                set.join("; ")
            },
        ]);
    }
    out.push_str(&t.render());
    out
}

/// `pitwall alert show --format json`: `{"alert": {...}, "changes": [...]}`, pretty-printed,
/// with a final newline.
pub fn render_show_json(a: &Alert, changes: &[AlertChange]) -> String {
    let doc = serde_json::json!({"alert": JsonAlert::of(a), "changes": changes});
    let mut out = serde_json::to_string_pretty(&doc).expect("alert serializes");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::{AlertKind, AlertLabel};

    fn alerts() -> Vec<Alert> {
        let a = crate::test_alerts::regression();
        let mut b = a.clone();
        b.id = "77aa00bb11cc".into();
        b.status = AlertStatus::Acknowledged;
        b.series.key = "kernel/evil\u{1b}[31mred/time".into();
        b.series.testbed = "cpu-b".into();
        b.rel_change = 0.052;
        b.ci = None;
        b.note = Some("known:\nnew \u{1b}[2Jallocator".into());
        b.culprit = Some("c".repeat(40));
        let mut c = a.clone();
        c.id = "0011223344aa".into();
        c.status = AlertStatus::Improvement;
        c.kind = AlertKind::Improvement;
        c.rel_change = -0.12;
        c.ci = Some((-0.15, -0.09));
        let mut d = a.clone();
        d.id = "5500aa11bb22".into();
        d.status = AlertStatus::Suspected;
        d.more_points = Some(3);
        d.label = Some(AlertLabel::NoCodeChanged);
        vec![a, b, c, d]
    }

    #[test]
    fn table_snapshot() {
        insta::assert_snapshot!(render_table(&alerts()));
    }

    #[test]
    fn json_snapshot() {
        insta::assert_snapshot!(render_json(&alerts()));
    }

    #[test]
    fn triaged_line_snapshot() {
        insta::assert_snapshot!(render_triaged(&alerts()[1]));
    }

    fn changes() -> Vec<AlertChange> {
        vec![
            AlertChange {
                at: "2026-12-01T10:05:00Z".into(),
                by: Some(pitwall_schema::DETECTION.into()),
                from: Some(AlertStatus::Suspected),
                to: Some(AlertStatus::Active),
                note: None,
                culprit: None,
            },
            AlertChange {
                at: "2026-12-01T11:00:00Z".into(),
                by: Some("alice\u{1b}[31m".into()),
                from: Some(AlertStatus::Active),
                to: Some(AlertStatus::Acknowledged),
                note: Some("on it\nsee #42".into()),
                culprit: None,
            },
            AlertChange {
                at: "2026-12-01T12:00:00Z".into(),
                by: Some("local:bob".into()),
                from: None,
                to: None,
                note: None,
                culprit: Some("c".repeat(40)),
            },
        ]
    }

    #[test]
    fn show_snapshots() {
        let a = &alerts()[1];
        insta::assert_snapshot!("show_table", render_show_table(a, &changes()));
        insta::assert_snapshot!("show_json", render_show_json(a, &changes()));
        insta::assert_snapshot!("show_table_no_changes", render_show_table(a, &[]));
        assert!(!render_show_table(a, &changes()).contains('\u{1b}'));
    }

    #[test]
    fn untrusted_text_is_escaped_and_empty_lists_say_so() {
        let t = render_table(&alerts());
        assert!(!t.contains('\u{1b}'), "{t}");
        assert!(!render_triaged(&alerts()[1]).contains('\u{1b}'));
        assert_eq!(render_table(&[]), "no alerts\n");
        let v: serde_json::Value = serde_json::from_str(&render_json(&alerts())).unwrap();
        assert_eq!(v["alerts"][0]["first_bad"], "b".repeat(40));
        assert_eq!(v["alerts"][1]["ci"], serde_json::Value::Null);
        assert_eq!(render_json(&[]), "{\n  \"alerts\": []\n}\n");
    }
}
