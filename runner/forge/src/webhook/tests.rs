//! The webhook's delivery against a one-shot local server: the body as sent, failures
//! without the URL or any secret in it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use super::*;

fn hook_body() -> serde_json::Value {
    serde_json::json!({"text": "pitwall `toy`: 2 new alert(s), 1 regression(s)"})
}

/// A one-shot HTTP server: answers `status` to the first request and returns its body.
fn serve_once(status: &'static str) -> (String, std::thread::JoinHandle<String>) {
    serve_answer(status, "no_text".to_string())
}

/// As [`serve_once`], answering `answer` as the body.
fn serve_answer(status: &'static str, answer: String) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/hooks/SECRET-TOKEN",
        listener.local_addr().unwrap()
    );
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut len = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let reply = format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
            answer.len()
        );
        stream.write_all(reply.as_bytes()).unwrap();
        String::from_utf8(body).unwrap()
    });
    (url, handle)
}

#[test]
fn a_webhook_that_is_not_an_http_url_is_named_by_its_variable() {
    for bad in [
        "file:///etc/passwd",
        "hooks.slack.com/services/SECRET",
        "https://",
        "http:///path",
        "https://host/with space",
        "ftp://host/x",
        "SECRET",
    ] {
        let err = check_webhook_url(bad, "PITWALL_ALERT_WEBHOOK").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("$PITWALL_ALERT_WEBHOOK is not an http:// or https:// URL"),
            "{bad}: {text}"
        );
        assert!(
            !text.contains("SECRET") && !text.contains("passwd"),
            "{text}"
        );
    }
    for good in [
        "https://hooks.slack.com/services/T/B/X",
        "http://127.0.0.1:8065/hooks/abc",
        "HTTPS://chat.example.com",
    ] {
        check_webhook_url(good, "V").unwrap();
    }
}

#[test]
fn posts_the_body_and_reports_failures_without_the_url() {
    let (url, server) = serve_once("200 OK");
    post_webhook(&url, &hook_body(), Duration::from_secs(10)).unwrap();
    let body: serde_json::Value = serde_json::from_str(&server.join().unwrap()).unwrap();
    assert_eq!(body, hook_body());

    let (url, server) = serve_once("400 Bad Request");
    let err = post_webhook(&url, &hook_body(), Duration::from_secs(10)).unwrap_err();
    server.join().unwrap();
    let text = err.to_string();
    assert!(text.contains("HTTP 400: no_text"), "{text}");
    assert!(!text.contains("SECRET-TOKEN"));

    // Nothing listening: a send error, still without the URL.
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks/SECRET-TOKEN", dead.local_addr().unwrap());
    drop(dead);
    let err = post_webhook(&url, &hook_body(), Duration::from_secs(5)).unwrap_err();
    let chain: Vec<String> =
        std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source())
            .map(|e| e.to_string())
            .collect();
    assert!(!chain.join(" ").contains("SECRET-TOKEN"), "{chain:?}");
}

#[test]
fn an_error_answer_never_shows_the_urls_user_password_path_or_query() {
    let echo =
        "denied for hookuser-77 / hookpass-77 at /hooks/SECRET-TOKEN ?sig=query-sig-77".to_string();
    let (url, server) = serve_answer("403 Forbidden", echo);
    let url = url.replace("http://", "http://hookuser-77:hookpass-77@") + "?sig=query-sig-77";
    let err = post_webhook(&url, &hook_body(), Duration::from_secs(10)).unwrap_err();
    server.join().unwrap();
    let text = err.to_string();
    assert!(text.contains("HTTP 403: denied for ***"), "{text}");
    for s in ["hookuser-77", "hookpass-77", "SECRET-TOKEN", "query-sig-77"] {
        assert!(!text.contains(s), "{s}: {text}");
    }
    // An answer cut at 200 characters leaves no piece of a secret at the cut.
    let long = format!("{}hookpass-77", "x".repeat(WEBHOOK_BODY_CHARS - 9));
    let (url, server) = serve_answer("500 Internal Server Error", long);
    let url = url.replace("http://", "http://u:hookpass-77@");
    let err = post_webhook(&url, &hook_body(), Duration::from_secs(10)).unwrap_err();
    server.join().unwrap();
    let text = err.to_string();
    assert!(!text.contains("hookpass") && text.contains("***"), "{text}");
}
