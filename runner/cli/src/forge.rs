//! Which forge a CI job runs on and what its variables say about the change being measured
//! (GitHub Actions: `GITHUB_REF` of a pull request; GitLab CI: `CI_MERGE_REQUEST_*`), and the
//! sticky GitLab merge-request note.

use std::collections::BTreeMap;

use pitwall_pipeline::config::Config;
use pitwall_reports::github::Secret;
use pitwall_reports::gitlab::{GitlabConfig, HttpGitlab, publish_note};

use super::exit::Failure;

/// Where `comment` and `ci` publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Forge {
    Github,
    Gitlab,
}

/// The CI variables pitwall reads, captured once.
#[derive(Debug, Clone, Default)]
pub(super) struct CiVars(BTreeMap<String, String>);

/// The variables read, so nothing else of the environment (secrets) is kept.
const READ: &[&str] = &[
    "GITHUB_ACTIONS",
    "GITHUB_REF",
    "GITHUB_REPOSITORY",
    "GITHUB_API_URL",
    "GITHUB_STEP_SUMMARY",
    "GITLAB_CI",
    "CI_API_V4_URL",
    "CI_MERGE_REQUEST_IID",
    "CI_MERGE_REQUEST_PROJECT_ID",
    "CI_PROJECT_ID",
];

impl CiVars {
    pub(super) fn from_env() -> Self {
        Self::from_pairs(
            READ.iter()
                .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v))),
        )
    }

    pub(super) fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        CiVars(pairs.into_iter().collect())
    }

    pub(super) fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).filter(|v| !v.is_empty()).cloned()
    }

    /// GitLab when the job runs in GitLab CI (`GITLAB_CI=true`), GitHub otherwise.
    pub(super) fn forge(&self) -> Forge {
        if self.get("GITLAB_CI").as_deref() == Some("true") {
            Forge::Gitlab
        } else {
            Forge::Github
        }
    }

    /// The pull request a GitHub Actions `pull_request` job runs for: `GITHUB_REF` is
    /// `refs/pull/N/merge` (or `/head`).
    pub(super) fn pull_request(&self) -> Option<u64> {
        let r = self.get("GITHUB_REF")?;
        let rest = r.strip_prefix("refs/pull/")?;
        let (n, tail) = rest.split_once('/')?;
        matches!(tail, "merge" | "head")
            .then(|| n.parse().ok())
            .flatten()
    }

    /// The merge request of a GitLab merge-request pipeline (`CI_MERGE_REQUEST_IID`).
    pub(super) fn merge_request(&self) -> Option<u64> {
        self.get("CI_MERGE_REQUEST_IID")?.parse().ok()
    }

    /// Whether the token is the one GitHub Actions gives a job (`GITHUB_TOKEN` inside
    /// Actions): GitHub refuses to tell it who it is, and it publishes as the Actions bot.
    pub(super) fn is_actions_token(&self, token_var: &str) -> bool {
        token_var == "GITHUB_TOKEN" && self.get("GITHUB_ACTIONS").as_deref() == Some("true")
    }
}

/// Keeps `body` as pitwall's one note on merge request `iid`; says what it did.
pub(super) fn publish_gitlab_note(
    config: &Config,
    vars: &CiVars,
    iid: u64,
    body: &str,
) -> Result<String, Failure> {
    let api_url = config
        .gitlab
        .api_url
        .clone()
        .or_else(|| vars.get("CI_API_V4_URL"))
        .ok_or_else(|| {
            Failure::rejected(
                "no gitlab api url (hint: [gitlab] api_url, or run in GitLab CI where $CI_API_V4_URL is set)"
                    .into(),
            )
        })?;
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
            return Err(Failure::of_gitlab_setup(
                pitwall_reports::gitlab::GitlabError::MissingToken {
                    token_var: token_var.clone(),
                },
            ));
        }
    };
    let mut cfg = GitlabConfig::new(api_url, project, token.clone(), token_var.clone());
    cfg.redactor = pitwall_pipeline::engine::process_redactor(&config.token_vars());
    cfg.redactor.add(token.expose());
    let api = HttpGitlab::new(cfg).map_err(Failure::of_gitlab_setup)?;
    publish_note(&api, iid, body)
        .map(|o| o.to_string())
        .map_err(|e| {
            Failure::of_gitlab(format!("merge request !{iid}: cannot publish the note"), e)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> CiVars {
        CiVars::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn a_github_pull_request_job_names_its_pull_request() {
        let v = vars(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REF", "refs/pull/42/merge"),
        ]);
        assert_eq!(v.forge(), Forge::Github);
        assert_eq!(v.pull_request(), Some(42));
        assert!(v.is_actions_token("GITHUB_TOKEN"));
        assert!(!v.is_actions_token("PITWALL_PAT"));
        for r in [
            "refs/heads/main",
            "refs/pull/x/merge",
            "refs/pull/7/other",
            "",
        ] {
            assert_eq!(vars(&[("GITHUB_REF", r)]).pull_request(), None, "{r}");
        }
        assert!(!vars(&[]).is_actions_token("GITHUB_TOKEN"));
    }

    #[test]
    fn a_gitlab_merge_request_pipeline_names_its_merge_request() {
        let v = vars(&[("GITLAB_CI", "true"), ("CI_MERGE_REQUEST_IID", "17")]);
        assert_eq!(v.forge(), Forge::Gitlab);
        assert_eq!(v.merge_request(), Some(17));
        assert_eq!(vars(&[("GITLAB_CI", "true")]).merge_request(), None);
        assert_eq!(vars(&[("GITLAB_CI", "false")]).forge(), Forge::Github);
    }
}
