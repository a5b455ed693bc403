//! [`HttpGithub`]: the GitHub REST implementation of `GithubApi` over [`crate::http`],
//! with bounded retries.
//!
//! Server errors (5xx), network errors and rate limits (403/429 with `Retry-After`, or
//! `x-ratelimit-remaining: 0` with `x-ratelimit-reset`) are retried with exponential backoff
//! until [`GithubConfig::max_total`] would be exceeded. Creating a comment is made idempotent:
//! before a create is sent again, the comments are listed and a comment that the first
//! attempt may have created is used instead.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use pitwall_schema::Redactor;

use crate::http::{HttpClient, HttpError, HttpResponse, Method};

use super::api::{CommentPage, GithubError, IssueComment, PER_PAGE, Secret, truncate_chars};

/// Where and how to reach GitHub.
#[derive(Debug, Clone)]
pub struct GithubConfig {
    /// `https://api.github.com`, a GitHub Enterprise `https://host/api/v3`, or a test server.
    pub api_url: String,
    /// `owner/name`.
    pub repo: String,
    pub token: Secret,
    /// Bound on the time spent retrying one call (default 60 s).
    pub max_total: Duration,
    /// The variable the token came from, named in errors (default `GITHUB_TOKEN`).
    pub token_var: String,
    /// First backoff delay; it doubles per attempt up to 30 s (default 1 s).
    pub backoff_base: Duration,
    /// Timeout of one HTTP request (default 30 s).
    pub request_timeout: Duration,
    /// Secrets removed from every message GitHub sends back: the token at least (in every
    /// encoding, so a `Basic` header echoed in base64 is caught too).
    pub redactor: Redactor,
}

impl GithubConfig {
    pub fn new(api_url: impl Into<String>, repo: impl Into<String>, token: Secret) -> Self {
        Self {
            redactor: Redactor::new([token.expose()]),
            api_url: api_url.into(),
            repo: repo.into(),
            token,
            max_total: Duration::from_secs(60),
            token_var: "GITHUB_TOKEN".to_string(),
            backoff_base: Duration::from_secs(1),
            request_timeout: Duration::from_secs(30),
        }
    }
}

const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// GitHub asks to wait at least a minute after a secondary rate limit without `Retry-After`.
const SECONDARY_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// GitHub over HTTP.
#[derive(Debug)]
pub struct HttpGithub {
    config: GithubConfig,
    base: String,
    client: HttpClient,
    /// The login `GET /user` answered, once asked.
    pub(super) login: std::sync::OnceLock<String>,
}

/// One request, described for errors.
pub(super) struct Req {
    pub(super) action: String,
    pub(super) target: String,
    pub(super) method: Method,
    pub(super) url: String,
    pub(super) body: Option<Value>,
}

enum Step {
    Done {
        body: String,
        link: Option<String>,
    },
    Fatal(GithubError),
    Retry {
        err: GithubError,
        wait: Option<Duration>,
    },
}

pub(super) enum Sent {
    /// The answer's body and its `Link` header (pagination), when there is one.
    Body { body: String, link: Option<String> },
    /// What an earlier attempt turned out to have made (a retried create), as JSON.
    Recovered(Value),
}

type Recover<'a> = &'a dyn Fn(Instant) -> Result<Option<Value>, GithubError>;

impl HttpGithub {
    /// Checks the configuration and builds the client (installing the ring TLS provider as
    /// the process default when none is installed yet).
    pub fn new(config: GithubConfig) -> Result<Self, GithubError> {
        let bad = |what: String| Err(GithubError::Config { what });
        let base = config.api_url.trim_end_matches('/').to_string();
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return bad(format!(
                "api url {:?} is not http(s); hint: use https://api.github.com or https://HOST/api/v3",
                config.api_url
            ));
        }
        let parts: Vec<&str> = config.repo.split('/').collect();
        let part_ok = |p: &str| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if parts.len() != 2 || !parts.iter().all(|p| part_ok(p)) {
            return bad(format!(
                "repository {:?} is not owner/name; hint: e.g. GITHUB_REPOSITORY=octo/pitwall",
                config.repo
            ));
        }
        if config.token.expose().trim().is_empty() {
            return Err(GithubError::MissingToken {
                token_var: config.token_var.clone(),
            });
        }
        let headers = vec![
            ("authorization", format!("Bearer {}", config.token.expose())),
            ("accept", "application/vnd.github+json".to_string()),
            ("x-github-api-version", "2022-11-28".to_string()),
        ];
        let client = HttpClient::new(headers, config.request_timeout).map_err(|e| match e {
            HttpError::BadHeader => GithubError::Config {
                what: format!(
                    "the token in {} has characters not allowed in an HTTP header",
                    config.token_var
                ),
            },
            source => GithubError::Transport {
                action: "build the http client".to_string(),
                source,
            },
        })?;
        Ok(Self {
            config,
            base,
            client,
            login: std::sync::OnceLock::new(),
        })
    }

    pub fn config(&self) -> &GithubConfig {
        &self.config
    }

    pub(super) fn url(&self, rest: &str) -> String {
        format!("{}/{rest}", self.base)
    }

    pub(super) fn repo_url(&self, rest: &str) -> String {
        format!("{}/repos/{}/{rest}", self.base, self.config.repo)
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(16));
        self.config
            .backoff_base
            .saturating_mul(factor)
            .min(MAX_BACKOFF)
    }

    /// Sends `req` until it succeeds, fails for good, or `deadline` would be passed.
    pub(super) fn send(
        &self,
        req: &Req,
        deadline: Instant,
        recover: Option<Recover<'_>>,
    ) -> Result<Sent, GithubError> {
        let start = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            if attempt > 1
                && let Some(recover) = recover
                && let Some(found) = recover(deadline)?
            {
                return Ok(Sent::Recovered(found));
            }
            let (err, wait) = match self.once(req, deadline) {
                Step::Done { body, link } => return Ok(Sent::Body { body, link }),
                Step::Fatal(e) => return Err(e),
                Step::Retry { err, wait } => {
                    let wait = wait.unwrap_or_else(|| self.backoff(attempt));
                    (err, wait)
                }
            };
            if Instant::now() + wait > deadline {
                return Err(match err {
                    GithubError::RateLimited { .. } => GithubError::RateLimited {
                        action: req.action.clone(),
                        wait,
                        budget: self.config.max_total,
                    },
                    last => GithubError::RetriesExhausted {
                        action: req.action.clone(),
                        attempts: attempt,
                        elapsed: start.elapsed(),
                        budget: self.config.max_total,
                        last: Box::new(last),
                    },
                });
            }
            std::thread::sleep(wait);
        }
    }

    fn once(&self, req: &Req, deadline: Instant) -> Step {
        // The last sink: no body sent (comment, check run, status, issue) holds a known secret.
        let body = req
            .body
            .as_ref()
            .map(|b| self.config.redactor.redacted_json(b));
        let sent = self
            .client
            .send_by(req.method, &req.url, body.as_ref(), Some(deadline));
        let resp = match sent {
            Ok(r) => r,
            Err(source) => {
                return Step::Retry {
                    err: GithubError::Transport {
                        action: req.action.clone(),
                        source,
                    },
                    wait: None,
                };
            }
        };
        let status = resp.status;
        let wait = rate_limit_wait(&resp);
        let link = resp.header("link").map(str::to_string);
        let body = resp.body;
        if (200..300).contains(&status) {
            return Step::Done { body, link };
        }
        // Redacted before it is cut to 200 characters: no piece of a secret is left.
        let message = github_message(&self.config.redactor.redact(&body));
        let action = req.action.clone();
        let rate_limited = GithubError::RateLimited {
            action: action.clone(),
            wait: Duration::ZERO,
            budget: self.config.max_total,
        };
        match status {
            401 => Step::Fatal(GithubError::TokenRejected {
                action,
                token_var: self.config.token_var.clone(),
            }),
            403 | 429 => match wait {
                Some(wait) => Step::Retry {
                    err: rate_limited,
                    wait: Some(wait),
                },
                None if message.to_ascii_lowercase().contains("rate limit") => Step::Retry {
                    err: rate_limited,
                    wait: Some(SECONDARY_LIMIT_WAIT),
                },
                None if status == 429 => Step::Retry {
                    err: rate_limited,
                    wait: None,
                },
                None => Step::Fatal(GithubError::Forbidden { action, message }),
            },
            404 => Step::Fatal(GithubError::NotFound {
                action,
                repo: self.config.repo.clone(),
                target: req.target.clone(),
            }),
            500..=599 => Step::Retry {
                err: GithubError::Status {
                    action,
                    status,
                    message,
                },
                wait: None,
            },
            _ => Step::Fatal(GithubError::Status {
                action,
                status,
                message,
            }),
        }
    }

    pub(super) fn list_page(
        &self,
        pr: u64,
        page: u32,
        deadline: Instant,
    ) -> Result<CommentPage, GithubError> {
        let req = Req {
            action: format!("list comments of pull request {pr}"),
            target: format!("pull request {pr}"),
            method: Method::Get,
            url: self.repo_url(&format!(
                "issues/{pr}/comments?per_page={PER_PAGE}&page={page}"
            )),
            body: None,
        };
        let sent = self.send(&req, deadline, None)?;
        let last_page = match &sent {
            Sent::Body { link, .. } => link.as_deref().and_then(last_page),
            Sent::Recovered(_) => None,
        };
        Ok(CommentPage {
            comments: decode(&req, sent)?,
            last_page,
        })
    }

    /// After a failed create: the comment the failed attempt may have made, one with the same
    /// body, by the login `GET /user` gave when it was asked (anyone's otherwise: the body
    /// is the one just sent). Looked for from the last page backwards: a new comment is last.
    pub(super) fn find_created(
        &self,
        pr: u64,
        body: &str,
        deadline: Instant,
    ) -> Result<Option<Value>, GithubError> {
        let by_us = |c: &IssueComment| match (self.login.get(), &c.user) {
            (Some(login), Some(user)) => user.login.eq_ignore_ascii_case(login),
            (Some(_), None) => false,
            (None, _) => true,
        };
        let found = super::api::find_comment_from_the_end(
            &|page| self.list_page(pr, page, deadline),
            &|c: &IssueComment| c.body.as_deref() == Some(body) && by_us(c),
        )?;
        Ok(found.map(|c| serde_json::to_value(c).expect("comment serializes")))
    }

    /// One authenticated `GET /repos/{repo}`: the token is accepted and sees the repository
    /// (write permission is not probed). `pitwall ci` asks this before it measures.
    pub fn check_repository(&self) -> Result<(), GithubError> {
        let req = Req {
            action: format!("read repository {}", self.config.repo),
            target: "the repository".to_string(),
            method: Method::Get,
            url: format!("{}/repos/{}", self.base, self.config.repo),
            body: None,
        };
        decode::<Value>(&req, self.send(&req, self.deadline(), None)?).map(drop)
    }

    pub(super) fn deadline(&self) -> Instant {
        Instant::now() + self.config.max_total
    }
}

pub(super) fn decode<T: serde::de::DeserializeOwned>(
    req: &Req,
    sent: Sent,
) -> Result<T, GithubError> {
    let decoded = match sent {
        Sent::Body { body, .. } => serde_json::from_str(&body),
        Sent::Recovered(value) => serde_json::from_value(value),
    };
    decoded.map_err(|source| GithubError::Decode {
        action: req.action.clone(),
        source,
    })
}

/// GitHub's `{"message": …}`, or the start of the body; at most 200 characters.
fn github_message(body: &str) -> String {
    let msg = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message")?.as_str().map(str::to_string))
        .unwrap_or_else(|| body.trim().to_string());
    let msg = if msg.is_empty() {
        "no message".to_string()
    } else {
        msg
    };
    truncate_chars(&msg.replace(['\r', '\n'], " "), 200)
}

/// The page `rel="last"` of a GitHub `Link` header names
/// (`<…&page=101>; rel="last"`), when there is one.
fn last_page(link: &str) -> Option<u32> {
    link.split(',')
        .find(|part| part.contains("rel=\"last\""))?
        .split(['<', '>'])
        .nth(1)?
        .split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("page=")?.parse().ok())
}

/// How long GitHub asks to wait: `Retry-After` seconds, or until `x-ratelimit-reset` when
/// `x-ratelimit-remaining` is 0.
fn rate_limit_wait(resp: &HttpResponse) -> Option<Duration> {
    let num = |name: &str| -> Option<u64> { resp.header(name)?.trim().parse().ok() };
    if let Some(secs) = num("retry-after") {
        return Some(Duration::from_secs(secs));
    }
    if num("x-ratelimit-remaining") == Some(0) {
        let reset = num("x-ratelimit-reset")?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        return Some(Duration::from_secs(reset.saturating_sub(now)));
    }
    None
}
