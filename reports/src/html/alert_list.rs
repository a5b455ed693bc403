//! The index page's list of alerts: what detection found in the stored histories and what
//! people decided, open alerts first (`pitwall_analysis::sort_open_first`, the order
//! `pitwall alerts` shows), as values the `index.html` template renders.

use pitwall_schema::Alert;
use serde::Serialize;

use pitwall_analysis::number::pct;

/// One alert as the index shows it.
#[derive(Debug, Serialize)]
pub(crate) struct AlertRow {
    pub id: String,
    pub status: &'static str,
    /// Whether it still wants attention (the row is highlighted).
    pub open: bool,
    pub key: String,
    pub testbed: String,
    pub branch: String,
    pub change: String,
    pub ci: String,
    pub last_good: String,
    pub first_bad: String,
    pub culprit: Option<String>,
    pub note: Option<String>,
    /// A suspected alert's runs that would confirm or clear it.
    pub more_points: Option<u32>,
    /// What detection noticed (`no code changed: …`).
    pub label: Option<&'static str>,
    /// The address of the series' page, relative to the page's root (`pitwall serve` only).
    pub bench: Option<String>,
}

fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", pct(v))
    } else {
        pct(v)
    }
}

/// The rows, open alerts first.
pub(crate) fn rows(alerts: &[Alert]) -> Vec<AlertRow> {
    let mut sorted = alerts.to_vec();
    pitwall_analysis::sort_open_first(&mut sorted);
    sorted
        .into_iter()
        .map(|a| AlertRow {
            status: a.status.as_str(),
            open: a.status.is_open(),
            key: a.series.key,
            testbed: a.series.testbed,
            branch: a.series.branch,
            change: signed(a.rel_change),
            ci: a.ci.map_or_else(
                || "-".to_string(),
                |(l, h)| format!("{} to {}", signed(l), signed(h)),
            ),
            last_good: super::model::short_commit(&a.last_good).to_string(),
            first_bad: super::model::short_commit(&a.first_bad).to_string(),
            culprit: a
                .culprit
                .as_deref()
                .map(|c| super::model::short_commit(c).to_string()),
            note: a.note,
            more_points: a.more_points,
            label: a.label.map(|l| l.message()),
            bench: None,
            id: a.id,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pitwall_schema::{AlertKind, AlertSeries, AlertStatus};

    use super::super::{ReportInput, synthetic, write_site};
    use super::*;

    fn alert(id: &str, status: AlertStatus, created_at: &str) -> Alert {
        Alert {
            id: id.into(),
            status,
            kind: AlertKind::Regression,
            series: AlertSeries {
                project: "demo".into(),
                testbed: "h200-a".into(),
                branch: "main".into(),
                key: "kernel/gemm[size=64]/time".into(),
                measure: "time".into(),
            },
            last_good: "a".repeat(40),
            first_bad: "b".repeat(40),
            first_bad_run: "r".into(),
            before: 100.0,
            after: 108.0,
            rel_change: 0.08,
            ci: Some((0.071, 0.09)),
            note: None,
            culprit: None,
            more_points: None,
            label: None,
            created_at: created_at.into(),
            updated_at: created_at.into(),
        }
    }

    /// The alerts section of the index for a fixed set of alerts, stored in creation order:
    /// the open one (created in between) comes first, then the acknowledged one, then the
    /// improvement (`AlertStatus::ALL` order); a note with markup is escaped.
    #[test]
    fn the_index_lists_open_alerts_first() {
        let mut acked = alert(
            "aaaa00000001",
            AlertStatus::Acknowledged,
            "2026-12-01T10:00:00Z",
        );
        acked.note = Some("tracked in <b>#42</b>".into());
        acked.culprit = Some("c".repeat(40));
        let active = alert("aaaa00000002", AlertStatus::Active, "2026-12-01T11:00:00Z");
        let mut better = alert(
            "aaaa00000003",
            AlertStatus::Improvement,
            "2026-12-01T12:00:00Z",
        );
        better.kind = AlertKind::Improvement;
        better.rel_change = -0.1;
        better.ci = None;
        better.series.key = "kernel/evil\u{1b}[31m/time".into();
        let mut suspected = alert(
            "aaaa00000004",
            AlertStatus::Suspected,
            "2026-12-01T13:00:00Z",
        );
        suspected.more_points = Some(3);
        suspected.label = Some(pitwall_schema::AlertLabel::NoCodeChanged);
        let alerts = [acked, active, better, suspected];
        let runs = synthetic::runs(2, 6, 4);
        let dir = tempfile::tempdir().unwrap();
        let input = ReportInput {
            project: "demo",
            runs: &runs,
            comparisons: &[],
            generated_at: "2026-12-02T10:00:00Z",
            history_branch: "main",
            alerts: &alerts,
            histories: None,
            local: None,
        };
        write_site(&input, dir.path()).unwrap();
        let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
        let start = index.find(r#"<section class="alerts">"#).unwrap();
        let end = start + index[start..].find("</section>").unwrap() + "</section>".len();
        let section = &index[start..end];
        let order: Vec<usize> = [
            "aaaa00000002",
            "aaaa00000004",
            "aaaa00000001",
            "aaaa00000003",
        ]
        .iter()
        .map(|id| section.find(id).unwrap())
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{section}");
        assert!(
            !section.contains("<b>") && !section.contains('\u{1b}'),
            "{section}"
        );
        assert!(
            section.contains("no code changed: environment or noise suspected")
                && section.contains("3 more run(s)"),
            "{section}"
        );
        insta::assert_snapshot!(section);
    }

    #[test]
    fn no_alerts_no_section() {
        let dir = tempfile::tempdir().unwrap();
        let input = ReportInput {
            project: "demo",
            runs: &[],
            comparisons: &[],
            generated_at: "t",
            history_branch: "main",
            alerts: &[],
            histories: None,
            local: None,
        };
        write_site(&input, dir.path()).unwrap();
        let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
        assert!(!index.contains(r#"class="alerts""#));
    }
}
