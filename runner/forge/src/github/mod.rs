//! Publishing to GitHub: the sticky pull-request comment, the `pitwall` check run, a commit
//! status and the alert issues, over the REST API.

pub mod api;
pub mod checks;
mod endpoints;
pub mod http;
pub mod issues;

pub use api::{
    ACTIONS_BOT, CommentOutcome, CommentPage, GithubApi, GithubError, Issue, IssueComment,
    STATUS_CONTEXT, Secret, User, api_state, find_pitwall_comment, identity, publish_comment,
    publish_comment_at, publish_status, status_description,
};
pub use checks::{CHECK_NAME, CheckConclusion, CheckOutcome, CheckRun, ChecksApi, publish_check};
pub use http::{GithubConfig, HttpGithub};
pub use issues::{ALERT_ISSUE_LABEL, AlertIssue, IssueOutcome, publish_issues};
pub use pitwall_schema::forge::{ForgeSummary, MARKER, Outcome};
