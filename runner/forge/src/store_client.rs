//! The store over HTTP (issue 29): `--store https://…` makes `run`, `import` and `ci` upload
//! through a `pitwall serve`'s API with the runner token in `PITWALL_TOKEN`, so runners hold
//! no database credentials. A third implementation of the `Store` trait beside SQLite and
//! PostgreSQL: it stores runs, reads runs and alerts and triages alerts through the API;
//! alerts are detected by the server (`detects_alerts`); what only makes sense on the
//! database itself (pruning, exclusions, reading every run, tokens) is
//! `StoreError::NotOverHttp`. The token goes only to the URL given with `--store` or
//! `PITWALL_STORE`, through the one HTTP client (same-origin redirects only).

use std::time::Duration;

use pitwall_schema::{
    Alert, AlertChange, AlertTransition, AlertUpdate, Exclusion, MAX_BATCH_RUNS, Run,
    SampleSummary, Upload, UploadAlertRules,
};
use pitwall_store::{
    InsertOutcome, RunQuery, RunSummary, SkipSink, Store, StoreError, StoredSession, StoredSummary,
    StoredToken,
};
use serde::de::DeserializeOwned;

use crate::http::{HttpClient, HttpResponse, Method};

/// Most JSON a batch upload carries: a quarter of the server's default body limit.
const BATCH_BYTES: usize = 16 << 20;

/// The server's answer to a batch upload.
#[derive(serde::Deserialize)]
struct BatchAnswer {
    runs: Vec<BatchRun>,
}

#[derive(serde::Deserialize)]
struct BatchRun {
    id: String,
    stored: bool,
}

/// Most runs the server lists at once (its `MAX_LIST`).
const MAX_LIST: usize = 1000;

/// How long one request may take (an upload of a large run included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// A `pitwall serve` as a store, for one project.
pub struct HttpStore {
    base: String,
    project: String,
    rules: UploadAlertRules,
    client: HttpClient,
}

impl std::fmt::Debug for HttpStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpStore")
            .field("base", &self.base)
            .field("project", &self.project)
            .finish_non_exhaustive()
    }
}

/// A path segment with everything but unreserved characters percent-encoded.
fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl HttpStore {
    /// The server at `base` (a checked `StoreUrl::Http`), reading and writing `project`, with
    /// `token`; uploads carry `rules`.
    pub fn connect(
        base: &str,
        project: &str,
        token: &str,
        rules: UploadAlertRules,
    ) -> Result<HttpStore, StoreError> {
        let client = HttpClient::new(
            vec![("authorization", format!("Bearer {token}"))],
            REQUEST_TIMEOUT,
        )
        .map_err(|e| StoreError::Open {
            store: base.to_string(),
            source: Box::new(e),
        })?;
        Ok(HttpStore {
            base: base.trim_end_matches('/').to_string(),
            project: project.to_string(),
            rules,
            client,
        })
    }

    fn url(&self, project: &str, rest: &str) -> String {
        format!("{}/api/v1/p/{}/{rest}", self.base, segment(project))
    }

    fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<HttpResponse, StoreError> {
        self.client
            .send(method, url, body)
            .map_err(|e| StoreError::Open {
                store: self.base.clone(),
                source: Box::new(e),
            })
    }

    /// The server's error as a `StoreError`: its one-line message, never the request.
    /// The batch upload that starts at `runs[start]`: the runs of its project that follow it,
    /// as many as fit in `MAX_BATCH_RUNS` and `BATCH_BYTES` (at least one); where it ends,
    /// and its body.
    fn batch_from(
        &self,
        runs: &[Run],
        start: usize,
    ) -> Result<(usize, serde_json::Value), StoreError> {
        let mut bytes = 0;
        let mut batch = Vec::new();
        for run in &runs[start..] {
            if run.project != runs[start].project || batch.len() == MAX_BATCH_RUNS {
                break;
            }
            run.validate().map_err(|source| StoreError::Invalid {
                store: self.base.clone(),
                source,
            })?;
            let json = serde_json::to_value(run).map_err(|e| StoreError::Corrupt {
                store: self.base.clone(),
                what: format!("run {} cannot be written as JSON: {e}", run.id),
            })?;
            let size = json.to_string().len();
            if !batch.is_empty() && bytes + size > BATCH_BYTES {
                break;
            }
            bytes += size;
            batch.push(json);
        }
        let end = start + batch.len();
        let alerts = serde_json::to_value(&self.rules).unwrap_or_default();
        Ok((end, serde_json::json!({"runs": batch, "alerts": alerts})))
    }

    fn refused(&self, r: &HttpResponse) -> StoreError {
        let message = serde_json::from_str::<serde_json::Value>(&r.body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| "no message".into());
        let hint = match r.status {
            401 => {
                " (hint: PITWALL_TOKEN must hold a token of this server: `pitwall token create` on its store)"
            }
            403 => " (hint: uploads need a token with role runner)",
            _ => "",
        };
        StoreError::Refused {
            store: self.base.clone(),
            status: r.status,
            message: format!("{message}{hint}"),
        }
    }

    fn get<T: DeserializeOwned>(&self, rest: &str) -> Result<T, StoreError> {
        let r = self.send(Method::Get, &self.url(&self.project, rest), None)?;
        if !r.is_success() {
            return Err(self.refused(&r));
        }
        self.decode(&r)
    }

    fn decode<T: DeserializeOwned>(&self, r: &HttpResponse) -> Result<T, StoreError> {
        serde_json::from_str(&r.body).map_err(|e| StoreError::Corrupt {
            store: self.base.clone(),
            what: format!("the server's answer is not what pitwall expects: {e}"),
        })
    }

    fn not_here(&self, what: &str) -> StoreError {
        StoreError::NotOverHttp {
            store: self.base.clone(),
            what: what.to_string(),
        }
    }
}

/// `RunSummary` as the server sends it (the store's type only serializes).
#[derive(serde::Deserialize)]
struct SummaryWire {
    id: String,
    project: String,
    commit: String,
    branch: Option<String>,
    started_at: String,
    status: pitwall_schema::RunStatus,
    results: usize,
    failed_results: usize,
    #[serde(default)]
    pair_id: Option<String>,
    testbed: Option<String>,
    role: Option<String>,
    #[serde(default)]
    excluded: bool,
}

impl From<SummaryWire> for RunSummary {
    fn from(w: SummaryWire) -> RunSummary {
        RunSummary {
            id: w.id,
            project: w.project,
            commit: w.commit,
            branch: w.branch,
            started_at: w.started_at,
            status: w.status,
            results: w.results,
            failed_results: w.failed_results,
            pair_id: w.pair_id,
            testbed: w.testbed,
            role: w.role,
            excluded: w.excluded,
        }
    }
}

impl Store for HttpStore {
    fn describe(&self) -> String {
        self.base.clone()
    }

    fn insert_run(&mut self, run: &Run) -> Result<InsertOutcome, StoreError> {
        // The server checks it too; checked here, a bad run says why without a round trip
        // (and a non-finite sample, which JSON cannot carry, is named).
        run.validate().map_err(|source| StoreError::Invalid {
            store: self.base.clone(),
            source,
        })?;
        let upload = Upload {
            run: run.clone(),
            alerts: self.rules.clone(),
        };
        let body = serde_json::to_value(&upload).map_err(|e| StoreError::Corrupt {
            store: self.base.clone(),
            what: format!("run {} cannot be written as JSON: {e}", run.id),
        })?;
        let r = self.send(Method::Post, &self.url(&run.project, "runs"), Some(&body))?;
        match r.status {
            201 => Ok(InsertOutcome::Inserted),
            200 => Ok(InsertOutcome::AlreadyStored),
            409 => Err(StoreError::Conflict {
                store: self.base.clone(),
                id: run.id.clone(),
            }),
            _ => Err(self.refused(&r)),
        }
    }

    /// Many runs (an import) go to `runs/batch`, up to `MAX_BATCH_RUNS` runs and
    /// `BATCH_BYTES` of JSON of one project a request: each request is stored all or none
    /// and counts as one upload for the server's rate limit; the requests are not one
    /// transaction together.
    fn insert_runs(&mut self, runs: &[Run]) -> Result<Vec<InsertOutcome>, StoreError> {
        if let [one] = runs {
            return Ok(vec![self.insert_run(one)?]);
        }
        let mut outcomes = Vec::with_capacity(runs.len());
        let mut start = 0;
        while start < runs.len() {
            let (end, body) = self.batch_from(runs, start)?;
            let part = &runs[start..end];
            let url = self.url(&part[0].project, "runs/batch");
            let r = self.send(Method::Post, &url, Some(&body))?;
            if !matches!(r.status, 200 | 201) {
                return Err(self.refused(&r));
            }
            let answer: BatchAnswer = self.decode(&r)?;
            for (run, got) in part.iter().zip(&answer.runs) {
                if got.id != run.id || answer.runs.len() != part.len() {
                    return Err(StoreError::Corrupt {
                        store: self.base.clone(),
                        what: format!("the answer to a batch upload does not list run {}", run.id),
                    });
                }
                outcomes.push(if got.stored {
                    InsertOutcome::Inserted
                } else {
                    InsertOutcome::AlreadyStored
                });
            }
            start = end;
        }
        Ok(outcomes)
    }

    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>, StoreError> {
        let n = limit.unwrap_or(MAX_LIST).clamp(1, MAX_LIST);
        let wire: Vec<SummaryWire> = self.get(&format!("runs?limit={n}"))?;
        Ok(wire.into_iter().map(RunSummary::from).collect())
    }

    fn get_run(&self, id: &str) -> Result<Run, StoreError> {
        let id = if id == "latest" {
            match self.list_runs(Some(1))?.into_iter().next() {
                Some(r) => r.id,
                None => {
                    return Err(StoreError::NotFound {
                        store: self.base.clone(),
                        id: id.to_string(),
                    });
                }
            }
        } else {
            id.to_string()
        };
        let url = self.url(&self.project, &format!("runs/{}", segment(&id)));
        let r = self.send(Method::Get, &url, None)?;
        match r.status {
            200 => self.decode(&r),
            // The server knows full ids only: a prefix is looked up among the listed runs,
            // as the database stores look it up.
            404 if id.chars().count() >= pitwall_store::MIN_PREFIX => {
                let mut matches: Vec<String> = self
                    .list_runs(None)?
                    .into_iter()
                    .map(|r| r.id)
                    .filter(|r| r.starts_with(&id))
                    .collect();
                matches.sort();
                matches.truncate(pitwall_store::MAX_CANDIDATES + 1);
                let full = pitwall_store::pick_one(&self.base, &id, matches)?;
                self.get_run(&full)
            }
            404 => Err(StoreError::NotFound {
                store: self.base.clone(),
                id,
            }),
            _ => Err(self.refused(&r)),
        }
    }

    /// Every run of the project, oldest first, read one by one: up to the server's list
    /// limit (a larger store is read on the server, through its series API).
    fn all_runs(&self) -> Result<Vec<Run>, StoreError> {
        let listed = self.list_runs(None)?;
        if listed.len() >= MAX_LIST {
            return Err(self.not_here(&format!("reading more than {MAX_LIST} runs")));
        }
        listed.iter().rev().map(|s| self.get_run(&s.id)).collect()
    }

    fn upsert_alerts(&mut self, _alerts: &[Alert]) -> Result<(), StoreError> {
        Err(self.not_here("writing alerts (the server detects them)"))
    }

    fn list_alerts(&self) -> Result<Vec<Alert>, StoreError> {
        self.get("alerts")
    }

    fn update_alert(&mut self, id: &str, change: &AlertUpdate) -> Result<Alert, StoreError> {
        let (Some(status), None) = (change.status, &change.culprit) else {
            return Err(self.not_here("recording an alert's culprit"));
        };
        let body = serde_json::json!({"status": status.as_str(), "note": change.note});
        let url = self.url(&self.project, &format!("alerts/{}", segment(id)));
        let r = self.send(Method::Post, &url, Some(&body))?;
        match r.status {
            200 => self.decode(&r),
            404 => Err(StoreError::NoAlert {
                store: self.base.clone(),
                id: id.to_string(),
            }),
            _ => Err(self.refused(&r)),
        }
    }

    fn alert_changes(&self, id: &str) -> Result<Vec<AlertChange>, StoreError> {
        #[derive(serde::Deserialize)]
        struct WithChanges {
            changes: Vec<AlertChange>,
        }
        let url = self.url(&self.project, &format!("alerts/{}", segment(id)));
        let r = self.send(Method::Get, &url, None)?;
        match r.status {
            200 => Ok(self.decode::<WithChanges>(&r)?.changes),
            404 => Ok(Vec::new()),
            _ => Err(self.refused(&r)),
        }
    }

    fn transition_alerts(&mut self, _changes: &[AlertTransition]) -> Result<usize, StoreError> {
        Err(self.not_here("changing alerts' status for detection"))
    }

    fn prune_samples(
        &mut self,
        _id: &str,
        _summaries: &[Option<SampleSummary>],
    ) -> Result<usize, StoreError> {
        Err(self.not_here("pruning"))
    }

    fn delete_run(&mut self, _id: &str) -> Result<bool, StoreError> {
        Err(self.not_here("deleting runs"))
    }

    fn set_exclusion(
        &mut self,
        _id: &str,
        _exclusion: Option<&Exclusion>,
    ) -> Result<bool, StoreError> {
        Err(self.not_here("excluding runs"))
    }

    fn query_runs(&self, _query: &RunQuery) -> Result<Vec<Run>, StoreError> {
        Err(self.not_here("reading histories (use the server's series API)"))
    }

    fn series_keys(&self) -> Result<Vec<String>, StoreError> {
        Err(self.not_here("listing series"))
    }

    fn on_skipped(&mut self, _sink: SkipSink) {
        // The server skips and names unreadable runs in its own log.
    }

    fn migration_notes(&self) -> Vec<String> {
        Vec::new()
    }

    fn forge_comment(&self, _target: &str) -> Result<Option<u64>, StoreError> {
        // The server keeps no comment ids; the publisher finds its comment by its marker.
        Ok(None)
    }

    fn set_forge_comment(&mut self, _target: &str, _id: u64) -> Result<(), StoreError> {
        Err(self.not_here("keeping a pull request's comment id"))
    }

    fn detects_alerts(&self) -> bool {
        true
    }

    fn create_token(&mut self, _token: &StoredToken) -> Result<(), StoreError> {
        Err(self.not_here("`pitwall token`"))
    }

    fn list_tokens(&self) -> Result<Vec<StoredToken>, StoreError> {
        Err(self.not_here("`pitwall token`"))
    }

    fn revoke_token(&mut self, _name: &str, _at: &str) -> Result<bool, StoreError> {
        Err(self.not_here("`pitwall token`"))
    }

    fn create_session(&mut self, _session: &StoredSession) -> Result<(), StoreError> {
        Err(self.not_here("a browser session"))
    }

    fn session(&self, _id_sha256: &str) -> Result<Option<StoredSession>, StoreError> {
        Err(self.not_here("a browser session"))
    }

    fn delete_session(&mut self, _id_sha256: &str) -> Result<bool, StoreError> {
        Err(self.not_here("a browser session"))
    }

    fn upsert_series_summaries(&mut self, _rows: &[StoredSummary]) -> Result<(), StoreError> {
        // The server keeps its own, when it detects the alerts of an upload.
        Err(self.not_here("keeping the index's series summaries"))
    }

    fn series_summaries(&self, _project: &str) -> Result<Vec<StoredSummary>, StoreError> {
        Err(self.not_here("the index's series summaries"))
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(segment("shop"), "shop");
        assert_eq!(segment("a b/c?d#e"), "a%20b%2Fc%3Fd%23e");
        assert_eq!(segment("é"), "%C3%A9");
    }
}
