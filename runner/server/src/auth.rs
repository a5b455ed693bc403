//! Who is asking: the bearer token of a request, checked against the store's tokens
//! (`pitwall_pipeline::tokens`). A missing, unknown, revoked or expired token is 401, a token
//! whose role may not do the thing 403; reads need no token when `[serve] public_read` is set.
//! A presented token is always checked, public or not. No token secret is ever logged. A
//! browser without a token may read with its session cookie (`crate::session` signs in), and
//! write only through forms whose CSRF token matches its session (`form_session`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, header};

use pitwall_pipeline::sessions::{self, SignedIn};
use pitwall_pipeline::tokens::{self, Refusal, StoredToken, TokenRole};
use pitwall_schema::UnixTime;

use crate::State;
use crate::api::ApiError;

/// How long the tokens read from the store are used before they are read again: a revoked
/// token is refused within this time. A secret not among them is always checked against a
/// fresh read, so a token made a moment ago works at once.
pub const TOKEN_CACHE: Duration = Duration::from_secs(1);

/// The tokens last read, and when.
#[derive(Default)]
pub struct TokenCache {
    last: Mutex<Option<(Instant, Arc<Vec<StoredToken>>)>>,
}

impl TokenCache {
    fn cached(&self) -> Option<Arc<Vec<StoredToken>>> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        last.as_ref()
            .filter(|(at, _)| at.elapsed() < TOKEN_CACHE)
            .map(|(_, t)| Arc::clone(t))
    }

    fn keep(&self, tokens: Vec<StoredToken>) -> Arc<Vec<StoredToken>> {
        let tokens = Arc::new(tokens);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), Arc::clone(&tokens)));
        tokens
    }
}

/// The tokens, from the cache unless `fresh` or stale.
pub(crate) async fn stored_tokens(
    state: &State,
    fresh: bool,
) -> Result<Arc<Vec<StoredToken>>, ApiError> {
    if !fresh {
        if let Some(t) = state.tokens.cached() {
            return Ok(t);
        }
    }
    let read = state
        .store
        .auth
        .call(|s| s.list_tokens())
        .await?
        .map_err(ApiError::of_store)?;
    Ok(state.tokens.keep(read))
}

/// The cookie that holds a browser session's id (`crate::session` sets it).
pub const SESSION_COOKIE: &str = "pitwall_session";

/// The value of cookie `name` in the request, if sent.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// The session a request's cookie names, if it counts now.
pub async fn signed_in(state: &State, headers: &HeaderMap) -> Result<Option<SignedIn>, ApiError> {
    let Some(id) = cookie(headers, SESSION_COOKIE).map(str::to_string) else {
        return Ok(None);
    };
    let tokens = stored_tokens(state, false).await?;
    state
        .store
        .auth
        .call(move |s| sessions::session_of(s, &tokens, &id, UnixTime::now()))
        .await?
        .map_err(ApiError::of_store)
}

/// The session of a form's request, if its CSRF token is the session's: 401 without a
/// session, 403 with a wrong or missing CSRF token or a token whose role may not do `needed`.
pub async fn form_session(
    state: &State,
    headers: &HeaderMap,
    csrf: &str,
    needed: TokenRole,
) -> Result<SignedIn, ApiError> {
    let Some(session) = signed_in(state, headers).await? else {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "not signed in, or the session ended (hint: sign in again at /p/<project>/signin)",
        ));
    };
    let id = cookie(headers, SESSION_COOKIE).unwrap_or_default();
    if !sessions::csrf_ok(id, csrf) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "the form's CSRF token is missing or wrong (hint: reload the page and send it again)",
        ));
    }
    if !pitwall_pipeline::tokens::allows(session.token.role, needed) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "token `{}` has role {}, and this needs role {}",
                session.token.name,
                session.token.role.as_str(),
                needed.as_str()
            ),
        ));
    }
    Ok(session)
}

/// The caller of a request that was let through: the token's name (none for a public read).
#[derive(Debug, Clone)]
pub struct Caller {
    pub token: Option<String>,
}

/// A refusal, with the token's name when the token was good but its role was not.
pub struct Denied {
    pub error: ApiError,
    pub token: Option<String>,
}

/// The secret of `Authorization: Bearer <secret>`; `Err` for an Authorization header of
/// another scheme or not text.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| unauthorized("the Authorization header is not text"))?;
    let (scheme, secret) = text.split_once(' ').unwrap_or((text, ""));
    if !scheme.eq_ignore_ascii_case("bearer") || secret.trim().is_empty() {
        return Err(unauthorized(
            "expected `Authorization: Bearer <token>` (hint: `pitwall token create` makes one)",
        ));
    }
    Ok(Some(secret.trim()))
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, message)
}

/// Lets the request through when its token may do `needed`.
pub async fn authorize(
    state: &State,
    headers: &HeaderMap,
    needed: TokenRole,
) -> Result<Caller, Denied> {
    let deny = |error, token| Denied { error, token };
    let secret = bearer(headers).map_err(|e| deny(e, None))?;
    let Some(secret) = secret else {
        // A browser's session reads what its token may read; it writes only through the
        // forms, which check its CSRF token (`session::form_session`).
        if needed == TokenRole::Read {
            let session = signed_in(state, headers).await.map_err(|e| deny(e, None))?;
            if let Some(s) = session {
                return Ok(Caller {
                    token: Some(s.token.name),
                });
            }
        }
        if needed == TokenRole::Read && state.options.public_read {
            return Ok(Caller { token: None });
        }
        return Err(deny(
            unauthorized("a token is needed (hint: send `Authorization: Bearer <token>`)"),
            None,
        ));
    };
    let mut stored = stored_tokens(state, false)
        .await
        .map_err(|e| deny(e, None))?;
    if tokens::authenticate(&stored, secret, UnixTime::now()) == Err(Refusal::Unknown) {
        stored = stored_tokens(state, true)
            .await
            .map_err(|e| deny(e, None))?;
    }
    let token = match tokens::authenticate(&stored, secret, UnixTime::now()) {
        Ok(t) => t,
        Err(Refusal::Unknown) => {
            return Err(deny(unauthorized("unknown or revoked token"), None));
        }
        Err(Refusal::Expired) => {
            return Err(deny(
                unauthorized("the token has expired (hint: `pitwall token create` a new one)"),
                None,
            ));
        }
    };
    if !tokens::allows(token.role, needed) {
        return Err(deny(
            ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "token `{}` has role {}, and this needs role {}",
                    token.name,
                    token.role.as_str(),
                    needed.as_str()
                ),
            ),
            Some(token.name.clone()),
        ));
    }
    Ok(Caller {
        token: Some(token.name.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn only_bearer_tokens_are_read() {
        assert_eq!(bearer(&HeaderMap::new()).unwrap(), None);
        assert_eq!(bearer(&with("Bearer pw_abc")).unwrap(), Some("pw_abc"));
        assert_eq!(bearer(&with("bearer  pw_abc ")).unwrap(), Some("pw_abc"));
        for bad in ["Basic dXNlcjpwdw==", "Bearer", "Bearer   ", "pw_abc"] {
            let e = bearer(&with(bad)).unwrap_err();
            assert_eq!(e.status, StatusCode::UNAUTHORIZED, "{bad}");
            assert!(
                !e.message.contains("dXNlcjpwdw"),
                "the credential is never echoed"
            );
        }
    }
}
