//! Publishing a comparison to GitLab: one sticky merge-request note, found again by its
//! marker and by its author (the account the token belongs to, `GET /user`), as the GitHub
//! comment is. [`GitlabApi`] is what pitwall needs; [`HttpGitlab`] is the real one.

use std::time::Duration;

use pitwall_schema::Redactor;
use serde::Deserialize;
use serde_json::json;

use pitwall_schema::forge::MARKER;

use crate::github::Secret;
use crate::http::{HttpClient, Method};

/// Notes listed per page; a shorter page is the last one.
const PER_PAGE: usize = 100;
/// Pages looked at before giving up on finding pitwall's earlier note.
const MAX_PAGES: u32 = 100;
/// The variable GitLab puts the job token in; it is sent as `JOB-TOKEN`, other tokens as
/// `PRIVATE-TOKEN`.
pub const JOB_TOKEN_VAR: &str = "CI_JOB_TOKEN";

/// What went wrong talking to GitLab. Never contains the token.
#[derive(Debug, thiserror::Error)]
pub enum GitlabError {
    #[error("{token_var} is not set or empty; hint: export a token with the api scope")]
    MissingToken { token_var: String },

    #[error("invalid gitlab configuration: {what}")]
    Config { what: String },

    #[error("gitlab answered {status} while trying to {action}: {message}; hint: {hint}")]
    Status {
        action: String,
        status: u16,
        message: String,
        hint: String,
    },

    #[error("could not reach gitlab while trying to {action}")]
    Transport {
        action: String,
        #[source]
        source: crate::http::HttpError,
    },

    #[error("unexpected response body from gitlab while trying to {action}")]
    Decode {
        action: String,
        #[source]
        source: serde_json::Error,
    },
}

/// A merge-request note as GitLab returns it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Note {
    pub id: u64,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub author: Option<NoteAuthor>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NoteAuthor {
    pub username: String,
}

impl Note {
    /// Whether this is pitwall's note: the marker first, written by `username`.
    pub fn is_pitwall_by(&self, username: &str) -> bool {
        self.body.trim_start().starts_with(MARKER)
            && self
                .author
                .as_ref()
                .is_some_and(|a| a.username.eq_ignore_ascii_case(username))
    }
}

/// The GitLab calls pitwall makes.
pub trait GitlabApi {
    /// The username the token belongs to (`GET /user`).
    fn current_username(&self) -> Result<String, GitlabError>;
    /// One page (1-based) of the notes on merge request `iid`.
    fn list_notes(&self, iid: u64, page: u32) -> Result<Vec<Note>, GitlabError>;
    fn create_note(&self, iid: u64, body: &str) -> Result<Note, GitlabError>;
    fn update_note(&self, iid: u64, id: u64, body: &str) -> Result<Note, GitlabError>;
}

/// What [`publish_note`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteOutcome {
    Created(u64),
    Updated(u64),
}

impl std::fmt::Display for NoteOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoteOutcome::Created(id) => write!(f, "note {id} created"),
            NoteOutcome::Updated(id) => write!(f, "note {id} updated"),
        }
    }
}

/// Keeps `body` as pitwall's one note on merge request `iid`: updates the earlier note that
/// carries the marker and was written by the token's own account, else creates one. Notes by
/// anyone else are ignored, marker or not.
pub fn publish_note(api: &dyn GitlabApi, iid: u64, body: &str) -> Result<NoteOutcome, GitlabError> {
    let body = if body.trim_start().starts_with(MARKER) {
        body.to_string()
    } else {
        format!("{MARKER}\n{body}")
    };
    let me = api.current_username()?;
    for page in 1..=MAX_PAGES {
        let notes = api.list_notes(iid, page)?;
        let short = notes.len() < PER_PAGE;
        if let Some(n) = notes.into_iter().find(|n| n.is_pitwall_by(&me)) {
            if n.body != body {
                api.update_note(iid, n.id, &body)?;
            }
            return Ok(NoteOutcome::Updated(n.id));
        }
        if short {
            break;
        }
    }
    Ok(NoteOutcome::Created(api.create_note(iid, &body)?.id))
}

/// Where and how to reach GitLab.
#[derive(Debug, Clone)]
pub struct GitlabConfig {
    /// `https://gitlab.example/api/v4` (GitLab's `$CI_API_V4_URL`).
    pub api_url: String,
    /// Project id or `group/name`.
    pub project: String,
    pub token: Secret,
    /// The variable the token came from: named in errors; `CI_JOB_TOKEN` sends `JOB-TOKEN`.
    pub token_var: String,
    pub request_timeout: Duration,
    /// Secrets removed from what GitLab sends back; the token at least.
    pub redactor: Redactor,
}

impl GitlabConfig {
    pub fn new(
        api_url: impl Into<String>,
        project: impl Into<String>,
        token: Secret,
        token_var: impl Into<String>,
    ) -> Self {
        Self {
            api_url: api_url.into(),
            project: project.into(),
            redactor: Redactor::new([token.expose()]),
            token,
            token_var: token_var.into(),
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// GitLab over HTTP (no retries: a failed note fails the job, which can be retried whole).
#[derive(Debug)]
pub struct HttpGitlab {
    config: GitlabConfig,
    base: String,
    client: HttpClient,
}

impl HttpGitlab {
    pub fn new(config: GitlabConfig) -> Result<Self, GitlabError> {
        let base = config.api_url.trim_end_matches('/').to_string();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(GitlabError::Config {
                what: format!(
                    "api url {:?} is not http(s); hint: set [gitlab] api_url or run in GitLab CI ($CI_API_V4_URL)",
                    config.api_url
                ),
            });
        }
        if config.token.expose().trim().is_empty() {
            return Err(GitlabError::MissingToken {
                token_var: config.token_var.clone(),
            });
        }
        let header = if config.token_var == JOB_TOKEN_VAR {
            "JOB-TOKEN"
        } else {
            "PRIVATE-TOKEN"
        };
        let client = HttpClient::new(
            vec![(header, config.token.expose().to_string())],
            config.request_timeout,
        )
        .map_err(|e| match e {
            crate::http::HttpError::BadHeader => GitlabError::Config {
                what: format!(
                    "the token in {} has characters not allowed in an HTTP header",
                    config.token_var
                ),
            },
            source => GitlabError::Transport {
                action: "build the http client".to_string(),
                source,
            },
        })?;
        Ok(Self {
            config,
            base,
            client,
        })
    }

    /// The project as a path segment (`group/name` percent-encoded, as GitLab asks).
    fn project_segment(&self) -> String {
        self.config
            .project
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    /// One authenticated `GET /projects/{project}`: the token is accepted and sees the
    /// project (write permission is not probed). `pitwall ci` asks this before it measures.
    pub fn check_project(&self) -> Result<(), GitlabError> {
        let url = format!("{}/projects/{}", self.base, self.project_segment());
        self.call::<serde_json::Value>("read the project", Method::Get, &url, None)
            .map(drop)
    }

    fn mr_url(&self, iid: u64, rest: &str) -> String {
        let project = self.project_segment();
        format!(
            "{}/projects/{project}/merge_requests/{iid}/notes{rest}",
            self.base
        )
    }

    fn call<T: serde::de::DeserializeOwned>(
        &self,
        action: &str,
        method: Method,
        url: &str,
        body: Option<&str>,
    ) -> Result<T, GitlabError> {
        // The last sink: a note never carries a known secret, whatever it was built from.
        let body = body.map(|b| json!({ "body": self.config.redactor.redact(b) }));
        let resp = self
            .client
            .send(method, url, body.as_ref())
            .map_err(|source| GitlabError::Transport {
                action: action.to_string(),
                source,
            })?;
        let status = resp.status;
        let text = resp.body;
        if !(200..300).contains(&status) {
            let message = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("message").map(|m| m.to_string()))
                .unwrap_or_else(|| text.trim().to_string());
            // Redacted whole before it is cut: no piece of a secret is left at the cut.
            let message: String = self
                .config
                .redactor
                .redact(&message)
                .replace(['\r', '\n'], " ")
                .chars()
                .take(200)
                .collect();
            let hint = match status {
                401 => format!(
                    "check {} (expired, revoked or mistyped)",
                    self.config.token_var
                ),
                403 => format!(
                    "the token in {} needs the api scope and Reporter access (a CI_JOB_TOKEN cannot write notes; use a project access token)",
                    self.config.token_var
                ),
                404 => format!(
                    "check the project {:?} and the merge request number",
                    self.config.project
                ),
                _ => "try again later".to_string(),
            };
            return Err(GitlabError::Status {
                action: action.to_string(),
                status,
                message,
                hint,
            });
        }
        serde_json::from_str(&text).map_err(|source| GitlabError::Decode {
            action: action.to_string(),
            source,
        })
    }
}

#[derive(Deserialize)]
struct GitlabUser {
    username: String,
}

impl GitlabApi for HttpGitlab {
    fn current_username(&self) -> Result<String, GitlabError> {
        let url = format!("{}/user", self.base);
        let user: GitlabUser = self.call(
            "find the account the token belongs to",
            Method::Get,
            &url,
            None,
        )?;
        Ok(user.username)
    }

    fn list_notes(&self, iid: u64, page: u32) -> Result<Vec<Note>, GitlabError> {
        let url = self.mr_url(iid, &format!("?per_page={PER_PAGE}&page={page}&sort=asc"));
        self.call(
            &format!("list the notes of merge request !{iid}"),
            Method::Get,
            &url,
            None,
        )
    }

    fn create_note(&self, iid: u64, body: &str) -> Result<Note, GitlabError> {
        let url = self.mr_url(iid, "");
        self.call(
            &format!("comment on merge request !{iid}"),
            Method::Post,
            &url,
            Some(body),
        )
    }

    fn update_note(&self, iid: u64, id: u64, body: &str) -> Result<Note, GitlabError> {
        let url = self.mr_url(iid, &format!("/{id}"));
        self.call(
            &format!("update note {id} of merge request !{iid}"),
            Method::Put,
            &url,
            Some(body),
        )
    }
}
