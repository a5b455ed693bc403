//! The pages of `pitwall serve` (issue 30), rendered live from the store with the static
//! report's templates (`pitwall_reports::html::live`): a pair's comparison at a stable address,
//! `/p/<project>/compare/<pair-id>`, which `pitwall ci` links a pull request's comment to when
//! `[serve] url` is set, and the stylesheet the pages link to. Reads need a token unless
//! `[serve] public_read` (browsers cannot send one yet: signing in is a later step).
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
use crate::api::{ApiError, html, refused};
use crate::routes::reader;

/// `GET /p/<project>/compare/<pair-id>`: the pair's comparison page; 404 when no pair of
/// the project has exactly that id.
pub async fn compare_pair(
    Extract(state): Extract<State>,
    Path((project, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let caller = match reader(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let token = caller.token.as_deref();
    let config = state.options.config.clone();
    let got = state
        .store
        .reader()
        .call(move |s| -> Result<Option<String>, SourceError> {
            let (base, head) = match source::resolve_pair(&id, s) {
                Ok(sides) => sides,
                Err(SourceError::NoPair { .. }) => return Ok(None),
                Err(e) => return Err(e),
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
            let book = noise::book_for_sides(s, &base, &head)?;
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
            live::compare_page(&project, &c, &runs, &now)
                .map(Some)
                .map_err(|e| {
                    SourceError::Store(pitwall_store::StoreError::Corrupt {
                        store: s.describe(),
                        what: format!("the comparison page cannot be rendered: {e}"),
                    })
                })
        })
        .await;
    match got {
        Ok(Ok(Some(page))) => html(page),
        Ok(Ok(None)) => refused(ApiError::not_found("no such pair in this project"), token),
        Ok(Err(SourceError::Store(e))) => refused(ApiError::of_store(e), token),
        Ok(Err(e)) => refused(ApiError::bad_request(e.to_string()), token),
        Err(g) => refused(g.into(), token),
    }
}
