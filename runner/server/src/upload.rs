//! Uploads (`POST /api/v1/p/<project>/runs`, runner tokens only): the run is checked, stored in
//! one transaction on the store thread (with the other uploads queued by then: commit.rs), and
//! answered; the alerts of the series it touched are
//! then re-detected in the background with the thresholds the upload carried, coalesced per
//! (project, branch, testbed): uploads queued behind one detection join it. Runners never write
//! alerts. Each token may upload `uploads_per_minute` times a minute.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Path, State as Extract};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use pitwall_analysis::AlertRules;
use pitwall_engine::config::CodePaths;
use pitwall_engine::defaults;
use pitwall_pipeline::alerts::AlertSettings;
use pitwall_pipeline::tokens::TokenRole;
use pitwall_schema::{
    MAX_BATCH_RUNS, Run, RunRole, UnixTime, Upload, UploadAlertRules, UploadBatch,
};
use pitwall_store::InsertOutcome;

use crate::State;
use crate::actor::StoreActor;
use crate::api::{ApiError, answer, refused};
use crate::auth::authorize;

/// Uploads per token in the last minute.
pub struct RateLimiter {
    per_minute: usize,
    seen: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl RateLimiter {
    pub fn new(per_minute: usize) -> RateLimiter {
        RateLimiter {
            per_minute,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Counts an upload by `token` now; false when it would be more than the limit.
    pub fn admit(&self, token: &str, now: Instant) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let times = seen.entry(token.to_string()).or_default();
        while times
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            times.pop_front();
        }
        if times.len() >= self.per_minute {
            return false;
        }
        times.push_back(now);
        true
    }
}

type Group = (String, String, String);

/// Alert detection waiting for the store thread, per series group.
struct Pending {
    runs: Vec<Run>,
    settings: AlertSettings,
}

/// Queues alert detection after uploads, one job per group at a time.
#[derive(Clone)]
pub struct Refresher {
    store: StoreActor,
    pending: Arc<Mutex<BTreeMap<Group, Pending>>>,
}

impl Refresher {
    pub fn new(store: StoreActor) -> Refresher {
        Refresher {
            store,
            pending: Arc::new(Mutex::new(BTreeMap::new())),
        }
    }

    /// Queues re-detection for the series `run` touched; joins a detection of its group that
    /// has not started yet.
    pub fn enqueue(&self, run: &Run, settings: AlertSettings) {
        if run.role_or_implied() != RunRole::History || run.results.is_empty() {
            return;
        }
        let branch = run
            .branch
            .clone()
            .unwrap_or_else(|| settings.history_branch.clone());
        let group = (run.project.clone(), branch, run.testbed_or_derived());
        // Detection needs the run's labels and result keys, not its samples.
        let mut light = run.clone();
        for r in &mut light.results {
            r.samples.clear();
        }
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = pending.get_mut(&group) {
            p.runs.push(light);
            p.settings = settings;
            return;
        }
        pending.insert(
            group.clone(),
            Pending {
                runs: vec![light],
                settings,
            },
        );
        drop(pending);
        let queue = Arc::clone(&self.pending);
        let _ = self.store.submit(move |store| {
            let taken = queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&group);
            let Some(p) = taken else { return };
            let now = UnixTime::now().to_rfc3339(6).unwrap_or_default();
            let line = match pitwall_pipeline::alerts::refresh(store, &p.runs, &p.settings, &now) {
                Ok(r) => serde_json::json!({
                    "event": "alerts",
                    "project": group.0, "branch": group.1, "testbed": group.2,
                    "runs": p.runs.len(), "new": r.new.len(), "suspected": r.suspected.len(),
                    "updated": r.updated, "settled": r.settled,
                }),
                Err(e) => serde_json::json!({
                    "event": "alerts", "project": group.0, "error": e.to_string(),
                }),
            };
            eprintln!("{line}");
        });
    }
}

/// The alert settings of an upload: its thresholds, else the server's.
fn settings_of(state: &State, a: &UploadAlertRules) -> AlertSettings {
    AlertSettings {
        rules: AlertRules {
            threshold_pct: a.threshold_pct.unwrap_or(state.options.threshold_pct),
            suite_threshold_pct: a.suite_threshold_pct.clone(),
            resamples: defaults::ALERT_RESAMPLES,
            level: defaults::ALERT_CI_LEVEL,
            seed: defaults::ALERT_SEED,
            match_window: defaults::ALERT_MATCH_WINDOW,
        },
        history_branch: a
            .history_branch
            .clone()
            .unwrap_or_else(|| state.options.history_branch.clone()),
        // The server has no checkout: steps are not labelled by the paths a commit touched.
        code_paths: CodePaths::default(),
        repo: None,
    }
}

/// A request body read only once its token was let through: at most `limit` bytes (413
/// above), so a caller without a token cannot make the server read 64 MiB.
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let too_long = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if too_long {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is over {limit} bytes (hint: upload fewer results at once)"),
            )
        } else {
            ApiError::bad_request(format!("cannot read the body: {e}"))
        }
    })
}

/// The checks every upload passes before its body is parsed: a runner token, the rate limit,
/// the body limit. The body and the token's name, or the refusal.
async fn admit(
    state: &State,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Bytes, String), Response> {
    let caller = match authorize(state, headers, TokenRole::Runner).await {
        Ok(c) => c,
        Err(d) => return Err(refused(d.error, d.token.as_deref())),
    };
    let name = caller.token.clone().unwrap_or_default();
    if !state.uploads.admit(&name, Instant::now()) {
        let e = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "token `{name}` made {} uploads in the last minute (hint: upload many runs at once through runs/batch)",
                state.options.uploads_per_minute
            ),
        );
        return Err(refused(e, Some(&name)));
    }
    match read_body(body, state.options.max_body_bytes).await {
        Ok(b) => Ok((b, name)),
        Err(e) => Err(refused(e, Some(&name))),
    }
}

/// Why `run` may not be uploaded to `project`.
fn check_run(run: &Run, project: &str) -> Option<ApiError> {
    if run.project != project {
        return Some(ApiError::bad_request(format!(
            "run {} is of project `{}`, uploaded to `{project}`",
            run.id, run.project
        )));
    }
    run.validate()
        .err()
        .map(|e| ApiError::bad_request(e.to_string()))
}

/// Stores one upload's runs (all or none), queues their alert detection, and answers: 201
/// when a run was new, 200 when every one was already stored; `{"id", "stored"}` for one run,
/// `{"runs": [{"id", "stored"}, …]}` for a batch.
async fn store(
    state: &State,
    runs: Vec<Run>,
    batch: bool,
    settings: AlertSettings,
    token: &str,
) -> Response {
    let token = Some(token);
    let outcomes = match state.commit.insert(runs.clone()).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return refused(ApiError::of_store(e), token),
        Err(g) => return refused(g.into(), token),
    };
    for (run, outcome) in runs.iter().zip(&outcomes) {
        if *outcome == InsertOutcome::Inserted {
            state.refresher.enqueue(run, settings.clone());
        }
    }
    let status = if outcomes.contains(&InsertOutcome::Inserted) {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let answers: Vec<serde_json::Value> = runs
        .iter()
        .zip(&outcomes)
        .map(|(run, o)| serde_json::json!({"id": run.id, "stored": *o == InsertOutcome::Inserted}))
        .collect();
    let body = match <[_; 1]>::try_from(answers) {
        Ok([one]) if !batch => one,
        Ok(one) => serde_json::json!({ "runs": one }),
        Err(many) => serde_json::json!({ "runs": many }),
    };
    answer(status, &body, token)
}

/// `POST …/runs`: one run.
pub async fn upload_run(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (body, name) = match admit(&state, &headers, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    match serde_json::from_slice::<Upload>(&body) {
        Ok(u) => accept(&state, &project, &name, vec![u.run], u.alerts, false).await,
        Err(e) => refused(
            ApiError::bad_request(format!(
                "upload body: {e} (hint: {{\"run\": <one of the `runs` `pitwall export` writes>, \"alerts\": {{…}}}})"
            )),
            Some(&name),
        ),
    }
}

/// `POST …/runs/batch`: many runs of the project (an import), all or none, one upload for the
/// rate limit.
pub async fn upload_batch(
    Extract(state): Extract<State>,
    Path(project): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (body, name) = match admit(&state, &headers, body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    match serde_json::from_slice::<UploadBatch>(&body) {
        Ok(b) if b.runs.is_empty() || b.runs.len() > MAX_BATCH_RUNS => refused(
            ApiError::bad_request(format!(
                "a batch upload holds 1 to {MAX_BATCH_RUNS} runs, not {}",
                b.runs.len()
            )),
            Some(&name),
        ),
        Ok(b) => accept(&state, &project, &name, b.runs, b.alerts, true).await,
        Err(e) => refused(
            ApiError::bad_request(format!(
                "batch upload body: {e} (hint: {{\"runs\": [<the `runs` `pitwall export` writes>], \"alerts\": {{…}}}})"
            )),
            Some(&name),
        ),
    }
}

/// An upload's runs and thresholds, parsed: checked, then stored.
async fn accept(
    state: &State,
    project: &str,
    name: &str,
    runs: Vec<Run>,
    alerts: UploadAlertRules,
    batch: bool,
) -> Response {
    if let Some(e) = runs.iter().find_map(|r| check_run(r, project)) {
        return refused(e, Some(name));
    }
    if let Some(problem) = alerts.problem() {
        return refused(ApiError::bad_request(problem), Some(name));
    }
    let settings = settings_of(state, &alerts);
    store(state, runs, batch, settings, name).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_per_token_over_a_sliding_minute() {
        let limiter = RateLimiter::new(3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(limiter.admit("a", t0));
        }
        assert!(!limiter.admit("a", t0 + Duration::from_secs(30)));
        assert!(limiter.admit("b", t0), "another token has its own budget");
        assert!(limiter.admit("a", t0 + Duration::from_secs(60)));
    }
}
