//! Signing in from a browser (issue 30): `GET /p/<project>/signin` offers a form for a token,
//! `POST` trades a good token for a session (`pitwall_pipeline::sessions`) held in an HttpOnly,
//! SameSite=Strict cookie, and `POST /p/<project>/signout` ends it. Every form carries a CSRF
//! token: the sign-in form one tied to a short-lived cookie of its own (so another site cannot
//! sign a browser in with its token), the others one derived from the session. A session reads
//! everything its token may read; it changes alerts only through the forms, never through the
//! JSON API, which wants a bearer token for every write.

use axum::extract::{Form, Path, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use pitwall_engine::defaults::SERVE_SESSION_HOURS;
use pitwall_pipeline::sessions;
use pitwall_pipeline::tokens::{Refusal, TokenRole};
use pitwall_reports::html::live;
use pitwall_schema::UnixTime;

use crate::State;
use crate::api::{ApiError, refused};
use crate::auth::{SESSION_COOKIE, cookie, form_session};

/// The cookie that ties a sign-in form to the browser it was given to.
const SIGNIN_COOKIE: &str = "pitwall_signin";
/// How long a sign-in form may wait to be sent.
const SIGNIN_FORM_S: i64 = 600;

/// Whether cookies must be `Secure`: the server is reached over https (`[serve] url`, or a TLS
/// proxy's `X-Forwarded-Proto`). A plain-http listener for a local try keeps working.
fn secure(state: &State, headers: &HeaderMap) -> bool {
    let configured = state
        .options
        .config
        .serve
        .url
        .as_deref()
        .is_some_and(|u| u.starts_with("https://"));
    let proxied = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|p| p.eq_ignore_ascii_case("https"));
    configured || proxied
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Strict, the whole site, `max_age_s` (0 deletes).
fn set_cookie(name: &str, value: &str, max_age_s: i64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let text =
        format!("{name}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age_s}{secure}");
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// `text` as one segment of a URL path.
pub fn path_segment(text: &str) -> String {
    live::url_component(text)
}

/// A 303 to `/p/<project>/<rest>`, with `cookies` set.
pub fn see_other(project: &str, rest: &str, cookies: &[HeaderValue]) -> Response {
    let to = format!("/p/{}/{rest}", path_segment(project));
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(&to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    for c in cookies {
        r.headers_mut().append(header::SET_COOKIE, c.clone());
    }
    r
}

/// An HTML page of the live server, or the store's failure.
fn page(rendered: Result<String, pitwall_reports::html::HtmlError>) -> Response {
    match rendered {
        Ok(body) => crate::api::html(body),
        Err(e) => refused(
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
            None,
        ),
    }
}

fn signin_form(project: &str, nonce: &str, error: Option<&str>) -> Response {
    let now = pitwall_schema::time::now_rfc3339();
    page(live::signin_page(
        project,
        &sessions::csrf_of(nonce),
        error,
        SERVE_SESSION_HOURS,
        &now,
    ))
}

/// `GET /p/<project>/signin`: the form, and the cookie its CSRF token is tied to.
pub async fn signin_page(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    headers: HeaderMap,
) -> Response {
    let nonce = match pitwall_pipeline::sessions::new_nonce() {
        Ok(n) => n,
        Err(e) => return refused(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e), None),
    };
    let mut r = signin_form(&project, &nonce, None);
    let c = set_cookie(
        SIGNIN_COOKIE,
        &nonce,
        SIGNIN_FORM_S,
        secure(&state, &headers),
    );
    r.headers_mut().append(header::SET_COOKIE, c);
    r
}

#[derive(Debug, Deserialize)]
pub struct SignInForm {
    #[serde(default)]
    token: String,
    #[serde(default)]
    csrf: String,
}

/// `POST /p/<project>/signin`: a good token and the form's CSRF token make a session and go
/// to the alerts; anything else shows the form again with why (401 or 403).
pub async fn signin(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    headers: HeaderMap,
    form: Result<Form<SignInForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return refused(ApiError::bad_request("expected the sign-in form"), None);
    };
    let nonce = cookie(&headers, SIGNIN_COOKIE)
        .unwrap_or_default()
        .to_string();
    if nonce.is_empty() || !sessions::csrf_ok(&nonce, &form.csrf) {
        let mut r = signin_form(
            &project,
            &nonce,
            Some("the form expired or did not come from this server: sign in again"),
        );
        *r.status_mut() = StatusCode::FORBIDDEN;
        return r;
    }
    let tokens = match crate::auth::stored_tokens(&state, true).await {
        Ok(t) => t,
        Err(e) => return refused(e, None),
    };
    let secret = form.token.trim().to_string();
    let made = state
        .store
        .writer
        .call(move |s| sessions::sign_in(s, &tokens, &secret, UnixTime::now()))
        .await;
    let made = match made {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => {
            let e = ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
            return refused(e, None);
        }
        Err(g) => return refused(g.into(), None),
    };
    let secure = secure(&state, &headers);
    match made {
        Ok(new) => {
            let line = serde_json::json!({"event": "signin", "token": new.session.token_name});
            eprintln!("{line}");
            let cookies = [
                set_cookie(SESSION_COOKIE, &new.id, SERVE_SESSION_HOURS * 3600, secure),
                set_cookie(SIGNIN_COOKIE, "", 0, secure),
            ];
            let mut r = see_other(&project, "alerts", &cookies);
            r.extensions_mut()
                .insert(crate::api::TokenName(new.session.token_name));
            r
        }
        Err(refusal) => {
            let why = match refusal {
                Refusal::Unknown => "unknown or revoked token",
                Refusal::Expired => "the token has expired",
            };
            let mut r = signin_form(&project, &nonce, Some(why));
            *r.status_mut() = StatusCode::UNAUTHORIZED;
            r
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct SignOutForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /p/<project>/signout`: ends the session (its CSRF token needed) and clears the cookie.
pub async fn signout(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    headers: HeaderMap,
    form: Result<Form<SignOutForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let csrf = form.map(|Form(f)| f.csrf).unwrap_or_default();
    let session = match form_session(&state, &headers, &csrf, TokenRole::Read).await {
        Ok(s) => s,
        Err(e) => return refused(e, None),
    };
    let id = cookie(&headers, SESSION_COOKIE)
        .unwrap_or_default()
        .to_string();
    let ended = state
        .store
        .writer
        .call(move |s| sessions::sign_out(s, &id))
        .await;
    match ended {
        Ok(Ok(_)) => {
            let c = set_cookie(SESSION_COOKIE, "", 0, secure(&state, &headers));
            let mut r = see_other(&project, "signin", &[c]);
            r.extensions_mut()
                .insert(crate::api::TokenName(session.token.name));
            r
        }
        Ok(Err(e)) => refused(ApiError::of_store(e), None),
        Err(g) => refused(g.into(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_exact_name() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; pitwall_session_x=no; pitwall_session=pws_ab ; b="),
        );
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("pws_ab"));
        assert_eq!(cookie(&h, "a"), Some("1"));
        assert_eq!(cookie(&h, "b"), None);
        assert_eq!(cookie(&HeaderMap::new(), SESSION_COOKIE), None);
    }

    #[test]
    fn cookies_are_http_only_strict_and_secure_over_https() {
        let c = set_cookie(SESSION_COOKIE, "pws_x", 43_200, true);
        assert_eq!(
            c.to_str().unwrap(),
            "pitwall_session=pws_x; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200; Secure"
        );
        let c = set_cookie(SESSION_COOKIE, "", 0, false);
        assert!(!c.to_str().unwrap().contains("Secure"));
    }

    #[test]
    fn a_project_is_one_path_segment() {
        assert_eq!(path_segment("shop-1.a_b~"), "shop-1.a_b~");
        assert_eq!(path_segment("a/b c\"<"), "a%2Fb%20c%22%3C");
        assert_eq!(path_segment("é"), "%C3%A9");
    }
}
