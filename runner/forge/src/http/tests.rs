//! The client against one-shot local servers: headers and JSON sent, any status returned,
//! redirects followed only within the origin, errors without the URL or a header.

use super::*;
use std::io::{Read, Write};
use std::net::TcpListener;

/// A server answering one connection per answer, each `status` plus extra header lines,
/// with a small JSON body; returns the URL (path `/x/SECRET-PATH`) and the requests it got.
fn serve(answers: Vec<(&str, &str)>) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/x/SECRET-PATH", listener.local_addr().unwrap());
    let answers: Vec<(String, String)> = answers
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let handle = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for (status, extra) in answers {
            let (mut s, _) = listener.accept().unwrap();
            requests.push(read_request(&mut s));
            let body = "{\"ok\":true}";
            write!(
                s,
                "HTTP/1.1 {status}\r\nX-RateLimit-Remaining: 0\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
        requests
    });
    (url, handle)
}

fn serve_once(status: &str) -> (String, std::thread::JoinHandle<Vec<String>>) {
    serve(vec![(status, "")])
}

/// One request, headers and body (by its content-length).
fn read_request(s: &mut std::net::TcpStream) -> String {
    let mut buf = vec![0u8; 65536];
    let mut got = Vec::new();
    loop {
        let n = s.read(&mut buf).unwrap();
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if got.len() >= end + 4 + len || n == 0 {
                break;
            }
        }
    }
    String::from_utf8_lossy(&got).to_string()
}

fn client() -> HttpClient {
    HttpClient::new(
        vec![
            ("authorization", "Bearer t0k".to_string()),
            ("private-token", "p4t".to_string()),
        ],
        Duration::from_secs(10),
    )
    .unwrap()
}

#[test]
fn sends_json_with_the_headers_and_returns_any_status_as_a_value() {
    let (url, server) = serve_once("422 Unprocessable Entity");
    let client = HttpClient::new(
        vec![("authorization", "Bearer t0k".to_string())],
        Duration::from_secs(10),
    )
    .unwrap();
    let answer = client
        .send(
            Method::Patch,
            &url,
            Some(&serde_json::json!({"body": "hi"})),
        )
        .unwrap();
    assert_eq!(answer.status, 422);
    assert!(!answer.is_success());
    assert_eq!(answer.header("x-ratelimit-remaining"), Some("0"));
    assert_eq!(answer.body, "{\"ok\":true}");
    let request = server.join().unwrap().remove(0).to_ascii_lowercase();
    assert!(
        request.starts_with("patch /x/secret-path http/1.1"),
        "{request}"
    );
    assert!(request.contains("authorization: bearer t0k"), "{request}");
    assert!(
        request.contains("content-type: application/json"),
        "{request}"
    );
    assert!(request.contains("user-agent: pitwall/"), "{request}");
    assert!(request.ends_with("{\"body\":\"hi\"}"), "{request}");
}

#[test]
fn errors_never_show_the_url_or_a_header() {
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks/SECRET-TOKEN", dead.local_addr().unwrap());
    drop(dead);
    let client = HttpClient::new(
        vec![("private-token", "SECRET-HEADER".to_string())],
        Duration::from_secs(5),
    )
    .unwrap();
    for url in [
        url.as_str(),
        "http://exa mple/SECRET-TOKEN",
        "ftp://h/SECRET-TOKEN",
    ] {
        let err = client.send(Method::Get, url, None).unwrap_err();
        let shown = format!("{err} {err:?} {client:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
    }
    assert!(matches!(
        HttpClient::new(vec![("x", "a\nb".into())], Duration::from_secs(1)),
        Err(HttpError::BadHeader)
    ));
}

#[test]
fn follows_redirects_within_the_origin_with_the_same_headers() {
    let (url, server) = serve(vec![
        (
            "301 Moved Permanently",
            "location: /repositories/7/issues\r\n",
        ),
        ("200 OK", ""),
    ]);
    let answer = client().send(Method::Get, &url, None).unwrap();
    assert_eq!(answer.status, 200);
    let requests = server.join().unwrap();
    assert!(
        requests[1].starts_with("GET /repositories/7/issues "),
        "{requests:?}"
    );
    for r in &requests {
        let r = r.to_ascii_lowercase();
        assert!(
            r.contains("authorization: bearer t0k") && r.contains("private-token: p4t"),
            "{r}"
        );
    }
    // 303 after a POST continues as a GET, without the body.
    let (url, server) = serve(vec![
        ("303 See Other", "location: /done\r\n"),
        ("200 OK", ""),
    ]);
    let answer = client()
        .send(Method::Post, &url, Some(&serde_json::json!({"body": "x"})))
        .unwrap();
    assert_eq!(answer.status, 200);
    let requests = server.join().unwrap();
    assert!(
        requests[1].starts_with("GET /done ") && !requests[1].contains("\"body\""),
        "{requests:?}"
    );
}

#[test]
fn never_follows_a_redirect_to_another_host_or_port() {
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let steal = format!("http://{}/steal", elsewhere.local_addr().unwrap());
    let location = format!("location: {steal}\r\n");
    let (url, server) = serve(vec![("302 Found", location.as_str())]);
    let answer = client().send(Method::Get, &url, None).unwrap();
    assert_eq!(answer.status, 302);
    assert_eq!(server.join().unwrap().len(), 1);
    assert_eq!(
        elsewhere.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "the other port was contacted"
    );
}

#[test]
fn redirect_targets_must_share_scheme_host_and_port() {
    let from = "https://api.github.com/repos/o/r/issues?page=2";
    let same = |l| same_origin_target(from, l);
    assert_eq!(
        same("/repositories/1/issues").as_deref(),
        Some("https://api.github.com/repositories/1/issues")
    );
    assert_eq!(
        same("HTTPS://API.github.com/x").as_deref(),
        Some("HTTPS://API.github.com/x")
    );
    for other in [
        "http://api.github.com/x",
        "https://api.github.com:8443/x",
        "https://evil.example/x",
        "https://api.github.com.evil.example/x",
        "//evil.example/x",
        "relative/path",
        "",
        "https://evil.example\\@api.github.com/x",
        "https://user@api.github.com/x",
    ] {
        assert_eq!(same(other), None, "{other}");
    }
}
