//! Alert issues against a real local HTTP server standing in for the GitHub API: one issue per
//! alert, labelled, with the alert's marker first in its body; publishing the same alert again
//! updates (and reopens) that issue instead of opening another; an issue with the marker that
//! someone else opened is never taken for pitwall's; with an Actions token the bot is pitwall.

use std::time::Duration;

use pitwall_e2e::github::{BOT, REPO, Server};
use pitwall_forge::github::{
    ACTIONS_BOT, ALERT_ISSUE_LABEL, AlertIssue, GithubApi, GithubConfig, GithubError, HttpGithub,
    IssueOutcome, Secret, identity,
};
use pitwall_reports::notify::{alert_marker, issue_body, issue_title};
use pitwall_schema::{Alert, AlertKind, AlertSeries, AlertStatus};

fn client(server: &Server) -> HttpGithub {
    let mut c = GithubConfig::new(&server.url, REPO, Secret::new("ghp_alert_issue_token_0123"));
    c.backoff_base = Duration::from_millis(10);
    c.max_total = Duration::from_secs(5);
    HttpGithub::new(c).unwrap()
}

/// The alerts' issues as `pitwall-reports` renders them, published by the forge.
fn publish_issues(
    api: &dyn GithubApi,
    alerts: &[Alert],
    login: &str,
) -> Result<Vec<IssueOutcome>, GithubError> {
    let issues: Vec<AlertIssue> = alerts
        .iter()
        .map(|a| AlertIssue {
            marker: alert_marker(&a.id),
            title: issue_title(a),
            body: issue_body(a),
        })
        .collect();
    pitwall_forge::github::publish_issues(api, &issues, login)
}

fn alert(id: &str, rel_change: f64) -> Alert {
    Alert {
        id: id.into(),
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
        after: 100.0 * (1.0 + rel_change),
        rel_change,
        ci: Some((rel_change - 0.01, rel_change + 0.01)),
        note: None,
        culprit: None,
        more_points: None,
        label: None,
        created_at: "t".into(),
        updated_at: "t".into(),
    }
}

#[test]
fn one_labelled_issue_per_alert_updated_in_place() {
    let server = Server::start();
    let api = client(&server);
    let login = identity(&api, false).unwrap();
    assert_eq!(login, BOT);
    let first = publish_issues(&api, &[alert("3f2a9c01d4e5", 0.081)], &login).unwrap();
    assert_eq!(first, [IssueOutcome::Opened(1)]);
    let issues = server.issues();
    assert_eq!(issues[0].labels, [ALERT_ISSUE_LABEL]);
    assert!(issues[0].body.starts_with(&alert_marker("3f2a9c01d4e5")));
    // The same alert, re-detected with new numbers, and a second alert.
    let again = publish_issues(
        &api,
        &[alert("3f2a9c01d4e5", 0.09), alert("0011223344aa", 0.2)],
        &login,
    )
    .unwrap();
    assert_eq!(again, [IssueOutcome::Updated(1), IssueOutcome::Opened(2)]);
    let issues = server.issues();
    assert_eq!(issues.len(), 2);
    assert_eq!(issues[0].updates, 1);
    assert!(issues[0].title.contains("+9.0%"), "{}", issues[0].title);
    assert_eq!(issues[0].state, "open");
}

#[test]
fn a_marker_in_someone_elses_issue_is_not_pitwalls() {
    let server = Server::start();
    let a = alert("3f2a9c01d4e5", 0.081);
    // Someone copied pitwall's issue, marker and all.
    server.add_issue("copy", &issue_body(&a), "mallory", ALERT_ISSUE_LABEL);
    let api = client(&server);
    let out = publish_issues(&api, &[a], BOT).unwrap();
    assert_eq!(out, [IssueOutcome::Opened(2)]);
    let issues = server.issues();
    assert_eq!((issues[0].updates, issues[0].title.as_str()), (0, "copy"));
}

#[test]
fn with_an_actions_token_the_bot_is_pitwall() {
    let server = Server::start();
    server.state.lock().unwrap().user_login = None;
    let a = alert("3f2a9c01d4e5", 0.081);
    let earlier = server.add_issue("old", &issue_body(&a), ACTIONS_BOT, ALERT_ISSUE_LABEL);
    let api = client(&server);
    let login = identity(&api, true).unwrap();
    assert_eq!(login, ACTIONS_BOT);
    let out = publish_issues(&api, &[a], &login).unwrap();
    assert_eq!(out, [IssueOutcome::Updated(earlier)]);
    assert_eq!(
        server.issues()[0].state,
        "open",
        "a closed issue is reopened"
    );
}

#[test]
fn no_alerts_make_no_requests() {
    let server = Server::start();
    let api = client(&server);
    assert!(publish_issues(&api, &[], BOT).unwrap().is_empty());
    assert!(server.requests().is_empty());
}
