//! Renders a small synthetic site into a temporary directory and loads it in headless
//! Chromium with `tests/browser/check_report.sh`. Skipped, with a message, only when no
//! Chromium is installed (CI installs Debian's `chromium`).

use std::path::Path;
use std::process::Command;

use pitwall_reports::html::{ReportInput, synthetic, write_site};

fn chromium() -> Option<String> {
    if let Ok(c) = std::env::var("CHROMIUM") {
        return Some(c);
    }
    [
        "chromium",
        "chromium-browser",
        "google-chrome-stable",
        "google-chrome",
    ]
    .into_iter()
    .find(|c| {
        Command::new("sh")
            .args(["-c", &format!("command -v {c} >/dev/null 2>&1")])
            .status()
            .is_ok_and(|s| s.success())
    })
    .map(str::to_string)
}

#[test]
fn report_renders_in_headless_chromium() {
    if chromium().is_none() {
        eprintln!(
            "SKIPPED report_renders_in_headless_chromium: chromium is not installed (apt-get install -y chromium)"
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut runs = synthetic::runs(24, 40, 10);
    // A second testbed (the same benchmarks, 30% slower) and a feature branch, so the index's
    // testbed and branch selectors and the benchmark pages' testbed chart have something to
    // show.
    let extra: Vec<_> = runs
        .iter()
        .take(30)
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            r.id = format!("{}-b{i}", r.id);
            if i < 20 {
                r.testbed = Some("node-b".into());
                for res in &mut r.results {
                    res.samples.iter_mut().for_each(|v| *v *= 1.3);
                }
            } else {
                r.branch = Some("feature".into());
            }
            r
        })
        .collect();
    runs.extend(extra);
    let comparisons = vec![pitwall_reports::html::PageComparison::new(
        "0123abcd",
        "first vs last",
        synthetic::comparison(&runs[0], &runs[39]),
    )];
    let dir = tempfile::tempdir().unwrap();
    // The histories of both branches, as `pitwall report` builds them.
    let detect = pitwall_stats::changepoint::DetectConfig::default();
    let mut histories = Vec::new();
    for branch in ["main", "feature"] {
        let filter = pitwall_analysis::HistoryFilter::branch(branch);
        histories.extend(pitwall_analysis::history::series(&runs, &filter, &detect));
    }
    let input = ReportInput {
        project: "browser-test",
        runs: &runs,
        comparisons: &comparisons,
        generated_at: "now",
        history_branch: "main",
        alerts: &[],
        histories: Some(&histories),
        local: None,
    };
    write_site(&input, dir.path()).unwrap();
    let shots = root.join("target").join("browser");
    let out = Command::new("bash")
        .arg(root.join("tests/browser/check_report.sh"))
        .arg(dir.path())
        .arg(&shots)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "browser check failed:\n{text}");
    assert!(shots.join("index.png").is_file() && shots.join("bench.png").is_file());
    assert!(
        text.contains("ok: index: branch selector on main hides the 24 rows of other branches")
            && text.contains("ok: testbeds: "),
        "{text}"
    );
}

/// A history with a hostile benchmark name and commit subject, a change point, an alert, one
/// excluded and one contended run: the page `tests/browser/drag_chart.py` drives.
fn hostile_history() -> (Vec<pitwall_schema::Run>, pitwall_schema::Alert) {
    use pitwall_schema::{
        Alert, AlertKind, AlertSeries, AlertStatus, Contention, ContentionLimits, Exclusion,
    };
    let hostile = "</script><img src=x onerror=alert(1)>";
    let mut runs = synthetic::runs(1, 30, 10);
    for r in &mut runs {
        r.results[0].name = format!("gemm{hostile}");
    }
    runs[29].commit_info.as_mut().unwrap().subject = format!("{hostile} \u{2028}<!--");
    runs[5].exclusion = Some(Exclusion {
        note: format!("rebooted {hostile}"),
        at: "2026-12-01T00:00:00Z".into(),
    });
    runs[9].contention = Some(Contention::classified(
        10,
        Some(2.0),
        None,
        None,
        None,
        &ContentionLimits {
            runnable_threads: 0.5,
            steal_pct: 2.0,
            psi_some_pct: 10.0,
        },
    ));
    let key = runs[0].results[0].key();
    let alert = Alert {
        id: "a1b2c3d4e5f6".into(),
        status: AlertStatus::Active,
        kind: AlertKind::Regression,
        series: AlertSeries {
            project: "demo".into(),
            testbed: runs[20].testbed.clone().unwrap_or_default(),
            branch: "main".into(),
            key,
            measure: "time".into(),
        },
        last_good: runs[19].commit.clone(),
        first_bad: runs[20].commit.clone(),
        first_bad_run: runs[20].id.clone(),
        before: 100.0,
        after: 110.0,
        rel_change: 0.1,
        ci: None,
        note: Some(hostile.into()),
        culprit: None,
        more_points: None,
        label: None,
        created_at: "2026-12-01T00:00:00Z".into(),
        updated_at: "2026-12-01T00:00:00Z".into(),
    };
    (runs, alert)
}

#[test]
fn history_chart_zooms_pans_and_resets_in_headless_chromium() {
    if chromium().is_none() {
        eprintln!(
            "SKIPPED history_chart_zooms_pans_and_resets_in_headless_chromium: chromium is not installed (apt-get install -y chromium)"
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let (runs, alert) = hostile_history();
    let dir = tempfile::tempdir().unwrap();
    let input = ReportInput {
        project: "chart-test",
        runs: &runs,
        comparisons: &[],
        generated_at: "now",
        history_branch: "main",
        alerts: std::slice::from_ref(&alert),
        histories: None,
        local: None,
    };
    write_site(&input, dir.path()).unwrap();
    let pages: Vec<_> = std::fs::read_dir(dir.path().join("bench"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(pages.len(), 1, "{pages:?}");
    let html = std::fs::read_to_string(&pages[0]).unwrap();
    assert!(!html.contains("<img"), "a hostile name became markup");
    assert!(
        html.contains(r#""class":"active""#),
        "the alert is marked on the chart"
    );
    let shots = root.join("target").join("browser");
    std::fs::create_dir_all(&shots).unwrap();
    let out = Command::new("python3")
        .arg(root.join("tests/browser/drag_chart.py"))
        .arg(&pages[0])
        .arg(shots.join("history.png"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "chart check failed:\n{text}");
    for expected in [
        "ok: dragging zoomed the x range",
        "ok: shift-drag panned",
        "ok: reset zoom restored the whole range",
        "ok: hovering shows ",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
}
