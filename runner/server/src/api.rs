//! How the API answers: JSON bodies, and one JSON error shape (`{"error": "…"}`) with the
//! status that says what went wrong. The token a request was made with is recorded on the
//! response for the access log (its name, never its secret). Pages are HTML under one
//! content policy ([`html`]).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use pitwall_store::StoreError;

use crate::actor::Gone;

/// The name of the token that made a request, for the access log.
#[derive(Debug, Clone)]
pub struct TokenName(pub String);

/// An API failure: a status and a one-line message.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// A store failure: a run that is not there is 404, a conflicting upload 409, anything
    /// else the server's (500), said without the store's location.
    pub fn of_store(e: StoreError) -> ApiError {
        match e {
            StoreError::NotFound { id, .. } => ApiError::not_found(format!("no run `{id}`")),
            StoreError::Conflict { id, .. } => ApiError::new(
                StatusCode::CONFLICT,
                format!("run {id} is already stored with different content"),
            ),
            other => {
                eprintln!(
                    "{}",
                    serde_json::json!({"event": "store_error", "error": other.to_string()})
                );
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the store failed")
            }
        }
    }
}

impl From<Gone> for ApiError {
    fn from(_: Gone) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

/// A JSON answer, with the name of the token that asked (if any) for the access log.
pub fn answer<T: Serialize>(status: StatusCode, body: &T, token: Option<&str>) -> Response {
    let mut r = (status, Json(body)).into_response();
    if let Some(name) = token {
        r.extensions_mut().insert(TokenName(name.to_string()));
    }
    r
}

/// `Err` as a response that still names the token for the access log.
pub fn refused(e: ApiError, token: Option<&str>) -> Response {
    let mut r = e.into_response();
    if let Some(name) = token {
        r.extensions_mut().insert(TokenName(name.to_string()));
    }
    r
}

/// What a page may load: only the server's own stylesheet; no script, no remote request.
const PAGE_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// An HTML answer under [`PAGE_POLICY`].
pub fn html(body: String) -> Response {
    let mut r = (StatusCode::OK, body).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// What a page with the history chart may load: [`PAGE_POLICY`], and scripts from the server
/// itself (the chart script and the vendored uPlot); still nothing remote, nothing inline.
const CHART_PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// An HTML answer under [`CHART_PAGE_POLICY`].
pub fn chart_html(body: String) -> Response {
    let mut r = html(body);
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CHART_PAGE_POLICY),
    );
    r
}
