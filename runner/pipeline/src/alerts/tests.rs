//! Tests of alert re-detection on a real SQLite store: one alert per step whatever the number
//! of refreshes, triage kept, pull-request runs and other testbeds ignored.

use std::collections::BTreeMap;

use pitwall_schema::{
    AlertStatus, BenchmarkResult, Direction, Fingerprint, ResultStatus, Run, RunRole, RunStatus,
    Unit,
};

use super::*;
use pitwall_store::SqliteStore;

fn settings() -> AlertSettings {
    AlertSettings {
        rules: rules(&Config::builtin_default("p")),
        history_branch: "main".into(),
        code_paths: CodePaths::default(),
        repo: None,
    }
}

fn run(i: usize, testbed: &str, level: f64) -> Run {
    let wobble = |k: usize| level * (1.0 + 0.002 * ((i * 7 + k * 3) % 5) as f64);
    Run {
        exclusion: None,
        contention: None,
        id: format!("{testbed}-{i:03}"),
        project: "p".into(),
        commit: format!("{i:040x}"),
        branch: Some("main".into()),
        testbed: Some(testbed.into()),
        role: Some(RunRole::History),
        started_at: format!("2026-01-01T00:{:02}:{:02}Z", i / 60, i % 60),
        finished_at: format!("2026-01-01T01:{:02}:{:02}Z", i / 60, i % 60),
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
            direction: Direction::LowerIsBetter,
            status: ResultStatus::Ok,
            error: None,
            samples: (0..5).map(wobble).collect(),
            sample_meta: Vec::new(),
            replicates: Vec::new(),
            summary: None,
        }],
    }
}

/// Stores `run` as a command would and refreshes the alerts it touched.
fn store_one(store: &mut dyn Store, run: Run, now: &str) -> AlertRefresh {
    store.insert_run(&run).unwrap();
    refresh(store, &[run], &settings(), now).unwrap()
}

/// A SQLite store in `dir` holding 30 history runs of `gemm` on `h200-a`, 8% slower from run 18
/// on, each stored with its alert refresh: one active alert.
fn stepped_store(dir: &std::path::Path) -> SqliteStore {
    let mut store = SqliteStore::open(&dir.join("s.db")).unwrap();
    for i in 0..30 {
        store_one(
            &mut store,
            run(i, "h200-a", if i < 18 { 100.0 } else { 108.0 }),
            "t",
        );
    }
    store
}

#[test]
fn each_stored_history_run_refreshes_its_series_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
    let mut new = Vec::new();
    for i in 0..30 {
        let level = if i < 18 { 100.0 } else { 108.0 };
        new.extend(store_one(&mut store, run(i, "h200-a", level), &format!("t{i:02}")).new);
        // Another testbed, flat at another level.
        store_one(&mut store, run(i, "cpu-b", 300.0), "t");
        // A pull request's slower head never makes an alert.
        let mut head = run(100 + i, "cpu-b", 400.0);
        head.role = Some(RunRole::PrHead);
        store_one(&mut store, head, "t");
    }
    let alerts = store.list_alerts().unwrap();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(new.len(), 1);
    let a = &alerts[0];
    assert_eq!(
        (a.status, a.series.testbed.as_str()),
        (AlertStatus::Active, "h200-a")
    );
    assert_eq!(a.first_bad, format!("{:040x}", 18));
    assert_eq!(a.last_good, format!("{:040x}", 17));

    let acked = triage(
        &mut store,
        &TriageRequest {
            id: a.id.clone(),
            status: AlertStatus::Acknowledged,
            note: Some("allocator change".into()),
            by: Some("local:tester".into()),
        },
        "later",
    )
    .unwrap();
    assert_eq!(acked.status, AlertStatus::Acknowledged);
    for i in 30..40 {
        store_one(&mut store, run(i, "h200-a", 108.0), "much later");
    }
    let alerts = store.list_alerts().unwrap();
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0].id, a.id);
    assert_eq!(alerts[0].status, AlertStatus::Acknowledged);
    assert_eq!(alerts[0].note.as_deref(), Some("allocator change"));

    let listed = list(
        &store,
        &AlertQuery {
            status: Some(AlertStatus::Active),
            ..AlertQuery::default()
        },
    )
    .unwrap();
    assert!(listed.is_empty());
    let err = triage(
        &mut store,
        &TriageRequest {
            id: "nope".into(),
            status: AlertStatus::Fixed,
            note: None,
            by: Some("local:tester".into()),
        },
        "t",
    )
    .unwrap_err();
    assert!(err.to_string().contains("no alert `nope`"), "{err}");
    let err = triage(
        &mut store,
        &TriageRequest {
            id: a.id.clone(),
            status: AlertStatus::Active,
            note: None,
            by: Some("local:tester".into()),
        },
        "t",
    )
    .unwrap_err();
    assert!(matches!(err, TriageError::NotTriage(AlertStatus::Active)));
}

#[test]
fn open_alerts_sort_first() {
    let a = |id: &str, status: AlertStatus, created: &str| {
        let series = pitwall_schema::AlertSeries {
            project: "p".into(),
            testbed: "t".into(),
            branch: "main".into(),
            key: "k".into(),
            measure: "time".into(),
        };
        Alert {
            id: id.into(),
            status,
            kind: pitwall_schema::AlertKind::Regression,
            series,
            last_good: "a".into(),
            first_bad: "b".into(),
            first_bad_run: "r".into(),
            before: 1.0,
            after: 1.1,
            rel_change: 0.1,
            ci: None,
            note: None,
            culprit: None,
            more_points: None,
            label: None,
            created_at: created.into(),
            updated_at: created.into(),
        }
    };
    let mut v = vec![
        a("1", AlertStatus::Fixed, "t3"),
        a("2", AlertStatus::Active, "t1"),
        a("3", AlertStatus::Active, "t2"),
        a("4", AlertStatus::Improvement, "t4"),
    ];
    sort_open_first(&mut v);
    let ids: Vec<&str> = v.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(ids, ["3", "2", "4", "1"]);
}

#[test]
fn a_bisect_request_follows_the_alert_on_its_testbed_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = stepped_store(dir.path());
    let a = store.list_alerts().unwrap().remove(0);
    assert_eq!(find(&store, &a.id).unwrap(), a);
    assert!(matches!(find(&store, "x"), Err(StoreError::NoAlert { .. })));
    let req = bisect_request(&a, "h200-a", 3, 15, false).unwrap();
    assert_eq!(
        (req.good.as_str(), req.bad.as_str()),
        (a.last_good.as_str(), a.first_bad.as_str())
    );
    assert_eq!(req.select.suites, ["kernel"]);
    assert_eq!(req.select.filter.as_deref(), Some("gemm"));
    let err = bisect_request(&a, "cpu-b", 3, 15, false).unwrap_err();
    assert!(err.to_string().contains("testbed `h200-a`"), "{err}");
    let with = record_culprit(&mut store, &a.id, &a.first_bad, "t2", "local:tester").unwrap();
    assert_eq!(with.culprit.as_deref(), Some(a.first_bad.as_str()));
    assert_eq!(with.status, AlertStatus::Active);
}

/// A history longer than the refresh reads (`ALERT_WINDOW_RUNS`): a step alerted when it was
/// new stays one alert, with its triage, while hundreds of runs follow, and a later step far
/// from the first is found as a second alert.
#[test]
fn a_long_history_keeps_old_alerts_and_finds_new_steps() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
    let total = defaults::ALERT_WINDOW_RUNS + 140;
    let level = |i: usize| match i {
        _ if i < 60 => 100.0,
        _ if i < total - 30 => 110.0,
        _ => 125.0,
    };
    // Inserted without refreshing, then refreshed as a stored run would be at a few points.
    let mut alert_ids = Vec::new();
    for i in 0..total {
        let r = run(i, "h200-a", level(i));
        store.insert_run(&r).unwrap();
        if i == 80 || i == total - 1 || i == total - 20 {
            let out = refresh(&mut store, &[r], &settings(), &format!("t{i}")).unwrap();
            alert_ids.extend(out.new.into_iter().map(|a| a.id));
            if i == 80 {
                let ack = AlertUpdate {
                    status: Some(AlertStatus::Acknowledged),
                    note: Some("known".into()),
                    culprit: None,
                    updated_at: "t80".into(),
                    by: None,
                };
                store.update_alert(&alert_ids[0], &ack).unwrap();
            }
        }
    }
    let alerts = store.list_alerts().unwrap();
    assert_eq!(alerts.len(), 2, "{alerts:#?}");
    let first = alerts.iter().find(|a| a.id == alert_ids[0]).unwrap();
    assert_eq!(first.status, AlertStatus::Acknowledged);
    assert_eq!(first.first_bad, format!("{:040x}", 60));
    let second = alerts.iter().find(|a| a.id != alert_ids[0]).unwrap();
    assert_eq!(second.first_bad, format!("{:040x}", total - 30));
    assert_eq!(second.status, AlertStatus::Active);
}

/// Five runs before a +13% step and two after: one `suspected` alert, stored but not new;
/// three more runs promote it to `active` under the same id, and only then is it new.
#[test]
fn a_suspected_alert_is_stored_quietly_and_promoted_when_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
    let level = |i: usize| if i < 5 { 100.0 } else { 113.0 };
    let mut new = Vec::new();
    let mut suspected = Vec::new();
    for i in 0..7 {
        let out = store_one(&mut store, run(i, "h200-a", level(i)), "t0");
        new.extend(out.new);
        suspected.extend(out.suspected);
    }
    assert!(new.is_empty(), "{new:?}");
    let stored = store.list_alerts().unwrap();
    assert_eq!(stored.len(), 1, "{stored:#?}");
    let sus = &stored[0];
    assert_eq!(
        (sus.status, sus.more_points),
        (AlertStatus::Suspected, Some(3))
    );
    assert_eq!(sus.first_bad, format!("{:040x}", 5));
    assert!(suspected.iter().any(|a| a.id == sus.id));
    for i in 7..10 {
        new.extend(store_one(&mut store, run(i, "h200-a", level(i)), "t1").new);
    }
    let after = store.list_alerts().unwrap();
    assert_eq!(after.len(), 1, "{after:#?}");
    assert_eq!(after[0].id, sus.id);
    assert_eq!(
        (after[0].status, after[0].more_points),
        (AlertStatus::Active, None)
    );
    assert_eq!(new.len(), 1);
    assert_eq!(
        (new[0].id.as_str(), new[0].status),
        (sus.id.as_str(), AlertStatus::Active)
    );
}

/// The runs behind a step taken out of the history: on the next re-detection the untriaged
/// alert is dismissed as "no longer detected"; an acknowledged one stays as it is.
#[test]
fn an_untriaged_alert_whose_step_went_away_is_dismissed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
    for bed in ["h200-a", "cpu-b"] {
        for i in 0..30 {
            store_one(
                &mut store,
                run(i, bed, if i < 18 { 100.0 } else { 108.0 }),
                "t0",
            );
        }
    }
    let alerts = store.list_alerts().unwrap();
    assert_eq!(alerts.len(), 2, "{alerts:#?}");
    let acked = alerts.iter().find(|a| a.series.testbed == "cpu-b").unwrap();
    let ack = AlertUpdate {
        status: Some(AlertStatus::Acknowledged),
        note: Some("known".into()),
        culprit: None,
        updated_at: "t1".into(),
        by: None,
    };
    store.update_alert(&acked.id, &ack).unwrap();
    for bed in ["h200-a", "cpu-b"] {
        for i in 18..30 {
            assert!(store.delete_run(&format!("{bed}-{i:03}")).unwrap());
        }
        let out = store_one(&mut store, run(30, bed, 100.0), "t2");
        assert!(out.new.is_empty(), "{out:?}");
    }
    let alerts = store.list_alerts().unwrap();
    let gone = alerts
        .iter()
        .find(|a| a.series.testbed == "h200-a")
        .unwrap();
    assert_eq!(
        (gone.status, gone.note.as_deref(), gone.updated_at.as_str()),
        (AlertStatus::Dismissed, Some("no longer detected"), "t2")
    );
    let kept = alerts.iter().find(|a| a.series.testbed == "cpu-b").unwrap();
    assert_eq!(
        (kept.status, kept.note.as_deref()),
        (AlertStatus::Acknowledged, Some("known"))
    );
}

#[test]
fn the_local_actor_names_the_user_or_says_unknown() {
    assert_eq!(local_actor(Some("bob")), "local:bob");
    assert_eq!(local_actor(Some("")), "local:unknown");
    assert_eq!(local_actor(None), "local:unknown");
}

/// Each refresh keeps the touched series' summaries for the server's index: the latest
/// median, the newest points, and the last change, kept when a later window no longer holds
/// it; the server's start makes them for a store that has none.
#[test]
fn a_refresh_keeps_the_series_summaries_current() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
    for i in 0..30 {
        let level = if i < 18 { 100.0 } else { 108.0 };
        store_one(&mut store, run(i, "h200-a", level), "t");
    }
    let summaries = crate::summaries::list(&store, "p").unwrap();
    assert_eq!(summaries.len(), 1);
    let s = &summaries[0];
    assert_eq!((s.testbed.as_str(), s.branch.as_str()), ("h200-a", "main"));
    assert!((s.latest_median - 108.0).abs() < 1.0, "{s:?}");
    assert_eq!(s.recent_medians.len(), 30);
    let c = s.last_change.as_ref().unwrap();
    assert!(c.worse && (c.rel_change - 0.08).abs() < 0.01, "{c:?}");
    assert_eq!(c.recent_after, Some(12));
    store_one(&mut store, run(30, "h200-a", 109.0), "t2");
    let s = &crate::summaries::list(&store, "p").unwrap()[0];
    assert!(
        (s.latest_median - 109.0).abs() < 1.0,
        "the newest run is the latest"
    );
    assert_eq!(s.updated_at, "t2");

    // A store with runs and no summaries gets them at the server's start.
    let dir2 = tempfile::tempdir().unwrap();
    let mut bare = SqliteStore::open(&dir2.path().join("s.db")).unwrap();
    for i in 0..10 {
        bare.insert_run(&run(i, "cpu-b", 300.0)).unwrap();
    }
    assert!(crate::summaries::list(&bare, "p").unwrap().is_empty());
    assert_eq!(
        crate::summaries::backfill(&mut bare, "main", "t").unwrap(),
        1
    );
    let s = &crate::summaries::list(&bare, "p").unwrap()[0];
    assert_eq!((s.testbed.as_str(), s.recent_medians.len()), ("cpu-b", 10));
}

/// An alert detection dismissed ("no longer detected") is `active` again when the next refresh
/// confirms its step, but only while detection made its last change: once a person dismissed
/// it themselves, even without a note (so the stored note is still detection's), it stays so.
#[test]
fn detection_revives_its_own_dismissal_and_never_a_persons() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = stepped_store(dir.path());
    let a = store.list_alerts().unwrap().remove(0);
    assert_eq!(a.status, AlertStatus::Active);
    let dismiss_as_detection = |store: &mut SqliteStore, at: &str| {
        let t = AlertTransition {
            id: a.id.clone(),
            from: AlertStatus::Active,
            to: Some(AlertStatus::Dismissed),
            note: Some(pitwall_analysis::alerts::NO_LONGER_DETECTED.into()),
            updated_at: at.into(),
        };
        assert_eq!(store.transition_alerts(&[t]).unwrap(), 1);
    };
    dismiss_as_detection(&mut store, "t1");
    // The step is still there: the next stored run revives the alert, same id.
    let out = store_one(&mut store, run(30, "h200-a", 108.0), "t2");
    assert!(out.new.is_empty(), "not announced again: {out:?}");
    let back = find(&store, &a.id).unwrap();
    assert_eq!(back.status, AlertStatus::Active);
    assert_eq!(
        back.note.as_deref(),
        Some(pitwall_analysis::alerts::DETECTED_AGAIN)
    );

    // Dismissed by detection again, then by a person without a note.
    dismiss_as_detection(&mut store, "t3");
    let req = TriageRequest {
        id: a.id.clone(),
        status: AlertStatus::Dismissed,
        note: None,
        by: Some("local:ada".into()),
    };
    let person = triage(&mut store, &req, "t4").unwrap();
    assert_eq!(
        person.note.as_deref(),
        Some(pitwall_analysis::alerts::NO_LONGER_DETECTED)
    );
    store_one(&mut store, run(31, "h200-a", 108.0), "t5");
    assert_eq!(
        find(&store, &a.id).unwrap().status,
        AlertStatus::Dismissed,
        "a person's dismissal is theirs"
    );
}
