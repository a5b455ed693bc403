//! The fake GitHub server's side of the wire: reading one HTTP/1.1 request, applying a
//! scripted fault, and answering each endpoint pitwall calls from the shared [`State`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::{CheckRun, Comment, FakeIssue, Fault, REPO, Recorded, State};

fn comment_json(c: &Comment) -> Value {
    json!({
        "id": c.id,
        "body": c.body,
        "html_url": format!("https://github.example/{REPO}/pull/{}#issuecomment-{}", c.pr, c.id),
        "user": {"login": c.author},
    })
}

pub(super) fn handle(mut stream: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let len: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let (code, extra, reply) = respond(state, &method, path, query, &body, &header);
    let reply = reply.to_string();
    let reason = match code {
        200 => "OK",
        201 => "Created",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        502 => "Bad Gateway",
        _ => "Whatever",
    };
    let mut head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(reply.as_bytes());
    let _ = stream.flush();
}

type Reply = (u16, Vec<(String, String)>, Value);

fn respond(
    state: &Mutex<State>,
    method: &str,
    path: &str,
    query: &str,
    body: &Value,
    header: &dyn Fn(&str) -> Option<String>,
) -> Reply {
    let mut s = state.lock().unwrap();
    s.requests.push(Recorded {
        method: method.to_string(),
        path: format!("{path}?{query}"),
        authorization: header("authorization"),
        accept: header("accept"),
        api_version: header("x-github-api-version"),
        user_agent: header("user-agent"),
    });
    if s.always_401 {
        return (401, vec![], json!({"message": "Bad credentials"}));
    }
    let fault = match s.faults.iter().position(|(m, _)| m == method) {
        Some(i) => s.faults.remove(i).map(|(_, f)| f),
        None => None,
    };
    match &fault {
        Some(Fault::BadGatewayBefore) => return (502, vec![], json!({"message": "bad gateway"})),
        Some(Fault::TooManyRequests { retry_after }) => {
            return (
                429,
                vec![("Retry-After".into(), retry_after.to_string())],
                json!({"message": "slow down"}),
            );
        }
        Some(Fault::RateLimitReset { secs }) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            let echo = s.echo.clone().unwrap_or_default();
            return (
                403,
                vec![
                    ("x-ratelimit-remaining".into(), "0".into()),
                    ("x-ratelimit-reset".into(), (now + secs).to_string()),
                ],
                json!({"message": format!("API rate limit exceeded {echo}")}),
            );
        }
        Some(Fault::Forbidden) => {
            let echo = s.echo.clone().unwrap_or_default();
            return (
                403,
                vec![],
                json!({"message": format!("Resource not accessible by integration {echo}")}),
            );
        }
        _ => {}
    }
    let (code, extra, reply) = route(&mut s, method, path, query, body);
    if matches!(fault, Some(Fault::BadGatewayAfter)) && code < 300 {
        return (502, vec![], json!({"message": "bad gateway"}));
    }
    (code, extra, reply)
}

fn route(s: &mut State, method: &str, path: &str, query: &str, body: &Value) -> Reply {
    let not_found = (404, vec![], json!({"message": "Not Found"}));
    if (method, path) == ("GET", "/user") {
        return match &s.user_login {
            Some(login) => (200, vec![], json!({"login": login, "id": 1})),
            None => (
                403,
                vec![],
                json!({"message": "Resource not accessible by integration"}),
            ),
        };
    }
    // The repository itself (`pitwall ci` checks it can see it before measuring).
    if (method, path) == ("GET", format!("/repos/{REPO}").as_str()) {
        return (200, vec![], json!({"full_name": REPO, "private": true}));
    }
    let Some(rest) = path.strip_prefix(&format!("/repos/{REPO}/")) else {
        return not_found;
    };
    let seg: Vec<&str> = rest.split('/').collect();
    let param = |name: &str| -> Option<usize> {
        query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.parse().ok())
    };
    match (method, seg.as_slice()) {
        ("GET", ["issues", n, "comments"]) => {
            let pr: u64 = n.parse().unwrap();
            let page = param("page").unwrap_or(1).max(1);
            let per_page = param("per_page").unwrap_or(30).min(100);
            let all = s.comments.iter().filter(|c| c.pr == pr).count();
            let list: Vec<Value> = s
                .comments
                .iter()
                .filter(|c| c.pr == pr)
                .skip((page - 1) * per_page)
                .take(per_page)
                .map(comment_json)
                .collect();
            // As GitHub: `Link` with rel="next" and rel="last" while more pages follow.
            let last = all.div_ceil(per_page).max(1);
            let mut extra = vec![];
            if page < last && !s.no_link_header {
                let url = |p: usize| {
                    format!(
                        "<http://x/repos/{REPO}/issues/{pr}/comments?per_page={per_page}&page={p}>"
                    )
                };
                extra.push((
                    "Link".to_string(),
                    format!(
                        "{}; rel=\"next\", {}; rel=\"last\"",
                        url(page + 1),
                        url(last)
                    ),
                ));
            }
            (200, extra, Value::Array(list))
        }
        ("POST", ["issues", n, "comments"]) => {
            let pr: u64 = n.parse().unwrap();
            let id = s.next_id;
            s.next_id += 1;
            let author = s.user_login.clone().unwrap_or("github-actions[bot]".into());
            let c = Comment {
                id,
                pr,
                body: body["body"].as_str().unwrap_or("").to_string(),
                author,
            };
            s.comments.push(c.clone());
            (201, vec![], comment_json(&c))
        }
        ("GET", ["issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap();
            match s.comments.iter().find(|c| c.id == id) {
                Some(c) => (200, vec![], comment_json(c)),
                None => not_found,
            }
        }
        ("PATCH", ["issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap();
            match s.comments.iter_mut().find(|c| c.id == id) {
                Some(c) => {
                    c.body = body["body"].as_str().unwrap_or("").to_string();
                    let c = c.clone();
                    (200, vec![], comment_json(&c))
                }
                None => not_found,
            }
        }
        ("GET", ["issues"]) => {
            let label = query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| *k == "labels")
                .map(|(_, v)| v.to_string())
                .unwrap_or_default();
            let page = param("page").unwrap_or(1).max(1);
            let per_page = param("per_page").unwrap_or(30).min(100);
            let list: Vec<Value> = s
                .issues
                .iter()
                .filter(|i| i.labels.contains(&label))
                .skip((page - 1) * per_page)
                .take(per_page)
                .map(|i| {
                    json!({"number": i.number, "title": i.title, "body": i.body,
                           "state": i.state, "user": {"login": i.author}})
                })
                .collect();
            (200, vec![], Value::Array(list))
        }
        ("POST", ["issues"]) => {
            let number = s.issues.len() as u64 + 1;
            let author = s.user_login.clone().unwrap_or("github-actions[bot]".into());
            let labels = body["labels"]
                .as_array()
                .map(|l| {
                    l.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            s.issues.push(FakeIssue {
                number,
                title: body["title"].as_str().unwrap_or("").to_string(),
                body: body["body"].as_str().unwrap_or("").to_string(),
                author,
                labels,
                state: "open".to_string(),
                updates: 0,
            });
            (201, vec![], json!({"number": number}))
        }
        ("PATCH", ["issues", n]) => {
            let n: u64 = n.parse().unwrap();
            match s.issues.iter_mut().find(|i| i.number == n) {
                Some(i) => {
                    i.title = body["title"].as_str().unwrap_or("").to_string();
                    i.body = body["body"].as_str().unwrap_or("").to_string();
                    if let Some(state) = body["state"].as_str() {
                        i.state = state.to_string();
                    }
                    i.updates += 1;
                    (200, vec![], json!({"number": n}))
                }
                None => not_found,
            }
        }
        ("GET", ["commits", sha, "check-runs"]) => {
            let name = query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| *k == "check_name")
                .map(|(_, v)| v.to_string());
            let runs: Vec<Value> = s
                .check_runs
                .iter()
                .filter(|r| r.sha == *sha && name.as_ref().is_none_or(|n| *n == r.name))
                .map(|r| json!({"id": r.id, "name": r.name, "head_sha": r.sha}))
                .collect();
            (
                200,
                vec![],
                json!({"total_count": runs.len(), "check_runs": runs}),
            )
        }
        ("POST", ["check-runs"]) => {
            let id = s.next_id;
            s.next_id += 1;
            let run = CheckRun {
                id,
                name: body["name"].as_str().unwrap_or("").to_string(),
                sha: body["head_sha"].as_str().unwrap_or("").to_string(),
                body: body.clone(),
                updates: 0,
            };
            s.check_runs.push(run);
            (201, vec![], json!({"id": id, "name": body["name"]}))
        }
        ("PATCH", ["check-runs", id]) => {
            let id: u64 = id.parse().unwrap();
            match s.check_runs.iter_mut().find(|r| r.id == id) {
                Some(r) => {
                    r.body = body.clone();
                    r.updates += 1;
                    (200, vec![], json!({"id": id, "name": r.name}))
                }
                None => not_found,
            }
        }
        ("POST", ["statuses", sha]) => {
            s.statuses.push((sha.to_string(), body.clone()));
            (201, vec![], json!({"id": 1, "state": body["state"]}))
        }
        _ => not_found,
    }
}
