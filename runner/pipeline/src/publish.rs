//! The publish use case: a comparison already made, rendered by the caller, goes where the job
//! runs: GitHub (the sticky comment, the `pitwall` check run, a commit status, as `[github]
//! publish` names) or GitLab (the sticky merge-request note); new alerts go to the webhook and
//! to GitHub issues. Flags, pitwall.toml and the CI variables are weighed here, once, and the
//! token client ([`Publisher`]) is built once: `ci` builds it when it checks, before measuring,
//! and publishes with it after; the caller renders what was published.

use pitwall_forge::ci::{CiError, CiVars, Forge};
use pitwall_forge::github::{
    CheckRun, CommentOutcome, GithubConfig, GithubError, HttpGithub, Secret, identity,
    publish_check, publish_comment_at, publish_status,
};
use pitwall_forge::gitlab::HttpGitlab;
use pitwall_reports::compare::ComparisonReport;
use pitwall_store::Store;

use pitwall_engine::config::{Config, Publish};

mod alerts;
mod gitlab;

pub use alerts::{alert_issues, alert_webhook};

/// What the command line says about publishing (`--pr`/`--mr`, `--repo`, `--api-url`,
/// `--report-url`, `--sha`, `-q`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublishRequest {
    pub pr: Option<u64>,
    pub repo: Option<String>,
    pub api_url: Option<String>,
    pub report_url: Option<String>,
    pub sha: Option<String>,
    /// `-q`: the warning that pitwall.toml's API host is ignored is not said.
    pub quiet: bool,
}

impl PublishRequest {
    /// The link to the full report: `--report-url`, else `[github] report_url`, else, for an
    /// interleaved pair (`pair_id`) when `[serve] url` is set, its comparison page on the
    /// team's server ([`compare_link`]).
    pub fn report_url(&self, config: &Config, pair_id: Option<&str>) -> Option<String> {
        self.report_url
            .clone()
            .or_else(|| config.github.report_url.clone())
            .or_else(|| {
                let url = config.serve.url.as_deref()?;
                Some(compare_link(url, &config.project.name, pair_id?))
            })
    }
}

/// The comparison page of pair `pair_id` on the `pitwall serve` at `serve_url`:
/// `<url>/p/<project>/compare/<pair-id>`, each segment percent-encoded.
pub fn compare_link(serve_url: &str, project: &str, pair_id: &str) -> String {
    let seg = |s: &str| -> String {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    format!(
        "{}/p/{}/compare/{}",
        serve_url.trim_end_matches('/'),
        seg(project),
        seg(pair_id)
    )
}

/// What was published: one part per thing done (`pull request 7: comment 12 created`,
/// `check run 3 created (failure)`, `status set`, `merge request !4: note 9 updated`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub forge: Forge,
    pub done: Vec<String>,
}

/// Why nothing (or not everything) was published. The setup errors and `Refused` are the
/// job's to fix (usage); `Github` and `Gitlab` are the forge failing or refusing a write.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// Nothing to publish to, or a token that may not go where it was asked to.
    #[error("{0}")]
    Refused(String),
    /// No pull request (GitHub, with a comment to publish) or merge request (GitLab) to
    /// comment on.
    #[error(
        "no {} to comment on (hint: {}, or {})",
        if *forge == Forge::Gitlab { "merge request" } else { "pull request" },
        if *forge == Forge::Gitlab { "--mr N" } else { "--pr N, run in a pull_request job" },
        if *forge == Forge::Gitlab { "run in a merge-request pipeline" } else { "leave \"comment\" out of [github] publish" }
    )]
    NoRequest { forge: Forge },
    /// GitHub publishing could not be set up (no token, bad api url or repository).
    #[error(transparent)]
    GithubSetup(GithubError),
    /// GitLab publishing could not be set up (no token, a bad url).
    #[error(transparent)]
    GitlabSetup(pitwall_forge::gitlab::GitlabError),
    /// GitHub refused or failed a publication, under `what`.
    #[error("{what}")]
    Github {
        what: String,
        #[source]
        source: GithubError,
    },
    /// GitLab refused or failed the note, under `what`.
    #[error("{what}")]
    Gitlab {
        what: String,
        #[source]
        source: pitwall_forge::gitlab::GitlabError,
    },
}

impl From<CiError> for PublishError {
    fn from(e: CiError) -> Self {
        PublishError::Refused(e.to_string())
    }
}

/// A forge client ready to publish where the job runs, built once from the flags,
/// pitwall.toml, the CI variables and the token: GitHub's (with the pull request, when a
/// comment is to be published) or GitLab's (with the merge request).
#[derive(Debug)]
pub struct Publisher {
    client: Client,
    /// The API-host warning ([`pitwall_forge::ci::ApiUrl`]), said when publishing.
    api_warning: Option<String>,
}

#[derive(Debug)]
enum Client {
    Github {
        api: HttpGithub,
        pr: Option<u64>,
        /// The token is the Actions `GITHUB_TOKEN`: it publishes as the Actions bot.
        actions_token: bool,
    },
    Gitlab {
        api: HttpGitlab,
        iid: u64,
    },
}

impl Publisher {
    /// The client for where the job runs: refused (nothing checked over the network) when
    /// there is no pull or merge request to comment on, no repository or project, a token
    /// that may not go to the API asked for, or no token.
    pub fn connect(
        config: &Config,
        req: &PublishRequest,
        vars: &CiVars,
    ) -> Result<Publisher, PublishError> {
        let forge = vars.forge();
        match forge {
            Forge::Github => {
                let pr = req.pr.or(vars.pull_request());
                if config.github.publish.contains(&Publish::Comment) && pr.is_none() {
                    return Err(PublishError::NoRequest { forge });
                }
                let (api, api_warning) = github_client(config, req, vars)?;
                let actions_token = vars.is_actions_token(&config.github.token_env);
                Ok(Publisher {
                    client: Client::Github {
                        api,
                        pr,
                        actions_token,
                    },
                    api_warning,
                })
            }
            Forge::Gitlab => {
                let iid = req
                    .pr
                    .or(vars.merge_request())
                    .ok_or(PublishError::NoRequest { forge })?;
                let (api, api_warning) = gitlab::client(config, req, vars)?;
                Ok(Publisher {
                    client: Client::Gitlab { api, iid },
                    api_warning,
                })
            }
        }
    }

    /// What `pitwall ci` checks before it builds or measures anything: [`Publisher::connect`],
    /// then one authenticated GET of the repository (or project); write permission is not
    /// probed. The token refused or the repository out of its sight is a setup error.
    pub fn check(&self) -> Result<(), PublishError> {
        match &self.client {
            Client::Github { api, .. } => api.check_repository().map_err(|e| match e {
                // The token refused, or the repository out of its sight: the job's to fix.
                GithubError::TokenRejected { .. }
                | GithubError::Forbidden { .. }
                | GithubError::NotFound { .. } => PublishError::GithubSetup(e),
                other => PublishError::Github {
                    what: "cannot reach the repository".into(),
                    source: other,
                },
            }),
            Client::Gitlab { api, .. } => gitlab::check(api),
        }
    }

    /// Publishes `body` (the rendered comment of `report`): the merge-request note on
    /// GitLab, else on GitHub what `[github] publish` names. The check run and status go on
    /// `--sha`, else `candidate_commit` when it is a full sha. Warnings (the API-host one
    /// unless `-q`, a comment id the store could not keep) go to `warn`.
    pub fn publish(
        &self,
        config: &Config,
        req: &PublishRequest,
        (report, body): (&ComparisonReport, &str),
        candidate_commit: Option<&str>,
        store: Option<&mut dyn Store>,
        warn: &dyn Fn(&str),
    ) -> Result<Published, PublishError> {
        if let (Some(w), false) = (&self.api_warning, req.quiet) {
            warn(w);
        }
        let sha = req.sha.clone().or_else(|| {
            candidate_commit
                .filter(|c| c.len() == 40 && c.chars().all(|ch| ch.is_ascii_hexdigit()))
                .map(str::to_string)
        });
        match &self.client {
            Client::Gitlab { api, iid } => Ok(Published {
                forge: Forge::Gitlab,
                done: vec![gitlab::publish_note(api, *iid, body)?],
            }),
            Client::Github {
                api,
                pr,
                actions_token,
            } => {
                let targets = &config.github.publish;
                let mut done = Vec::new();
                if let (true, Some(pr)) = (targets.contains(&Publish::Comment), *pr) {
                    done.push(publish_comment(
                        api,
                        *actions_token,
                        (pr, body),
                        store,
                        warn,
                    )?);
                }
                let report_url = req.report_url(config, None);
                publish_on_commit(config, api, (report, body), sha, report_url, &mut done)?;
                Ok(Published {
                    forge: Forge::Github,
                    done,
                })
            }
        }
    }
}

/// The check run and status `[github] publish` names, on commit `sha`; a note when they are
/// wanted and there is no sha.
fn publish_on_commit(
    config: &Config,
    api: &HttpGithub,
    (report, body): (&ComparisonReport, &str),
    sha: Option<String>,
    report_url: Option<String>,
    done: &mut Vec<String>,
) -> Result<(), PublishError> {
    let targets = &config.github.publish;
    let wants_sha = targets.contains(&Publish::Check) || targets.contains(&Publish::Status);
    let failed = |sha: &str, what: &str| {
        let what = format!("commit {sha}: cannot set the {what}");
        move |source| PublishError::Github { what, source }
    };
    match (&sha, wants_sha) {
        (Some(sha), _) => {
            let summary = pitwall_reports::github::forge_summary(report);
            if targets.contains(&Publish::Check) {
                let run = CheckRun::for_summary(&summary, body, report_url.as_deref());
                let outcome = publish_check(api, sha, &run).map_err(failed(sha, "check run"))?;
                done.push(outcome.to_string());
            }
            if targets.contains(&Publish::Status) {
                publish_status(api, sha, &summary, report_url.as_deref())
                    .map_err(failed(sha, "status"))?;
                done.push("status set".to_string());
            }
        }
        (None, true) => done.push("no check run or status (no commit sha; hint: --sha)".into()),
        (None, false) => {}
    }
    Ok(())
}

/// The sticky comment on `pr`, as the token's account (the Actions bot for an Actions
/// token); the comment id kept in the store for this pull request is tried first, and the
/// one published is kept there.
fn publish_comment(
    api: &HttpGithub,
    actions_token: bool,
    (pr, body): (u64, &str),
    store: Option<&mut dyn Store>,
    warn: &dyn Fn(&str),
) -> Result<String, PublishError> {
    let login = identity(api, actions_token).map_err(|source| PublishError::Github {
        what: "cannot tell which account the token belongs to".into(),
        source,
    })?;
    let target = format!("github:{}#{pr}", api.config().repo);
    let known = store
        .as_deref()
        .and_then(|s| s.forge_comment(&target).ok().flatten());
    let outcome = publish_comment_at(api, pr, body, &login, known).map_err(|source| {
        PublishError::Github {
            what: format!("pull request {pr}: cannot publish the comment"),
            source,
        }
    })?;
    let (CommentOutcome::Created(id) | CommentOutcome::Updated(id)) = outcome;
    if let Some(s) = store.filter(|_| known != Some(id)) {
        if let Err(e) = s.set_forge_comment(&target, id) {
            warn(&format!("cannot keep comment {id} in the store: {e}"));
        }
    }
    Ok(format!("pull request {pr}: {outcome}"))
}

/// The token in `[github] token_env`, remembered as a secret, and the redactor of every
/// message GitHub sends back.
fn github_config(
    config: &Config,
    api_url: String,
    repo: String,
) -> Result<GithubConfig, GithubError> {
    let token_var = &config.github.token_env;
    let token = Secret::from_env(token_var)?;
    pitwall_schema::secrets::remember(token.expose());
    let mut cfg = GithubConfig::new(api_url, repo, token.clone());
    cfg.token_var = token_var.clone();
    cfg.redactor = pitwall_engine::process_redactor(&config.token_vars());
    cfg.redactor.add(token.expose());
    Ok(cfg)
}

/// The GitHub client for the repository and token publishing uses: the repository from
/// `--repo`, `[github] repo` or the job, the API host by the token rule; with the API-host
/// warning, if any.
fn github_client(
    config: &Config,
    req: &PublishRequest,
    vars: &CiVars,
) -> Result<(HttpGithub, Option<String>), PublishError> {
    let repo = req
        .repo
        .clone()
        .or_else(|| config.github.repo.clone())
        .or_else(|| vars.get("GITHUB_REPOSITORY"))
        .ok_or_else(|| {
            PublishError::Refused(
                "no repository to publish to (hint: --repo OWNER/NAME or [github] repo)".into(),
            )
        })?;
    let api = pitwall_forge::ci::api_url(
        Forge::Github,
        req.api_url.as_deref(),
        Some(&config.github.api_url),
        vars,
    )?;
    let cfg = github_config(config, api.url, repo).map_err(PublishError::GithubSetup)?;
    let client = HttpGithub::new(cfg).map_err(PublishError::GithubSetup)?;
    Ok((client, api.warning))
}

/// `pitwall ci`'s check before it measures: [`Publisher::connect`] (a missing pull or merge
/// request said without a hint: the caller's message gives one) and [`Publisher::check`].
/// The API-host warning is kept for [`Publisher::publish`], which says it once.
pub fn check(
    config: &Config,
    req: &PublishRequest,
    vars: &CiVars,
) -> Result<Publisher, PublishError> {
    let publisher = Publisher::connect(config, req, vars).map_err(|e| match e {
        PublishError::NoRequest {
            forge: Forge::Github,
        } => PublishError::Refused(
            "no pull request to comment on (--pr N, a pull_request job, or leave \"comment\" out of [github] publish)".into(),
        ),
        PublishError::NoRequest {
            forge: Forge::Gitlab,
        } => PublishError::Refused(
            "no merge request to comment on (--mr N, or run in a merge-request pipeline)".into(),
        ),
        other => other,
    })?;
    publisher.check()?;
    Ok(publisher)
}

#[cfg(test)]
mod tests;
