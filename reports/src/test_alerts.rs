//! The stored alert the reports' unit tests start from (alert lists, webhook messages, GitHub
//! issues), so every renderer is tested against the same record; each test varies its copies.

use pitwall_schema::{Alert, AlertKind, AlertSeries, AlertStatus};

/// An active 8.1% regression of `kernel/gemm[n=512]/time` on testbed `h200-a`, branch `main`.
pub(crate) fn regression() -> Alert {
    Alert {
        id: "3f2a9c01d4e5".into(),
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
        ci: Some((0.0712, 0.0903)),
        note: None,
        culprit: None,
        more_points: None,
        label: None,
        created_at: "2026-12-01T10:00:00Z".into(),
        updated_at: "2026-12-01T10:00:00Z".into(),
    }
}
