//! What pitwall needs from GitHub ([`GithubApi`]), the sticky comment and the commit status
//! built on it, the errors, and [`Secret`], the token wrapper that never prints.
//!
//! No error message ever contains the token: it is not a field of any variant, text that
//! GitHub sends back is passed through the configuration's `Redactor` (the token, raw,
//! base64 as in a `Basic` header, or percent-encoded, and every other known secret) before it
//! is stored, and `Secret`'s `Debug`/`Display` print `***`.

use std::fmt;
use std::time::Duration;

use pitwall_schema::forge::{ForgeSummary, MARKER, Outcome};
use serde::{Deserialize, Serialize};

/// An API token. `Debug` and `Display` print `***`; only [`Secret::expose`] gives the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// Reads the token from the environment variable `var` (usually `GITHUB_TOKEN`).
    pub fn from_env(var: &str) -> Result<Self, GithubError> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(Self(v.trim().to_string())),
            _ => Err(GithubError::MissingToken {
                token_var: var.to_string(),
            }),
        }
    }

    /// The token itself, for the `Authorization` header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// What went wrong talking to GitHub. Each message names what to check.
#[derive(Debug, thiserror::Error)]
pub enum GithubError {
    #[error(
        "{token_var} is not set or empty; hint: export a token with pull-requests: write and statuses: write"
    )]
    MissingToken { token_var: String },

    #[error("invalid github configuration: {what}")]
    Config { what: String },

    #[error(
        "github token rejected (401) while trying to {action}; hint: check {token_var} (expired, revoked or mistyped)"
    )]
    TokenRejected { action: String, token_var: String },

    #[error(
        "token lacks permission to {action} (403: {message}); hint: it needs pull-requests: write (or issues: write) for comments, checks: write for the check run and statuses: write for commit statuses"
    )]
    Forbidden { action: String, message: String },

    #[error(
        "not found (404) while trying to {action}: repository {repo} or {target} not found, or the token cannot see it; hint: check the repository name and the token's repository access"
    )]
    NotFound {
        action: String,
        repo: String,
        target: String,
    },

    #[error(
        "github rate limit while trying to {action}: next attempt allowed in {wait:?}, beyond the retry budget of {budget:?}; hint: try again later or raise max_total"
    )]
    RateLimited {
        action: String,
        wait: Duration,
        budget: Duration,
    },

    #[error(
        "gave up trying to {action} after {attempts} attempts in {elapsed:?} (retry budget {budget:?})"
    )]
    RetriesExhausted {
        action: String,
        attempts: u32,
        elapsed: Duration,
        budget: Duration,
        #[source]
        last: Box<GithubError>,
    },

    #[error("github answered {status} while trying to {action}: {message}")]
    Status {
        action: String,
        status: u16,
        message: String,
    },

    #[error("could not reach github while trying to {action}")]
    Transport {
        action: String,
        #[source]
        source: crate::http::HttpError,
    },

    #[error("unexpected response body from github while trying to {action}")]
    Decode {
        action: String,
        #[source]
        source: serde_json::Error,
    },
}

impl GithubError {
    /// Whether trying again later can help (server errors, rate limits, network trouble).
    pub fn is_transient(&self) -> bool {
        match self {
            GithubError::Status { status, .. } => *status >= 500 || *status == 429,
            GithubError::Transport { .. } | GithubError::RateLimited { .. } => true,
            GithubError::RetriesExhausted { last, .. } => last.is_transient(),
            _ => false,
        }
    }
}

/// An issue as GitHub returns it when opened (`GithubApi::create_issue`); only its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct CreatedIssue {
    pub number: u64,
}

/// An issue as GitHub lists it (`GithubApi::list_issues`); fields pitwall does not use are
/// ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    pub number: u64,
    #[serde(default)]
    pub body: Option<String>,
    /// Who opened it.
    #[serde(default)]
    pub user: Option<User>,
}

/// An issue (or pull-request) comment as GitHub returns it; fields pitwall does not use are
/// ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueComment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    /// Who wrote it.
    #[serde(default)]
    pub user: Option<User>,
}

/// A GitHub account as the API names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub login: String,
}

impl IssueComment {
    /// Whether the body opens with pitwall's marker. Anyone can write the marker: see
    /// [`IssueComment::is_pitwall_by`].
    pub fn has_marker(&self) -> bool {
        self.body
            .as_deref()
            .is_some_and(|b| b.trim_start().starts_with(MARKER))
    }

    /// Whether this is pitwall's comment: the marker, written by `login` (the identity pitwall
    /// publishes as). A comment by anyone else is ignored, marker or not.
    pub fn is_pitwall_by(&self, login: &str) -> bool {
        self.has_marker()
            && self
                .user
                .as_ref()
                .is_some_and(|u| u.login.eq_ignore_ascii_case(login))
    }
}

/// The login of the bot behind an Actions `GITHUB_TOKEN`. GitHub answers `GET /user` with 403
/// for that (installation) token, so it cannot be asked.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// The identity pitwall publishes as: `GET /user`; when GitHub refuses that with 403 and the
/// token is an Actions `GITHUB_TOKEN` (`actions_token`), [`ACTIONS_BOT`].
pub fn identity(api: &dyn GithubApi, actions_token: bool) -> Result<String, GithubError> {
    match api.authenticated_login() {
        Ok(login) => Ok(login),
        Err(GithubError::Forbidden { .. }) if actions_token => Ok(ACTIONS_BOT.to_string()),
        Err(e) => Err(e),
    }
}

/// The `state` field of a commit status for `outcome`: GitHub's statuses have no neutral, so
/// [`Outcome::Neutral`] is sent as `success` (its description says why, see [`Outcome`]).
pub fn api_state(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success | Outcome::Neutral => "success",
        Outcome::Failure => "failure",
    }
}

/// The GitHub calls pitwall makes; [`super::HttpGithub`] is the real one.
pub trait GithubApi {
    /// The login the token authenticates as (`GET /user`).
    fn authenticated_login(&self) -> Result<String, GithubError>;
    /// One page (1-based, 100 per page) of the comments on issue or pull request `pr`, with
    /// the number of the last page when the answer says it (GitHub's `Link` header).
    fn list_issue_comments_page(&self, pr: u64, page: u32) -> Result<CommentPage, GithubError>;
    /// One page (1-based, 100 per page) of the comments on issue or pull request `pr`.
    fn list_issue_comments(&self, pr: u64, page: u32) -> Result<Vec<IssueComment>, GithubError> {
        self.list_issue_comments_page(pr, page).map(|p| p.comments)
    }
    fn create_issue_comment(&self, pr: u64, body: &str) -> Result<IssueComment, GithubError>;
    fn update_issue_comment(&self, id: u64, body: &str) -> Result<IssueComment, GithubError>;
    /// Comment `id` of the repository (`GET /repos/{repo}/issues/comments/{id}`).
    fn get_issue_comment(&self, id: u64) -> Result<IssueComment, GithubError>;
    fn create_status(
        &self,
        sha: &str,
        state: Outcome,
        description: &str,
        target_url: Option<&str>,
        context: &str,
    ) -> Result<(), GithubError>;
    /// Opens an issue in the repository with these labels (`POST /repos/{repo}/issues`);
    /// returns its number.
    fn create_issue(&self, title: &str, body: &str, labels: &[&str]) -> Result<u64, GithubError>;
    /// One page (1-based, 100 per page) of the repository's issues with `label`, open or
    /// closed (`GET /repos/{repo}/issues?labels=…&state=all`).
    fn list_issues(&self, label: &str, page: u32) -> Result<Vec<Issue>, GithubError>;
    /// Replaces issue `number`'s title and body and reopens it (`PATCH
    /// /repos/{repo}/issues/{number}`).
    fn update_issue(&self, number: u64, title: &str, body: &str) -> Result<(), GithubError>;
}

/// Page size used for listing comments; a shorter page is the last one.
pub const PER_PAGE: usize = 100;

/// One page of comments, and the last page's number when the server says it.
#[derive(Debug, Clone, Default)]
pub struct CommentPage {
    pub comments: Vec<IssueComment>,
    pub last_page: Option<u32>,
}

/// The last comment `wanted` accepts, looking from the last page backwards when the first
/// page names the last one (GitHub's `rel="last"`: two requests for a comment near the end,
/// however many come before it), else through every page forwards. No page cap: a pull
/// request with more than 10,000 comments still finds pitwall's.
pub fn find_comment_from_the_end(
    list: &dyn Fn(u32) -> Result<CommentPage, GithubError>,
    wanted: &dyn Fn(&IssueComment) -> bool,
) -> Result<Option<IssueComment>, GithubError> {
    let first = list(1)?;
    let last_on = |page: CommentPage| page.comments.into_iter().rev().find(|c| wanted(c));
    if let Some(last) = first.last_page.filter(|&l| l > 1) {
        for page in (2..=last).rev() {
            if let Some(found) = last_on(list(page)?) {
                return Ok(Some(found));
            }
        }
        return Ok(last_on(first));
    }
    let mut short = first.comments.len() < PER_PAGE;
    let mut found = last_on(first);
    let mut page = 1;
    while !short {
        page += 1;
        let next = list(page)?;
        short = next.comments.len() < PER_PAGE;
        found = last_on(next).or(found);
    }
    Ok(found)
}

/// The `context` of pitwall's commit status.
pub const STATUS_CONTEXT: &str = "pitwall/benchmarks";
/// GitHub's limit on a status description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 140;

/// What [`publish_comment`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentOutcome {
    Created(u64),
    Updated(u64),
}

impl std::fmt::Display for CommentOutcome {
    /// `comment 555 updated`: what the user reads (not the enum's debug form).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommentOutcome::Created(id) => write!(f, "comment {id} created"),
            CommentOutcome::Updated(id) => write!(f, "comment {id} updated"),
        }
    }
}

/// pitwall's comment on `pr` (the marker, written by `login`): the last one, looking from
/// the last page backwards.
pub fn find_pitwall_comment(
    api: &dyn GithubApi,
    pr: u64,
    login: &str,
) -> Result<Option<IssueComment>, GithubError> {
    find_comment_from_the_end(
        &|page| api.list_issue_comments_page(pr, page),
        &|c: &IssueComment| c.is_pitwall_by(login),
    )
}

/// Posts `body` as pitwall's one comment on `pr`: updates the earlier pitwall comment (the
/// [`MARKER`], written by `login`, see [`identity`]) or creates one. The marker is put first
/// when `body` lacks it.
pub fn publish_comment(
    api: &dyn GithubApi,
    pr: u64,
    body: &str,
    login: &str,
) -> Result<CommentOutcome, GithubError> {
    publish_comment_at(api, pr, body, login, None)
}

/// [`publish_comment`], trying first the comment id stored for this pull request (`known`):
/// when that comment is still there, pitwall's and on `pr`, it is edited without searching;
/// otherwise (deleted, someone else's, another pull request's) the comments are searched.
pub fn publish_comment_at(
    api: &dyn GithubApi,
    pr: u64,
    body: &str,
    login: &str,
    known: Option<u64>,
) -> Result<CommentOutcome, GithubError> {
    let body = if body.trim_start().starts_with(MARKER) {
        body.to_string()
    } else {
        format!("{MARKER}\n{body}")
    };
    let on_pr = |c: &IssueComment| {
        c.html_url.as_deref().is_some_and(|u| {
            u.contains(&format!("/pull/{pr}#")) || u.contains(&format!("/issues/{pr}#"))
        })
    };
    let stored = match known.map(|id| api.get_issue_comment(id)) {
        Some(Ok(c)) if c.is_pitwall_by(login) && on_pr(&c) => Some(c),
        Some(Ok(_) | Err(GithubError::NotFound { .. })) | None => None,
        Some(Err(e)) => return Err(e),
    };
    let existing = match stored {
        Some(c) => Some(c),
        None => find_pitwall_comment(api, pr, login)?,
    };
    match existing {
        Some(existing) => {
            if existing.body.as_deref() == Some(body.as_str()) {
                return Ok(CommentOutcome::Updated(existing.id));
            }
            let c = api.update_issue_comment(existing.id, &body)?;
            Ok(CommentOutcome::Updated(c.id))
        }
        None => {
            let c = api.create_issue_comment(pr, &body)?;
            Ok(CommentOutcome::Created(c.id))
        }
    }
}

/// The status description for `summary`: the text the renderer made (marked when neutral),
/// cut to GitHub's 140 characters.
pub fn status_description(summary: &ForgeSummary) -> String {
    truncate_chars(&summary.description, MAX_DESCRIPTION_CHARS)
}

/// Sets the `pitwall/benchmarks` status of commit `sha` from `summary`.
pub fn publish_status(
    api: &dyn GithubApi,
    sha: &str,
    summary: &ForgeSummary,
    target_url: Option<&str>,
) -> Result<(), GithubError> {
    api.create_status(
        sha,
        summary.outcome,
        &status_description(summary),
        target_url,
        STATUS_CONTEXT,
    )
}

/// At most `max` characters, the last one `…` when cut.
pub(crate) fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
