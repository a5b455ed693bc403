//! A pair's comparison page on `pitwall serve` (issue 30), rendered live from the store with
//! the static report's template (`pitwall_reports::html::live`) at a stable address,
//! `/p/<project>/compare/<pair-id>`, which `pitwall ci` links a pull request's comment to when
//! `[serve] url` is set. Like every page it needs a token or a signed-in browser unless
//! `[serve] public_read`; a browser that is neither is sent to the sign-in form.
//!
//! The comparison is `pitwall compare --pair ID` under the server's configuration: the same
//! analysis as the pull request's, with the thresholds of the `pitwall.toml` the server was
//! started with.

use axum::extract::{Path, State as Extract};
use axum::http::HeaderMap;
use axum::response::Response;

use pitwall_pipeline::source::{self, SourceError};
use pitwall_pipeline::{compare, noise};
use pitwall_reports::html::{PageComparison, live};
use pitwall_stats::ab::AbConfig;

use crate::State;
use crate::alert_pages::{Policy, live_page, render_error};
use crate::api::ApiError;

/// `GET /p/<project>/compare/<pair-id>`: the pair's comparison page; 404 when no pair of
/// the project has exactly that id.
pub async fn compare_pair(
    Extract(state): Extract<State>,
    Path((project, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let config = state.options.config.clone();
    let p = project.clone();
    let missing = "no such pair in this project";
    live_page(
        &state,
        &headers,
        &p,
        Policy::NoScript,
        missing,
        move |s, viewer| {
            let of_source = |e: SourceError| match e {
                SourceError::Store(e) => ApiError::of_store(e),
                e => ApiError::bad_request(e.to_string()),
            };
            let (base, head) = match source::resolve_pair(&id, s) {
                Ok(sides) => sides,
                Err(SourceError::NoPair { .. }) => return Ok(None),
                Err(e) => return Err(of_source(e)),
            };
            let runs: Vec<pitwall_schema::Run> = [&base.run, &head.run]
                .into_iter()
                .flatten()
                .cloned()
                .collect();
            // A stable address names the pair exactly, in its own project.
            let exact = runs
                .iter()
                .all(|r| r.project == project && r.pair.as_ref().is_some_and(|p| p.id == id));
            if !exact || runs.is_empty() {
                return Ok(None);
            }
            let book = noise::book_for_sides(s, &base, &head).map_err(ApiError::of_store)?;
            let report = compare::compare(
                &base,
                &head,
                &config,
                None,
                &AbConfig::default(),
                compare::CompareOptions {
                    allow_env_mismatch: true,
                    exclude_throttled: false,
                },
                &book,
            );
            let c = PageComparison::new(id.clone(), format!("pair {id}"), report);
            let now = pitwall_schema::time::now_rfc3339();
            live::compare_page(&project, &c, &runs, &viewer, &now)
                .map(Some)
                .map_err(render_error)
        },
    )
    .await
}
