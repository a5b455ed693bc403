//! Alert notifications: the message new alerts make, and its delivery to a webhook as a
//! Slack-compatible JSON body (`{"text": "…"}`, which Slack incoming webhooks, Mattermost,
//! Rocket.Chat and most chat bridges accept). The webhook's URL is a secret (Slack's embeds a
//! token): it never appears in an error.

use std::time::Duration;

use pitwall_schema::{Alert, AlertKind};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use crate::alerts::short;
use crate::number::pct;
use crate::table::escape_controls;

/// Why a notification was not delivered (the URL left out).
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("alert webhook: cannot build an HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    #[error("alert webhook: cannot send: {0}")]
    Send(#[source] reqwest::Error),
    #[error("alert webhook: answered HTTP {status}{body} (hint: check the webhook URL)")]
    Status { status: u16, body: String },
}

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

/// One line per alert, after a heading line naming how many there are.
pub fn message(project: &str, alerts: &[Alert]) -> String {
    let regressions = alerts
        .iter()
        .filter(|a| a.kind == AlertKind::Regression)
        .count();
    let mut out = format!(
        "pitwall {}: {} new alert(s), {} regression(s)",
        slack_escape(project),
        alerts.len(),
        regressions
    );
    for a in alerts {
        let ci =
            a.ci.map(|(l, h)| format!(" [{}, {}]", signed(l), signed(h)))
                .unwrap_or_default();
        out.push_str(&format!(
            "\n• {} `{}` on {} ({}): {}{} between {} and {} (alert {})",
            a.kind.as_str(),
            slack_escape(&a.series.key).replace('`', "'"),
            slack_escape(&a.series.testbed),
            slack_escape(&a.series.branch),
            signed(a.rel_change),
            ci,
            slack_escape(short(&a.last_good)),
            slack_escape(short(&a.first_bad)),
            slack_escape(&a.id),
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

/// The body of that issue (GitHub Markdown, untrusted text escaped with
/// `github::escape_text`, so a name cannot mention anyone or inject markup; never inside a
/// code span, where its character references would show as typed).
pub fn issue_body(a: &Alert) -> String {
    let esc = crate::github::escape_text;
    let ci = a.ci.map_or_else(
        || "no interval (a segment is too short)".to_string(),
        |(l, h)| format!("95% interval {} to {}", signed(l), signed(h)),
    );
    format!(
        "pitwall found a step in the history of **{key}** on testbed **{testbed}**, branch \
         **{branch}** (project {project}):\n\n\
         | | |\n|---|---|\n\
         | change | {change} ({ci}) |\n\
         | before → after | {before} → {after} |\n\
         | last good | {last_good} |\n\
         | first bad | {first_bad} |\n\
         | alert | {id} |\n\n\
         Triage it with `pitwall alert ack|dismiss|fix|expect {id} --note TEXT`; \
         `pitwall alert bisect {id}` looks for the culprit between the two commits.\n",
        key = esc(&a.series.key),
        testbed = esc(&a.series.testbed),
        branch = esc(&a.series.branch),
        project = esc(&a.series.project),
        change = signed(a.rel_change),
        before = crate::number::sig(a.before, 4),
        after = crate::number::sig(a.after, 4),
        last_good = esc(&a.last_good),
        first_bad = esc(&a.first_bad),
        id = esc(&a.id),
    )
}

/// Opens one GitHub issue per alert through `api`; the issue numbers, in order.
pub fn open_issues(
    api: &dyn crate::github::GithubApi,
    alerts: &[Alert],
) -> Result<Vec<u64>, crate::github::GithubError> {
    alerts
        .iter()
        .map(|a| api.create_issue(&issue_title(a), &issue_body(a)))
        .collect()
}

/// The webhook body: `{"text": message}`.
pub fn webhook_body(project: &str, alerts: &[Alert]) -> String {
    serde_json::json!({ "text": message(project, alerts) }).to_string()
}

/// POSTs [`webhook_body`] to `url`; any 2xx is delivered.
pub fn post_webhook(
    url: &str,
    project: &str,
    alerts: &[Alert],
    timeout: Duration,
) -> Result<(), NotifyError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let client = crate::github::http::forge_client(headers, timeout)
        .map_err(|e| NotifyError::Client(e.without_url()))?;
    let resp = client
        .post(url)
        .body(webhook_body(project, alerts))
        .send()
        .map_err(|e| NotifyError::Send(e.without_url()))?;
    let status = resp.status();
    if status.is_success() {
        return Ok(());
    }
    let text = resp.text().unwrap_or_default();
    let text: String = escape_controls(text.trim()).chars().take(200).collect();
    Err(NotifyError::Status {
        status: status.as_u16(),
        body: if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        },
    })
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    use pitwall_schema::{AlertSeries, AlertStatus};

    use super::*;

    fn alerts() -> Vec<Alert> {
        let a = Alert {
            id: "3f2a9c01d4e5".into(),
            status: AlertStatus::Active,
            kind: AlertKind::Regression,
            series: AlertSeries {
                project: "toy".into(),
                testbed: "h200-a".into(),
                branch: "main".into(),
                key: "kernel/gemm[n=512]/time".into(),
                measure: "time".into(),
            },
            last_good: "a".repeat(40),
            first_bad: "b".repeat(40),
            first_bad_run: "r".into(),
            before: 100.0,
            after: 108.1,
            rel_change: 0.081,
            ci: Some((0.0712, 0.0903)),
            note: None,
            culprit: None,
            created_at: "t".into(),
            updated_at: "t".into(),
        };
        let mut b = a.clone();
        b.id = "0011223344aa".into();
        b.kind = AlertKind::Improvement;
        b.status = AlertStatus::Improvement;
        b.series.key = "kernel/<!channel>&\u{1b}[31m/time".into();
        b.rel_change = -0.12;
        b.ci = None;
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
        insta::assert_snapshot!(format!("{}\n\n{}", issue_title(&a), issue_body(&a)));
    }

    #[test]
    fn untrusted_names_cannot_mention_or_link() {
        let m = message("p", &alerts());
        assert!(!m.contains("<!channel>") && !m.contains('\u{1b}'), "{m}");
        assert!(m.contains("&lt;!channel&gt;&amp;\\x1b[31m"), "{m}");
    }

    /// A one-shot HTTP server: answers `status` to the first request and returns its body.
    fn serve_once(status: &'static str) -> (String, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/hooks/SECRET-TOKEN",
            listener.local_addr().unwrap()
        );
        let handle = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-length: 7\r\nconnection: close\r\n\r\nno_text"
            );
            stream.write_all(reply.as_bytes()).unwrap();
            String::from_utf8(body).unwrap()
        });
        (url, handle)
    }

    #[test]
    fn posts_the_body_and_reports_failures_without_the_url() {
        let (url, server) = serve_once("200 OK");
        post_webhook(&url, "toy", &alerts(), Duration::from_secs(10)).unwrap();
        let body: serde_json::Value = serde_json::from_str(&server.join().unwrap()).unwrap();
        assert_eq!(body["text"], message("toy", &alerts()));

        let (url, server) = serve_once("400 Bad Request");
        let err = post_webhook(&url, "toy", &alerts(), Duration::from_secs(10)).unwrap_err();
        server.join().unwrap();
        let text = err.to_string();
        assert!(text.contains("HTTP 400: no_text"), "{text}");
        assert!(!text.contains("SECRET-TOKEN"));

        // Nothing listening: a send error, still without the URL.
        let dead = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hooks/SECRET-TOKEN", dead.local_addr().unwrap());
        drop(dead);
        let err = post_webhook(&url, "toy", &alerts(), Duration::from_secs(5)).unwrap_err();
        let chain: Vec<String> =
            std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source())
                .map(|e| e.to_string())
                .collect();
        assert!(!chain.join(" ").contains("SECRET-TOKEN"), "{chain:?}");
    }
}
