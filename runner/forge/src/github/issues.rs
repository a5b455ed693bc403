//! One GitHub issue per regression alert, found again by its marker: the alert's earlier
//! issue is updated and reopened, otherwise one is opened. The title and body are rendered
//! by `pitwall-reports`; this only finds and writes them.

use super::api::{GithubApi, GithubError, Issue, PER_PAGE};

/// The label of every alert issue pitwall opens; it lists only issues with it.
pub const ALERT_ISSUE_LABEL: &str = "pitwall-alert";

/// Pages of labelled issues looked at for earlier alert issues (10,000 issues).
const MAX_ISSUE_PAGES: u32 = 100;

/// An alert's issue as rendered: its hidden marker (`pitwall_schema::forge::alert_marker`),
/// which the body opens with, its title and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertIssue {
    pub marker: String,
    pub title: String,
    pub body: String,
}

/// What [`publish_issues`] did for one alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueOutcome {
    Opened(u64),
    Updated(u64),
}

impl std::fmt::Display for IssueOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IssueOutcome::Opened(n) => write!(f, "#{n} opened"),
            IssueOutcome::Updated(n) => write!(f, "#{n} updated"),
        }
    }
}

/// One GitHub issue per alert, labelled [`ALERT_ISSUE_LABEL`]: the alert's earlier issue (its
/// marker, opened by `login`, pitwall's own identity as for the sticky comment) is updated and
/// reopened; otherwise one is opened. An issue with the marker that someone else opened is
/// left alone. The outcomes, in order.
pub fn publish_issues(
    api: &dyn GithubApi,
    issues: &[AlertIssue],
    login: &str,
) -> Result<Vec<IssueOutcome>, GithubError> {
    if issues.is_empty() {
        return Ok(Vec::new());
    }
    let mut ours: Vec<Issue> = Vec::new();
    for page in 1..=MAX_ISSUE_PAGES {
        let listed = api.list_issues(ALERT_ISSUE_LABEL, page)?;
        let last = listed.len() < PER_PAGE;
        ours.extend(listed.into_iter().filter(|i| {
            i.user
                .as_ref()
                .is_some_and(|u| u.login.eq_ignore_ascii_case(login))
        }));
        if last {
            break;
        }
    }
    issues
        .iter()
        .map(|a| {
            let earlier = ours.iter().find(|i| {
                i.body
                    .as_deref()
                    .is_some_and(|b| b.trim_start().starts_with(&a.marker))
            });
            match earlier {
                Some(issue) => api
                    .update_issue(issue.number, &a.title, &a.body)
                    .map(|()| IssueOutcome::Updated(issue.number)),
                None => api
                    .create_issue(&a.title, &a.body, &[ALERT_ISSUE_LABEL])
                    .map(IssueOutcome::Opened),
            }
        })
        .collect()
}
