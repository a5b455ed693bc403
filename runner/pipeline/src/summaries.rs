//! The series summaries behind `pitwall serve`'s index (issue 30): made whenever alert
//! detection re-detects a series after runs are stored (`alerts::refresh`, on the command line
//! and in the server alike), merged with the one stored (a change point older than the window
//! detection read stays the last one), and stored; and made for every series of the newest
//! history when the server starts (`backfill`), so a store from before keeps an index.

use std::collections::BTreeMap;

use pitwall_analysis::history::{HistoryFilter, Series, series_with};
use pitwall_analysis::summary::{SeriesSummary, keep_older_change, summarize};
use pitwall_engine::defaults;
use pitwall_schema::Run;
use pitwall_stats::changepoint::DetectConfig;
use pitwall_store::{RunQuery, Store, StoreError, StoredSummary};

/// The summary of series `s` over `runs`, of `project`.
pub(crate) fn of_series(
    s: &Series,
    runs: &[Run],
    project: &str,
    now: &str,
) -> Option<SeriesSummary> {
    summarize(s, runs, project, defaults::SUMMARY_RECENT_POINTS, now)
}

/// Stores `made`, each merged with the summary stored for its series.
pub(crate) fn keep(store: &mut dyn Store, made: Vec<SeriesSummary>) -> Result<(), StoreError> {
    if made.is_empty() {
        return Ok(());
    }
    let mut stored: BTreeMap<(String, String, String, String), SeriesSummary> = BTreeMap::new();
    // Only a summary without a change point of its own takes one from the stored summary: the
    // stored ones are read only for those summaries' projects.
    let projects: std::collections::BTreeSet<String> = made
        .iter()
        .filter(|s| s.last_change.is_none())
        .map(|s| s.project.clone())
        .collect();
    for p in projects {
        for row in store.series_summaries(&p)? {
            // A row that no longer reads (written by another version) is replaced.
            if let Ok(s) = serde_json::from_str::<SeriesSummary>(&row.json) {
                stored.insert((row.project, row.testbed, row.branch, row.key), s);
            }
        }
    }
    let rows: Vec<StoredSummary> = made
        .into_iter()
        .map(|s| {
            let id = (
                s.project.clone(),
                s.testbed.clone(),
                s.branch.clone(),
                s.key.clone(),
            );
            let merged = keep_older_change(s, stored.get(&id));
            StoredSummary {
                json: serde_json::to_string(&merged).expect("a summary serializes"),
                updated_at: merged.updated_at.clone(),
                project: id.0,
                testbed: id.1,
                branch: id.2,
                key: id.3,
            }
        })
        .collect();
    store.upsert_series_summaries(&rows)
}

/// Makes and stores the summary of every series of `history_branch`'s newest runs (the
/// window alert detection reads), every project and testbed: what the server does at start.
/// How many it stored.
pub fn backfill(
    store: &mut dyn Store,
    history_branch: &str,
    now: &str,
) -> Result<usize, StoreError> {
    let runs = store.query_runs(&RunQuery {
        history_branch: Some(history_branch.to_string()),
        testbed: None,
        keys: None,
        newest: Some(defaults::ALERT_WINDOW_RUNS),
        samples: false,
        fingerprints: false,
    })?;
    let mut by_project: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for r in runs {
        by_project.entry(r.project.clone()).or_default().push(r);
    }
    let mut made = Vec::new();
    for (project, runs) in by_project {
        let noise = crate::noise::history_noise(store, &runs)?;
        let filter = HistoryFilter::branch(history_branch);
        for s in series_with(&runs, &filter, &DetectConfig::default(), &noise) {
            made.extend(of_series(&s, &runs, &project, now));
        }
    }
    let n = made.len();
    keep(store, made)?;
    Ok(n)
}

/// The summaries of `project`'s series, as stored; rows that no longer read are left out.
pub fn list(store: &dyn Store, project: &str) -> Result<Vec<SeriesSummary>, StoreError> {
    Ok(store
        .series_summaries(project)?
        .iter()
        .filter_map(|row| serde_json::from_str(&row.json).ok())
        .collect())
}
