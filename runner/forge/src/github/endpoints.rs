//! The GitHub REST calls behind [`GithubApi`] (comments, issues, statuses) on [`HttpGithub`]'s
//! retrying transport.

use std::time::Instant;

use serde_json::{Value, json};

use super::api::{
    CommentPage, CreatedIssue, GithubApi, GithubError, Issue, IssueComment, PER_PAGE, User,
    api_state, truncate_chars,
};
use super::http::{HttpGithub, Req, decode};
use crate::http::Method;

impl GithubApi for HttpGithub {
    fn authenticated_login(&self) -> Result<String, GithubError> {
        let req = Req {
            action: "find the account the token belongs to".to_string(),
            target: "/user".to_string(),
            method: Method::Get,
            url: self.url("user"),
            body: None,
        };
        let user: User = decode(&req, self.send(&req, self.deadline(), None)?)?;
        let _ = self.login.set(user.login.clone());
        Ok(user.login)
    }

    fn list_issue_comments_page(&self, pr: u64, page: u32) -> Result<CommentPage, GithubError> {
        self.list_page(pr, page, self.deadline())
    }

    fn create_issue_comment(&self, pr: u64, body: &str) -> Result<IssueComment, GithubError> {
        let req = Req {
            action: format!("comment on pull request {pr}"),
            target: format!("pull request {pr}"),
            method: Method::Post,
            url: self.repo_url(&format!("issues/{pr}/comments")),
            body: Some(json!({ "body": body })),
        };
        let recover = |deadline: Instant| self.find_created(pr, body, deadline);
        decode(&req, self.send(&req, self.deadline(), Some(&recover))?)
    }

    fn create_issue(&self, title: &str, body: &str, labels: &[&str]) -> Result<u64, GithubError> {
        let req = Req {
            action: "open an issue".to_string(),
            target: "the repository's issues".to_string(),
            method: Method::Post,
            url: self.repo_url("issues"),
            body: Some(json!({ "title": title, "body": body, "labels": labels })),
        };
        decode(&req, self.send(&req, self.deadline(), None)?).map(|c: CreatedIssue| c.number)
    }

    fn list_issues(&self, label: &str, page: u32) -> Result<Vec<Issue>, GithubError> {
        let req = Req {
            action: format!("list the issues labelled {label}"),
            target: "the repository's issues".to_string(),
            method: Method::Get,
            url: self.repo_url(&format!(
                "issues?labels={}&state=all&per_page={PER_PAGE}&page={page}",
                query_escape(label)
            )),
            body: None,
        };
        decode(&req, self.send(&req, self.deadline(), None)?)
    }

    fn update_issue(&self, number: u64, title: &str, body: &str) -> Result<(), GithubError> {
        let req = Req {
            action: format!("update issue {number}"),
            target: format!("issue {number}"),
            method: Method::Patch,
            url: self.repo_url(&format!("issues/{number}")),
            body: Some(json!({ "title": title, "body": body, "state": "open" })),
        };
        decode::<Value>(&req, self.send(&req, self.deadline(), None)?).map(drop)
    }

    fn get_issue_comment(&self, id: u64) -> Result<IssueComment, GithubError> {
        let req = Req {
            action: format!("read comment {id}"),
            target: format!("comment {id}"),
            method: Method::Get,
            url: self.repo_url(&format!("issues/comments/{id}")),
            body: None,
        };
        decode(&req, self.send(&req, self.deadline(), None)?)
    }

    fn update_issue_comment(&self, id: u64, body: &str) -> Result<IssueComment, GithubError> {
        let req = Req {
            action: format!("update comment {id}"),
            target: format!("comment {id}"),
            method: Method::Patch,
            url: self.repo_url(&format!("issues/comments/{id}")),
            body: Some(json!({ "body": body })),
        };
        decode(&req, self.send(&req, self.deadline(), None)?)
    }

    fn create_status(
        &self,
        sha: &str,
        state: pitwall_schema::forge::Outcome,
        description: &str,
        target_url: Option<&str>,
        context: &str,
    ) -> Result<(), GithubError> {
        if sha.is_empty() || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(GithubError::Config {
                what: format!(
                    "commit {sha:?} is not a hexadecimal sha; hint: pass the full commit id"
                ),
            });
        }
        let mut body = json!({
            "state": api_state(state),
            "description": truncate_chars(description, super::api::MAX_DESCRIPTION_CHARS),
            "context": context,
        });
        if let Some(url) = target_url {
            body["target_url"] = json!(url);
        }
        let req = Req {
            action: format!("set the status of commit {sha}"),
            target: format!("commit {sha}"),
            method: Method::Post,
            url: self.repo_url(&format!("statuses/{sha}")),
            body: Some(body),
        };
        self.send(&req, self.deadline(), None).map(|_| ())
    }
}

/// A query-string value, percent-encoded except for unreserved characters (RFC 3986 §2.3).
fn query_escape(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
