//! The CI variables' readings: pull and merge requests, commits, and where a token goes.

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
    // Nor does a backslash, which ends the host for the HTTP client (WHATWG URL rules): this
    // one is `evil.example` with the path `/@api.github.com/`, named so in the refusal.
    let e = api_url(
        Forge::Github,
        None,
        Some("https://evil.example\\@api.github.com/"),
        &vars(&[]),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("https://evil.example"), "{e}");
    // Nor a user part on the host the job names.
    let gl = vars(&[("CI_API_V4_URL", "https://gitlab.example/api/v4")]);
    let a = api_url(
        Forge::Gitlab,
        None,
        Some("https://user:pw@gitlab.example/api/v4"),
        &gl,
    )
    .unwrap();
    assert_eq!(a.url, "https://gitlab.example/api/v4");
}
