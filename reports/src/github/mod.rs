//! Rendering for GitHub: the sticky pull-request comment (Markdown within GitHub's limits)
//! and the comparison's outcome and lines for a commit status or check run. Publishing them is
//! `pitwall-forge`'s.

pub mod comment;
pub mod summary;

pub use comment::{CommentOptions, GITHUB_COMMENT_LIMIT, MARKER, render_pr_comment};
pub use summary::forge_summary;
