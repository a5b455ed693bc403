//! The alert rule over histories: which change points of a history series become alerts, with
//! the commit range and an interval for the size of the step, and how a re-detected step is
//! matched to the alert already stored for it, so re-running detection never duplicates an
//! alert or resets what people decided about it. A suspected step at a series' tip is a
//! `suspected` alert, which detection alone promotes or deletes ([`settle`], which also
//! dismisses an untriaged alert whose step is no longer detected).
//!
//! The interval is a percentile bootstrap of the ratio of the medians of the two segments
//! around the step (Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, §13.3), the
//! per-run medians of each segment resampled independently with a fixed seed
//! (`pitwall_stats::ratio_of_medians_ci`), so the same history always gives the same interval.

use pitwall_schema::{Alert, AlertKind, AlertSeries, AlertStatus, AlertTransition, Run};
use pitwall_stats::ab::ratio_of_medians_ci;

use crate::history::Series;

/// What makes a change point an alert; the pipeline fills it from the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRules {
    /// Smallest relative change, in percent, that makes an alert (the compare threshold,
    /// `[thresholds] regression_pct`).
    pub threshold_pct: f64,
    /// Suites with their own threshold (`threshold_pct` of a `[[suite]]`), as `compare` uses.
    pub suite_threshold_pct: std::collections::BTreeMap<String, f64>,
    /// Bootstrap resamples of the interval.
    pub resamples: usize,
    /// Confidence level of the interval (0.95).
    pub level: f64,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// How many points a re-detected step may move and still be the same alert.
    pub match_window: usize,
}

impl AlertRules {
    /// The threshold of `suite`'s benchmarks, in percent.
    pub fn threshold_for(&self, suite: &str) -> f64 {
        self.suite_threshold_pct
            .get(suite)
            .copied()
            .unwrap_or(self.threshold_pct)
    }
}

/// One step in a series that passes the rule, before it is matched to stored alerts.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectedStep {
    /// The alert as it would be stored if new (`created_at`/`updated_at` are `now`).
    pub alert: Alert,
    /// Index of `first_bad` in the series' points.
    pub index: usize,
}

/// The alerts of one series: every change point whose step exceeds the threshold of the
/// series' suite (as `compare` judges it), a regression
/// (`active`) when it makes the measure worse, an `improvement` otherwise; and the suspected
/// step at its tip (`Series::suspected`) when it passes the same threshold, as an alert with
/// status `suspected` that says how many more runs would confirm or clear it. `runs` are the
/// runs the series was built from; `project` and `branch` name the series with its testbed and
/// key; `now` stamps new alerts.
pub fn detect_alerts(
    series: &Series,
    runs: &[Run],
    project: &str,
    branch: &str,
    rules: &AlertRules,
    now: &str,
) -> Vec<DetectedStep> {
    let at = StepAt {
        series,
        runs,
        s: alert_series(series, project, branch),
        rules,
        now,
    };
    let mut out = Vec::new();
    for (ci, change) in series.changes.iter().enumerate() {
        let idx = change.index;
        let start = ci
            .checked_sub(1)
            .map_or(0, |p| series.changes[p].index.min(idx));
        let end = series
            .changes
            .get(ci + 1)
            .map_or(series.points.len(), |n| n.index.max(idx));
        let numbers = (change.before, change.after, change.rel_change);
        out.extend(at.step(start..idx, idx..end, numbers, None));
    }
    if let Some(tip) = &series.suspected {
        let start = series.changes.last().map_or(0, |c| c.index.min(tip.index));
        let numbers = (tip.before, tip.after, tip.rel_change);
        let more = u32::try_from(tip.more_points).unwrap_or(u32::MAX);
        let range = (start..tip.index, tip.index..series.points.len());
        out.extend(at.step(range.0, range.1, numbers, Some(more)));
    }
    out
}

/// The series an alert of `series` names.
pub fn alert_series(series: &Series, project: &str, branch: &str) -> AlertSeries {
    AlertSeries {
        project: project.to_string(),
        testbed: series.testbed.clone(),
        branch: branch.to_string(),
        key: series.key.clone(),
        measure: series.measure.clone(),
    }
}

/// What every step of one series shares while it becomes an alert.
struct StepAt<'a> {
    series: &'a Series,
    runs: &'a [Run],
    s: AlertSeries,
    rules: &'a AlertRules,
    now: &'a str,
}

impl StepAt<'_> {
    /// The step starting at point `after.start` (its segments `before` and `after`, its
    /// numbers `(before, after, rel_change)`) as an alert, when it passes the threshold;
    /// `suspected` holds the runs that would confirm a suspected step.
    fn step(
        &self,
        before: std::ops::Range<usize>,
        after: std::ops::Range<usize>,
        (level_before, level_after, rel_change): (f64, f64, f64),
        suspected: Option<u32>,
    ) -> Option<DetectedStep> {
        let (series, runs) = (self.series, self.runs);
        let idx = after.start;
        if idx == 0 || idx >= series.points.len() || !rel_change.is_finite() {
            return None;
        }
        if rel_change.abs() * 100.0 <= self.rules.threshold_for(&series.suite) {
            return None;
        }
        let commit = |i: usize| &runs[series.points[i].run].commit;
        let medians = |r: std::ops::Range<usize>| -> Vec<f64> {
            series.points[r].iter().map(|p| p.median).collect()
        };
        let interval = ratio_of_medians_ci(
            &medians(before),
            &medians(after),
            self.rules.resamples,
            self.rules.level,
            self.rules.seed,
        )
        .ok()
        .map(|r| (r.ci.0 - 1.0, r.ci.1 - 1.0));
        let kind = if series.is_worse(rel_change) {
            AlertKind::Regression
        } else {
            AlertKind::Improvement
        };
        let first_bad = commit(idx).clone();
        Some(DetectedStep {
            alert: Alert {
                id: alert_id(&self.s, kind, &first_bad),
                status: match suspected {
                    Some(_) => AlertStatus::Suspected,
                    None => kind.initial_status(),
                },
                kind,
                series: self.s.clone(),
                last_good: commit(idx - 1).clone(),
                first_bad,
                first_bad_run: runs[series.points[idx].run].id.clone(),
                before: level_before,
                after: level_after,
                rel_change,
                ci: interval,
                note: None,
                culprit: None,
                more_points: suspected,
                label: None,
                created_at: self.now.to_string(),
                updated_at: self.now.to_string(),
            },
            index: idx,
        })
    }
}

/// The stable id of a new alert: 12 hex digits of the 64-bit FNV-1a hash of the series, the
/// kind and the first bad commit (fields separated by NUL, which none of them holds).
pub fn alert_id(series: &AlertSeries, kind: AlertKind, first_bad: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for field in [
        series.project.as_str(),
        series.testbed.as_str(),
        series.branch.as_str(),
        series.key.as_str(),
        series.measure.as_str(),
        kind.as_str(),
        first_bad,
    ] {
        for b in field.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{:012x}", h >> 16)
}

/// Matches the steps detected in one series to the alerts stored for it and returns what to
/// upsert: a step within `rules.match_window` points of a stored alert of the same series and
/// kind (its place found by its `first_bad_run` among the series' points) takes that alert's
/// id, status, note, culprit and `created_at` and brings only its numbers and commits up to
/// date; any other step is a new alert. Each stored alert matches at most one step (the
/// nearest). A stored `suspected` alert matched by a confirmed step takes the step's status
/// (`active` or `improvement`: it is promoted, same id), and so does an alert detection
/// itself had dismissed as no longer detected ([`dismissed_by_detection`]) when a confirmed
/// step matches it (its note becomes [`DETECTED_AGAIN`]); every other stored status stays.
/// `more_points` is kept only while the alert is `suspected`. `existing` may hold alerts of
/// other series; they are ignored.
pub fn reconcile(
    series: &Series,
    runs: &[Run],
    existing: &[Alert],
    detected: Vec<DetectedStep>,
    rules: &AlertRules,
) -> Vec<Alert> {
    let place = |a: &Alert| {
        series
            .points
            .iter()
            .position(|p| runs[p.run].id == a.first_bad_run)
    };
    let mut taken = vec![false; existing.len()];
    let mut out = Vec::with_capacity(detected.len());
    for step in detected {
        let new = step.alert;
        let nearest = existing
            .iter()
            .enumerate()
            .filter(|(i, a)| !taken[*i] && a.series == new.series && a.kind == new.kind)
            .filter_map(|(i, a)| place(a).map(|p| (i, p.abs_diff(step.index))))
            .filter(|(_, d)| *d <= rules.match_window)
            .min_by_key(|(_, d)| *d);
        match nearest {
            Some((i, _)) => {
                taken[i] = true;
                let old = &existing[i];
                // Revived only by a confirmed step: a step back only at the tip (`suspected`)
                // leaves it dismissed until it is confirmed.
                let revived = dismissed_by_detection(old) && new.status != AlertStatus::Suspected;
                let status = match old.status {
                    AlertStatus::Suspected => new.status,
                    _ if revived => new.status,
                    kept => kept,
                };
                let new = Alert {
                    more_points: new.more_points.filter(|_| status == AlertStatus::Suspected),
                    ..new
                };
                out.push(Alert {
                    id: old.id.clone(),
                    status,
                    note: if revived {
                        Some(DETECTED_AGAIN.to_string())
                    } else {
                        old.note.clone()
                    },
                    culprit: old.culprit.clone(),
                    created_at: old.created_at.clone(),
                    updated_at: if old.detection_differs(&new) {
                        new.updated_at.clone()
                    } else {
                        old.updated_at.clone()
                    },
                    ..new
                });
            }
            None => out.push(new),
        }
    }
    out
}

/// Which stored alerts of a series re-detection may judge: those whose first bad run (or
/// commit) is among the series' points from `first` on; with `whole`, the series was read from
/// its first run, so an alert whose run is not among the points at all (excluded since, say)
/// is judged too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    pub first: usize,
    pub whole: bool,
}

/// The note of an untriaged alert detection dismissed because its step went away.
pub const NO_LONGER_DETECTED: &str = "no longer detected";

/// The note of an alert detection had dismissed ([`NO_LONGER_DETECTED`]) whose step is
/// detected again: it takes the step's status back. Runs of a history arrive one at a time
/// (re-measured commits, a range), so a step can dip under the test between two of them and
/// come back with the next; without this it stayed dismissed and the step had no alert.
pub const DETECTED_AGAIN: &str = "detected again";

/// Whether `alert` was dismissed by detection, not by a person: `dismissed` with detection's
/// note and no culprit (a person's `alert dismiss` writes their own note).
pub fn dismissed_by_detection(alert: &Alert) -> bool {
    alert.status == AlertStatus::Dismissed
        && alert.culprit.is_none()
        && alert.note.as_deref() == Some(NO_LONGER_DETECTED)
}

/// Whether nobody has touched `alert`: no culprit, and no note but detection's own.
fn untouched(alert: &Alert) -> bool {
    alert.culprit.is_none()
        && alert
            .note
            .as_deref()
            .is_none_or(|n| n == NO_LONGER_DETECTED || n == DETECTED_AGAIN)
}

/// Detection's own changes of status after re-detecting one series (`reconciled` is what
/// [`reconcile`] returned for it): a stored `suspected` alert that was matched to a confirmed
/// step is promoted to that step's status; a stored `suspected` alert matched by nothing is
/// deleted; an untriaged `active` alert (no culprit and no note but detection's own: nobody
/// has touched it) matched by nothing is `dismissed` with the note "no longer detected"; an
/// alert detection had dismissed so and that a confirmed step matches again takes the step's
/// status, with the note "detected again" (the pipeline applies that only while detection made
/// the alert's last change: a person who dismissed it since keeps it dismissed). Only alerts of this series (`named`, as [`alert_series`] names
/// it) within `reach` are judged; acknowledged, fixed, expected and improvement alerts, and
/// alerts a person dismissed, are never changed. The store applies each change only while the
/// stored status is still the one seen here.
pub fn settle(
    series: &Series,
    runs: &[Run],
    named: &AlertSeries,
    existing: &[Alert],
    reconciled: &[Alert],
    reach: Reach,
    now: &str,
) -> Vec<AlertTransition> {
    let place = |a: &Alert| {
        let by_run = series
            .points
            .iter()
            .position(|p| runs[p.run].id == a.first_bad_run);
        by_run.or_else(|| {
            series
                .points
                .iter()
                .position(|p| runs[p.run].commit == a.first_bad)
        })
    };
    let change = |a: &Alert, to: Option<AlertStatus>, note: Option<&str>| AlertTransition {
        id: a.id.clone(),
        from: a.status,
        to,
        note: note.map(str::to_string),
        updated_at: now.to_string(),
    };
    let mut out = Vec::new();
    for old in existing.iter().filter(|a| {
        a.series == *named && (a.status.is_detection_owned() || dismissed_by_detection(a))
    }) {
        match reconciled.iter().find(|a| a.id == old.id) {
            Some(found) if found.status != old.status => {
                let note = dismissed_by_detection(old).then_some(DETECTED_AGAIN);
                out.push(change(old, Some(found.status), note));
            }
            Some(_) => {}
            None => {
                let judged = match place(old) {
                    Some(i) => i >= reach.first,
                    None => reach.whole,
                };
                if !judged {
                    continue;
                }
                match old.status {
                    AlertStatus::Suspected => out.push(change(old, None, None)),
                    AlertStatus::Active if untouched(old) => out.push(change(
                        old,
                        Some(AlertStatus::Dismissed),
                        Some(NO_LONGER_DETECTED),
                    )),
                    _ => {}
                }
            }
        }
    }
    out
}

/// The one order every list of alerts shows (`pitwall alerts`, the HTML report): open alerts
/// first, then by status (`AlertStatus::ALL`), newest first within a status, then by id.
pub fn sort_open_first(alerts: &mut [Alert]) {
    alerts.sort_by(|a, b| {
        a.status
            .rank()
            .cmp(&b.status.rank())
            .then_with(|| b.created_at.cmp(&a.created_at))
            .then_with(|| a.id.cmp(&b.id))
    });
}

#[cfg(test)]
mod tests;
