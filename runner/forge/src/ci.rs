//! What the CI job's environment says: which forge it runs on, the pull or merge request and
//! commits it is for, the branch of its runs, and where a forge token may be sent (GitHub
//! Actions: `GITHUB_REF` of a pull request; GitLab CI: `CI_MERGE_REQUEST_*`). Only the
//! variables named here are read, so nothing else of the environment (secrets) is kept.

use std::collections::BTreeMap;

/// Why the job's variables and flags name no place to publish to, or no commit.
#[derive(Debug, thiserror::Error)]
pub enum CiError {
    /// A usage error: what is missing or refused, with a hint.
    #[error("{message}")]
    Refused { message: String },
}

fn refused(message: String) -> CiError {
    CiError::Refused { message }
}

/// Where `comment` and `ci` publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forge {
    Github,
    Gitlab,
}

/// The CI variables pitwall reads, captured once.
#[derive(Debug, Clone, Default)]
pub struct CiVars(BTreeMap<String, String>);

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
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "CI_COMMIT_SHA",
    "CI_PROJECT_ID",
    "GITHUB_SHA",
    GITHUB_API_VAR,
    GITLAB_API_VAR,
];

/// The job's own variable naming GitHub's API where the CI system names none (a GitHub
/// Enterprise server, outside Actions).
pub const GITHUB_API_VAR: &str = "PITWALL_GITHUB_API_URL";
/// The job's own variable naming GitLab's API outside GitLab CI.
pub const GITLAB_API_VAR: &str = "PITWALL_GITLAB_API_URL";
/// Where a GitHub token goes when nothing else names a host.
const GITHUB_DEFAULT_API: &str = "https://api.github.com";

/// The API a token is sent to, and a warning when pitwall.toml named another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiUrl {
    pub url: String,
    pub warning: Option<String>,
}

/// Where a forge's token may be sent (docs/CI.md, "Where a token goes"): the API the CI
/// system names (`GITHUB_API_URL`, `CI_API_V4_URL`), else `--api-url`, else the job's
/// `PITWALL_GITHUB_API_URL`/`PITWALL_GITLAB_API_URL`, else (GitHub) api.github.com. The
/// repository's pitwall.toml never chooses the host: its `api_url` is used only when it is on
/// the host chosen so (a path such as GitHub Enterprise's `/api/v3`), ignored with a warning
/// when the CI system names another, and refused when only the built-in default does.
pub fn api_url(
    forge: Forge,
    flag: Option<&str>,
    configured: Option<&str>,
    vars: &CiVars,
) -> Result<ApiUrl, CiError> {
    let (section, ci_var, job_var) = match forge {
        Forge::Github => ("[github]", "GITHUB_API_URL", GITHUB_API_VAR),
        Forge::Gitlab => ("[gitlab]", "CI_API_V4_URL", GITLAB_API_VAR),
    };
    let named = vars
        .get(ci_var)
        .map(|u| (u, format!("${ci_var}")))
        .or_else(|| flag.map(|u| (u.to_string(), "--api-url".to_string())))
        .or_else(|| vars.get(job_var).map(|u| (u, format!("${job_var}"))));
    let configured = configured.map(str::trim).filter(|u| !u.is_empty());
    let hint = format!("hint: pass --api-url URL or set {job_var} in the job's environment");
    let Some((url, from)) = named else {
        return match (forge, configured) {
            (Forge::Github, None) => Ok(ApiUrl {
                url: GITHUB_DEFAULT_API.to_string(),
                warning: None,
            }),
            (Forge::Github, Some(c)) if same_origin(c, GITHUB_DEFAULT_API) => Ok(ApiUrl {
                url: c.to_string(),
                warning: None,
            }),
            (_, Some(c)) => Err(refused(format!(
                "{section} api_url `{}` in pitwall.toml is not where a token is sent: the repository's configuration never chooses the host ({hint})",
                origin_of(c)
            ))),
            (Forge::Gitlab, None) => Err(refused(format!(
                "no gitlab api url (hint: run in GitLab CI where $CI_API_V4_URL is set, pass --api-url URL or set {job_var})"
            ))),
        };
    };
    match configured {
        Some(c) if same_origin(c, &url) && from != format!("${ci_var}") && flag.is_none() => {
            Ok(ApiUrl {
                url: c.to_string(),
                warning: None,
            })
        }
        Some(c) if !same_origin(c, &url) => Ok(ApiUrl {
            // GitHub's built-in default (`[github] api_url` left out) is nobody's choice to
            // warn about.
            warning: (!(forge == Forge::Github && same_origin(c, GITHUB_DEFAULT_API))).then(
                || {
                    format!(
                        "{section} api_url `{}` in pitwall.toml is ignored: the token goes only to {} ({from})",
                        origin_of(c),
                        origin_of(&url)
                    )
                },
            ),
            url,
        }),
        _ => Ok(ApiUrl { url, warning: None }),
    }
}

/// `scheme://host[:port]` of a URL, lower case, for naming hosts in messages (never a path,
/// query or user part): as the HTTP client would contact it where it parses.
fn origin_of(url: &str) -> String {
    if let Ok(parsed) = reqwest::Url::parse(url.trim())
        && parsed.host().is_some()
    {
        return parsed.origin().ascii_serialization();
    }
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else {
        return String::from("(not a URL)");
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        host.to_ascii_lowercase()
    )
}

/// Whether two API URLs are one host as the HTTP client contacts them (`crate::http`'s rule:
/// parsed, no user part).
fn same_origin(a: &str, b: &str) -> bool {
    crate::http::same_origin(a, b)
}

impl CiVars {
    pub fn from_env() -> Self {
        Self::from_pairs(
            READ.iter()
                .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v))),
        )
    }

    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        CiVars(pairs.into_iter().collect())
    }

    pub fn get(&self, name: &str) -> Option<String> {
        self.0.get(name).filter(|v| !v.is_empty()).cloned()
    }

    /// GitLab when the job runs in GitLab CI (`GITLAB_CI=true`), GitHub otherwise.
    pub fn forge(&self) -> Forge {
        if self.get("GITLAB_CI").as_deref() == Some("true") {
            Forge::Gitlab
        } else {
            Forge::Github
        }
    }

    /// The pull request a GitHub Actions `pull_request` job runs for: `GITHUB_REF` is
    /// `refs/pull/N/merge` (or `/head`).
    pub fn pull_request(&self) -> Option<u64> {
        let r = self.get("GITHUB_REF")?;
        let rest = r.strip_prefix("refs/pull/")?;
        let (n, tail) = rest.split_once('/')?;
        matches!(tail, "merge" | "head")
            .then(|| n.parse().ok())
            .flatten()
    }

    /// The merge request of a GitLab merge-request pipeline (`CI_MERGE_REQUEST_IID`).
    pub fn merge_request(&self) -> Option<u64> {
        self.get("CI_MERGE_REQUEST_IID")?.parse().ok()
    }

    /// The base and head commits of a GitLab merge-request pipeline: the merge request's
    /// diff base (`CI_MERGE_REQUEST_DIFF_BASE_SHA`) and the commit the job runs for
    /// (`CI_COMMIT_SHA`). `None` outside one.
    pub fn merge_request_commits(&self) -> Option<(String, String)> {
        if self.forge() != Forge::Gitlab {
            return None;
        }
        Some((
            self.get("CI_MERGE_REQUEST_DIFF_BASE_SHA")?,
            self.get("CI_COMMIT_SHA")?,
        ))
    }

    /// The commit a push or scheduled job runs for: `--head` as given, else `GITHUB_SHA` or
    /// `CI_COMMIT_SHA`, else `HEAD`.
    pub fn pushed_commit(&self, head: Option<&str>) -> String {
        head.map(str::to_string)
            .or_else(|| self.get("GITHUB_SHA"))
            .or_else(|| self.get("CI_COMMIT_SHA"))
            .unwrap_or_else(|| "HEAD".to_string())
    }

    /// `--base`/`--head` as given, or else from the merge-request variables (GitLab), or a
    /// usage error naming the flag.
    pub fn base_and_head(
        &self,
        base: Option<&str>,
        head: Option<&str>,
    ) -> Result<(String, String), CiError> {
        let from_ci = self.merge_request_commits();
        let pick = |given: Option<&str>, ci: Option<&String>, flag: &str| {
            given.map(str::to_string).or_else(|| ci.cloned()).ok_or_else(|| {
                refused(format!(
                    "{flag} is required (hint: name the commit, or run in a GitLab merge-request pipeline, where $CI_MERGE_REQUEST_DIFF_BASE_SHA and $CI_COMMIT_SHA name them)"
                ))
            })
        };
        Ok((
            pick(base, from_ci.as_ref().map(|c| &c.0), "--base")?,
            pick(head, from_ci.as_ref().map(|c| &c.1), "--head")?,
        ))
    }

    /// Whether the token is the one GitHub Actions gives a job (`GITHUB_TOKEN` inside
    /// Actions): GitHub refuses to tell it who it is, and it publishes as the Actions bot.
    pub fn is_actions_token(&self, token_var: &str) -> bool {
        token_var == "GITHUB_TOKEN" && self.get("GITHUB_ACTIONS").as_deref() == Some("true")
    }
}

/// Variables naming the branch of a history run (or a pull request's head), first set wins:
/// GitHub Actions' pull-request head, then GitLab's merge-request source, then the pushed
/// branch of either.
pub const HEAD_BRANCH_VARS: [&str; 4] = [
    "GITHUB_HEAD_REF",
    "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
    "GITHUB_REF_NAME",
    "CI_COMMIT_REF_NAME",
];

/// Variables naming the branch a pull request targets (the base side of `pitwall ci`).
pub const BASE_BRANCH_VARS: [&str; 2] = ["GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"];

/// The first variable of `names` that is set and not blank.
fn first_var(names: &[&str], var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    names
        .iter()
        .filter(|n| !names_a_tag(n, var))
        .filter_map(|n| var(n))
        .map(|v| v.trim().to_string())
        .find(|v| !v.is_empty())
}

/// Whether `name` holds a tag rather than a branch: in a job for a pushed tag, GitHub's
/// `GITHUB_REF_NAME` is the tag (`GITHUB_REF_TYPE=tag`, `GITHUB_REF=refs/tags/…`) and so is
/// GitLab's `CI_COMMIT_REF_NAME` (`CI_COMMIT_TAG` set). A tag is no branch: such a run gets
/// the branch git names, or none.
fn names_a_tag(name: &str, var: &dyn Fn(&str) -> Option<String>) -> bool {
    let set = |n: &str| var(n).is_some_and(|v| !v.trim().is_empty());
    match name {
        "GITHUB_REF_NAME" => {
            var("GITHUB_REF_TYPE").as_deref() == Some("tag")
                || var("GITHUB_REF").is_some_and(|r| r.starts_with("refs/tags/"))
        }
        "CI_COMMIT_REF_NAME" => set("CI_COMMIT_TAG"),
        _ => false,
    }
}

/// The branch of a history run (or a pull request's head) the CI variables name
/// ([`HEAD_BRANCH_VARS`], a tag never), read through `var`.
pub fn head_branch(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    first_var(&HEAD_BRANCH_VARS, var)
}

/// The branch a pull request targets ([`BASE_BRANCH_VARS`]), read through `var`.
pub fn base_branch(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    first_var(&BASE_BRANCH_VARS, var)
}

#[cfg(test)]
mod tests;
