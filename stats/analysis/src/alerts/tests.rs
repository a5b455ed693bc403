//! Tests of the alert rule and of matching re-detected steps to stored alerts.

use super::*;
use crate::history::{HistoryFilter, series};
use pitwall_schema::{
    AlertStatus, BenchmarkResult, Direction, Fingerprint, ResultStatus, RunStatus, Unit,
};
use pitwall_stats::changepoint::DetectConfig;
use std::collections::BTreeMap;

fn rules() -> AlertRules {
    AlertRules {
        threshold_pct: 2.0,
        suite_threshold_pct: Default::default(),
        resamples: 2000,
        level: 0.95,
        seed: 0x5eed,
        match_window: 3,
    }
}

fn run(i: usize, level: f64, direction: Direction) -> Run {
    let wobble = |k: usize| level * (1.0 + 0.002 * ((i * 7 + k * 3) % 5) as f64);
    Run {
        exclusion: None,
        contention: None,
        id: format!("run-{i:03}"),
        project: "p".into(),
        commit: format!("{i:040x}"),
        branch: Some("main".into()),
        testbed: Some("bed".into()),
        role: None,
        started_at: format!("2026-01-01T00:{:02}:{:02}Z", i / 60, i % 60),
        finished_at: String::new(),
        config_hash: String::new(),
        fingerprint: Fingerprint::default(),
        status: RunStatus::Complete,
        commit_info: None,
        error: None,
        pair: None,
        results: vec![BenchmarkResult {
            suite: "kernel".into(),
            name: "gemm".into(),
            params: BTreeMap::new(),
            measure: "time".into(),
            unit: Unit::new(Unit::NANOSECONDS),
            direction,
            status: ResultStatus::Ok,
            error: None,
            samples: (0..5).map(wobble).collect(),
            sample_meta: Vec::new(),
            replicates: Vec::new(),
            summary: None,
        }],
    }
}

/// `n` runs at 100, stepping to `100 * (1 + step)` at run `at`.
fn stepped(n: usize, at: usize, step: f64, direction: Direction) -> Vec<Run> {
    (0..n)
        .map(|i| {
            let level = if i < at { 100.0 } else { 100.0 * (1.0 + step) };
            run(i, level, direction)
        })
        .collect()
}

fn detect(runs: &[Run], now: &str) -> (Series, Vec<DetectedStep>) {
    let s = series(
        runs,
        &HistoryFilter::branch("main"),
        &DetectConfig::default(),
    )
    .remove(0);
    let d = detect_alerts(&s, runs, "p", "main", &rules(), now);
    (s, d)
}

#[test]
fn a_worsening_step_is_an_active_alert_with_its_commits_and_interval() {
    let runs = stepped(30, 18, 0.08, Direction::LowerIsBetter);
    let (_, d) = detect(&runs, "t0");
    assert_eq!(d.len(), 1, "{d:?}");
    let a = &d[0].alert;
    assert_eq!(
        (a.status, a.kind),
        (AlertStatus::Active, AlertKind::Regression)
    );
    assert_eq!(a.first_bad, runs[18].commit);
    assert_eq!(a.last_good, runs[17].commit);
    assert_eq!(a.first_bad_run, "run-018");
    assert!((a.rel_change - 0.08).abs() < 0.01, "{}", a.rel_change);
    let (lo, hi) = a.ci.unwrap();
    assert!(
        lo <= a.rel_change && a.rel_change <= hi && lo > 0.05,
        "{lo} {hi}"
    );
    assert_eq!(a.series.key, "kernel/gemm/time");
    assert_eq!(a.id.len(), 12);
    // Deterministic: the same history gives the same alert.
    assert_eq!(detect(&runs, "t0").1, d);
}

#[test]
fn improvements_are_recorded_and_small_steps_are_not_alerts() {
    let runs = stepped(30, 15, -0.10, Direction::LowerIsBetter);
    let (_, d) = detect(&runs, "t0");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].alert.status, AlertStatus::Improvement);
    // Higher is better: a drop is the regression.
    let runs = stepped(30, 15, -0.10, Direction::HigherIsBetter);
    assert_eq!(detect(&runs, "t0").1[0].alert.status, AlertStatus::Active);
    // Below the threshold: no alert even if the detector sees the step.
    let runs = stepped(30, 15, 0.015, Direction::LowerIsBetter);
    assert!(detect(&runs, "t0").1.is_empty());
    // A suite's own threshold counts, as in `compare`.
    let runs = stepped(30, 15, 0.08, Direction::LowerIsBetter);
    let s = series(
        &runs,
        &HistoryFilter::branch("main"),
        &DetectConfig::default(),
    )
    .remove(0);
    let mut strict = rules();
    strict.suite_threshold_pct.insert("kernel".into(), 10.0);
    assert!(detect_alerts(&s, &runs, "p", "main", &strict, "t").is_empty());
    strict.suite_threshold_pct.insert("kernel".into(), 1.0);
    strict.threshold_pct = 50.0;
    assert_eq!(detect_alerts(&s, &runs, "p", "main", &strict, "t").len(), 1);
}

#[test]
fn ids_depend_on_series_kind_and_commit_only() {
    let s = AlertSeries {
        project: "p".into(),
        testbed: "bed".into(),
        branch: "main".into(),
        key: "k/time".into(),
        measure: "time".into(),
    };
    let id = alert_id(&s, AlertKind::Regression, "abc");
    assert_eq!(id, alert_id(&s.clone(), AlertKind::Regression, "abc"));
    assert_ne!(id, alert_id(&s, AlertKind::Improvement, "abc"));
    assert_ne!(id, alert_id(&s, AlertKind::Regression, "abd"));
    let other = AlertSeries {
        testbed: "bed2".into(),
        ..s.clone()
    };
    assert_ne!(id, alert_id(&other, AlertKind::Regression, "abc"));
}

/// Re-detection: the stored alert (acknowledged, with a note) keeps its id, status, note and
/// creation time when the step is found again, even moved by up to 3 points; only its numbers
/// follow the new estimate. Moved by more, or of the other kind, it is another alert.
#[test]
fn re_detection_keeps_the_alert_when_the_step_moves_up_to_three_points() {
    let runs = stepped(30, 18, 0.08, Direction::LowerIsBetter);
    let (s, d) = detect(&runs, "t0");
    let mut stored = reconcile(&s, &runs, &[], d, &rules());
    assert_eq!(stored.len(), 1);
    stored[0].status = AlertStatus::Acknowledged;
    stored[0].note = Some("known: new allocator".into());
    let id = stored[0].id.clone();

    // The same history again: nothing changes, not even `updated_at`.
    let (s, d) = detect(&runs, "t1");
    assert_eq!(reconcile(&s, &runs, &stored, d, &rules()), stored);

    for moved in [1usize, 2, 3] {
        let mut d = detect(&runs, "t2").1;
        let idx = 18 + moved;
        d[0].index = idx;
        d[0].alert.first_bad = runs[idx].commit.clone();
        d[0].alert.first_bad_run = runs[idx].id.clone();
        d[0].alert.id = alert_id(&d[0].alert.series, AlertKind::Regression, &runs[idx].commit);
        d[0].alert.rel_change = 0.079;
        let up = reconcile(&s, &runs, &stored, d, &rules());
        assert_eq!(up.len(), 1);
        let a = &up[0];
        assert_eq!(a.id, id, "moved by {moved}");
        assert_eq!(a.status, AlertStatus::Acknowledged);
        assert_eq!(a.note.as_deref(), Some("known: new allocator"));
        assert_eq!((a.created_at.as_str(), a.updated_at.as_str()), ("t0", "t2"));
        assert_eq!(
            (a.first_bad.as_str(), a.rel_change),
            (runs[idx].commit.as_str(), 0.079)
        );
    }

    let mut far = detect(&runs, "t3").1;
    far[0].index = 22;
    far[0].alert.first_bad_run = runs[22].id.clone();
    far[0].alert.id = alert_id(
        &far[0].alert.series,
        AlertKind::Regression,
        &runs[22].commit,
    );
    let up = reconcile(&s, &runs, &stored, far, &rules());
    assert_ne!(up[0].id, id, "4 points away is another alert");
    assert_eq!(up[0].status, AlertStatus::Active);

    let mut other_kind = detect(&runs, "t3").1;
    other_kind[0].alert.kind = AlertKind::Improvement;
    let up = reconcile(&s, &runs, &stored, other_kind, &rules());
    assert_eq!(
        up[0].status,
        AlertStatus::Active,
        "not matched across kinds"
    );
}

#[test]
fn a_stored_alert_matches_at_most_one_step() {
    let runs = stepped(30, 18, 0.08, Direction::LowerIsBetter);
    let (s, d) = detect(&runs, "t0");
    let stored = reconcile(&s, &runs, &[], d.clone(), &rules());
    let mut twin = d[0].clone();
    twin.index = 20;
    twin.alert.id = "other".into();
    let up = reconcile(&s, &runs, &stored, vec![d[0].clone(), twin], &rules());
    assert_eq!(up.len(), 2);
    assert_eq!(up[0].id, stored[0].id);
    assert_eq!(up[1].id, "other");
}

fn whole() -> Reach {
    Reach {
        first: 0,
        whole: true,
    }
}

fn named(s: &Series) -> AlertSeries {
    alert_series(s, "p", "main")
}

/// Five runs before a +13% step and two after: too few after it to confirm, so the step is a
/// `suspected` alert that says how many more runs would settle it.
#[test]
fn a_step_at_the_tip_is_a_suspected_alert_with_the_runs_it_needs() {
    let runs = stepped(7, 5, 0.13, Direction::LowerIsBetter);
    let (s, d) = detect(&runs, "t0");
    assert!(s.changes.is_empty(), "{:?}", s.changes);
    assert_eq!(d.len(), 1, "{d:?}");
    let a = &d[0].alert;
    assert_eq!(
        (a.status, a.kind),
        (AlertStatus::Suspected, AlertKind::Regression)
    );
    assert_eq!(a.more_points, Some(3));
    assert_eq!(a.first_bad, runs[5].commit);
    assert_eq!(
        a.id,
        alert_id(&a.series, AlertKind::Regression, &runs[5].commit)
    );
    // Below the threshold it is no alert, as a change point would not be.
    let mut strict = rules();
    strict.threshold_pct = 20.0;
    assert!(detect_alerts(&s, &runs, "p", "main", &strict, "t").is_empty());
}

/// Three more runs confirm the step: the suspected alert keeps its id and creation time and
/// is promoted to `active`; its `more_points` is gone.
#[test]
fn a_confirmed_step_promotes_the_suspected_alert_under_the_same_id() {
    let runs = stepped(7, 5, 0.13, Direction::LowerIsBetter);
    let (s, d) = detect(&runs, "t0");
    let stored = reconcile(&s, &runs, &[], d, &rules());
    assert!(settle(&s, &runs, &named(&s), &[], &stored, whole(), "t0").is_empty());

    let runs = stepped(10, 5, 0.13, Direction::LowerIsBetter);
    let (s, d) = detect(&runs, "t1");
    assert_eq!(s.changes.len(), 1, "{:?}", s.changes);
    let up = reconcile(&s, &runs, &stored, d, &rules());
    assert_eq!(up.len(), 1);
    let a = &up[0];
    assert_eq!(a.id, stored[0].id);
    assert_eq!((a.status, a.more_points), (AlertStatus::Active, None));
    assert_eq!(a.created_at, "t0");
    let t = settle(&s, &runs, &named(&s), &stored, &up, whole(), "t1");
    assert_eq!(t.len(), 1);
    assert_eq!(
        (t[0].id.as_str(), t[0].from, t[0].to),
        (
            a.id.as_str(),
            AlertStatus::Suspected,
            Some(AlertStatus::Active)
        )
    );
}

/// A suspected alert whose step is neither suspected nor confirmed any more is deleted; an
/// untriaged active alert whose step is gone is dismissed as "no longer detected"; triaged,
/// bisected and improvement alerts, and alerts outside what was read, stay.
#[test]
fn steps_that_went_away_delete_suspected_and_dismiss_untriaged_alerts() {
    let runs = stepped(7, 5, 0.13, Direction::LowerIsBetter);
    let (s, d) = detect(&runs, "t0");
    let suspected = reconcile(&s, &runs, &[], d, &rules());
    let flat = stepped(10, 10, 0.0, Direction::LowerIsBetter);
    let (fs, fd) = detect(&flat, "t1");
    assert!(fd.is_empty(), "{fd:?}");
    let t = settle(&fs, &flat, &named(&fs), &suspected, &[], whole(), "t1");
    assert_eq!(t.len(), 1);
    assert_eq!((t[0].from, t[0].to), (AlertStatus::Suspected, None));

    let runs = stepped(30, 18, 0.08, Direction::LowerIsBetter);
    let (s, d) = detect(&runs, "t0");
    let active = reconcile(&s, &runs, &[], d, &rules());
    assert_eq!(active[0].status, AlertStatus::Active);
    let flat = stepped(30, 30, 0.0, Direction::LowerIsBetter);
    let (fs, _) = detect(&flat, "t1");
    let judge =
        |stored: &[Alert], reach: Reach| settle(&fs, &flat, &named(&fs), stored, &[], reach, "t2");
    let t = judge(&active, whole());
    assert_eq!(t.len(), 1);
    assert_eq!(
        (
            t[0].from,
            t[0].to,
            t[0].note.as_deref(),
            t[0].updated_at.as_str()
        ),
        (
            AlertStatus::Active,
            Some(AlertStatus::Dismissed),
            Some(NO_LONGER_DETECTED),
            "t2"
        )
    );
    // Still detected: nothing to change.
    let (s2, d2) = detect(&runs, "t1");
    let again = reconcile(&s2, &runs, &active, d2, &rules());
    assert!(settle(&s2, &runs, &named(&s2), &active, &again, whole(), "t1").is_empty());
    // Triaged or touched by a person: never reset.
    for change in [
        |a: &mut Alert| a.status = AlertStatus::Acknowledged,
        |a: &mut Alert| a.status = AlertStatus::Improvement,
        |a: &mut Alert| a.status = AlertStatus::Fixed,
        |a: &mut Alert| a.culprit = Some("c".repeat(40)),
    ] {
        let mut touched = active.clone();
        change(&mut touched[0]);
        assert!(judge(&touched, whole()).is_empty(), "{touched:?}");
    }
    // Before the part of the history that was read: not judged.
    let late = Reach {
        first: 19,
        whole: false,
    };
    assert!(judge(&active, late).is_empty());
    // Its run gone from the history (excluded): judged only when the whole history was read.
    let mut gone = active.clone();
    gone[0].first_bad_run = "run-gone".into();
    gone[0].first_bad = "gone".into();
    assert_eq!(judge(&gone, whole()).len(), 1);
    let window = Reach {
        first: 0,
        whole: false,
    };
    assert!(judge(&gone, window).is_empty());
    // Another series' alert is never judged.
    let mut other = active.clone();
    other[0].series.testbed = "other".into();
    assert!(judge(&other, whole()).is_empty());
}

/// A step detection dismissed as no longer detected (runs arrive one at a time, and it dipped
/// under the test) that is detected again takes its status back, same id, noted "detected
/// again"; a person's dismissal stays, and the revived alert can be dismissed again by
/// detection.
#[test]
fn a_step_detected_again_revives_the_alert_detection_dismissed() {
    let runs = stepped(30, 18, 0.08, Direction::LowerIsBetter);
    let (s, d) = detect(&runs, "t0");
    let mut stored = reconcile(&s, &runs, &[], d, &rules());
    assert_eq!(stored[0].status, AlertStatus::Active);
    stored[0].status = AlertStatus::Dismissed;
    stored[0].note = Some(NO_LONGER_DETECTED.into());
    assert!(dismissed_by_detection(&stored[0]));

    let (s2, d2) = detect(&runs, "t1");
    let again = reconcile(&s2, &runs, &stored, d2, &rules());
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].id, stored[0].id);
    assert_eq!(again[0].status, AlertStatus::Active);
    assert_eq!(again[0].note.as_deref(), Some(DETECTED_AGAIN));
    let t = settle(&s2, &runs, &named(&s2), &stored, &again, whole(), "t2");
    assert_eq!(t.len(), 1);
    assert_eq!(
        (t[0].from, t[0].to, t[0].note.as_deref()),
        (
            AlertStatus::Dismissed,
            Some(AlertStatus::Active),
            Some(DETECTED_AGAIN)
        )
    );

    // Back only at the tip (suspected): it stays dismissed until the step is confirmed.
    let mut tip = detect(&runs, "t1").1;
    tip[0].alert.status = AlertStatus::Suspected;
    let waiting = reconcile(&s2, &runs, &stored, tip, &rules());
    assert_eq!(waiting[0].status, AlertStatus::Dismissed);
    assert_eq!(waiting[0].note.as_deref(), Some(NO_LONGER_DETECTED));
    assert!(settle(&s2, &runs, &named(&s2), &stored, &waiting, whole(), "t2").is_empty());

    // A person's dismissal (their own note) is theirs: the step does not revive it.
    let mut by_person = stored.clone();
    by_person[0].note = Some("known noise".into());
    let kept = reconcile(&s2, &runs, &by_person, detect(&runs, "t1").1, &rules());
    assert_eq!(kept[0].status, AlertStatus::Dismissed);
    assert!(settle(&s2, &runs, &named(&s2), &by_person, &kept, whole(), "t2").is_empty());

    // Revived and gone again: detection dismisses it again.
    let mut revived = again.clone();
    revived[0].status = AlertStatus::Active;
    let flat = stepped(30, 30, 0.0, Direction::LowerIsBetter);
    let (fs, _) = detect(&flat, "t3");
    let t = settle(&fs, &flat, &named(&fs), &revived, &[], whole(), "t3");
    assert_eq!(
        (t[0].from, t[0].to),
        (AlertStatus::Active, Some(AlertStatus::Dismissed))
    );
}
