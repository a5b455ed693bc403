//! Alert notifications: the message new alerts make, and its delivery to a webhook as a
//! Slack-compatible JSON body (`{"text": "…"}`, which Slack incoming webhooks, Mattermost,
//! Rocket.Chat and most chat bridges accept). The webhook's URL is a secret (Slack's embeds a
//! token): it never appears in an error.

use std::time::Duration;

use pitwall_schema::{Alert, AlertKind, Redactor};

use crate::alerts::short;
use crate::number::pct;
use crate::table::escape_controls;

/// Why a notification was not delivered (the URL left out).
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("alert webhook: cannot build an HTTP client: {0}")]
    Client(#[source] crate::http::HttpError),
    #[error("alert webhook: cannot send: {0}")]
    Send(#[source] crate::http::HttpError),
    #[error("alert webhook: answered HTTP {status}{body} (hint: check the webhook URL)")]
    Status { status: u16, body: String },
    #[error(
        "alert webhook: ${variable} is not an http:// or https:// URL with a host (accepted: \
         http(s)://HOST[:PORT]/PATH; hint: set it to the chat's incoming-webhook URL)"
    )]
    NotHttpUrl { variable: String },
}

/// Whether `url` is an absolute `http://` or `https://` URL with a host: the only webhooks
/// pitwall posts to. Anything else (`file://`, a bare word, a URL with spaces or control
/// characters) is refused before a client is built, naming the variable, never the value.
pub fn check_webhook_url(url: &str, variable: &str) -> Result<(), NotifyError> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    let host = rest
        .map(|r| r.split(['/', '?', '#']).next().unwrap_or(""))
        .map(|authority| authority.rsplit('@').next().unwrap_or(""))
        .unwrap_or("");
    let host_name = host.split(':').next().unwrap_or("");
    let clean = !url.chars().any(|c| c.is_whitespace() || c.is_control());
    if host_name.is_empty() || !clean {
        return Err(NotifyError::NotHttpUrl {
            variable: variable.to_string(),
        });
    }
    Ok(())
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
        out.push_str(&format!(
            "\n• {} {} on {} ({}): {}{} between {} and {} (alert {})",
            a.kind.as_str(),
            chat_name(&a.series.key),
            chat_name(&a.series.testbed),
            chat_name(&a.series.branch),
            signed(a.rel_change),
            ci,
            chat_name(short(&a.last_good)),
            chat_name(short(&a.first_bad)),
            chat_name(&a.id),
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

/// The label of every alert issue pitwall opens; it lists only issues with it.
pub const ALERT_ISSUE_LABEL: &str = "pitwall-alert";

/// The hidden first line of alert `id`'s issue, by which pitwall finds it again (only in an
/// issue its own identity opened: anyone can type the marker).
pub fn alert_marker(id: &str) -> String {
    let id: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!("<!-- pitwall-alert {id} -->")
}

/// The body of that issue (GitHub Markdown, untrusted text escaped with
/// `github::escape_text`, so a name cannot mention anyone or inject markup; never inside a
/// code span, where its character references would show as typed), after its marker.
pub fn issue_body(a: &Alert) -> String {
    let esc = crate::github::escape_text;
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
        marker = alert_marker(&a.id),
    )
}

/// What [`publish_issues`] did for one alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueOutcome {
    Opened(u64),
    Updated(u64),
}

impl std::fmt::Display for IssueOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IssueOutcome::Opened(n) => write!(f, "#{n} opened"),
            IssueOutcome::Updated(n) => write!(f, "#{n} updated"),
        }
    }
}

/// Pages of labelled issues looked at for earlier alert issues (10,000 issues).
const MAX_ISSUE_PAGES: u32 = 100;

/// One GitHub issue per alert, labelled [`ALERT_ISSUE_LABEL`]: the alert's earlier issue (its
/// marker, opened by `login`, pitwall's own identity as for the sticky comment) is updated and
/// reopened; otherwise one is opened. An issue with the marker that someone else opened is
/// left alone. The outcomes, in order.
pub fn publish_issues(
    api: &dyn crate::github::GithubApi,
    alerts: &[Alert],
    login: &str,
) -> Result<Vec<IssueOutcome>, crate::github::GithubError> {
    if alerts.is_empty() {
        return Ok(Vec::new());
    }
    let mut ours: Vec<crate::github::Issue> = Vec::new();
    for page in 1..=MAX_ISSUE_PAGES {
        let issues = api.list_issues(ALERT_ISSUE_LABEL, page)?;
        let last = issues.len() < crate::github::api::PER_PAGE;
        ours.extend(issues.into_iter().filter(|i| {
            i.user
                .as_ref()
                .is_some_and(|u| u.login.eq_ignore_ascii_case(login))
        }));
        if last {
            break;
        }
    }
    alerts
        .iter()
        .map(|a| {
            let marker = alert_marker(&a.id);
            let earlier = ours.iter().find(|i| {
                i.body
                    .as_deref()
                    .is_some_and(|b| b.trim_start().starts_with(&marker))
            });
            match earlier {
                Some(issue) => api
                    .update_issue(issue.number, &issue_title(a), &issue_body(a))
                    .map(|()| IssueOutcome::Updated(issue.number)),
                None => api
                    .create_issue(&issue_title(a), &issue_body(a), &[ALERT_ISSUE_LABEL])
                    .map(IssueOutcome::Opened),
            }
        })
        .collect()
}

/// The webhook body: `{"text": message}`.
pub fn webhook_body(project: &str, alerts: &[Alert]) -> String {
    webhook_json(project, alerts).to_string()
}

fn webhook_json(project: &str, alerts: &[Alert]) -> serde_json::Value {
    serde_json::json!({ "text": message(project, alerts) })
}

/// How much of a webhook's error answer is shown.
const WEBHOOK_BODY_CHARS: usize = 200;

/// POSTs [`webhook_body`] to `url`; any 2xx is delivered.
pub fn post_webhook(
    url: &str,
    project: &str,
    alerts: &[Alert],
    timeout: Duration,
) -> Result<(), NotifyError> {
    let client = crate::http::HttpClient::new(Vec::new(), timeout).map_err(NotifyError::Client)?;
    let body = webhook_json(project, alerts);
    // The URL is a secret whole: what the server echoes of its user, password, path or
    // query, or of any other secret the process knows, is not shown.
    let mut redactor = Redactor::from_vars(Vec::new(), []);
    redactor.add(url);
    for s in pitwall_schema::secrets::url_secrets(url, true) {
        redactor.add(&s);
    }
    let resp = client
        .send(crate::http::Method::Post, url, Some(&body))
        .map_err(NotifyError::Send)?;
    if resp.is_success() {
        return Ok(());
    }
    let status = resp.status;
    let text = resp.body;
    let text = text.trim();
    let cut = text.chars().count() > WEBHOOK_BODY_CHARS;
    let text: String = text.chars().take(WEBHOOK_BODY_CHARS).collect();
    let text = escape_controls(&redactor.redact_cut_text(&text, false, cut));
    Err(NotifyError::Status {
        status,
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

    /// A one-shot HTTP server: answers `status` to the first request and returns its body.
    fn serve_once(status: &'static str) -> (String, std::thread::JoinHandle<String>) {
        serve_answer(status, "no_text".to_string())
    }

    /// As [`serve_once`], answering `answer` as the body.
    fn serve_answer(
        status: &'static str,
        answer: String,
    ) -> (String, std::thread::JoinHandle<String>) {
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
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
            stream.write_all(reply.as_bytes()).unwrap();
            String::from_utf8(body).unwrap()
        });
        (url, handle)
    }

    #[test]
    fn a_webhook_that_is_not_an_http_url_is_named_by_its_variable() {
        for bad in [
            "file:///etc/passwd",
            "hooks.slack.com/services/SECRET",
            "https://",
            "http:///path",
            "https://host/with space",
            "ftp://host/x",
            "SECRET",
        ] {
            let err = check_webhook_url(bad, "PITWALL_ALERT_WEBHOOK").unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains("$PITWALL_ALERT_WEBHOOK is not an http:// or https:// URL"),
                "{bad}: {text}"
            );
            assert!(
                !text.contains("SECRET") && !text.contains("passwd"),
                "{text}"
            );
        }
        for good in [
            "https://hooks.slack.com/services/T/B/X",
            "http://127.0.0.1:8065/hooks/abc",
            "HTTPS://chat.example.com",
        ] {
            check_webhook_url(good, "V").unwrap();
        }
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

    #[test]
    fn an_error_answer_never_shows_the_urls_user_password_path_or_query() {
        let echo = "denied for hookuser-77 / hookpass-77 at /hooks/SECRET-TOKEN ?sig=query-sig-77"
            .to_string();
        let (url, server) = serve_answer("403 Forbidden", echo);
        let url = url.replace("http://", "http://hookuser-77:hookpass-77@") + "?sig=query-sig-77";
        let err = post_webhook(&url, "toy", &alerts(), Duration::from_secs(10)).unwrap_err();
        server.join().unwrap();
        let text = err.to_string();
        assert!(text.contains("HTTP 403: denied for ***"), "{text}");
        for s in ["hookuser-77", "hookpass-77", "SECRET-TOKEN", "query-sig-77"] {
            assert!(!text.contains(s), "{s}: {text}");
        }
        // An answer cut at 200 characters leaves no piece of a secret at the cut.
        let long = format!("{}hookpass-77", "x".repeat(WEBHOOK_BODY_CHARS - 9));
        let (url, server) = serve_answer("500 Internal Server Error", long);
        let url = url.replace("http://", "http://u:hookpass-77@");
        let err = post_webhook(&url, "toy", &alerts(), Duration::from_secs(10)).unwrap_err();
        server.join().unwrap();
        let text = err.to_string();
        assert!(!text.contains("hookpass") && text.contains("***"), "{text}");
    }
}
