//! The one blocking HTTP client of the forges (GitHub, GitLab) and the alert webhook: ureq
//! with rustls (the ring provider) and the platform's trust store, JSON bodies, a timeout per
//! request, and answers of any status returned as values. Its errors never carry the URL (a
//! webhook's URL is a secret) and never the request's headers (they hold tokens).
//!
//! ureq rather than reqwest: the same TLS stack without tokio, hyper, tower and the URL/IDNA
//! crates, a fifth of the release build's dependency time (docs/PERFORMANCE.md "Build time").

use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{RootCerts, TlsConfig};

/// An HTTP method pitwall sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Patch,
    Put,
}

/// Why a request got no answer. Built so that neither the URL nor a header value can appear
/// in it, whatever the transport said.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("the url is not a valid http(s) url")]
    BadUrl,
    #[error("the proxy refused the connection; hint: check HTTPS_PROXY / ALL_PROXY")]
    Proxy,
    #[error("a header value has characters not allowed in HTTP")]
    BadHeader,
    #[error(transparent)]
    Transport(ureq::Error),
}

impl HttpError {
    fn from_ureq(e: ureq::Error) -> Self {
        match e {
            // These carry the URL (or the proxy's, which may embed credentials).
            ureq::Error::BadUri(_) | ureq::Error::RequireHttpsOnly(_) => HttpError::BadUrl,
            ureq::Error::ConnectProxyFailed(_) | ureq::Error::InvalidProxyUrl => HttpError::Proxy,
            // http::Error is raised for a header name or value that is not valid.
            ureq::Error::Http(_) => HttpError::BadHeader,
            e => HttpError::Transport(e),
        }
    }
}

/// An answer: its status, headers (names lowercase) and body as text.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    /// The first value of header `name` (any case), when it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Headers sent with every request, and the agent that sends them.
pub struct HttpClient {
    agent: ureq::Agent,
    headers: Vec<(&'static str, String)>,
}

impl std::fmt::Debug for HttpClient {
    // The headers hold tokens: only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| *n).collect();
        f.debug_struct("HttpClient")
            .field("headers", &names)
            .finish_non_exhaustive()
    }
}

/// pitwall's `User-Agent` (GitHub refuses requests without one).
const USER_AGENT: &str = concat!("pitwall/", env!("CARGO_PKG_VERSION"));

impl HttpClient {
    /// A client sending `headers` with every request; `timeout` bounds each request whole
    /// (connect, send, answer). Proxies come from the usual environment variables.
    pub fn new(headers: Vec<(&'static str, String)>, timeout: Duration) -> Result<Self, HttpError> {
        if headers.iter().any(|(_, v)| {
            v.bytes()
                .any(|b| !(b == b'\t' || (0x20..0x7f).contains(&b)))
        }) {
            return Err(HttpError::BadHeader);
        }
        let tls = TlsConfig::builder()
            .root_certs(RootCerts::PlatformVerifier)
            .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .build();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .user_agent(USER_AGENT)
            .tls_config(tls)
            .build()
            .new_agent();
        Ok(Self { agent, headers })
    }

    /// Sends one request, with `body` as JSON when given, and reads the whole answer.
    pub fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<HttpResponse, HttpError> {
        let answer = match body {
            None => {
                let mut rb = match method {
                    Method::Get => self.agent.get(url),
                    // Bodiless writes are not made by pitwall; send an empty JSON object.
                    Method::Post | Method::Patch | Method::Put => {
                        return self.send(method, url, Some(&serde_json::json!({})));
                    }
                };
                for (name, value) in &self.headers {
                    rb = rb.header(*name, value.as_str());
                }
                rb.call()
            }
            Some(json) => {
                let mut rb = match method {
                    Method::Get => return self.send(method, url, None),
                    Method::Post => self.agent.post(url),
                    Method::Patch => self.agent.patch(url),
                    Method::Put => self.agent.put(url),
                };
                for (name, value) in &self.headers {
                    rb = rb.header(*name, value.as_str());
                }
                rb.header("content-type", "application/json")
                    .send(json.to_string())
            }
        };
        let mut answer = answer.map_err(HttpError::from_ureq)?;
        let status = answer.status().as_u16();
        let headers = answer
            .headers()
            .iter()
            .filter_map(|(n, v)| {
                Some((
                    n.as_str().to_ascii_lowercase(),
                    v.to_str().ok()?.to_string(),
                ))
            })
            .collect();
        let body = answer
            .body_mut()
            .read_to_string()
            .map_err(HttpError::from_ureq)?;
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A one-shot server answering `status` with a header and a body; returns the URL and
    /// the request it received.
    fn serve_once(status: &str) -> (String, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/x/SECRET-PATH", listener.local_addr().unwrap());
        let status = status.to_string();
        let handle = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
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
            let body = "{\"ok\":true}";
            write!(
                s,
                "HTTP/1.1 {status}\r\nX-RateLimit-Remaining: 0\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            String::from_utf8_lossy(&got).to_string()
        });
        (url, handle)
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
        let request = server.join().unwrap().to_ascii_lowercase();
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
}
