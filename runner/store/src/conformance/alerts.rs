//! The alert behaviour every store must have, run against each backend by
//! `store_conformance_tests!`: exact round trips, upserts that keep what people decided, and
//! updates of unknown ids refused by name.

use pitwall_schema::{
    Alert, AlertChange, AlertKind, AlertLabel, AlertSeries, AlertStatus, AlertTransition,
    AlertUpdate, DETECTION,
};

use crate::{Store, StoreError};

pub fn alert(id: &str, created_at: &str) -> Alert {
    Alert {
        id: id.into(),
        status: AlertStatus::Active,
        kind: AlertKind::Regression,
        series: AlertSeries {
            project: "toy".into(),
            testbed: "h200-a".into(),
            branch: "main".into(),
            key: "kernel/gemm[n=512]/time".into(),
            measure: "time".into(),
        },
        last_good: "a".repeat(40),
        first_bad: "b".repeat(40),
        first_bad_run: "run-18".into(),
        before: 100.0,
        after: 108.1,
        rel_change: 0.081,
        ci: Some((0.07, 0.09)),
        note: None,
        culprit: None,
        more_points: None,
        label: None,
        created_at: created_at.into(),
        updated_at: created_at.into(),
    }
}

/// Alerts come back exactly as stored (an interval or none, notes with any text), oldest first.
pub fn round_trips_alerts(store: &mut dyn Store) {
    assert!(store.list_alerts().unwrap().is_empty());
    let mut improvement = alert("bbbb", "2026-12-01T10:00:00Z");
    improvement.kind = AlertKind::Improvement;
    improvement.status = AlertStatus::Improvement;
    improvement.ci = None;
    improvement.rel_change = -0.1;
    improvement.note = Some("ünïcode \u{1b}[31m and 'quotes'".into());
    improvement.culprit = Some("c".repeat(40));
    let first = alert("aaaa", "2026-12-02T10:00:00Z");
    store
        .upsert_alerts(&[first.clone(), improvement.clone()])
        .unwrap();
    assert_eq!(store.list_alerts().unwrap(), vec![improvement, first]);
}

/// Re-running detection (an upsert of the same id with other numbers) updates only the numbers
/// and commits: status, note, culprit and `created_at` stay; an identical upsert changes
/// nothing, not even `updated_at`; nothing is ever duplicated.
pub fn upserts_keep_status_and_note(store: &mut dyn Store) {
    let a = alert("aaaa", "2026-12-01T10:00:00Z");
    store.upsert_alerts(std::slice::from_ref(&a)).unwrap();
    let acked = store
        .update_alert(
            "aaaa",
            &AlertUpdate {
                status: Some(AlertStatus::Acknowledged),
                note: Some("known: new allocator".into()),
                culprit: None,
                updated_at: "2026-12-01T11:00:00Z".into(),
                by: None,
            },
        )
        .unwrap();
    assert_eq!(acked.status, AlertStatus::Acknowledged);
    assert_eq!(acked.note.as_deref(), Some("known: new allocator"));
    assert_eq!(acked.updated_at, "2026-12-01T11:00:00Z");

    // Detection again, same numbers, a later time and the initial status: nothing changes.
    let mut again = a.clone();
    again.updated_at = "2026-12-01T12:00:00Z".into();
    store.upsert_alerts(&[again.clone()]).unwrap();
    assert_eq!(store.list_alerts().unwrap(), vec![acked.clone()]);

    // The step re-estimated one run later: numbers and commits follow, the triage stays.
    again.first_bad = "d".repeat(40);
    again.first_bad_run = "run-19".into();
    again.rel_change = 0.079;
    again.ci = Some((0.06, 0.095));
    again.note = None;
    store.upsert_alerts(&[again]).unwrap();
    let listed = store.list_alerts().unwrap();
    assert_eq!(listed.len(), 1);
    let got = &listed[0];
    assert_eq!(got.status, AlertStatus::Acknowledged);
    assert_eq!(got.note.as_deref(), Some("known: new allocator"));
    assert_eq!(got.created_at, "2026-12-01T10:00:00Z");
    assert_eq!(got.updated_at, "2026-12-01T12:00:00Z");
    assert_eq!(
        (got.first_bad_run.as_str(), got.rel_change),
        ("run-19", 0.079)
    );
    assert_eq!(got.ci, Some((0.06, 0.095)));

    // A later update keeps what it does not name.
    let fixed = store
        .update_alert(
            "aaaa",
            &AlertUpdate {
                status: Some(AlertStatus::Fixed),
                updated_at: "2026-12-01T13:00:00Z".into(),
                ..AlertUpdate::default()
            },
        )
        .unwrap();
    assert_eq!(fixed.status, AlertStatus::Fixed);
    assert_eq!(fixed.note.as_deref(), Some("known: new allocator"));
}

/// Detection's own status changes (`Store::transition_alerts`): a suspected alert with its
/// runs and label round-trips and follows detection's numbers; it is promoted or deleted only
/// while it is still suspected; an untriaged alert is dismissed with a note, a triaged one is
/// never touched; the upsert never writes the status of a known id.
pub fn transitions_yield_to_triage(store: &mut dyn Store) {
    let change = |id: &str, from, to, note: Option<&str>| AlertTransition {
        id: id.into(),
        from,
        to,
        note: note.map(str::to_string),
        updated_at: "2026-12-02T10:00:00Z".into(),
    };
    let mut sus = alert("aaaa", "2026-12-01T10:00:00Z");
    sus.status = AlertStatus::Suspected;
    sus.more_points = Some(3);
    sus.label = Some(AlertLabel::NoCodeChanged);
    let (mut bbbb, cccc) = (alert("bbbb", "t1"), alert("cccc", "t2"));
    bbbb.status = AlertStatus::Active;
    let mut dddd = sus.clone();
    dddd.id = "dddd".into();
    store
        .upsert_alerts(&[sus.clone(), bbbb.clone(), cccc.clone(), dddd.clone()])
        .unwrap();
    let find = |store: &dyn Store, id: &str| {
        store
            .list_alerts()
            .unwrap()
            .into_iter()
            .find(|a| a.id == id)
    };
    assert_eq!(find(store, "aaaa"), Some(sus.clone()));

    // Detection's numbers follow (fewer runs needed, no label), its status never.
    let mut later = sus.clone();
    later.more_points = Some(2);
    later.label = None;
    later.status = AlertStatus::Active;
    later.updated_at = "2026-12-01T11:00:00Z".into();
    store.upsert_alerts(&[later]).unwrap();
    let got = find(store, "aaaa").unwrap();
    assert_eq!(
        (got.status, got.more_points, got.label),
        (AlertStatus::Suspected, Some(2), None)
    );

    // Promoted once; a second, stale promotion or deletion changes nothing.
    let promote = change(
        "aaaa",
        AlertStatus::Suspected,
        Some(AlertStatus::Active),
        None,
    );
    assert_eq!(
        store
            .transition_alerts(std::slice::from_ref(&promote))
            .unwrap(),
        1
    );
    let got = find(store, "aaaa").unwrap();
    assert_eq!(got.status, AlertStatus::Active);
    assert_eq!(got.updated_at, "2026-12-02T10:00:00Z");
    let stale = [promote, change("aaaa", AlertStatus::Suspected, None, None)];
    assert_eq!(store.transition_alerts(&stale).unwrap(), 0);
    assert_eq!(find(store, "aaaa"), Some(got));

    // A person's triage wins over a dismissal decided before it.
    store
        .update_alert(
            "bbbb",
            &AlertUpdate {
                status: Some(AlertStatus::Acknowledged),
                note: Some("known".into()),
                culprit: None,
                updated_at: "2026-12-01T12:00:00Z".into(),
                by: None,
            },
        )
        .unwrap();
    let gone = Some("no longer detected");
    let dismiss = |id: &str| change(id, AlertStatus::Active, Some(AlertStatus::Dismissed), gone);
    assert_eq!(store.transition_alerts(&[dismiss("bbbb")]).unwrap(), 0);
    let b = find(store, "bbbb").unwrap();
    assert_eq!(
        (b.status, b.note.as_deref()),
        (AlertStatus::Acknowledged, Some("known"))
    );
    // An untriaged one is dismissed with the note; a cleared suspected one is deleted.
    let changes = [
        dismiss("cccc"),
        change("dddd", AlertStatus::Suspected, None, None),
    ];
    assert_eq!(store.transition_alerts(&changes).unwrap(), 2);
    let c = find(store, "cccc").unwrap();
    assert_eq!(
        (c.status, c.note.as_deref()),
        (AlertStatus::Dismissed, gone)
    );
    assert_eq!(find(store, "dddd"), None);
    assert_eq!(store.list_alerts().unwrap().len(), 3);
    assert_eq!(store.transition_alerts(&[]).unwrap(), 0);
}

/// An update of an id no alert has is `NoAlert` naming the id, and changes nothing.
pub fn unknown_alert_ids_are_refused(store: &mut dyn Store) {
    store
        .upsert_alerts(&[alert("aaaa", "2026-12-01T10:00:00Z")])
        .unwrap();
    let before = store.list_alerts().unwrap();
    let err = store
        .update_alert(
            "aaa",
            &AlertUpdate {
                status: Some(AlertStatus::Dismissed),
                ..AlertUpdate::default()
            },
        )
        .unwrap_err();
    match &err {
        StoreError::NoAlert { id, .. } => assert_eq!(id, "aaa"),
        e => panic!("expected NoAlert, got {e:?}"),
    }
    assert!(err.to_string().contains("no alert `aaa`"), "{err}");
    assert_eq!(store.list_alerts().unwrap(), before);
}

/// Every change of an alert is recorded, oldest first: a person's with who and the status it
/// replaced, detection's as `detection`; an alert's changes go with it when detection deletes
/// it, and an unknown id has none.
pub fn changes_are_recorded_with_who_and_when(store: &mut dyn Store) {
    let a = alert("chg1", "2026-12-01T10:00:00Z");
    let mut s = alert("chg2", "2026-12-01T10:00:00Z");
    s.status = AlertStatus::Suspected;
    store.upsert_alerts(&[a, s]).unwrap();
    assert!(store.alert_changes("chg1").unwrap().is_empty());
    store
        .update_alert(
            "chg1",
            &AlertUpdate {
                status: Some(AlertStatus::Acknowledged),
                note: Some("on it".into()),
                updated_at: "2026-12-01T11:00:00Z".into(),
                by: Some("alice-laptop".into()),
                ..AlertUpdate::default()
            },
        )
        .unwrap();
    store
        .update_alert(
            "chg1",
            &AlertUpdate {
                culprit: Some("c".repeat(40)),
                updated_at: "2026-12-01T12:00:00Z".into(),
                by: Some("local:bob".into()),
                ..AlertUpdate::default()
            },
        )
        .unwrap();
    let changes = store.alert_changes("chg1").unwrap();
    assert_eq!(
        changes,
        vec![
            AlertChange {
                at: "2026-12-01T11:00:00Z".into(),
                by: Some("alice-laptop".into()),
                from: Some(AlertStatus::Active),
                to: Some(AlertStatus::Acknowledged),
                note: Some("on it".into()),
                culprit: None,
            },
            AlertChange {
                at: "2026-12-01T12:00:00Z".into(),
                by: Some("local:bob".into()),
                from: None,
                to: None,
                note: None,
                culprit: Some("c".repeat(40)),
            },
        ]
    );
    // Detection's promotion of the suspected one is recorded as detection's.
    let promote = AlertTransition {
        id: "chg2".into(),
        from: AlertStatus::Suspected,
        to: Some(AlertStatus::Active),
        note: None,
        updated_at: "2026-12-01T13:00:00Z".into(),
    };
    assert_eq!(store.transition_alerts(&[promote]).unwrap(), 1);
    let got = store.alert_changes("chg2").unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].by.as_deref(), Some(DETECTION));
    assert_eq!(
        (got[0].from, got[0].to),
        (Some(AlertStatus::Suspected), Some(AlertStatus::Active))
    );
    // A transition that no longer applies records nothing.
    let stale = AlertTransition {
        id: "chg1".into(),
        from: AlertStatus::Active,
        to: Some(AlertStatus::Dismissed),
        note: Some("no longer detected".into()),
        updated_at: "2026-12-01T14:00:00Z".into(),
    };
    assert_eq!(store.transition_alerts(&[stale]).unwrap(), 0);
    assert_eq!(store.alert_changes("chg1").unwrap().len(), 2);
    assert!(store.alert_changes("nope").unwrap().is_empty());
}
