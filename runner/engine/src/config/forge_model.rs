//! The forges' and the alerts' part of the typed configuration (`[github]`, `[gitlab]`,
//! `[alerts]`), kept apart from `model` for size; `forge` validates them.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GithubConfig {
    pub repo: Option<String>,
    pub api_url: String,
    /// Name of the environment variable holding the token (never the token itself).
    pub token_env: String,
    pub report_url: Option<String>,
    /// What `comment` and `ci` publish; not part of the hash (it changes no measurement).
    #[serde(skip)]
    pub publish: Vec<Publish>,
}

/// One thing pitwall publishes to GitHub (`[github] publish`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Publish {
    /// The `pitwall` check run (Checks API).
    Check,
    /// The sticky pull-request comment.
    Comment,
    /// The `pitwall/benchmarks` commit status.
    Status,
    /// One issue per new regression alert, opened when `run` or `import` stores the history
    /// that raised it (docs/ALERTS.md).
    Issue,
}

impl Publish {
    pub const ALL: [Publish; 4] = [
        Publish::Check,
        Publish::Comment,
        Publish::Status,
        Publish::Issue,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Publish::Check => "check",
            Publish::Comment => "comment",
            Publish::Status => "status",
            Publish::Issue => "issue",
        }
    }

    pub fn parse(s: &str) -> Option<Publish> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// `[gitlab]`: the GitLab API for merge-request notes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GitlabConfig {
    /// API base (`https://gitlab.example/api/v4`); `$CI_API_V4_URL` when unset.
    pub api_url: Option<String>,
    /// Project id or `group/name`; `$CI_MERGE_REQUEST_PROJECT_ID`/`$CI_PROJECT_ID` when unset.
    pub project: Option<String>,
    /// Name of the variable holding the token.
    pub token_env: String,
}

/// `[alerts]`: how new alerts are notified besides `[github] publish = ["issue"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertsConfig {
    /// Name of the variable holding the webhook URL new alerts are posted to (the URL is a
    /// secret, so it is named here, never written here).
    pub webhook_env: String,
}

impl Default for AlertsConfig {
    fn default() -> Self {
        AlertsConfig {
            webhook_env: crate::defaults::ALERT_WEBHOOK_ENV.to_string(),
        }
    }
}

impl Default for GitlabConfig {
    fn default() -> Self {
        GitlabConfig {
            api_url: None,
            project: None,
            token_env: crate::defaults::GITLAB_TOKEN_ENV.to_string(),
        }
    }
}

impl Default for GithubConfig {
    fn default() -> Self {
        GithubConfig {
            repo: None,
            api_url: "https://api.github.com".to_string(),
            token_env: crate::defaults::GITHUB_TOKEN_ENV.to_string(),
            report_url: None,
            publish: crate::defaults::PUBLISH.to_vec(),
        }
    }
}
