//! The sticky GitLab merge-request note, and the token rule (`pitwall_forge::ci`) as the
//! commands' usage errors.

use pitwall_forge::Secret;
use pitwall_forge::ci::ApiUrl;
pub(super) use pitwall_forge::ci::{CiVars, Forge};
use pitwall_forge::gitlab::{GitlabConfig, GitlabError, HttpGitlab, publish_note};
use pitwall_pipeline::config::Config;

use super::exit::Failure;

/// Where a forge's token may be sent ([`pitwall_forge::ci::api_url`]), refused as a usage
/// error.
pub(super) fn api_url(
    forge: Forge,
    flag: Option<&str>,
    configured: Option<&str>,
    vars: &CiVars,
) -> Result<ApiUrl, Failure> {
    pitwall_forge::ci::api_url(forge, flag, configured, vars)
        .map_err(|e| Failure::rejected(e.to_string()))
}

/// The GitLab client for the project and token publishing uses: the project from `[gitlab]
/// project` or the pipeline, the API host by the token rule ([`api_url`]).
fn gitlab_client(
    config: &Config,
    vars: &CiVars,
    (flag, quiet): (Option<&str>, bool),
) -> Result<HttpGitlab, Failure> {
    let api = api_url(Forge::Gitlab, flag, config.gitlab.api_url.as_deref(), vars)?;
    if let (Some(w), false) = (&api.warning, quiet) {
        eprintln!("warning: {w}");
    }
    let api_url = api.url;
    let project = config
        .gitlab
        .project
        .clone()
        .or_else(|| vars.get("CI_MERGE_REQUEST_PROJECT_ID"))
        .or_else(|| vars.get("CI_PROJECT_ID"))
        .ok_or_else(|| {
            Failure::rejected(
                "no gitlab project (hint: [gitlab] project = \"group/name\", or run in GitLab CI)"
                    .into(),
            )
        })?;
    let token_var = &config.gitlab.token_env;
    let token = match std::env::var(token_var) {
        Ok(t) if !t.trim().is_empty() => Secret::new(t.trim()),
        _ => {
            return Err(Failure::of_gitlab_setup(GitlabError::MissingToken {
                token_var: token_var.clone(),
            }));
        }
    };
    pitwall_schema::secrets::remember(token.expose());
    let mut cfg = GitlabConfig::new(api_url, project, token.clone(), token_var.clone());
    cfg.redactor = pitwall_pipeline::engine::process_redactor(&config.token_vars());
    cfg.redactor.add(token.expose());
    HttpGitlab::new(cfg).map_err(Failure::of_gitlab_setup)
}

/// Keeps `body` as pitwall's one note on merge request `iid`; says what it did.
pub(super) fn publish_gitlab_note(
    config: &Config,
    vars: &CiVars,
    flag_quiet: (Option<&str>, bool),
    iid: u64,
    body: &str,
) -> Result<String, Failure> {
    let api = gitlab_client(config, vars, flag_quiet)?;
    publish_note(&api, iid, body)
        .map(|o| o.to_string())
        .map_err(|e| {
            Failure::of_gitlab(format!("merge request !{iid}: cannot publish the note"), e)
        })
}

/// Before `pitwall ci` measures in GitLab CI: a merge request to comment on, and one
/// authenticated GET of the project with the token (`github::check_publishing`).
pub(super) fn check_gitlab(
    config: &Config,
    vars: &CiVars,
    flag_quiet: (Option<&str>, bool),
    mr: Option<u64>,
) -> Result<(), Failure> {
    if mr.or(vars.merge_request()).is_none() {
        return Err(Failure::rejected(
            "no merge request to comment on (--mr N, or run in a merge-request pipeline)".into(),
        ));
    }
    let api = gitlab_client(config, vars, flag_quiet)?;
    api.check_project().map_err(|e| match e {
        // The token refused, or the project out of its sight: the job's to fix (exit 2).
        GitlabError::Status {
            status: 401 | 403 | 404,
            ..
        } => Failure::of_gitlab_setup(e),
        other => Failure::of_gitlab("cannot reach the project", other),
    })
}
