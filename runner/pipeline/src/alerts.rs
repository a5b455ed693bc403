//! Alerts as use cases: re-detecting the history series a stored run touched and upserting
//! the alerts the rule (`pitwall_analysis::alerts`) finds there, listing them for
//! `pitwall alerts`, and a person's triage (`pitwall alert ack|dismiss|fix|expect`). Nothing
//! here prints; the binary renders what these return.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

pub use pitwall_analysis::alerts::sort_open_first;
use pitwall_analysis::alerts::{AlertRules, Reach, alert_series, detect_alerts, reconcile, settle};
use pitwall_analysis::history::{HistoryFilter, series_with};
use pitwall_schema::{Alert, AlertStatus, AlertTransition, AlertUpdate, Run, RunRole};
use pitwall_stats::changepoint::DetectConfig;

use pitwall_engine::config::{CodePaths, Config};
use pitwall_engine::defaults;
use pitwall_store::{RunQuery, Store, StoreError};

/// The alert rule with the project's thresholds (`[thresholds] regression_pct`, a suite's
/// `threshold_pct`: what `compare` uses) and the named defaults of the interval and matching.
pub fn rules(config: &Config) -> AlertRules {
    AlertRules {
        threshold_pct: config.thresholds.regression_pct,
        suite_threshold_pct: config
            .suites
            .iter()
            .filter_map(|s| s.threshold_pct.map(|t| (s.name.clone(), t)))
            .collect(),
        resamples: defaults::ALERT_RESAMPLES,
        level: defaults::ALERT_CI_LEVEL,
        seed: defaults::ALERT_SEED,
        match_window: defaults::ALERT_MATCH_WINDOW,
    }
}

/// What detection needs besides the store: the rule, the branch runs without one belong to,
/// and where to look up what a first bad commit changed.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertSettings {
    pub rules: AlertRules,
    /// `[history] branch`: the branch of history runs that record none.
    pub history_branch: String,
    /// `[history] code_paths`: an alert whose first bad commit touches none is labelled
    /// `AlertLabel::NoCodeChanged`.
    pub code_paths: CodePaths,
    /// A directory inside the repository whose commits the runs measured (the configuration
    /// file's, else the current one); `None`, or no repository there, labels nothing.
    pub repo: Option<PathBuf>,
}

impl AlertSettings {
    pub fn of(config: &Config) -> AlertSettings {
        let dir = config.source.as_deref().and_then(|f| f.parent()).map(|d| {
            if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d.to_path_buf()
            }
        });
        AlertSettings {
            rules: rules(config),
            history_branch: config.history_branch.clone(),
            code_paths: config.code_paths.clone(),
            repo: dir.or_else(|| std::env::current_dir().ok()),
        }
    }
}

/// What re-detection changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertRefresh {
    /// Alerts to tell people about: stored for the first time as confirmed steps (regressions
    /// and improvements), or `suspected` alerts promoted now. Never a `suspected` alert.
    pub new: Vec<Alert>,
    /// `suspected` alerts stored for the first time (listed, never notified).
    pub suspected: Vec<Alert>,
    /// Stored alerts whose numbers or commits were brought up to date.
    pub updated: usize,
    /// Detection's own status changes applied (`Store::transition_alerts`): suspected alerts
    /// promoted or deleted, untriaged alerts dismissed as no longer detected.
    pub settled: usize,
}

/// Re-runs detection for the series the `touched` runs (just stored) belong to, upserts
/// the alerts found (a step whose first bad commit touches no code path labelled so) and
/// applies detection's own status changes (`pitwall_analysis::alerts::settle`: promotion,
/// deletion of a cleared suspected alert, "no longer detected"). Only history runs touch a
/// series: a pull request's runs never make an alert. Cheap by construction: only the touched
/// (project, branch, testbed) histories are read, of those only the newest runs
/// (`ALERT_WINDOW_RUNS`, or more when more were just stored) and only the touched benchmark
/// keys' stored points (`Store::query_runs`); steps older than that were judged when they were
/// new.
pub fn refresh(
    store: &mut dyn Store,
    touched: &[Run],
    settings: &AlertSettings,
    now: &str,
) -> Result<AlertRefresh, StoreError> {
    // A server detects the alerts of what is uploaded to it (`pitwall serve`).
    if store.detects_alerts() {
        return Ok(AlertRefresh::default());
    }
    // (project, branch, testbed) → benchmark keys the stored runs hold, and how many runs.
    let mut groups: BTreeMap<(String, String, String), (BTreeSet<String>, usize)> = BTreeMap::new();
    for run in touched
        .iter()
        .filter(|r| r.role_or_implied() == RunRole::History && !r.results.is_empty())
    {
        let branch = run
            .branch
            .clone()
            .unwrap_or_else(|| settings.history_branch.clone());
        let group = groups
            .entry((run.project.clone(), branch, run.testbed_or_derived()))
            .or_default();
        group.0.extend(run.results.iter().map(|r| r.key()));
        group.1 += 1;
    }
    if groups.is_empty() {
        return Ok(AlertRefresh::default());
    }
    let existing = store.list_alerts()?;
    let mut upserts = Vec::new();
    let mut transitions = Vec::new();
    let mut summaries = Vec::new();
    for (group, (keys, stored)) in groups {
        let (u, t, s) = redetect(store, &group, keys, stored, &existing, settings, now)?;
        upserts.extend(u);
        transitions.extend(t);
        summaries.extend(s);
    }
    crate::summaries::keep(store, summaries)?;
    code_change::label(&mut upserts, &existing, settings);
    let mut out = AlertRefresh::default();
    for a in &upserts {
        match existing.iter().find(|e| e.id == a.id) {
            None if a.status == AlertStatus::Suspected => out.suspected.push(a.clone()),
            None => out.new.push(a.clone()),
            Some(e) if e.status == AlertStatus::Suspected && a.status != e.status => {
                out.new.push(a.clone());
            }
            Some(e) if e.detection_differs(a) => out.updated += 1,
            Some(_) => {}
        }
    }
    if !upserts.is_empty() {
        store.upsert_alerts(&upserts)?;
    }
    transitions = detections_own(store, transitions)?;
    if !transitions.is_empty() {
        out.settled = store.transition_alerts(&transitions)?;
    }
    Ok(out)
}

/// Of detection's status changes, those it may make: reviving a dismissed alert whose step is
/// detected again (`alerts::settle`) only while detection made the alert's last change, so a
/// person who dismissed it since (with or without a note of their own) keeps it dismissed.
/// Reads the changes of the revived alerts only, which are few.
fn detections_own(
    store: &dyn Store,
    transitions: Vec<AlertTransition>,
) -> Result<Vec<AlertTransition>, StoreError> {
    let mut kept = Vec::with_capacity(transitions.len());
    for t in transitions {
        if t.from == AlertStatus::Dismissed {
            let changes = store.alert_changes(&t.id)?;
            let last_by = changes.last().and_then(|c| c.by.as_deref());
            if last_by != Some(pitwall_schema::DETECTION) {
                continue;
            }
        }
        kept.push(t);
    }
    Ok(kept)
}

/// One (project, branch, testbed) history re-detected for `keys`: the alerts to upsert,
/// detection's own status changes, and the series' summaries for the server's index.
fn redetect(
    store: &mut dyn Store,
    (project, branch, testbed): &(String, String, String),
    keys: BTreeSet<String>,
    stored: usize,
    existing: &[Alert],
    settings: &AlertSettings,
    now: &str,
) -> Result<Redetected, StoreError> {
    let filter = HistoryFilter {
        branch: branch.clone(),
        testbed: Some(testbed.clone()),
    };
    // Of this history only its newest runs (all those just stored, and the window before
    // them), of their results only the touched keys, and of those only the stored points:
    // memory and time stay small however long the history.
    let window = defaults::ALERT_WINDOW_RUNS.max(stored + defaults::ALERT_WINDOW_EDGE);
    let candidates = store.query_runs(&RunQuery {
        history_branch: Some(branch.clone()),
        testbed: Some(testbed.clone()),
        keys: Some(keys.into_iter().collect()),
        newest: Some(window),
        samples: false,
        fingerprints: false,
    })?;
    let partial = candidates.len() >= window;
    let reach = Reach {
        first: if partial {
            defaults::ALERT_WINDOW_EDGE
        } else {
            0
        },
        whole: !partial,
    };
    // Runs without a branch count as the history branch's only.
    let runs: Vec<Run> = candidates
        .into_iter()
        .filter(|r| r.project == *project)
        .filter(|r| r.branch.is_some() || *branch == settings.history_branch)
        .filter(|r| filter.admits(r))
        .collect();
    let (mut upserts, mut transitions, mut summaries) = (Vec::new(), Vec::new(), Vec::new());
    let noise = crate::noise::history_noise(store, &runs)?;
    for s in series_with(&runs, &filter, &DetectConfig::default(), &noise) {
        summaries.extend(crate::summaries::of_series(&s, &runs, project, now));
        let mut found = detect_alerts(&s, &runs, project, branch, &settings.rules, now);
        found.retain(|step| step.index >= reach.first);
        let reconciled = reconcile(&s, &runs, existing, found, &settings.rules);
        let named = alert_series(&s, project, branch);
        transitions.extend(settle(&s, &runs, &named, existing, &reconciled, reach, now));
        upserts.extend(reconciled);
    }
    Ok((upserts, transitions, summaries))
}

/// What [`redetect`] found.
type Redetected = (
    Vec<Alert>,
    Vec<AlertTransition>,
    Vec<pitwall_analysis::summary::SeriesSummary>,
);

/// Which alerts `pitwall alerts` lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlertQuery {
    pub status: Option<AlertStatus>,
    pub testbed: Option<String>,
    pub branch: Option<String>,
}

impl AlertQuery {
    pub fn admits(&self, a: &Alert) -> bool {
        self.status.is_none_or(|s| s == a.status)
            && self
                .testbed
                .as_deref()
                .is_none_or(|t| t == a.series.testbed)
            && self.branch.as_deref().is_none_or(|b| b == a.series.branch)
    }
}

/// The stored alerts `query` admits, open ones first (then by status, newest first).
pub fn list(store: &dyn Store, query: &AlertQuery) -> Result<Vec<Alert>, StoreError> {
    let mut alerts: Vec<Alert> = store
        .list_alerts()?
        .into_iter()
        .filter(|a| query.admits(a))
        .collect();
    sort_open_first(&mut alerts);
    Ok(alerts)
}

/// A person's triage of one alert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriageRequest {
    pub id: String,
    /// One of the triage states (`AlertStatus::is_triage`).
    pub status: AlertStatus,
    /// Replaces the stored note when given.
    pub note: Option<String>,
    /// Who, as the alert's changes record it: a token's name over `pitwall serve`,
    /// `local:USER` from the command line ([`local_actor`]).
    pub by: Option<String>,
}

/// Who changes an alert from this machine's command line: `local:` and the user's name
/// (`$USER`, else `$LOGNAME`), as the alert's changes record it.
pub fn local_actor(user: Option<&str>) -> String {
    format!(
        "local:{}",
        user.filter(|u| !u.is_empty()).unwrap_or("unknown")
    )
}

/// Why a triage failed.
#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    #[error(
        "`{0}` is not a status a person sets (hint: acknowledged, dismissed, fixed or expected)"
    )]
    NotTriage(AlertStatus),
    #[error(
        "--note: {chars} characters, more than the {max} an alert keeps (hint: link to a longer text instead)",
        max = pitwall_engine::defaults::ALERT_NOTE_MAX_CHARS
    )]
    NoteTooLong { chars: usize },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Sets the alert's status (and note), returning it as stored after.
pub fn triage(store: &mut dyn Store, req: &TriageRequest, now: &str) -> Result<Alert, TriageError> {
    if !req.status.is_triage() {
        return Err(TriageError::NotTriage(req.status));
    }
    if let Some(chars) = req.note.as_ref().map(|n| n.chars().count()) {
        if chars > pitwall_engine::defaults::ALERT_NOTE_MAX_CHARS {
            return Err(TriageError::NoteTooLong { chars });
        }
    }
    Ok(store.update_alert(
        &req.id,
        &AlertUpdate {
            status: Some(req.status),
            note: req.note.clone(),
            culprit: None,
            updated_at: now.to_string(),
            by: req.by.clone(),
        },
    )?)
}

/// The stored alert with this exact id (`StoreError::NoAlert` when none).
pub fn find(store: &dyn Store, id: &str) -> Result<Alert, StoreError> {
    store
        .list_alerts()?
        .into_iter()
        .find(|a| a.id == id)
        .ok_or_else(|| StoreError::NoAlert {
            store: store.describe(),
            id: id.to_string(),
        })
}

/// The testbed this machine's runs are stored under: `[testbed] name`, else the one its
/// fingerprint implies (as `run` labels its runs without `--testbed`).
pub fn this_testbed(config: &Config) -> String {
    config
        .testbed
        .clone()
        .unwrap_or_else(|| pitwall_schema::default_testbed(&pitwall_host::fingerprint::current()))
}

/// Why an alert cannot be bisected here.
#[derive(Debug, thiserror::Error)]
pub enum AlertBisectError {
    #[error(
        "alert {id} is on testbed `{alert}`, this machine is `{here}` (hint: bisect on that testbed, or set [testbed] name)"
    )]
    OtherTestbed {
        id: String,
        alert: String,
        here: String,
    },
    #[error("alert {id}: cannot tell the suite and benchmark from key `{key}`")]
    BadKey { id: String, key: String },
}

/// What `pitwall alert bisect` measures: the alert's commit range (last good, first bad) and
/// its benchmark only (its suite, its `name[params]`), on the testbed it was found on.
pub fn bisect_request(
    alert: &Alert,
    here: &str,
    rounds: u32,
    max_rounds: u32,
    rebuild: bool,
) -> Result<crate::bisect::BisectRequest, AlertBisectError> {
    if alert.series.testbed != here {
        return Err(AlertBisectError::OtherTestbed {
            id: alert.id.clone(),
            alert: alert.series.testbed.clone(),
            here: here.to_string(),
        });
    }
    // A key is `suite/name[params]/measure`; the suite holds no `/`, the name may.
    let key = &alert.series.key;
    let bad_key = || AlertBisectError::BadKey {
        id: alert.id.clone(),
        key: key.clone(),
    };
    let (suite, rest) = key.split_once('/').ok_or_else(bad_key)?;
    let name = rest
        .strip_suffix(&alert.series.measure)
        .and_then(|r| r.strip_suffix('/'))
        .filter(|n| !n.is_empty())
        .ok_or_else(bad_key)?;
    Ok(crate::bisect::BisectRequest {
        good: alert.last_good.clone(),
        bad: alert.first_bad.clone(),
        select: crate::request::RunRequest {
            suites: vec![suite.to_string()],
            filter: Some(name.to_string()),
        },
        rounds,
        max_rounds: max_rounds.max(rounds),
        rebuild,
    })
}

/// Keeps the commit a bisection found on the alert.
pub fn record_culprit(
    store: &mut dyn Store,
    id: &str,
    culprit: &str,
    now: &str,
    by: &str,
) -> Result<Alert, StoreError> {
    store.update_alert(
        id,
        &AlertUpdate {
            culprit: Some(culprit.to_string()),
            updated_at: now.to_string(),
            by: Some(by.to_string()),
            ..AlertUpdate::default()
        },
    )
}

mod code_change;
#[cfg(test)]
mod tests;
