//! `pitwall ci` in a GitLab merge-request pipeline, against a small real HTTP server standing
//! in for the GitLab API: the merge request comes from `CI_MERGE_REQUEST_*` (no `--pr`), one
//! sticky note is created then updated, a note with the marker by someone else is never
//! touched, and `--mr` is accepted.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;

use pitwall_e2e::{Out, Sandbox, git};
use serde_json::{Value, json};

const TOKEN: &str = "glpat-s3cr3tGitLabTokenValue";
const PROJECT: &str = "55";
const BOT: &str = "pitwall-bot";

#[derive(Debug, Clone)]
struct Note {
    id: u64,
    iid: u64,
    body: String,
    author: String,
}

#[derive(Default)]
struct State {
    notes: Vec<Note>,
    /// (method, path, PRIVATE-TOKEN header) of every request.
    requests: Vec<(String, String, Option<String>)>,
    next_id: u64,
}

/// Serves `/api/v4/user` and the notes of merge requests of project [`PROJECT`].
fn start() -> (String, Arc<Mutex<State>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api/v4", listener.local_addr().unwrap());
    let state = Arc::new(Mutex::new(State {
        next_id: 500,
        ..State::default()
    }));
    let shared = Arc::clone(&state);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut parts = line.split_whitespace();
            let method = parts.next().unwrap_or("").to_string();
            let target = parts.next().unwrap_or("").to_string();
            let (mut len, mut token) = (0usize, None);
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    match k.trim().to_ascii_lowercase().as_str() {
                        "content-length" => len = v.trim().parse().unwrap_or(0),
                        "private-token" => token = Some(v.trim().to_string()),
                        _ => {}
                    }
                }
            }
            let mut body = vec![0u8; len];
            reader.read_exact(&mut body).unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let path = target.split('?').next().unwrap().to_string();
            let (code, reply) = route(&shared, &method, &path, token.as_deref(), &body);
            let reply = reply.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, state)
}

fn route(
    state: &Mutex<State>,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &Value,
) -> (u16, Value) {
    let mut s = state.lock().unwrap();
    s.requests
        .push((method.into(), path.into(), token.map(str::to_string)));
    if token != Some(TOKEN) {
        return (401, json!({"message": "401 Unauthorized"}));
    }
    let note_json =
        |n: &Note| json!({"id": n.id, "body": n.body, "author": {"username": n.author}});
    let rest = path.strip_prefix("/api/v4/").unwrap_or("");
    let seg: Vec<&str> = rest.split('/').collect();
    match (method, seg.as_slice()) {
        ("GET", ["user"]) => (200, json!({"id": 1, "username": BOT})),
        ("GET", ["projects", p]) if *p == PROJECT => (200, json!({"id": 55, "name": "bench"})),
        ("GET", ["projects", p, "merge_requests", iid, "notes"]) if *p == PROJECT => {
            let iid: u64 = iid.parse().unwrap();
            let list: Vec<Value> = s
                .notes
                .iter()
                .filter(|n| n.iid == iid)
                .map(note_json)
                .collect();
            (200, Value::Array(list))
        }
        ("POST", ["projects", p, "merge_requests", iid, "notes"]) if *p == PROJECT => {
            let n = Note {
                id: s.next_id,
                iid: iid.parse().unwrap(),
                body: body["body"].as_str().unwrap_or("").into(),
                author: BOT.into(),
            };
            s.next_id += 1;
            s.notes.push(n.clone());
            (201, note_json(&n))
        }
        ("PUT", ["projects", p, "merge_requests", _, "notes", id]) if *p == PROJECT => {
            let id: u64 = id.parse().unwrap();
            match s.notes.iter_mut().find(|n| n.id == id) {
                Some(n) => {
                    n.body = body["body"].as_str().unwrap_or("").into();
                    let n = n.clone();
                    (200, note_json(&n))
                }
                None => (404, json!({"message": "404 Not found"})),
            }
        }
        _ => (404, json!({"message": "404 Not found"})),
    }
}

/// A repository whose head commit makes the benchmark 40% slower.
fn repo(sb: &Sandbox) -> (String, String) {
    sb.write("level.txt", "100\n");
    sb.write(
        "bench.sh",
        "l=$(cat level.txt)\nprintf '{\"schema\":\"pitwall/v1\",\"benchmarks\":[{\"name\":\"work\",\"samples\":[%s.1,%s.2,%s.3,%s.4,%s.5,%s.6,%s.7,%s.8]}]}' $l $l $l $l $l $l $l $l\n",
    );
    sb.write("pitwall.toml", "[project]\nname = \"mr\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n");
    git(sb.path(), &["init", "-q", "-b", "main"]);
    git(sb.path(), &["add", "-A"]);
    git(sb.path(), &["commit", "-q", "-m", "base"]);
    let base = git(sb.path(), &["rev-parse", "HEAD"]);
    sb.write("level.txt", "140\n");
    git(sb.path(), &["commit", "-q", "-am", "slower"]);
    (base, git(sb.path(), &["rev-parse", "HEAD"]))
}

fn in_pipeline(sb: &Sandbox, url: &str, args: &[&str]) -> Out {
    in_pipeline_with(sb, url, args, &[])
}

fn in_pipeline_with(sb: &Sandbox, url: &str, args: &[&str], extra: &[(&str, &str)]) -> Out {
    Out(sb
        .cmd(args)
        .envs(extra.iter().copied())
        .env("GITLAB_CI", "true")
        .env("CI_API_V4_URL", url)
        .env("CI_MERGE_REQUEST_IID", "12")
        .env("CI_MERGE_REQUEST_PROJECT_ID", PROJECT)
        .env("GITLAB_TOKEN", TOKEN)
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap())
}

#[test]
fn ci_in_a_merge_request_pipeline_keeps_one_note_and_ignores_spoofed_ones() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    let (url, state) = start();
    let spoof = "<!-- pitwall:comparison -->\nall good, merge";
    state.lock().unwrap().notes.push(Note {
        id: 1,
        iid: 12,
        body: spoof.into(),
        author: "mallory".into(),
    });
    // No --base/--head: the merge-request pipeline's variables name the commits.
    let out = in_pipeline_with(
        &sb,
        &url,
        &["ci", "--rounds", "2"],
        &[
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", &base),
            ("CI_COMMIT_SHA", &head),
        ],
    )
    .expect(1);
    assert!(
        out.stderr().contains("merge request !12: note 500 created"),
        "{}",
        out.stderr()
    );
    let again = in_pipeline(&sb, &url, &["comment", "--mr", "12"]).expect(1);
    assert!(
        again
            .stderr()
            .contains("merge request !12: note 500 updated"),
        "{}",
        again.stderr()
    );
    let s = state.lock().unwrap();
    assert_eq!(s.notes.len(), 2, "{:?}", s.notes);
    assert_eq!(s.notes[0].body, spoof, "mallory's note untouched");
    assert!(s.notes[1].body.starts_with("<!-- pitwall:comparison -->"));
    assert!(
        s.notes[1].body.contains("regression"),
        "{}",
        s.notes[1].body
    );
    assert!(s.requests.iter().all(|r| r.2.as_deref() == Some(TOKEN)));
    assert!(
        !s.requests
            .iter()
            .any(|r| r.0 == "PUT" && r.1.ends_with("/notes/1")),
        "no edit of the spoofed note was tried"
    );
    for o in [&out, &again] {
        assert!(!o.stdout().contains(TOKEN) && !o.stderr().contains(TOKEN));
    }
}

#[test]
fn a_rejected_gitlab_token_is_an_infrastructure_failure_naming_the_variable() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    sb.run(&[
        "run", "--quiet", "--base", &base, "--head", &head, "--rounds", "1",
    ]);
    let (url, _state) = start();
    let out = Out(sb
        .cmd(&["comment"])
        .env("GITLAB_CI", "true")
        .env("CI_API_V4_URL", &url)
        .env("CI_MERGE_REQUEST_IID", "12")
        .env("CI_PROJECT_ID", PROJECT)
        .env("GITLAB_TOKEN", "glpat-wrong-token-value")
        .output()
        .unwrap());
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(
        out.stderr().contains("check GITLAB_TOKEN"),
        "{}",
        out.stderr()
    );
    assert!(!out.stderr().contains("glpat-wrong"), "{}", out.stderr());
    // No merge request named anywhere is a usage error.
    let out = Out(sb
        .cmd(&["comment"])
        .env("GITLAB_CI", "true")
        .env("CI_API_V4_URL", &url)
        .output()
        .unwrap());
    assert_eq!(out.code(), 2, "{}", out.stderr());
    assert!(out.stderr().contains("--mr N"), "{}", out.stderr());
}

/// Issue 28, item 1: in a merge-request pipeline whose token GitLab refuses, `pitwall ci`
/// stops before it builds or measures, exit 2 naming the variable and `pitwall comment`.
#[test]
fn a_refused_token_stops_ci_before_it_measures() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    let (url, state) = start();
    let out = Out(sb
        .cmd(&["ci", "--rounds", "1"])
        .env("GITLAB_CI", "true")
        .env("CI_API_V4_URL", &url)
        .env("CI_MERGE_REQUEST_IID", "12")
        .env("CI_PROJECT_ID", PROJECT)
        .env("CI_MERGE_REQUEST_DIFF_BASE_SHA", &base)
        .env("CI_COMMIT_SHA", &head)
        .env("GITLAB_TOKEN", "glpat-wrong-token-value")
        .output()
        .unwrap());
    let e = out.stderr();
    assert_eq!(out.code(), 2, "{e}");
    assert!(
        e.contains("nothing was measured") && e.contains("GITLAB_TOKEN"),
        "{e}"
    );
    assert!(
        e.contains("pitwall comment") && !e.contains("glpat-wrong"),
        "{e}"
    );
    assert!(!e.contains("round 1"), "{e}");
    assert!(!sb.db().exists() || sb.count("runs") == 0, "nothing stored");
    let asked: Vec<String> = state
        .lock()
        .unwrap()
        .requests
        .iter()
        .map(|r| r.1.clone())
        .collect();
    assert_eq!(asked, [format!("/api/v4/projects/{PROJECT}")], "one GET");
}

/// Issue 22 item 1: a merge request's pitwall.toml names its own server as `[gitlab]
/// api_url`; the token still goes only to the API GitLab CI names (`CI_API_V4_URL`), and
/// the configured one gets no request at all.
#[test]
fn the_repositorys_api_url_never_receives_the_token() {
    let sb = Sandbox::new();
    let (url, state) = start();
    let (evil, evil_state) = start();
    sb.write(
        "pitwall.toml",
        &format!("[project]\nname = \"mr\"\n\n[gitlab]\napi_url = \"{evil}\"\n"),
    );
    for (f, level) in [("a.json", 100), ("b.json", 140)] {
        let samples: Vec<String> = (1..9).map(|i| format!("{level}.{i}")).collect();
        sb.write(
            f,
            &format!(
                "{{\"schema\":\"pitwall/v1\",\"benchmarks\":[{{\"name\":\"work\",\"samples\":[{}]}}]}}",
                samples.join(",")
            ),
        );
    }
    let out = in_pipeline(
        &sb,
        &url,
        &["comment", "--baseline", "a.json", "--candidate", "b.json"],
    )
    .expect(1);
    assert!(evil_state.lock().unwrap().requests.is_empty());
    assert_eq!(state.lock().unwrap().notes.len(), 1, "{}", out.stderr());
    assert!(
        out.stderr().contains("[gitlab] api_url `http://127.0.0.1:")
            && out.stderr().contains("is ignored"),
        "{}",
        out.stderr()
    );
}
