//! The read side of the API, and triage: runs, one run, a series with its change points,
//! alerts (and their triage), a pair's two runs. Every answer is JSON; every path is under one
//! project, and what belongs to another project is not found there.

use std::collections::BTreeMap;

use axum::extract::{Path, Query, State as Extract};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use pitwall_analysis::{HistoryFilter, Series};
use pitwall_pipeline::alerts::{AlertQuery, TriageRequest};
use pitwall_pipeline::tokens::TokenRole;
use pitwall_schema::{AlertStatus, Run, UnixTime};
use pitwall_stats::changepoint::DetectConfig;

use crate::State;
use crate::api::{ApiError, answer, refused};
use crate::auth::{Caller, authorize};

/// Most runs one `GET …/runs` lists.
const MAX_LIST: usize = 1000;
/// Runs listed when `limit` is not given.
const DEFAULT_LIST: usize = 100;

/// Lets a read through, or the refusal as the response.
pub(crate) async fn reader(state: &State, headers: &HeaderMap) -> Result<Caller, Response> {
    authorize(state, headers, TokenRole::Read)
        .await
        .map_err(|d| refused(d.error, d.token.as_deref()))
}

pub async fn healthz(Extract(state): Extract<State>) -> Response {
    // A read of the smallest table: the store answers.
    match state
        .store
        .reader()
        .call(|s| s.list_tokens().map(|_| ()))
        .await
    {
        Ok(Ok(())) => answer(StatusCode::OK, &serde_json::json!({"status": "ok"}), None),
        Ok(Err(e)) => refused(ApiError::of_store(e), None),
        Err(g) => refused(g.into(), None),
    }
}

pub async fn not_found() -> Response {
    refused(
        ApiError::not_found("no such endpoint (hint: the API is under /api/v1/p/<project>/)"),
        None,
    )
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    limit: Option<usize>,
}

pub async fn list_runs(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    Query(q): Query<ListQuery>,
    headers: HeaderMap,
) -> Response {
    let caller = match reader(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let limit = q.limit.unwrap_or(DEFAULT_LIST).clamp(1, MAX_LIST);
    let listed = state
        .store
        .reader()
        .call(move |s| {
            // The newest `limit` runs of the store first (cheap); the whole list only when
            // other projects' runs are among them.
            let newest = s.list_runs(Some(limit))?;
            let all = if newest.len() == limit && newest.iter().any(|r| r.project != project) {
                s.list_runs(None)?
            } else {
                newest
            };
            Ok(all
                .into_iter()
                .filter(|r| r.project == project)
                .take(limit)
                .collect::<Vec<_>>())
        })
        .await;
    reply(listed, caller.token.as_deref())
}

/// A store answer as a response: the value, or the store's failure.
fn reply<T: Serialize>(
    got: Result<Result<T, pitwall_store::StoreError>, crate::actor::Gone>,
    token: Option<&str>,
) -> Response {
    match got {
        Ok(Ok(v)) => answer(StatusCode::OK, &v, token),
        Ok(Err(e)) => refused(ApiError::of_store(e), token),
        Err(g) => refused(g.into(), token),
    }
}

/// Run `id` of `project`, exactly (no prefixes, no `latest`: API paths stay put).
async fn run_of(state: &State, project: String, id: String) -> Result<Run, ApiError> {
    let wanted = id.clone();
    let got = state
        .store
        .reader()
        .call(move |s| s.get_run(&wanted))
        .await?;
    match got {
        Ok(run) if run.id == id && run.project == project => Ok(run),
        // The API knows exact ids only: a prefix matching several runs is not one of them.
        Ok(_)
        | Err(pitwall_store::StoreError::NotFound { .. })
        | Err(pitwall_store::StoreError::Ambiguous { .. }) => Err(ApiError::not_found(format!(
            "no run `{id}` in project `{project}`"
        ))),
        Err(e) => Err(ApiError::of_store(e)),
    }
}

pub async fn get_run(
    Extract(state): Extract<State>,
    Path((project, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let caller = match reader(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    match run_of(&state, project, id).await {
        Ok(run) => answer(StatusCode::OK, &run, caller.token.as_deref()),
        Err(e) => refused(e, caller.token.as_deref()),
    }
}

pub async fn get_pair(
    Extract(state): Extract<State>,
    Path((project, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let caller = match reader(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let token = caller.token.as_deref();
    let pair = id.clone();
    let ids = state
        .store
        .reader()
        .call(move |s| {
            s.list_runs(None).map(|all| {
                all.into_iter()
                    .filter(|r| r.pair_id.as_deref() == Some(pair.as_str()))
                    .map(|r| r.id)
                    .collect::<Vec<_>>()
            })
        })
        .await;
    let ids = match ids {
        Ok(Ok(ids)) if !ids.is_empty() => ids,
        Ok(Ok(_)) => {
            let e = ApiError::not_found(format!("no pair `{id}` in project `{project}`"));
            return refused(e, token);
        }
        Ok(Err(e)) => return refused(ApiError::of_store(e), token),
        Err(g) => return refused(g.into(), token),
    };
    let mut sides = BTreeMap::new();
    for run_id in ids {
        match run_of(&state, project.clone(), run_id).await {
            Ok(run) => {
                let role = match run.pair.as_ref().map(|p| p.role) {
                    Some(pitwall_schema::PairRole::Base) => "base",
                    Some(_) => "head",
                    None => "run",
                };
                sides.insert(role.to_string(), run);
            }
            Err(e) => return refused(e, token),
        }
    }
    answer(
        StatusCode::OK,
        &serde_json::json!({"id": id, "runs": sides}),
        token,
    )
}

#[derive(Debug, Deserialize)]
pub struct SeriesQuery {
    key: String,
    branch: Option<String>,
    testbed: Option<String>,
}

/// One point of a series as the API shows it.
#[derive(Debug, Serialize)]
struct PointView {
    commit: String,
    runs: Vec<String>,
    started_at: String,
    value: f64,
    ci: Option<(f64, f64)>,
    replicates: usize,
}

#[derive(Debug, Serialize)]
struct ChangeView {
    index: usize,
    commit: String,
    before: f64,
    after: f64,
    rel_change: f64,
}

#[derive(Debug, Serialize)]
struct SeriesView {
    key: String,
    testbed: String,
    branch: String,
    unit: String,
    points: Vec<PointView>,
    changes: Vec<ChangeView>,
    suspected: Option<ChangeView>,
}

fn view(s: &Series, runs: &[Run]) -> SeriesView {
    let commit_at = |i: usize| {
        s.points
            .get(i)
            .map(|p| runs[p.run].commit.clone())
            .unwrap_or_default()
    };
    SeriesView {
        key: s.key.clone(),
        testbed: s.testbed.clone(),
        branch: s.branch.clone(),
        unit: s.unit.clone(),
        points: s
            .points
            .iter()
            .map(|p| PointView {
                commit: runs[p.run].commit.clone(),
                runs: p.runs.iter().map(|&i| runs[i].id.clone()).collect(),
                started_at: runs[p.run].started_at.clone(),
                value: p.median,
                ci: p.ci,
                replicates: p.replicates,
            })
            .collect(),
        changes: s
            .changes
            .iter()
            .map(|c| ChangeView {
                index: c.index,
                commit: commit_at(c.index),
                before: c.before,
                after: c.after,
                rel_change: c.rel_change,
            })
            .collect(),
        suspected: s.suspected.as_ref().map(|c| ChangeView {
            index: c.index,
            commit: commit_at(c.index),
            before: c.before,
            after: c.after,
            rel_change: c.rel_change,
        }),
    }
}

pub async fn series(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    Query(q): Query<SeriesQuery>,
    headers: HeaderMap,
) -> Response {
    let caller = match reader(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let filter = HistoryFilter {
        branch: q
            .branch
            .clone()
            .unwrap_or_else(|| state.options.history_branch.clone()),
        testbed: q.testbed.clone(),
    };
    let key = q.key.clone();
    let got = state
        .store
        .reader()
        .call(move |s| {
            let mut runs = pitwall_pipeline::detect::series_runs(s, &key, &filter)?;
            runs.retain(|r| r.project == project);
            let noise = pitwall_pipeline::noise::history_noise(s, &runs)?;
            let series = pitwall_analysis::history::series_with(
                &runs,
                &filter,
                &DetectConfig::default(),
                &noise,
            );
            Ok(series
                .iter()
                .filter(|x| x.key == key)
                .map(|x| view(x, &runs))
                .collect::<Vec<_>>())
        })
        .await;
    reply(got, caller.token.as_deref())
}

#[derive(Debug, Deserialize)]
pub struct AlertsQuery {
    status: Option<String>,
    testbed: Option<String>,
    branch: Option<String>,
}

pub async fn list_alerts(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    Query(q): Query<AlertsQuery>,
    headers: HeaderMap,
) -> Response {
    let caller = match reader(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let token = caller.token.as_deref();
    let status = match q.status.as_deref().map(|s| (s, AlertStatus::parse(s))) {
        None => None,
        Some((_, Some(s))) => Some(s),
        Some((text, None)) => {
            let e = ApiError::bad_request(format!("status `{text}` is not an alert status"));
            return refused(e, token);
        }
    };
    let query = AlertQuery {
        status,
        testbed: q.testbed,
        branch: q.branch,
    };
    let got = state
        .store
        .reader()
        .call(move |s| {
            pitwall_pipeline::alerts::list(s, &query).map(|all| {
                all.into_iter()
                    .filter(|a| a.series.project == project)
                    .collect::<Vec<_>>()
            })
        })
        .await;
    reply(got, token)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriageBody {
    status: String,
    note: Option<String>,
}

pub async fn triage_alert(
    Extract(state): Extract<State>,
    Path((project, id)): Path<(String, String)>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    let caller = match authorize(&state, &headers, TokenRole::Triage).await {
        Ok(c) => c,
        Err(d) => return refused(d.error, d.token.as_deref()),
    };
    let token = caller.token.as_deref();
    let body = match crate::upload::read_body(body, state.options.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return refused(e, token),
    };
    let parsed: TriageBody = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return refused(ApiError::bad_request(format!("triage body: {e}")), token),
    };
    let Some(status) = AlertStatus::parse(&parsed.status) else {
        let e = ApiError::bad_request(format!("status `{}` is not an alert status", parsed.status));
        return refused(e, token);
    };
    let req = TriageRequest {
        id: id.clone(),
        status,
        note: parsed.note,
        // The token's name, whatever the body says: who changed an alert is not the
        // caller's to claim.
        by: caller.token.clone(),
    };
    match triage_in_project(&state, project, req).await {
        Ok(alert) => answer(StatusCode::OK, &alert, token),
        Err(e) => refused(e, token),
    }
}

/// Makes the triage `req` of an alert of `project` on the writer, under the rules of
/// `pitwall alert`: the alert as stored after, or why not (404 for an alert of another
/// project or none, 400 for a change the rules refuse). The JSON API and the pages' forms
/// both triage through here.
pub(crate) async fn triage_in_project(
    state: &State,
    project: String,
    req: TriageRequest,
) -> Result<pitwall_schema::Alert, ApiError> {
    use pitwall_pipeline::alerts::TriageError;
    use pitwall_store::StoreError;
    let got = state
        .store
        .writer
        .call(move |s| -> Result<_, TriageError> {
            let alert = pitwall_pipeline::alerts::find(s, &req.id)?;
            if alert.series.project != project {
                return Err(TriageError::Store(StoreError::NoAlert {
                    store: String::new(),
                    id: req.id,
                }));
            }
            let now = UnixTime::now().to_rfc3339(6).unwrap_or_default();
            pitwall_pipeline::alerts::triage(s, &req, &now)
        })
        .await?;
    match got {
        Ok(alert) => Ok(alert),
        Err(TriageError::Store(StoreError::NoAlert { id, .. })) => {
            Err(ApiError::not_found(format!("no alert `{id}` here")))
        }
        Err(TriageError::Store(e)) => Err(ApiError::of_store(e)),
        Err(e) => Err(ApiError::bad_request(e.to_string())),
    }
}

/// `GET …/alerts/<id>`: the alert and its recorded changes, oldest first.
pub async fn get_alert(
    Extract(state): Extract<State>,
    Path((project, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let caller = match reader(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let got = state
        .store
        .reader()
        .call(
            move |s| -> Result<Option<serde_json::Value>, pitwall_store::StoreError> {
                let Some(alert) = s
                    .list_alerts()?
                    .into_iter()
                    .find(|a| a.id == id && a.series.project == project)
                else {
                    return Ok(None);
                };
                let changes = s.alert_changes(&alert.id)?;
                Ok(Some(
                    serde_json::json!({"alert": alert, "changes": changes}),
                ))
            },
        )
        .await;
    let token = caller.token.as_deref();
    match got {
        Ok(Ok(Some(v))) => answer(StatusCode::OK, &v, token),
        Ok(Ok(None)) => refused(ApiError::not_found("no such alert here"), token),
        Ok(Err(e)) => refused(ApiError::of_store(e), token),
        Err(g) => refused(g.into(), token),
    }
}
