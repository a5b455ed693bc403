//! The history pages of `pitwall serve` (issue 30): `/p/<project>/bench?key=…`, a benchmark
//! measure's page as `pitwall report` writes it (the same template), rendered live from the
//! store: its interactive chart (zoom, pan, reset, tooltips; change points, alerts, excluded
//! and contended runs marked), with the other testbeds' series of the key, and the branches
//! `with=` names, to overlay. Also the chart's script and the vendored uPlot it loads, from
//! `/p/<project>/assets/`. Only the key's stored history points are read, not every run. And
//! the index, `/p/<project>/`, from the series' summaries the store keeps.

use axum::extract::{Path, Query, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use pitwall_analysis::HistoryFilter;
use pitwall_reports::html::live::{self, SeriesWanted};
use pitwall_stats::changepoint::DetectConfig;

use crate::State;
use crate::alert_pages::{Policy, live_page, render_error};
use crate::api::{ApiError, refused};

/// Most branches one page overlays (`with=a,b,…`).
const MAX_OVERLAY_BRANCHES: usize = 8;

#[derive(Debug, Deserialize)]
pub struct BenchQuery {
    key: String,
    testbed: Option<String>,
    branch: Option<String>,
    /// Other branches to overlay, comma-separated.
    with: Option<String>,
}

/// `GET /p/<project>/bench?key=K[&testbed=T][&branch=B][&with=B2,B3]`.
pub async fn bench(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    Query(q): Query<BenchQuery>,
    headers: HeaderMap,
) -> Response {
    let branch = q
        .branch
        .clone()
        .unwrap_or_else(|| state.options.history_branch.clone());
    let mut branches = vec![branch.clone()];
    for b in q.with.as_deref().unwrap_or("").split(',').map(str::trim) {
        if !b.is_empty() && !branches.iter().any(|x| x == b) {
            branches.push(b.to_string());
        }
    }
    if branches.len() > 1 + MAX_OVERLAY_BRANCHES {
        let e = ApiError::bad_request(format!(
            "with: at most {MAX_OVERLAY_BRANCHES} branches to overlay"
        ));
        return refused(e, None);
    }
    let p = project.clone();
    let missing = "no history of that benchmark key here (hint: `pitwall detect` lists the keys)";
    live_page(
        &state,
        &headers,
        &p,
        Policy::OwnScripts,
        missing,
        move |s, viewer| {
            let of_store = ApiError::of_store;
            let mut runs = Vec::new();
            for b in &branches {
                let filter = HistoryFilter::branch(b);
                let mut more =
                    pitwall_pipeline::detect::series_runs(s, &q.key, &filter).map_err(of_store)?;
                more.retain(|r| r.project == project);
                runs.extend(more);
            }
            let noise = pitwall_pipeline::noise::history_noise(s, &runs).map_err(of_store)?;
            let mut histories = Vec::new();
            for b in &branches {
                let series = pitwall_analysis::history::series_with(
                    &runs,
                    &HistoryFilter::branch(b),
                    &DetectConfig::default(),
                    &noise,
                );
                histories.extend(series.into_iter().filter(|x| x.key == q.key));
            }
            let alerts: Vec<_> = s
                .list_alerts()
                .map_err(of_store)?
                .into_iter()
                .filter(|a| a.series.project == project && a.series.key == q.key)
                .collect();
            let wanted = SeriesWanted {
                key: &q.key,
                testbed: q.testbed.as_deref(),
                branch: &branch,
            };
            let now = pitwall_schema::time::now_rfc3339();
            live::bench_page(&project, histories, &runs, &alerts, &wanted, &viewer, &now)
                .map_err(render_error)
        },
    )
    .await
}

/// `GET /p/<project>/`: the index, from the series' summaries the store keeps, and the
/// project's alerts.
pub async fn index(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    headers: HeaderMap,
) -> Response {
    let branch = state.options.history_branch.clone();
    let p = project.clone();
    live_page(
        &state,
        &headers,
        &p,
        Policy::OwnScripts,
        "",
        move |s, viewer| {
            let of_store = ApiError::of_store;
            let summaries = pitwall_pipeline::summaries::list(s, &project).map_err(of_store)?;
            let alerts = pitwall_pipeline::alerts::list(s, &Default::default())
                .map_err(of_store)?
                .into_iter()
                .filter(|a| a.series.project == project)
                .collect::<Vec<_>>();
            let now = pitwall_schema::time::now_rfc3339();
            pitwall_reports::html::live_index::index_page(
                &project, summaries, &alerts, &branch, &viewer, &now,
            )
            .map(Some)
            .map_err(render_error)
        },
    )
    .await
}

/// `GET /p/<project>`: to `/p/<project>/`, where the index's relative links work.
pub async fn to_index(Path(project): Path<String>) -> Response {
    crate::session::see_other(&project, "", &[])
}

/// `GET /p/<project>/assets/<path>`: the stylesheet, the chart script, the vendored uPlot and
/// its licence, as `pitwall report` writes them under `assets/`.
pub async fn asset(Path((_project, path)): Path<(String, String)>) -> Response {
    let Some((text, kind)) = live::asset(&path) else {
        return refused(ApiError::not_found(format!("no asset `{path}`")), None);
    };
    let mut r = (StatusCode::OK, text).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    r
}
