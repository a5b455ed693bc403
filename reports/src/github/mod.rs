//! Publishing a comparison to GitHub: the sticky pull-request comment and a commit status.

pub mod api;
pub mod comment;
pub mod http;

pub use api::{
    CommentOutcome, GithubApi, GithubError, IssueComment, STATUS_CONTEXT, Secret, StatusState,
    find_pitwall_comment, publish_comment, publish_status, status_description,
};
pub use comment::{CommentOptions, GITHUB_COMMENT_LIMIT, MARKER, escape_text, render_pr_comment};
pub use http::{GithubConfig, HttpGithub};
