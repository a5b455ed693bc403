//! New alerts, published: the chat webhook `[alerts] webhook_env` names, and one GitHub issue
//! per alert when `[github] publish` names `issue`. A notification that fails is the caller's
//! warning, never an error of the run that raised the alerts.

use pitwall_forge::ci::{CiVars, Forge};
use pitwall_forge::github::{AlertIssue, HttpGithub, IssueOutcome, identity, publish_issues};
use pitwall_forge::webhook::{NotifyError, check_webhook_url, post_webhook};
use pitwall_reports::notify::{alert_marker, issue_body, issue_title, webhook_json};
use pitwall_schema::Alert;

use super::github_config;
use pitwall_engine::config::{Config, Publish};

/// Posts the open `alerts` of `project` to the webhook the variable `[alerts] webhook_env`
/// names; `None` when it names none.
pub fn alert_webhook(config: &Config, alerts: &[Alert]) -> Option<Result<(), NotifyError>> {
    let url = std::env::var(&config.alerts.webhook_env)
        .ok()
        .filter(|u| !u.trim().is_empty())?;
    // Redacted as it leaves: every secret the process knows, the configured token included.
    let body = pitwall_engine::process_redactor(&config.token_vars())
        .redacted_json(&webhook_json(config.project.name.as_str(), alerts));
    Some(
        check_webhook_url(url.trim(), &config.alerts.webhook_env).and_then(|()| {
            post_webhook(
                url.trim(),
                &body,
                pitwall_engine::defaults::ALERT_WEBHOOK_TIMEOUT,
            )
        }),
    )
}

/// Opens one GitHub issue per alert when `[github] publish` names `issue`: in `[github] repo`
/// (else the job's `GITHUB_REPOSITORY`), through the API `comment` and `ci` would use, with
/// the token `[github] token_env` names. The issue numbers, or a one-line reason (the token
/// redacted) for the caller to warn with; the API-host warning goes to `warn`.
pub fn alert_issues(
    config: &Config,
    vars: &CiVars,
    alerts: &[Alert],
    warn: &dyn Fn(&str),
) -> Result<Vec<IssueOutcome>, String> {
    if alerts.is_empty() || !config.github.publish.contains(&Publish::Issue) {
        return Ok(Vec::new());
    }
    let chain = |e: &dyn std::error::Error| {
        std::iter::successors(Some(e), |e| e.source())
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(": ")
    };
    let repo = config
        .github
        .repo
        .clone()
        .or_else(|| vars.get("GITHUB_REPOSITORY"))
        .ok_or("no repository to open alert issues in (hint: [github] repo)")?;
    let api = pitwall_forge::ci::api_url(Forge::Github, None, Some(&config.github.api_url), vars)
        .map_err(|e| e.to_string())?;
    if let Some(w) = &api.warning {
        warn(w);
    }
    let cfg = github_config(config, api.url, repo).map_err(|e| chain(&e))?;
    let api = HttpGithub::new(cfg).map_err(|e| chain(&e))?;
    let token_var = &config.github.token_env;
    let login = identity(&api, vars.is_actions_token(token_var)).map_err(|e| chain(&e))?;
    let issues: Vec<AlertIssue> = alerts
        .iter()
        .map(|a| AlertIssue {
            marker: alert_marker(&a.id),
            title: issue_title(a),
            body: issue_body(a),
        })
        .collect();
    publish_issues(&api, &issues, &login).map_err(|e| chain(&e))
}
