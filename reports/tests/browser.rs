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
