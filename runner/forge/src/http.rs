//! The one blocking HTTP client of the forges (GitHub, GitLab) and the alert webhook: reqwest
//! (blocking) with rustls (the ring provider, the one provider in the tree) and the
//! platform's trust store, JSON bodies, a timeout per request, and answers of any status
//! returned as values. Its errors never carry the URL (a webhook's URL is a secret) and never
//! the request's headers (they hold tokens). Redirects are followed only within the same
//! scheme, host and port, with the same headers (GitHub answers 301 for a renamed
//! repository); one elsewhere is returned as the answer, so no token (`Authorization`,
//! GitLab's `PRIVATE-TOKEN`) is sent to another host. Answers are read up to 64 MiB.

use std::io::Read;
use std::time::{Duration, Instant};

use reqwest::blocking::{Client, RequestBuilder};
use reqwest::redirect::Policy;

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
    #[error("a header value has characters not allowed in HTTP")]
    BadHeader,
    #[error("no time left for the request within the call's time budget")]
    OutOfTime,
    #[error("the answer is larger than {} MiB", MAX_BODY_BYTES >> 20)]
    TooLarge,
    /// The transport's error, its URL removed.
    #[error(transparent)]
    Transport(reqwest::Error),
    #[error("cannot read the answer")]
    Read(#[source] std::io::Error),
}

impl HttpError {
    fn from_reqwest(e: reqwest::Error) -> Self {
        if e.is_builder() {
            // A header or URL the request could not be built from; the message may quote it.
            return HttpError::BadHeader;
        }
        HttpError::Transport(e.without_url())
    }

    fn from_read(e: std::io::Error) -> Self {
        // The body reader wraps reqwest's own errors, which may carry the URL.
        if e.get_ref()
            .is_some_and(|inner| inner.is::<reqwest::Error>())
        {
            let kind = e.kind();
            return match e
                .into_inner()
                .map(|inner| inner.downcast::<reqwest::Error>())
            {
                Some(Ok(re)) => HttpError::Transport(re.without_url()),
                _ => HttpError::Read(std::io::Error::from(kind)),
            };
        }
        HttpError::Read(e)
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

/// Headers sent with every request, and the client that sends them.
pub struct HttpClient {
    client: Client,
    /// The bound on one whole request (connect, send, answer).
    timeout: Duration,
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

/// Redirects followed within one origin before the last answer is returned as it is.
const MAX_REDIRECTS: usize = 5;
/// The largest answer read (a page of 100 GitHub comments of 65,536 characters is below it).
const MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;

/// pitwall's `User-Agent` (GitHub refuses requests without one).
const USER_AGENT: &str = concat!("pitwall/", env!("CARGO_PKG_VERSION"));

impl HttpClient {
    /// A client sending `headers` with every request; `timeout` bounds each request whole
    /// (connect, send, answer). Proxies come from the usual environment variables. Installs
    /// rustls's ring provider as the process default when none is installed yet (reqwest is
    /// built without a provider of its own: one provider in the tree).
    pub fn new(headers: Vec<(&'static str, String)>, timeout: Duration) -> Result<Self, HttpError> {
        if headers.iter().any(|(_, v)| {
            v.bytes()
                .any(|b| !(b == b'\t' || (0x20..0x7f).contains(&b)))
        }) {
            return Err(HttpError::BadHeader);
        }
        // An error means a provider is installed already; the tree has only ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::builder()
            .redirect(Policy::none())
            .timeout(timeout)
            .user_agent(USER_AGENT)
            .build()
            .map_err(|e| HttpError::Transport(e.without_url()))?;
        Ok(Self {
            client,
            timeout,
            headers,
        })
    }

    /// Sends one request, with `body` as JSON when given, follows redirects within the URL's
    /// origin, and reads the whole answer.
    pub fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<HttpResponse, HttpError> {
        self.send_by(method, url, body, None)
    }

    /// [`HttpClient::send`], ending by `deadline` when given: each request (redirects
    /// included) gets only the time left, so a server that never answers costs no more.
    pub fn send_by(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        deadline: Option<Instant>,
    ) -> Result<HttpResponse, HttpError> {
        let (mut method, mut url, mut body) = (method, url.to_string(), body);
        let mut redirects = 0;
        loop {
            let left = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Err(HttpError::OutOfTime),
                },
                None => None,
            };
            let answer = self.send_once(method, &url, body, left)?;
            let next = match answer.status {
                301 | 302 | 303 | 307 | 308 if redirects < MAX_REDIRECTS => answer
                    .header("location")
                    .and_then(|location| same_origin_target(&url, location)),
                _ => None,
            };
            let Some(next) = next else {
                return Ok(answer);
            };
            // 303, and 301/302 after a POST as browsers and curl do, continue as a GET.
            if answer.status == 303
                || (matches!(answer.status, 301 | 302) && method == Method::Post)
            {
                (method, body) = (Method::Get, None);
            }
            url = next;
            redirects += 1;
        }
    }

    /// The request for `method` and `url`, with the client's headers; `BadUrl` for anything
    /// but an absolute http(s) URL.
    fn request(&self, method: Method, url: &str) -> Result<RequestBuilder, HttpError> {
        let parsed = reqwest::Url::parse(url).map_err(|_| HttpError::BadUrl)?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(HttpError::BadUrl);
        }
        let mut rb = match method {
            Method::Get => self.client.get(parsed),
            Method::Post => self.client.post(parsed),
            Method::Patch => self.client.patch(parsed),
            Method::Put => self.client.put(parsed),
        };
        for (name, value) in &self.headers {
            rb = rb.header(*name, value.as_str());
        }
        Ok(rb)
    }

    /// One request: a GET without a body, a write with `body` as JSON (`{}` when none); within
    /// `left` when given, else the client's timeout.
    fn send_once(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        left: Option<Duration>,
    ) -> Result<HttpResponse, HttpError> {
        // The client's own bound on a whole request, cut to what the deadline leaves.
        let t = left.map_or(self.timeout, |l| self.timeout.min(l));
        let mut rb = self.request(method, url)?.timeout(t);
        if method != Method::Get {
            let json = body.map_or_else(|| "{}".to_string(), ToString::to_string);
            rb = rb.header("content-type", "application/json").body(json);
        }
        let answer = rb.send().map_err(HttpError::from_reqwest)?;
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
        let mut bytes = Vec::new();
        answer
            .take(MAX_BODY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(HttpError::from_read)?;
        if bytes.len() as u64 > MAX_BODY_BYTES {
            return Err(HttpError::TooLarge);
        }
        Ok(HttpResponse {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

/// An absolute http(s) URL as the HTTP client parses it (WHATWG rules: a `\` ends the host
/// like a `/`); `None` for anything else and for a URL carrying a user or password: such a
/// URL never receives a token.
fn plain_url(url: &str) -> Option<reqwest::Url> {
    let parsed = reqwest::Url::parse(url.trim()).ok()?;
    let plain = matches!(parsed.scheme(), "http" | "https")
        && parsed.host().is_some()
        && parsed.username().is_empty()
        && parsed.password().is_none();
    plain.then_some(parsed)
}

/// Whether `a` and `b` are absolute http(s) URLs without user parts on one scheme, host and
/// port, as the HTTP client will contact them.
pub fn same_origin(a: &str, b: &str) -> bool {
    match (plain_url(a), plain_url(b)) {
        (Some(a), Some(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// `scheme://host[:port]` of an absolute http(s) URL, lowercase.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let scheme = scheme.to_ascii_lowercase();
    (matches!(scheme.as_str(), "http" | "https") && !authority.is_empty())
        .then(|| format!("{scheme}://{}", authority.to_ascii_lowercase()))
}

/// Where a `Location` from `url` leads, when that is the same origin: an absolute URL with
/// `url`'s scheme, host and port, or a path starting with `/`. `None` for anything else.
fn same_origin_target(url: &str, location: &str) -> Option<String> {
    let from = origin(url)?;
    let target = if location.starts_with('/') && !location.starts_with("//") {
        format!("{from}{location}")
    } else {
        (origin(location)? == from).then(|| location.to_string())?
    };
    // And the same origin as the client parses both (a `\` in the authority, a user part).
    same_origin(url, &target).then_some(target)
}

#[cfg(test)]
mod tests;
