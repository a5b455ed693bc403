//! A store that redacts: every run and alert read from it, or stored through it, has every
//! secret the process knows replaced by `***`. Runs stored before a secret was known, or by
//! an older pitwall, or brought in by `import`, would otherwise reach `show`, `export`, the
//! report and the pull-request comment as they were stored (docs/CI.md, "Redaction").

use pitwall_schema::{Alert, AlertUpdate, Redactor, Run, SampleSummary};

use super::{InsertOutcome, RunQuery, RunSummary, Store, StoreError};

/// Wraps a store; what goes in and comes out is redacted with `redactor`.
pub struct RedactingStore {
    inner: Box<dyn Store>,
    redactor: Redactor,
}

impl RedactingStore {
    /// `inner` as it is when the redactor knows no secret.
    pub fn wrap(inner: Box<dyn Store>, redactor: Redactor) -> Box<dyn Store> {
        if redactor.is_empty() {
            return inner;
        }
        Box::new(RedactingStore { inner, redactor })
    }

    fn run(&self, mut run: Run) -> Run {
        redact_run(&self.redactor, &mut run);
        run
    }

    fn alert(&self, mut alert: Alert) -> Alert {
        if self.redactor.redact_serde(&mut alert).is_err() {
            alert.series.key = pitwall_schema::secrets::REDACTED.to_string();
            alert.note = None;
        }
        alert
    }

    /// Run summaries with their texts redacted.
    fn summaries(&self, runs: &mut [RunSummary]) {
        for r in runs {
            for s in [&mut r.project, &mut r.commit, &mut r.started_at] {
                *s = self.text(std::mem::take(s));
            }
            for s in [&mut r.branch, &mut r.testbed, &mut r.role, &mut r.pair_id] {
                *s = s.take().map(|t| self.text(t));
            }
        }
    }

    fn text(&self, text: String) -> String {
        self.redactor.redact(&text)
    }
}

/// Redacts every string of `run`; one that no longer reads back once redacted (a secret that
/// was a whole enum tag) has its results' free text replaced whole.
pub fn redact_run(redactor: &Redactor, run: &mut Run) {
    if redactor.redact_serde(run).is_err() {
        for result in &mut run.results {
            result.name = pitwall_schema::secrets::REDACTED.to_string();
            result.error = result
                .error
                .as_ref()
                .map(|_| pitwall_schema::secrets::REDACTED.to_string());
            result.params.clear();
        }
    }
}

impl Store for RedactingStore {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn on_skipped(&mut self, sink: super::SkipSink) {
        self.inner.on_skipped(sink);
    }

    fn migration_notes(&self) -> Vec<String> {
        self.inner.migration_notes()
    }

    fn forge_comment(&self, target: &str) -> Result<Option<u64>, StoreError> {
        self.inner.forge_comment(target)
    }

    fn set_forge_comment(&mut self, target: &str, id: u64) -> Result<(), StoreError> {
        self.inner.set_forge_comment(target, id)
    }

    fn list_pair_runs(&self, testbed: &str) -> Result<Vec<RunSummary>, StoreError> {
        let mut runs = self.inner.list_pair_runs(testbed)?;
        self.summaries(&mut runs);
        Ok(runs)
    }

    fn detects_alerts(&self) -> bool {
        self.inner.detects_alerts()
    }

    fn create_token(&mut self, token: &super::StoredToken) -> Result<(), StoreError> {
        self.inner.create_token(token)
    }

    fn list_tokens(&self) -> Result<Vec<super::StoredToken>, StoreError> {
        self.inner.list_tokens()
    }

    fn revoke_token(&mut self, name: &str, at: &str) -> Result<bool, StoreError> {
        self.inner.revoke_token(name, at)
    }

    fn create_session(&mut self, session: &super::StoredSession) -> Result<(), StoreError> {
        self.inner.create_session(session)
    }

    fn session(&self, id_sha256: &str) -> Result<Option<super::StoredSession>, StoreError> {
        self.inner.session(id_sha256)
    }

    fn delete_session(&mut self, id_sha256: &str) -> Result<bool, StoreError> {
        self.inner.delete_session(id_sha256)
    }

    fn upsert_series_summaries(&mut self, rows: &[super::StoredSummary]) -> Result<(), StoreError> {
        let clean: Vec<super::StoredSummary> = rows
            .iter()
            .map(|r| super::StoredSummary {
                json: self.text(r.json.clone()),
                ..r.clone()
            })
            .collect();
        self.inner.upsert_series_summaries(&clean)
    }

    fn series_summaries(&self, project: &str) -> Result<Vec<super::StoredSummary>, StoreError> {
        Ok(self
            .inner
            .series_summaries(project)?
            .into_iter()
            .map(|r| super::StoredSummary {
                json: self.text(r.json.clone()),
                ..r
            })
            .collect())
    }

    fn insert_run(&mut self, run: &Run) -> Result<InsertOutcome, StoreError> {
        let clean = self.run(run.clone());
        self.inner.insert_run(&clean)
    }

    fn insert_runs(&mut self, runs: &[Run]) -> Result<Vec<InsertOutcome>, StoreError> {
        let clean: Vec<Run> = runs.iter().map(|r| self.run(r.clone())).collect();
        self.inner.insert_runs(&clean)
    }

    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>, StoreError> {
        let mut runs = self.inner.list_runs(limit)?;
        self.summaries(&mut runs);
        Ok(runs)
    }

    fn get_run(&self, id: &str) -> Result<Run, StoreError> {
        self.inner.get_run(id).map(|r| self.run(r))
    }

    fn all_runs(&self) -> Result<Vec<Run>, StoreError> {
        Ok(self
            .inner
            .all_runs()?
            .into_iter()
            .map(|r| self.run(r))
            .collect())
    }

    fn upsert_alerts(&mut self, alerts: &[Alert]) -> Result<(), StoreError> {
        let clean: Vec<Alert> = alerts.iter().map(|a| self.alert(a.clone())).collect();
        self.inner.upsert_alerts(&clean)
    }

    fn list_alerts(&self) -> Result<Vec<Alert>, StoreError> {
        Ok(self
            .inner
            .list_alerts()?
            .into_iter()
            .map(|a| self.alert(a))
            .collect())
    }

    fn update_alert(&mut self, id: &str, change: &AlertUpdate) -> Result<Alert, StoreError> {
        self.inner.update_alert(id, change).map(|a| self.alert(a))
    }

    fn alert_changes(&self, id: &str) -> Result<Vec<pitwall_schema::AlertChange>, StoreError> {
        let changes = self.inner.alert_changes(id)?;
        Ok(changes
            .into_iter()
            .map(|c| pitwall_schema::AlertChange {
                by: c.by.map(|b| self.text(b)),
                note: c.note.map(|n| self.text(n)),
                culprit: c.culprit.map(|n| self.text(n)),
                ..c
            })
            .collect())
    }

    fn transition_alerts(
        &mut self,
        changes: &[pitwall_schema::AlertTransition],
    ) -> Result<usize, StoreError> {
        let clean: Vec<_> = changes
            .iter()
            .map(|c| pitwall_schema::AlertTransition {
                note: c.note.clone().map(|n| self.text(n)),
                ..c.clone()
            })
            .collect();
        self.inner.transition_alerts(&clean)
    }

    fn prune_samples(
        &mut self,
        id: &str,
        summaries: &[Option<SampleSummary>],
    ) -> Result<usize, StoreError> {
        self.inner.prune_samples(id, summaries)
    }

    fn delete_run(&mut self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_run(id)
    }

    fn set_exclusion(
        &mut self,
        id: &str,
        exclusion: Option<&pitwall_schema::Exclusion>,
    ) -> Result<bool, StoreError> {
        let clean = exclusion.map(|e| pitwall_schema::Exclusion {
            note: self.redactor.redact(&e.note),
            at: e.at.clone(),
        });
        self.inner.set_exclusion(id, clean.as_ref())
    }

    fn query_runs(&self, query: &RunQuery) -> Result<Vec<Run>, StoreError> {
        Ok(self
            .inner
            .query_runs(query)?
            .into_iter()
            .map(|r| self.run(r))
            .collect())
    }

    fn series_keys(&self) -> Result<Vec<String>, StoreError> {
        // Keys select series; they are compared with keys of redacted runs.
        Ok(self
            .inner
            .series_keys()?
            .into_iter()
            .map(|k| self.text(k))
            .collect())
    }
}

#[cfg(test)]
mod tests;
