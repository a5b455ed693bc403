//! A small real HTTP/1.1 server that emulates the GitHub endpoints pitwall uses, keeps the
//! comments (with their authors) and check runs it is given, records every request, and can
//! be scripted to fail.
//!
//! `GET /user` answers [`BOT`] unless `user_login` says otherwise, or 403 (as GitHub does for
//! an Actions installation token) when it is `None`.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;

mod routes;

pub const REPO: &str = "octo/bench";
/// The login the token authenticates as, by default; comments pitwall creates are its.
pub const BOT: &str = "pitwall-bot";

/// A scripted failure, used once by the next request that matches `method`.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer 502 without doing anything.
    BadGatewayBefore,
    /// Do the work, then answer 502 (the client cannot know it succeeded).
    BadGatewayAfter,
    /// 429 with `Retry-After: secs`.
    TooManyRequests { retry_after: u64 },
    /// 403 with `x-ratelimit-remaining: 0` and a reset `secs` from now.
    RateLimitReset { secs: u64 },
    /// 403 without rate-limit headers.
    Forbidden,
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub pr: u64,
    pub body: String,
    pub author: String,
}

/// An issue, with who opened it.
#[derive(Debug, Clone)]
pub struct FakeIssue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub labels: Vec<String>,
    pub state: String,
    /// Times it was updated (PATCH).
    pub updates: u32,
}

#[derive(Debug, Clone)]
pub struct CheckRun {
    pub id: u64,
    pub name: String,
    pub sha: String,
    /// The last body sent (create or update).
    pub body: Value,
    pub updates: u32,
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub accept: Option<String>,
    pub api_version: Option<String>,
    pub user_agent: Option<String>,
}

#[derive(Debug, Default)]
pub struct State {
    pub comments: Vec<Comment>,
    pub issues: Vec<FakeIssue>,
    pub statuses: Vec<(String, Value)>,
    pub check_runs: Vec<CheckRun>,
    /// What `GET /user` answers: `Some(login)`, or 403 for `None`.
    pub user_login: Option<String>,
    pub requests: Vec<Recorded>,
    pub faults: VecDeque<(String, Fault)>,
    /// Every request is answered 401.
    pub always_401: bool,
    /// 403 rate-limit answers echo this into their message (tests redaction).
    pub echo: Option<String>,
    /// Comment lists leave out GitHub's `Link` header (`rel="last"`), as a proxy might.
    pub no_link_header: bool,
    next_id: u64,
}

pub struct Server {
    pub url: String,
    pub state: Arc<Mutex<State>>,
}

impl Server {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State {
            next_id: 1000,
            user_login: Some(BOT.to_string()),
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&shared);
                thread::spawn(move || routes::handle(stream, &shared));
            }
        });
        Self { url, state }
    }

    /// The next request with `method` fails with `fault`.
    pub fn fail_next(&self, method: &str, fault: Fault) {
        self.state
            .lock()
            .unwrap()
            .faults
            .push_back((method.to_string(), fault));
    }

    /// Adds `n` comments that are not pitwall's to `pr`.
    pub fn seed(&self, pr: u64, n: usize) {
        let mut s = self.state.lock().unwrap();
        for i in 0..n {
            let id = s.next_id;
            s.next_id += 1;
            s.comments.push(Comment {
                id,
                pr,
                body: format!("looks good {i}"),
                author: "reviewer".to_string(),
            });
        }
    }

    /// A comment on `pr` by the bot.
    pub fn add_comment(&self, pr: u64, body: &str) -> u64 {
        self.add_comment_by(pr, body, BOT)
    }

    /// A comment on `pr` by `author` (a spoofed pitwall comment when `body` has the marker).
    pub fn add_comment_by(&self, pr: u64, body: &str, author: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        let id = s.next_id;
        s.next_id += 1;
        s.comments.push(Comment {
            id,
            pr,
            body: body.to_string(),
            author: author.to_string(),
        });
        id
    }

    /// An issue opened by `author` with `label`; its number.
    pub fn add_issue(&self, title: &str, body: &str, author: &str, label: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        let number = s.issues.len() as u64 + 1;
        s.issues.push(FakeIssue {
            number,
            title: title.to_string(),
            body: body.to_string(),
            author: author.to_string(),
            labels: vec![label.to_string()],
            state: "closed".to_string(),
            updates: 0,
        });
        number
    }

    pub fn issues(&self) -> Vec<FakeIssue> {
        self.state.lock().unwrap().issues.clone()
    }

    pub fn check_runs(&self) -> Vec<CheckRun> {
        self.state.lock().unwrap().check_runs.clone()
    }

    pub fn comments_on(&self, pr: u64) -> Vec<Comment> {
        let s = self.state.lock().unwrap();
        s.comments.iter().filter(|c| c.pr == pr).cloned().collect()
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }
}
