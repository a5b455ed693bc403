//! The alerts pages of `pitwall serve` (issue 30): `/p/<project>/alerts`, every alert of the
//! project in the index's table, and `/p/<project>/alerts/<id>`, one alert with links to its
//! commits (`[serve] commit_url`), its first bad run and `pitwall alert bisect`, and its
//! recorded changes. A signed-in browser whose token has role triage gets a form per alert
//! (ack, dismiss, fix, expect, with a note) that posts to the alert's address; the change is
//! made under the rules of `pitwall alert`, recorded with the token's name, and the browser
//! is sent back to the alert's page.

use axum::extract::{Form, Path, State as Extract};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use pitwall_engine::defaults::ALERT_NOTE_MAX_CHARS;
use pitwall_pipeline::alerts::{AlertQuery, TriageRequest};
use pitwall_pipeline::tokens::TokenRole;
use pitwall_reports::html::live::{self, AlertLinks, Viewer};
use pitwall_schema::AlertStatus;

use crate::State;
use crate::api::{ApiError, refused};
use crate::auth::{authorize, form_session, signed_in};
use crate::session::{path_segment, see_other};

/// Who looks at a page, or the answer instead of it: a browser that is not signed in (and no
/// public reads) is sent to the sign-in form.
pub(crate) async fn viewer(
    state: &State,
    headers: &HeaderMap,
    project: &str,
) -> Result<Viewer, Response> {
    match signed_in(state, headers).await {
        Ok(Some(s)) => {
            return Ok(Viewer {
                name: Some(s.token.name.clone()),
                role: Some(s.token.role.as_str()),
                csrf: Some(s.csrf),
                can_triage: s.token.role == TokenRole::Triage,
                note_max_chars: ALERT_NOTE_MAX_CHARS,
            });
        }
        Ok(None) => {}
        Err(e) => return Err(refused(e, None)),
    }
    match authorize(state, headers, TokenRole::Read).await {
        Ok(caller) => Ok(Viewer {
            name: caller.token,
            note_max_chars: ALERT_NOTE_MAX_CHARS,
            ..Viewer::default()
        }),
        Err(d) if d.error.status == StatusCode::UNAUTHORIZED && d.token.is_none() => {
            Err(see_other(project, "signin", &[]))
        }
        Err(d) => Err(refused(d.error, d.token.as_deref())),
    }
}

/// Which content policy a live page is sent under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Policy {
    /// No script runs ([`crate::api::html`]).
    NoScript,
    /// The server's own scripts run ([`crate::api::chart_html`]).
    OwnScripts,
}

/// A live page: who looks (or the sign-in redirect), then `render` on a reader with the
/// viewer, its page sent under `policy`, or 404 with `missing` when it renders nothing.
pub(crate) async fn live_page(
    state: &State,
    headers: &HeaderMap,
    project: &str,
    policy: Policy,
    missing: &'static str,
    render: impl FnOnce(&mut dyn pitwall_store::Store, Viewer) -> Result<Option<String>, ApiError>
    + Send
    + 'static,
) -> Response {
    let viewer = match viewer(state, headers, project).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let who = viewer.name.clone();
    let got = state.store.reader().call(move |s| render(s, viewer)).await;
    match got {
        Ok(Ok(Some(body))) if policy == Policy::OwnScripts => crate::api::chart_html(body),
        Ok(Ok(Some(body))) => crate::api::html(body),
        Ok(Ok(None)) => refused(ApiError::not_found(missing), who.as_deref()),
        Ok(Err(e)) => refused(e, who.as_deref()),
        Err(g) => refused(g.into(), who.as_deref()),
    }
}

pub(crate) fn render_error(e: pitwall_reports::html::HtmlError) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

/// `GET /p/<project>/alerts`.
pub async fn alerts(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    headers: HeaderMap,
) -> Response {
    let p = project.clone();
    live_page(
        &state,
        &headers,
        &p,
        Policy::NoScript,
        "",
        move |s, viewer| {
            let all = pitwall_pipeline::alerts::list(s, &AlertQuery::default())
                .map_err(ApiError::of_store)?;
            let mine: Vec<_> = all
                .into_iter()
                .filter(|a| a.series.project == project)
                .collect();
            let now = pitwall_schema::time::now_rfc3339();
            live::alerts_page(&project, &mine, &viewer, &now)
                .map(Some)
                .map_err(render_error)
        },
    )
    .await
}

/// `GET /p/<project>/alerts/<id>`.
pub async fn alert(
    Extract(state): Extract<State>,
    Path((project, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let serve = state.options.config.serve.clone();
    let p = project.clone();
    let missing = "no such alert in this project";
    live_page(
        &state,
        &headers,
        &p,
        Policy::NoScript,
        missing,
        move |s, viewer| {
            let found = s.list_alerts().map_err(ApiError::of_store)?;
            let Some(alert) = found
                .into_iter()
                .find(|a| a.id == id && a.series.project == project)
            else {
                return Ok(None);
            };
            let changes = s.alert_changes(&alert.id).map_err(ApiError::of_store)?;
            let links = AlertLinks {
                first_bad: serve.commit_link(&alert.first_bad),
                culprit: alert.culprit.as_deref().and_then(|c| serve.commit_link(c)),
                run: format!(
                    "/api/v1/p/{}/runs/{}",
                    path_segment(&project),
                    path_segment(&alert.first_bad_run)
                ),
            };
            let now = pitwall_schema::time::now_rfc3339();
            live::alert_page(&project, &alert, &changes, &links, &viewer, &now)
                .map(Some)
                .map_err(render_error)
        },
    )
    .await
}

#[derive(Debug, Deserialize)]
pub struct TriageForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    note: String,
}

/// `POST /p/<project>/alerts/<id>`: a triage form. Its session, CSRF token and role are
/// checked first; then the change is made as `POST …/api/v1/…/alerts/<id>` makes it.
pub async fn triage(
    Extract(state): Extract<State>,
    Path((project, id)): Path<(String, String)>,
    headers: HeaderMap,
    form: Result<Form<TriageForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return refused(ApiError::bad_request("expected the triage form"), None);
    };
    let session = match form_session(&state, &headers, &form.csrf, TokenRole::Triage).await {
        Ok(s) => s,
        Err(e) => return refused(e, None),
    };
    let who = session.token.name.clone();
    let Some(status) = AlertStatus::parse(&form.status) else {
        let e = ApiError::bad_request(format!("status `{}` is not an alert status", form.status));
        return refused(e, Some(&who));
    };
    let note = Some(form.note.trim().to_string()).filter(|n| !n.is_empty());
    let req = TriageRequest {
        id: id.clone(),
        status,
        note,
        by: Some(who.clone()),
    };
    match crate::routes::triage_in_project(&state, project.clone(), req).await {
        Ok(_) => {
            let mut r = see_other(&project, &format!("alerts/{}", path_segment(&id)), &[]);
            r.extensions_mut().insert(crate::api::TokenName(who));
            r
        }
        Err(e) => refused(e, Some(&who)),
    }
}
