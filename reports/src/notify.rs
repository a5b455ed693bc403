//! Alert notifications as text: the message new alerts make, as a Slack-compatible JSON body
//! (`{"text": "…"}`, which Slack incoming webhooks, Mattermost, Rocket.Chat and most chat
//! bridges accept), and the title and body of a regression alert's GitHub issue. Delivering
//! them is `pitwall-forge`'s (`webhook::post_webhook`, `github::publish_issues`).

pub use pitwall_schema::forge::alert_marker;
use pitwall_schema::{Alert, AlertKind};

use crate::alerts::short;
use crate::table::escape_controls;
use pitwall_analysis::number::pct;

/// Text for Slack's `text` field: `&`, `<` and `>` escaped as Slack asks
/// (<https://api.slack.com/reference/surfaces/formatting#escaping>), control characters shown
/// as `\xNN`, so a benchmark name cannot inject a link, a mention or a line.
pub fn slack_escape(text: &str) -> String {
    escape_controls(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", pct(v))
    } else {
        pct(v)
    }
}

/// A name in the chat message: a code span ([`crate::markdown::code_span`]: no backtick inside
/// can close it, hidden characters shown, so `@channel` in a branch name pings nobody in
/// Mattermost or Rocket.Chat), with `&`, `<` and `>` as Slack asks even inside code.
fn chat_name(name: &str) -> String {
    crate::markdown::code_span(name)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One line per alert, after a heading line naming how many there are.
pub fn message(project: &str, alerts: &[Alert]) -> String {
    let regressions = alerts
        .iter()
        .filter(|a| a.kind == AlertKind::Regression)
        .count();
    let mut out = format!(
        "pitwall {}: {} new alert(s), {} regression(s)",
        chat_name(project),
        alerts.len(),
        regressions
    );
    for a in alerts {
        let ci =
            a.ci.map(|(l, h)| format!(" [{}, {}]", signed(l), signed(h)))
                .unwrap_or_default();
        let label = a
            .label
            .map(|l| format!("; {}", slack_escape(l.message())))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n• {} {} on {} ({}): {}{} between {} and {} (alert {}){}",
            a.kind.as_str(),
            chat_name(&a.series.key),
            chat_name(&a.series.testbed),
            chat_name(&a.series.branch),
            signed(a.rel_change),
            ci,
            chat_name(short(&a.last_good)),
            chat_name(short(&a.first_bad)),
            chat_name(&a.id),
            label,
        ));
    }
    out
}

/// The title of the GitHub issue opened for a regression alert.
pub fn issue_title(a: &Alert) -> String {
    let title = format!(
        "pitwall: {} {} on {} ({}) since {}",
        a.series.key,
        signed(a.rel_change),
        a.series.testbed,
        a.series.branch,
        short(&a.first_bad)
    );
    // A title is one line of plain text; GitHub allows 256 characters.
    escape_controls(&title).chars().take(250).collect()
}

/// The body of that issue (GitHub Markdown, after its marker): every name and commit an
/// identifier in a code span of the one Markdown escaper (`crate::markdown`), so a name cannot
/// mention anyone, split the table or inject markup.
pub fn issue_body(a: &Alert) -> String {
    let esc = crate::markdown::code_span;
    let cell = crate::markdown::code_cell;
    let id_cmd = &a.id;
    let ci = a.ci.map_or_else(
        || "no interval (a segment is too short)".to_string(),
        |(l, h)| format!("95% interval {} to {}", signed(l), signed(h)),
    );
    format!(
        "{marker}\n\
         pitwall found a step in the history of **{key}** on testbed **{testbed}**, branch \
         **{branch}** (project {project}):\n\n\
         | | |\n|---|---|\n\
         | change | {change} ({ci}) |\n\
         | before → after | {before} → {after} |\n\
         | last good | {last_good} |\n\
         | first bad | {first_bad} |\n\
         | alert | {id} |\n{label}\n\
         Triage it with {triage}; {bisect} looks for the culprit between the two commits.\n",
        triage = esc(&format!(
            "pitwall alert ack|dismiss|fix|expect {id_cmd} --note TEXT"
        )),
        bisect = esc(&format!("pitwall alert bisect {id_cmd}")),
        key = esc(&a.series.key),
        testbed = esc(&a.series.testbed),
        branch = esc(&a.series.branch),
        project = esc(&a.series.project),
        change = signed(a.rel_change),
        before = pitwall_analysis::number::sig(a.before, 4),
        after = pitwall_analysis::number::sig(a.after, 4),
        last_good = cell(&a.last_good),
        first_bad = cell(&a.first_bad),
        id = cell(&a.id),
        label = a
            .label
            .map(|l| format!("| label | {} |\n", crate::markdown::text(l.message())))
            .unwrap_or_default(),
        marker = alert_marker(&a.id),
    )
}

/// The webhook body: `{"text": message}`.
pub fn webhook_body(project: &str, alerts: &[Alert]) -> String {
    webhook_json(project, alerts).to_string()
}

/// The webhook body as JSON, for the forge's `post_webhook`.
pub fn webhook_json(project: &str, alerts: &[Alert]) -> serde_json::Value {
    serde_json::json!({ "text": message(project, alerts) })
}

#[cfg(test)]
mod tests {
    use pitwall_schema::AlertStatus;

    use super::*;

    fn alerts() -> Vec<Alert> {
        let a = crate::test_alerts::regression();
        let mut b = a.clone();
        b.id = "0011223344aa".into();
        b.kind = AlertKind::Improvement;
        b.status = AlertStatus::Improvement;
        b.series.key = "kernel/<!channel>&\u{1b}[31m/time".into();
        b.rel_change = -0.12;
        b.ci = None;
        b.label = Some(pitwall_schema::AlertLabel::NoCodeChanged);
        vec![a, b]
    }

    #[test]
    fn message_snapshot() {
        insta::assert_snapshot!(webhook_body("toy <p>", &alerts()));
    }

    #[test]
    fn issue_snapshot() {
        let mut a = alerts()[0].clone();
        a.series.key = "kernel/@team <b>gemm</b>/time".into();
        a.label = Some(pitwall_schema::AlertLabel::NoCodeChanged);
        insta::assert_snapshot!(format!("{}\n\n{}", issue_title(&a), issue_body(&a)));
    }

    #[test]
    fn untrusted_names_cannot_mention_or_link() {
        let m = message("p", &alerts());
        assert!(!m.contains("<!channel>") && !m.contains('\u{1b}'), "{m}");
        assert!(
            m.contains("`kernel/&lt;!channel&gt;&amp;U+001B[31m/time`"),
            "{m}"
        );
        // A branch or project that would ping a channel, or break the line with a backtick,
        // stays inside its code span (Mattermost and Rocket.Chat render Markdown).
        let mut a = alerts()[0].clone();
        a.series.branch = "@channel`\n@here".into();
        a.series.testbed = "@all".into();
        let m = message("@channel", &[a]);
        assert!(m.starts_with("pitwall `@channel`:"), "{m}");
        assert!(m.contains(" on `@all` (``@channel`U+000A@here``):"), "{m}");
        assert_eq!(m.lines().count(), 2, "{m}");
    }
}
