//! The static `pitwall report`'s interactive history charts end to end (issue 30): a history
//! imported through the real binary, whose benchmark name and one commit subject are hostile
//! (`</script><img src=x onerror=alert(1)>`, `<!--`, U+2028), with a step that is a change
//! point and an alert. Every page of the report is checked for markup the names smuggled in;
//! the benchmark page's chart data parses as JSON holding the names as text, the change point
//! and the alert; and headless Chromium (`tests/browser/drag_chart.py`) drags across the chart
//! and checks that the visible range changed, with no console error and no remote request.

use std::path::{Path, PathBuf};

use pitwall_e2e::Sandbox;
use serde_json::{Value, json};

/// The hostile commit subject and benchmark name.
const SUBJECT: &str = "</script><img src=x onerror=alert(1)> <!-- \u{2028} & done";
const NAME: &str = "sort</script><img src=x onerror=alert(2)>";

/// An export document of one history run on `main` for day `day` of January 2026: commit
/// `sha` with `subject`, benchmark `NAME` with 9 samples within ±0.5% of `median_ms`.
fn export(day: usize, sha: &str, subject: &str, median_ms: f64) -> String {
    let samples: Vec<f64> = (0..9)
        .map(|i| median_ms * 1e6 * (1.0 + 0.00125 * (i as f64 - 4.0)))
        .collect();
    let at = format!("2026-01-{day:02}T12:00:00Z");
    json!({
        "schema": "pitwall/v1",
        "runs": [{
            "id": format!("run-{day:02}"),
            "project": "charts",
            "commit": sha,
            "branch": "main",
            "started_at": at,
            "finished_at": at,
            "config_hash": "x",
            "fingerprint": {"hostname": "h", "os": "linux", "arch": "x86_64"},
            "status": "complete",
            "commit_info": {"author": "Ada <ada@example.com>", "date": at, "subject": subject},
            "results": [{
                "suite": "s", "name": NAME, "measure": "time", "unit": "ns",
                "direction": "lower_is_better", "status": "ok", "samples": samples
            }]
        }]
    })
    .to_string()
}

/// Every `.html` file under `dir`, recursively.
fn pages(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(pages(&path));
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The JSON of a benchmark page's `#history-data` element.
fn chart_data(html: &str) -> Value {
    let open = r#"<script type="application/json" id="history-data">"#;
    let data = &html[html.find(open).expect("chart data") + open.len()..];
    let data = &data[..data.find("</script>").unwrap()];
    serde_json::from_str(data).expect("chart data is JSON")
}

#[test]
fn the_report_draws_zoomable_charts_and_hostile_names_stay_text() {
    let sb = Sandbox::new();
    let dir = sb.path();
    // Six commits at 10 ms, then the hostile commit and five more at 12 ms: a clear step.
    for day in 1..=12 {
        let subject = if day == 7 {
            SUBJECT.to_string()
        } else {
            format!("change {day}")
        };
        let level = if day < 7 { 10.0 } else { 12.0 };
        let sha = format!("{day:040x}");
        let file = sb.write(&format!("r{day}.json"), &export(day, &sha, &subject, level));
        sb.run(&["import", "--quiet", file.to_str().unwrap()])
            .expect(0);
    }
    let alerts = sb.run(&["alerts", "--format", "json"]).expect(0).json()["alerts"].clone();
    assert_eq!(alerts.as_array().unwrap().len(), 1, "{alerts}");
    sb.run(&["report", "--out", "site"]).expect(0);

    let site = dir.join("site");
    let all = pages(&site);
    assert!(all.len() >= 3, "{all:?}");
    for page in &all {
        let html = std::fs::read_to_string(page).unwrap();
        // U+2028 is harmless in HTML text; inside the chart's script element it is escaped.
        for live in ["<img", "<!--", "</script><"] {
            assert!(!html.contains(live), "{}: {live:?} is live", page.display());
        }
    }
    let bench: Vec<&PathBuf> = all
        .iter()
        .filter(|p| p.parent().unwrap().ends_with("bench"))
        .collect();
    assert_eq!(bench.len(), 1, "{all:?}");
    let html = std::fs::read_to_string(bench[0]).unwrap();
    let script = &html[html.find(r#"id="history-data">"#).unwrap()..];
    assert!(!script[..script.find("</script>").unwrap()].contains('\u{2028}'));
    let data = chart_data(&html);
    assert!(data["key"].as_str().unwrap().contains(NAME), "{data}");
    let subjects: Vec<&str> = data["points"]["subject"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(subjects.len(), 12, "{data}");
    assert_eq!(subjects[6], SUBJECT);
    assert_eq!(data["changes"].as_array().unwrap().len(), 1, "{data}");
    assert_eq!(
        data["changes"][0]["x"], 5.5,
        "between the 6th and 7th commit"
    );
    assert_eq!(data["alerts"].as_array().unwrap().len(), 1, "{data}");
    assert_eq!(data["alerts"][0]["x"], 6.0, "at the first bad commit");
    for asset in [
        "assets/history.js",
        "assets/vendor/uplot/uPlot.iife.min.js",
        "assets/vendor/uplot/uPlot.min.css",
        "assets/vendor/uplot/LICENSE",
    ] {
        assert!(site.join(asset).is_file(), "{asset} missing");
    }

    if !pitwall_e2e::chromium_installed() {
        eprintln!("SKIPPED the drag in headless Chromium: chromium is not installed");
        return;
    }
    let (ok, text) =
        pitwall_e2e::browser_check("drag_chart.py", &[bench[0].to_str().unwrap()], &[]);
    assert!(ok, "chart check failed:\n{text}");
    assert!(text.contains("ok: dragging zoomed the x range"), "{text}");
}
