//! Which forge a CI job runs on and what its variables say about the change being measured
//! (GitHub Actions: `GITHUB_REF` of a pull request; GitLab CI: `CI_MERGE_REQUEST_*`), and the
//! sticky GitLab merge-request note.

use std::collections::BTreeMap;

use pitwall_engine::config::Config;
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
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "CI_COMMIT_SHA",
    "CI_PROJECT_ID",
    "GITHUB_SHA",
    GITHUB_API_VAR,
    GITLAB_API_VAR,
];

/// The job's own variable naming GitHub's API where the CI system names none (a GitHub
/// Enterprise server, outside Actions).
pub(super) const GITHUB_API_VAR: &str = "PITWALL_GITHUB_API_URL";
/// The job's own variable naming GitLab's API outside GitLab CI.
pub(super) const GITLAB_API_VAR: &str = "PITWALL_GITLAB_API_URL";
/// Where a GitHub token goes when nothing else names a host.
const GITHUB_DEFAULT_API: &str = "https://api.github.com";

/// The API a token is sent to, and a warning when pitwall.toml named another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ApiUrl {
    pub url: String,
    pub warning: Option<String>,
}

/// Where a forge's token may be sent (docs/CI.md, "Where a token goes"): the API the CI
/// system names (`GITHUB_API_URL`, `CI_API_V4_URL`), else `--api-url`, else the job's
/// `PITWALL_GITHUB_API_URL`/`PITWALL_GITLAB_API_URL`, else (GitHub) api.github.com. The
/// repository's pitwall.toml never chooses the host: its `api_url` is used only when it is on
/// the host chosen so (a path such as GitHub Enterprise's `/api/v3`), ignored with a warning
/// when the CI system names another, and refused when only the built-in default does.
pub(super) fn api_url(
    forge: Forge,
    flag: Option<&str>,
    configured: Option<&str>,
    vars: &CiVars,
) -> Result<ApiUrl, Failure> {
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
            (_, Some(c)) => Err(Failure::rejected(format!(
                "{section} api_url `{}` in pitwall.toml is not where a token is sent: the repository's configuration never chooses the host ({hint})",
                origin_of(c)
            ))),
            (Forge::Gitlab, None) => Err(Failure::rejected(format!(
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

/// `scheme://host[:port]` of a URL, lower case, for comparing and naming hosts (never a
/// path, query or user part).
fn origin_of(url: &str) -> String {
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

fn same_origin(a: &str, b: &str) -> bool {
    a.contains("://") && origin_of(a) == origin_of(b)
}

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

    /// The base and head commits of a GitLab merge-request pipeline: the merge request's
    /// diff base (`CI_MERGE_REQUEST_DIFF_BASE_SHA`) and the commit the job runs for
    /// (`CI_COMMIT_SHA`). `None` outside one.
    pub(super) fn merge_request_commits(&self) -> Option<(String, String)> {
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
    pub(super) fn pushed_commit(&self, head: Option<&str>) -> String {
        head.map(str::to_string)
            .or_else(|| self.get("GITHUB_SHA"))
            .or_else(|| self.get("CI_COMMIT_SHA"))
            .unwrap_or_else(|| "HEAD".to_string())
    }

    /// `--base`/`--head` as given, or else from the merge-request variables (GitLab), or a
    /// usage error naming the flag.
    pub(super) fn base_and_head(
        &self,
        base: Option<&str>,
        head: Option<&str>,
    ) -> Result<(String, String), Failure> {
        let from_ci = self.merge_request_commits();
        let pick = |given: Option<&str>, ci: Option<&String>, flag: &str| {
            given.map(str::to_string).or_else(|| ci.cloned()).ok_or_else(|| {
                Failure::rejected(format!(
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
    pub(super) fn is_actions_token(&self, token_var: &str) -> bool {
        token_var == "GITHUB_TOKEN" && self.get("GITHUB_ACTIONS").as_deref() == Some("true")
    }
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
            return Err(Failure::of_gitlab_setup(
                pitwall_reports::gitlab::GitlabError::MissingToken {
                    token_var: token_var.clone(),
                },
            ));
        }
    };
    pitwall_schema::secrets::remember(token.expose());
    let mut cfg = GitlabConfig::new(api_url, project, token.clone(), token_var.clone());
    cfg.redactor = pitwall_engine::process_redactor(&config.token_vars());
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
    use pitwall_reports::gitlab::GitlabError;
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

    #[test]
    fn gitlab_names_the_commits_of_a_merge_request() {
        let mr = vars(&[
            ("GITLAB_CI", "true"),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "aaa"),
            ("CI_COMMIT_SHA", "bbb"),
        ]);
        assert_eq!(
            mr.base_and_head(None, None).unwrap(),
            ("aaa".to_string(), "bbb".to_string())
        );
        // Flags win over the variables.
        assert_eq!(
            mr.base_and_head(Some("x"), None).unwrap(),
            ("x".to_string(), "bbb".to_string())
        );
        // Outside GitLab (or a branch pipeline without the diff base) the flags are needed.
        let github = vars(&[("CI_COMMIT_SHA", "bbb")]);
        let e = github.base_and_head(None, Some("h")).unwrap_err();
        assert!(format!("{e:?}").contains("--base is required"), "{e:?}");
        let branch = vars(&[("GITLAB_CI", "true"), ("CI_COMMIT_SHA", "bbb")]);
        assert!(branch.base_and_head(None, None).is_err());
    }

    #[test]
    fn a_token_goes_only_where_the_job_says() {
        let evil = Some("https://evil.example/api/v4");
        let gl = vars(&[
            ("GITLAB_CI", "true"),
            ("CI_API_V4_URL", "https://gitlab.corp/api/v4"),
        ]);
        // The CI system's API wins over the repository's configuration, with a warning.
        let a = api_url(Forge::Gitlab, None, evil, &gl).unwrap();
        assert_eq!(a.url, "https://gitlab.corp/api/v4");
        let w = a.warning.unwrap();
        assert!(
            w.contains("https://evil.example") && w.contains("ignored"),
            "{w}"
        );
        // Even over the flag.
        let a = api_url(Forge::Gitlab, Some("https://other.example"), None, &gl).unwrap();
        assert_eq!(a.url, "https://gitlab.corp/api/v4");
        // Outside CI the configuration alone never names the host.
        let e = api_url(Forge::Gitlab, None, evil, &vars(&[])).unwrap_err();
        assert!(format!("{e:?}").contains("PITWALL_GITLAB_API_URL"), "{e:?}");
        let e = api_url(
            Forge::Github,
            None,
            Some("https://evil.example/api"),
            &vars(&[]),
        );
        assert!(format!("{:?}", e.unwrap_err()).contains("never chooses the host"));
        // The job's own variable or the flag may, and the configuration then gives the path.
        let job = vars(&[(GITHUB_API_VAR, "https://ghe.corp")]);
        let a = api_url(Forge::Github, None, Some("https://ghe.corp/api/v3"), &job).unwrap();
        assert_eq!(a.url, "https://ghe.corp/api/v3");
        assert_eq!(a.warning, None);
        let a = api_url(
            Forge::Github,
            Some("https://ghe.corp/api/v3"),
            evil,
            &vars(&[]),
        )
        .unwrap();
        assert_eq!(a.url, "https://ghe.corp/api/v3");
        assert!(a.warning.is_some());
        // Actions names its API; pitwall.toml's is ignored.
        let actions = vars(&[("GITHUB_API_URL", "https://api.github.com")]);
        let a = api_url(Forge::Github, None, evil, &actions).unwrap();
        assert_eq!(a.url, "https://api.github.com");
        // The built-in default of `[github] api_url` is no choice of the repository's: no
        // warning when another API is named.
        let a = api_url(
            Forge::Github,
            Some("http://127.0.0.1:9"),
            Some("https://api.github.com"),
            &vars(&[]),
        )
        .unwrap();
        assert_eq!((a.url.as_str(), a.warning), ("http://127.0.0.1:9", None));
        // Nothing named: api.github.com, or pitwall.toml's path on it.
        let a = api_url(Forge::Github, None, None, &vars(&[])).unwrap();
        assert_eq!(a.url, "https://api.github.com");
        let a = api_url(
            Forge::Github,
            None,
            Some("https://API.github.com/"),
            &vars(&[]),
        );
        assert_eq!(a.unwrap().url, "https://API.github.com/");
        // A user part does not make another host look like the allowed one.
        let e = api_url(
            Forge::Github,
            None,
            Some("https://api.github.com@evil.example/"),
            &vars(&[]),
        );
        assert!(e.is_err());
    }
}
