//! One JSON line on standard error per request: method, path without its query, status,
//! bytes sent, duration and the name of the token used (never its secret, never the query,
//! which could carry one). The path is the client's text: JSON escaping keeps it one line.

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http_body::Body as _;

use crate::api::TokenName;

pub async fn log(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let bytes = response.body().size_hint().exact();
    let token = response
        .extensions()
        .get::<TokenName>()
        .map(|t| t.0.clone());
    eprintln!(
        "{}",
        line(
            &method,
            &path,
            response.status().as_u16(),
            bytes,
            started,
            token
        )
    );
    response
}

fn line(
    method: &str,
    path: &str,
    status: u16,
    bytes: Option<u64>,
    started: Instant,
    token: Option<String>,
) -> serde_json::Value {
    serde_json::json!({
        "event": "request",
        "method": method,
        "path": path,
        "status": status,
        "bytes": bytes,
        "duration_ms": (started.elapsed().as_secs_f64() * 1e3 * 1000.0).round() / 1000.0,
        "token": token,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_path_stays_one_line() {
        let l = line(
            "GET",
            "/p/x\n{\"status\":200}",
            404,
            Some(12),
            Instant::now(),
            None,
        );
        let text = l.to_string();
        assert!(!text.contains('\n'));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["path"], "/p/x\n{\"status\":200}");
        assert_eq!(back["status"], 404);
        assert_eq!(back["token"], serde_json::Value::Null);
    }
}
