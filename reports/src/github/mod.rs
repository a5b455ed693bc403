//! Publishing a comparison to GitHub: the sticky pull-request comment, the `pitwall` check
//! run and a commit status.

pub mod api;
pub mod checks;
pub mod comment;
pub mod http;

pub use api::{
    ACTIONS_BOT, CommentOutcome, CommentPage, GithubApi, GithubError, Issue, IssueComment,
    STATUS_CONTEXT, Secret, StatusState, User, find_pitwall_comment, identity, publish_comment,
    publish_comment_at, publish_status, status_description,
};
pub use checks::{CHECK_NAME, CheckConclusion, CheckOutcome, CheckRun, ChecksApi, publish_check};
pub use comment::{CommentOptions, GITHUB_COMMENT_LIMIT, MARKER, escape_text, render_pr_comment};
pub use http::{GithubConfig, HttpGithub};
