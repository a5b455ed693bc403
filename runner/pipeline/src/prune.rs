//! Retention, `pitwall prune --older-than DAYS`: old runs deleted, or with `--keep-summaries`
//! their raw samples replaced by the summaries a history point needs, so the history stays
//! usable while the store shrinks. Each run is pruned in its own transaction; a prune that is
//! interrupted leaves every run either untouched or fully pruned, and running it again
//! finishes the job.

use pitwall_analysis::history::summarize;
use pitwall_schema::{ResultStatus, SampleSummary, UnixTime};
use pitwall_store::{Store, StoreError};

/// What to prune.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneRequest {
    /// Runs that started more than this many days before `now` are pruned.
    pub older_than_days: u32,
    /// Keep the runs and their summaries, drop only the raw samples (else delete the runs).
    pub keep_summaries: bool,
    /// Count what would be pruned and change nothing.
    pub dry_run: bool,
    /// The present, as RFC 3339 UTC (`pitwall_schema::time::now_rfc3339()`; fixed in tests).
    pub now: String,
}

/// What a prune did (or, dry, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PruneOutcome {
    /// Runs that started before this instant were old enough.
    pub cutoff: String,
    /// Old runs found.
    pub old_runs: usize,
    /// Old runs deleted (without `--keep-summaries`).
    pub runs_deleted: usize,
    /// Old runs whose samples were replaced by summaries (with `--keep-summaries`).
    pub runs_summarized: usize,
    /// Old runs a previous `--keep-summaries` prune had already summarized.
    pub runs_already_summarized: usize,
    /// Raw samples dropped (with `--keep-summaries`; deleted runs' samples are not counted).
    pub samples_dropped: usize,
    pub dry_run: bool,
}

/// Why a prune failed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error("--older-than: cannot compute {days} days before {now}: {reason}")]
    Cutoff {
        days: u32,
        now: String,
        reason: String,
    },
    #[error("run {id}: started_at `{started_at}` is not a UTC time")]
    BadTime { id: String, started_at: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The instant `days` before `now`.
fn cutoff(days: u32, now: &str) -> Result<UnixTime, PruneError> {
    let err = |reason: String| PruneError::Cutoff {
        days,
        now: now.to_string(),
        reason,
    };
    let now_ts = UnixTime::parse(now).ok_or_else(|| err("not an RFC 3339 time".into()))?;
    now_ts
        .checked_sub_secs(i64::from(days) * 86_400)
        .ok_or_else(|| err("that is before year 0000".into()))
}

/// Prunes every run that started before `days` before `now`, one run per transaction.
pub fn prune(request: &PruneRequest, store: &mut dyn Store) -> Result<PruneOutcome, PruneError> {
    let cut = cutoff(request.older_than_days, &request.now)?;
    let mut outcome = PruneOutcome {
        cutoff: format!("{cut}"),
        dry_run: request.dry_run,
        ..PruneOutcome::default()
    };
    for summary in store.list_runs(None)? {
        let started = UnixTime::parse(&summary.started_at).ok_or_else(|| PruneError::BadTime {
            id: summary.id.clone(),
            started_at: summary.started_at.clone(),
        })?;
        if started >= cut {
            continue;
        }
        outcome.old_runs += 1;
        if !request.keep_summaries {
            if request.dry_run || store.delete_run(&summary.id)? {
                outcome.runs_deleted += 1;
            }
            continue;
        }
        let run = store.get_run(&summary.id)?;
        let summaries: Vec<Option<SampleSummary>> = run
            .results
            .iter()
            .map(|r| {
                (r.status == ResultStatus::Ok && !r.samples.is_empty())
                    .then(|| summarize(r))
                    .flatten()
            })
            .collect();
        // Only ok results make history points: an implausible (or failed) one keeps its raw
        // samples, as a summary stands only for an ok result. Results without a finite
        // sample (failed, skipped) have nothing worth summarizing;
        // a run whose results are all summarized already is left alone.
        let droppable: usize = run
            .results
            .iter()
            .zip(&summaries)
            .filter(|(_, s)| s.is_some())
            .map(|(r, _)| r.samples.len())
            .sum();
        if summaries.iter().all(Option::is_none) {
            if run.results.iter().any(|r| r.summary.is_some()) {
                outcome.runs_already_summarized += 1;
            }
            continue;
        }
        outcome.runs_summarized += 1;
        outcome.samples_dropped += if request.dry_run {
            droppable
        } else {
            store.prune_samples(&run.id, &summaries)?
        };
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests;
