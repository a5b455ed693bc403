//! The GitLab half of publishing: the client for the project and token, the sticky
//! merge-request note, and the check before `ci` measures (one authenticated GET of the
//! project).

use pitwall_forge::Secret;
use pitwall_forge::ci::{CiVars, Forge};
use pitwall_forge::gitlab::{GitlabConfig, GitlabError, HttpGitlab};

use super::{PublishError, PublishRequest};
use pitwall_engine::config::Config;

/// The GitLab client for the project and token publishing uses: the project from `[gitlab]
/// project` or the pipeline, the API host by the token rule; with the API-host warning, if
/// any.
pub(super) fn client(
    config: &Config,
    req: &PublishRequest,
    vars: &CiVars,
) -> Result<(HttpGitlab, Option<String>), PublishError> {
    let api = pitwall_forge::ci::api_url(
        Forge::Gitlab,
        req.api_url.as_deref(),
        config.gitlab.api_url.as_deref(),
        vars,
    )?;
    let project = config
        .gitlab
        .project
        .clone()
        .or_else(|| vars.get("CI_MERGE_REQUEST_PROJECT_ID"))
        .or_else(|| vars.get("CI_PROJECT_ID"))
        .ok_or_else(|| {
            PublishError::Refused(
                "no gitlab project (hint: [gitlab] project = \"group/name\", or run in GitLab CI)"
                    .into(),
            )
        })?;
    let token_var = &config.gitlab.token_env;
    let token = match std::env::var(token_var) {
        Ok(t) if !t.trim().is_empty() => Secret::new(t.trim()),
        _ => {
            return Err(PublishError::GitlabSetup(GitlabError::MissingToken {
                token_var: token_var.clone(),
            }));
        }
    };
    pitwall_schema::secrets::remember(token.expose());
    let mut cfg = GitlabConfig::new(api.url, project, token.clone(), token_var.clone());
    cfg.redactor = pitwall_engine::process_redactor(&config.token_vars());
    cfg.redactor.add(token.expose());
    let client = HttpGitlab::new(cfg).map_err(PublishError::GitlabSetup)?;
    Ok((client, api.warning))
}

/// Keeps `body` as pitwall's one note on merge request `iid`; says what it did.
pub(super) fn publish_note(api: &HttpGitlab, iid: u64, body: &str) -> Result<String, PublishError> {
    let outcome = pitwall_forge::gitlab::publish_note(api, iid, body).map_err(|source| {
        PublishError::Gitlab {
            what: format!("merge request !{iid}: cannot publish the note"),
            source,
        }
    })?;
    Ok(format!("merge request !{iid}: {outcome}"))
}

/// One authenticated GET of the project with the token.
pub(super) fn check(api: &HttpGitlab) -> Result<(), PublishError> {
    api.check_project().map_err(|e| match e {
        // The token refused, or the project out of its sight: the job's to fix (exit 2).
        GitlabError::Status {
            status: 401 | 403 | 404,
            ..
        } => PublishError::GitlabSetup(e),
        other => PublishError::Gitlab {
            what: "cannot reach the project".into(),
            source: other,
        },
    })
}
