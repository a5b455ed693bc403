//! The `pitwall` check run (GitHub Checks API): one per commit, created or updated in place,
//! its conclusion from the comparison (`failure` on a regression, `neutral` when
//! inconclusive or incomparable, `success` otherwise) and the summary and table as its output.
//!
//! Unlike a commit status, a check run has a neutral conclusion and room for the table
//! (65,535 characters), and needs only `checks: write`.

use crate::http::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use pitwall_schema::forge::{ForgeSummary, MARKER, Outcome};

use super::api::{GithubError, truncate_chars};
use super::http::{HttpGithub, Req, decode};

/// The name of pitwall's check run.
pub const CHECK_NAME: &str = "pitwall";
/// GitHub's limit on a check run's `output.summary`, in characters.
pub const CHECK_SUMMARY_LIMIT: usize = 65_535;

/// A check run's conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckConclusion {
    Success,
    Failure,
    Neutral,
}

impl CheckConclusion {
    /// The `conclusion` field sent to GitHub.
    pub fn api_name(self) -> &'static str {
        match self {
            CheckConclusion::Success => "success",
            CheckConclusion::Failure => "failure",
            CheckConclusion::Neutral => "neutral",
        }
    }

    /// By the same rule as the commit status, with neutral kept neutral.
    pub fn of(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Success => CheckConclusion::Success,
            Outcome::Failure => CheckConclusion::Failure,
            Outcome::Neutral => CheckConclusion::Neutral,
        }
    }
}

/// What a check run shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    pub conclusion: CheckConclusion,
    /// One line: the comparison's summary.
    pub title: String,
    /// Markdown: the summary and the table.
    pub summary: String,
    pub details_url: Option<String>,
}

impl CheckRun {
    /// The check run for the comparison `summary`; `markdown` is the rendered comment (its
    /// marker dropped).
    pub fn for_summary(
        comparison: &ForgeSummary,
        markdown: &str,
        details_url: Option<&str>,
    ) -> Self {
        let summary = markdown
            .trim_start()
            .strip_prefix(MARKER)
            .unwrap_or(markdown)
            .trim_start();
        CheckRun {
            conclusion: CheckConclusion::of(comparison.outcome),
            title: truncate_chars(&comparison.title, 255),
            summary: truncate_chars(summary, CHECK_SUMMARY_LIMIT),
            details_url: details_url.map(str::to_string),
        }
    }

    fn body(&self) -> Value {
        let mut body = json!({
            "status": "completed",
            "conclusion": self.conclusion.api_name(),
            "output": {"title": self.title, "summary": self.summary},
        });
        if let Some(url) = &self.details_url {
            body["details_url"] = json!(url);
        }
        body
    }
}

/// The Checks API calls pitwall makes; [`HttpGithub`] is the real one.
pub trait ChecksApi {
    /// The id of an existing check run `name` on commit `sha`.
    fn find_check_run(&self, sha: &str, name: &str) -> Result<Option<u64>, GithubError>;
    fn create_check_run(&self, sha: &str, name: &str, run: &CheckRun) -> Result<u64, GithubError>;
    fn update_check_run(&self, id: u64, run: &CheckRun) -> Result<u64, GithubError>;
}

/// What [`publish_check`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckOutcome {
    Created(u64, CheckConclusion),
    Updated(u64, CheckConclusion),
}

impl std::fmt::Display for CheckOutcome {
    /// `check run 12 created (failure)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckOutcome::Created(id, c) => write!(f, "check run {id} created ({})", c.api_name()),
            CheckOutcome::Updated(id, c) => write!(f, "check run {id} updated ({})", c.api_name()),
        }
    }
}

/// Sets the `pitwall` check run of commit `sha`: updates the one there is (a re-run of the
/// job), or creates it. A check run only its creator may change (another app's run with the
/// same name) is left alone and a new one created.
pub fn publish_check(
    api: &dyn ChecksApi,
    sha: &str,
    run: &CheckRun,
) -> Result<CheckOutcome, GithubError> {
    if let Some(id) = api.find_check_run(sha, CHECK_NAME)? {
        match api.update_check_run(id, run) {
            Ok(id) => return Ok(CheckOutcome::Updated(id, run.conclusion)),
            Err(GithubError::Forbidden { .. } | GithubError::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let id = api.create_check_run(sha, CHECK_NAME, run)?;
    Ok(CheckOutcome::Created(id, run.conclusion))
}

#[derive(Deserialize)]
struct CheckRunRef {
    id: u64,
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct CheckRunList {
    #[serde(default)]
    check_runs: Vec<CheckRunRef>,
}

fn check_sha(sha: &str) -> Result<(), GithubError> {
    if sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(GithubError::Config {
            what: format!(
                "commit {sha:?} is not a full sha; hint: pass the 40-character commit id"
            ),
        })
    }
}

impl HttpGithub {
    /// The id of check run `name` on commit `sha`, listed within `deadline`.
    fn find_check_run_by(
        &self,
        sha: &str,
        name: &str,
        deadline: std::time::Instant,
    ) -> Result<Option<u64>, GithubError> {
        check_sha(sha)?;
        let req = Req {
            action: format!("list the check runs of commit {sha}"),
            target: format!("commit {sha}"),
            method: Method::Get,
            url: self.repo_url(&format!(
                "commits/{sha}/check-runs?check_name={name}&per_page=100"
            )),
            body: None,
        };
        let list: CheckRunList = decode(&req, self.send(&req, deadline, None)?)?;
        Ok(list
            .check_runs
            .into_iter()
            .find(|r| r.name == name)
            .map(|r| r.id))
    }
}

impl ChecksApi for HttpGithub {
    fn find_check_run(&self, sha: &str, name: &str) -> Result<Option<u64>, GithubError> {
        self.find_check_run_by(sha, name, self.deadline())
    }

    fn create_check_run(&self, sha: &str, name: &str, run: &CheckRun) -> Result<u64, GithubError> {
        check_sha(sha)?;
        let mut body = run.body();
        body["name"] = json!(name);
        body["head_sha"] = json!(sha);
        let req = Req {
            action: format!("create the {name} check run of commit {sha}"),
            target: format!("commit {sha}"),
            method: Method::Post,
            url: self.repo_url("check-runs"),
            body: Some(body),
        };
        // A create that failed may still have made the check run (a 502 after the work):
        // before it is sent again, the commit's check runs are listed and that one is used.
        let recover = |deadline: std::time::Instant| {
            Ok(self
                .find_check_run_by(sha, name, deadline)?
                .map(|id| json!({ "id": id, "name": name })))
        };
        let created: CheckRunRef = decode(&req, self.send(&req, self.deadline(), Some(&recover))?)?;
        Ok(created.id)
    }

    fn update_check_run(&self, id: u64, run: &CheckRun) -> Result<u64, GithubError> {
        let req = Req {
            action: format!("update check run {id}"),
            target: format!("check run {id}"),
            method: Method::Patch,
            url: self.repo_url(&format!("check-runs/{id}")),
            body: Some(run.body()),
        };
        let updated: CheckRunRef = decode(&req, self.send(&req, self.deadline(), None)?)?;
        Ok(updated.id)
    }
}
