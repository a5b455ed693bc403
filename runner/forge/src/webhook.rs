//! Delivery of an alert notification to a chat webhook: a JSON body (Slack-compatible
//! `{"text": "…"}`, rendered by `pitwall-reports`) POSTed to a URL that is a secret (Slack's
//! embeds a token), so the URL never appears in an error.

use std::time::Duration;

use pitwall_schema::Redactor;

use crate::http::{HttpClient, HttpError, Method};

/// Why a notification was not delivered (the URL left out).
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("alert webhook: cannot build an HTTP client: {0}")]
    Client(#[source] HttpError),
    #[error("alert webhook: cannot send: {0}")]
    Send(#[source] HttpError),
    #[error("alert webhook: answered HTTP {status}{body} (hint: check the webhook URL)")]
    Status { status: u16, body: String },
    #[error(
        "alert webhook: ${variable} is not an http:// or https:// URL with a host (accepted: \
         http(s)://HOST[:PORT]/PATH; hint: set it to the chat's incoming-webhook URL)"
    )]
    NotHttpUrl { variable: String },
}

/// Whether `url` is an absolute `http://` or `https://` URL with a host: the only webhooks
/// pitwall posts to. Anything else (`file://`, a bare word, a URL with spaces or control
/// characters) is refused before a client is built, naming the variable, never the value.
pub fn check_webhook_url(url: &str, variable: &str) -> Result<(), NotifyError> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    let host = rest
        .map(|r| r.split(['/', '?', '#']).next().unwrap_or(""))
        .map(|authority| authority.rsplit('@').next().unwrap_or(""))
        .unwrap_or("");
    let host_name = host.split(':').next().unwrap_or("");
    let clean = !url.chars().any(|c| c.is_whitespace() || c.is_control());
    if host_name.is_empty() || !clean {
        return Err(NotifyError::NotHttpUrl {
            variable: variable.to_string(),
        });
    }
    Ok(())
}

/// How much of a webhook's error answer is shown.
const WEBHOOK_BODY_CHARS: usize = 200;

/// POSTs `body` (the rendered webhook JSON) to `url`; any 2xx is delivered.
pub fn post_webhook(
    url: &str,
    body: &serde_json::Value,
    timeout: Duration,
) -> Result<(), NotifyError> {
    let client = HttpClient::new(Vec::new(), timeout).map_err(NotifyError::Client)?;
    // The URL is a secret whole: what the server echoes of its user, password, path or
    // query, or of any other secret the process knows, is not shown.
    let mut redactor = Redactor::from_vars(Vec::new(), []);
    redactor.add(url);
    for s in pitwall_schema::secrets::url_secrets(url, true) {
        redactor.add(&s);
    }
    let resp = client
        .send(Method::Post, url, Some(body))
        .map_err(NotifyError::Send)?;
    if resp.is_success() {
        return Ok(());
    }
    let status = resp.status;
    let text = resp.body;
    let text = text.trim();
    let cut = text.chars().count() > WEBHOOK_BODY_CHARS;
    let text: String = text.chars().take(WEBHOOK_BODY_CHARS).collect();
    let text = escape_controls(&redactor.redact_cut_text(&text, false, cut));
    Err(NotifyError::Status {
        status,
        body: if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        },
    })
}

/// `text` with every control character but tab written as `\xNN`, so an answer cannot move
/// the cursor or split the error's line (as `pitwall_analysis::number::escape_controls`,
/// which the forge does not depend on).
fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
