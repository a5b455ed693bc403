//! The write-up's ledger: every change point of the period with the alert rule's interval,
//! matched to the stored alert of its step (status, note, culprit), and the stored alerts of
//! the period no change point matched, grouped by commit range so a commit that moved many
//! benchmarks is one entry.

use std::collections::BTreeMap;

use pitwall_schema::{Alert, AlertKind, AlertStatus, Direction};

use super::{CommitMeta, WriteupInput};
use crate::alerts::{AlertRules, detect_alerts};
use crate::order::rfc3339_seconds;

/// Where a step stands: only a confirmed step makes the write-up's headline and ledger; the
/// others are listed apart under their own heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StepStanding {
    /// Runs enough either side, from uncontended runs.
    #[default]
    Confirmed,
    /// A candidate step at the tip with too few runs after it (an alert `suspected`).
    Suspected,
    /// Found in runs taken while other work shared the machine (`contended` runs).
    Contended,
}

impl StepStanding {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStanding::Confirmed => "confirmed",
            StepStanding::Suspected => "suspected",
            StepStanding::Contended => "contended",
        }
    }
}

/// One series' step in the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    pub key: String,
    pub testbed: String,
    pub kind: AlertKind,
    /// A time's step is said "faster"/"slower", a throughput's "higher"/"lower".
    pub direction: Direction,
    /// Whether it counts in the headline and the ledger, or is listed apart.
    pub standing: StepStanding,
    pub before: f64,
    pub after: f64,
    /// after/before − 1, the relative change of the value, with the alert rule's bootstrap
    /// interval.
    pub rel_change: f64,
    pub ci: Option<(f64, f64)>,
    /// Whether the step is beyond its suite's threshold (what makes an alert).
    pub beyond_threshold: bool,
    /// The stored alert of this step.
    pub alert: Option<LedgerAlert>,
}

/// What the ledger shows of a stored alert.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerAlert {
    pub id: String,
    pub status: AlertStatus,
    pub note: Option<String>,
    pub culprit: Option<String>,
}

/// The steps one commit range made, with what is known of its commits.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerGroup {
    pub last_good: String,
    pub first_bad: String,
    pub commit: Option<CommitMeta>,
    /// When the first bad commit was made (RFC 3339): its date when known, else when its
    /// first run started; empty when no run of it is at hand.
    pub date: String,
    /// The bisected culprit, when an alert of the group has one.
    pub culprit: Option<CommitMeta>,
    pub entries: Vec<LedgerEntry>,
}

/// Every change point whose first run is in the period (with the alert rule's interval), and
/// every stored alert of the period no change point matched, grouped by commit range.
pub(super) fn ledger(
    input: &WriteupInput<'_>,
    in_period: &dyn Fn(usize) -> bool,
    times: &[Option<f64>],
) -> Vec<LedgerGroup> {
    let all = AlertRules {
        threshold_pct: -1.0,
        suite_threshold_pct: BTreeMap::new(),
        ..input.rules.clone()
    };
    let mut used = vec![false; input.alerts.len()];
    let mut entries: Vec<(String, String, LedgerEntry)> = Vec::new();
    for s in input.series {
        for step in detect_alerts(s, input.runs, "", &input.filter.branch, &all, "") {
            if !in_period(s.points[step.index].run) {
                continue;
            }
            let a = &step.alert;
            let place = |x: &Alert| {
                s.points
                    .iter()
                    .position(|p| input.runs[p.run].id == x.first_bad_run)
            };
            let stored = input
                .alerts
                .iter()
                .enumerate()
                .filter(|(i, x)| {
                    !used[*i]
                        && x.series.key == s.key
                        && x.series.testbed == s.testbed
                        && x.kind == a.kind
                })
                .filter_map(|(i, x)| place(x).map(|p| (i, p.abs_diff(step.index))))
                .filter(|(_, d)| *d <= input.rules.match_window)
                .min_by_key(|(_, d)| *d)
                .map(|(i, _)| i);
            if let Some(i) = stored {
                used[i] = true;
            }
            let beyond = a.rel_change.abs() * 100.0 > input.rules.threshold_for(&s.suite);
            entries.push((
                a.last_good.clone(),
                a.first_bad.clone(),
                entry(a, s.direction, stored.map(|i| &input.alerts[i]), beyond),
            ));
        }
    }
    entries.extend(super::contended::contended_steps(
        input,
        &all,
        in_period,
        &|a, s| {
            let beyond = a.rel_change.abs() * 100.0 > input.rules.threshold_for(&s.suite);
            entry(a, s.direction, None, beyond)
        },
    ));
    let run_time_of = |id: &str| {
        input
            .runs
            .iter()
            .position(|r| r.id == id)
            .and_then(|i| times[i])
    };
    for (i, a) in input.alerts.iter().enumerate() {
        let t = input
            .commits
            .get(&a.first_bad)
            .and_then(|c| rfc3339_seconds(&c.date))
            .or_else(|| run_time_of(&a.first_bad_run));
        if !used[i] && t.is_some_and(|t| input.period.contains(t)) {
            let direction = input
                .series
                .iter()
                .find(|s| s.key == a.series.key && s.testbed == a.series.testbed)
                .map_or_else(|| direction_of(a), |s| s.direction);
            entries.push((
                a.last_good.clone(),
                a.first_bad.clone(),
                entry(a, direction, Some(a), true),
            ));
        }
    }
    group_entries(input, entries)
}

/// The entries grouped by commit range (last good, first bad), each group's entries largest
/// change first, the groups oldest first (by the first bad commit's date, then its sha).
fn group_entries(
    input: &WriteupInput<'_>,
    entries: Vec<(String, String, LedgerEntry)>,
) -> Vec<LedgerGroup> {
    let mut groups: BTreeMap<(String, String), LedgerGroup> = BTreeMap::new();
    for (last_good, first_bad, e) in entries {
        let g = groups
            .entry((last_good.clone(), first_bad.clone()))
            .or_insert_with(|| LedgerGroup {
                commit: input.commits.get(&first_bad).cloned(),
                date: date_of(input, &first_bad),
                last_good,
                first_bad,
                culprit: None,
                entries: Vec::new(),
            });
        if let Some(c) = e.alert.as_ref().and_then(|a| a.culprit.as_ref()) {
            g.culprit = Some(input.commits.get(c).cloned().unwrap_or(CommitMeta {
                sha: c.clone(),
                author: String::new(),
                date: String::new(),
                subject: String::new(),
                pr: None,
            }));
        }
        g.entries.push(e);
    }
    let mut out: Vec<LedgerGroup> = groups.into_values().collect();
    for g in &mut out {
        g.entries
            .sort_by(|a, b| b.rel_change.abs().total_cmp(&a.rel_change.abs()));
    }
    let when = |g: &LedgerGroup| rfc3339_seconds(&g.date).unwrap_or(f64::INFINITY);
    out.sort_by(|a, b| {
        when(a)
            .total_cmp(&when(b))
            .then_with(|| a.first_bad.cmp(&b.first_bad))
    });
    out
}

/// When `commit` was made: `commits`' date, else its run's `commit_info` date or start.
fn date_of(input: &WriteupInput<'_>, commit: &str) -> String {
    if let Some(c) = input.commits.get(commit) {
        return c.date.clone();
    }
    input
        .runs
        .iter()
        .find(|r| r.commit == commit)
        .map(|r| {
            r.commit_info
                .as_ref()
                .map_or_else(|| r.started_at.clone(), |c| c.date.clone())
        })
        .unwrap_or_default()
}

/// The direction an alert's kind and sign imply: a time regresses up, a throughput down.
fn direction_of(a: &Alert) -> Direction {
    match (a.kind, a.rel_change > 0.0) {
        (AlertKind::Regression, true) | (AlertKind::Improvement, false) => Direction::LowerIsBetter,
        _ => Direction::HigherIsBetter,
    }
}

fn entry(
    a: &Alert,
    direction: Direction,
    stored: Option<&Alert>,
    beyond_threshold: bool,
) -> LedgerEntry {
    LedgerEntry {
        key: a.series.key.clone(),
        testbed: a.series.testbed.clone(),
        kind: a.kind,
        direction,
        // A suspected alert's step has too few runs after it to be a change point yet.
        standing: match stored.map(|s| s.status) {
            Some(pitwall_schema::AlertStatus::Suspected) => StepStanding::Suspected,
            _ => StepStanding::Confirmed,
        },
        before: a.before,
        after: a.after,
        rel_change: a.rel_change,
        ci: a.ci,
        beyond_threshold,
        alert: stored.map(|s| LedgerAlert {
            id: s.id.clone(),
            status: s.status,
            note: s.note.clone(),
            culprit: s.culprit.clone(),
        }),
    }
}

impl LedgerGroup {
    /// The group with only its entries of `keep` standing, `None` when none is left.
    pub fn only(&self, keep: impl Fn(StepStanding) -> bool) -> Option<LedgerGroup> {
        let entries: Vec<LedgerEntry> = self
            .entries
            .iter()
            .filter(|e| keep(e.standing))
            .cloned()
            .collect();
        (!entries.is_empty()).then(|| LedgerGroup {
            entries,
            ..self.clone()
        })
    }
}

impl super::Writeup {
    /// The ledger of confirmed steps: what the headline, the ledger and the timeline show.
    pub fn confirmed(&self) -> Vec<LedgerGroup> {
        self.ledger
            .iter()
            .filter_map(|g| g.only(|s| s == StepStanding::Confirmed))
            .collect()
    }

    /// The steps listed apart: suspected, or from contended runs.
    pub fn listed_apart(&self) -> Vec<LedgerGroup> {
        self.ledger
            .iter()
            .filter_map(|g| g.only(|s| s != StepStanding::Confirmed))
            .collect()
    }
}
