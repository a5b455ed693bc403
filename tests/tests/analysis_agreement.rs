//! `pitwall detect --benchmark` and the HTML report read one stored history through one
//! analysis (`pitwall-analysis`): this test stores a history with a planted step and runs that
//! hold the benchmark twice, then checks that the change points `detect` prints are exactly
//! the ones the rendered report marks on the benchmark's chart and lists in its table.

use pitwall_e2e::Sandbox;
use serde_json::{Value, json};

const RUNS: usize = 30;
const STEP_AT: usize = 20;
const KEY: &str = "kernel/gemm_f32[n=64]/time";

/// Deterministic noise in [-1, 1).
fn noise(i: usize, salt: usize) -> f64 {
    let mut h = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (salt as u64);
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 32;
    (h % 2000) as f64 / 1000.0 - 1.0
}

/// A 40-hex commit whose first ten characters (what the report shows) differ per run.
fn commit(i: usize) -> String {
    format!("{:04x}{}", 0xc000 + i, "ab".repeat(18))
}

fn result(level: f64, salt: usize) -> Value {
    let samples: Vec<f64> = (0..7)
        .map(|s| level * (1.0 + 0.005 * noise(s, salt)))
        .collect();
    json!({"suite": "kernel", "name": "gemm_f32", "params": {"n": "64"}, "measure": "time",
           "unit": "ns", "direction": "lower_is_better", "status": "ok", "samples": samples})
}

/// Runs oldest first: the median steps from 100 to 130 ns at run `STEP_AT`; runs 8 to 13 also
/// hold the same key a second time at the stepped level (a stray duplicate), which the one
/// rule for duplicate keys (the first result of a key in a run counts) leaves out.
fn history() -> Value {
    let runs: Vec<Value> = (0..RUNS)
        .map(|i| {
            let level = if i < STEP_AT { 100.0 } else { 130.0 };
            let mut results = vec![result(level, i)];
            if (8..=13).contains(&i) {
                results.push(result(130.0, 1000 + i));
            }
            json!({
                "id": format!("01900000-0000-7000-8000-{i:012}"),
                "project": "h", "commit": commit(i),
                "started_at": format!("2026-11-01T00:{:02}:{:02}Z", i / 60, i % 60),
                "finished_at": "2026-12-01T00:00:00Z", "config_hash": "x",
                "fingerprint": {"hostname": "h", "os": "linux", "arch": "x86_64"},
                "status": "complete", "results": results,
            })
        })
        .collect();
    json!({"schema": "pitwall/v1", "runs": runs})
}

/// A change point as the report's chart marks it: `(from, to, before, after)` from the
/// marker's title `change between FROM and TO: BEFORE → AFTER unit (…)`.
fn report_markers(page: &str) -> Vec<(String, String, f64, f64)> {
    page.split(r#"<g class="cp "#)
        .skip(1)
        .map(|g| {
            let title = &g[g.find("<title>").unwrap() + 7..g.find("</title>").unwrap()];
            let rest = title.strip_prefix("change between ").unwrap();
            let (from, rest) = rest.split_once(" and ").unwrap();
            let (to, rest) = rest.split_once(": ").unwrap();
            let (before, rest) = rest.split_once(" → ").unwrap();
            let after = rest.split_once(' ').unwrap().0;
            (
                from.to_string(),
                to.to_string(),
                before.parse().unwrap(),
                after.parse().unwrap(),
            )
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-3 * b.abs()
}

#[test]
fn detect_and_the_report_show_the_same_change_points() {
    let sb = Sandbox::new();
    let file = sb.write("history.json", &history().to_string());
    sb.run(&["import", "--quiet", file.to_str().unwrap()])
        .expect(0);

    let out = sb
        .run(&["detect", "--benchmark", "gemm_f32", "--format", "json"])
        .expect(0);
    let lines: Vec<Value> = out
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{}", out.stdout());
    let line = &lines[0];
    assert_eq!(line["benchmark"], KEY);
    // One point per run: the duplicates do not add points.
    assert_eq!(line["points"], RUNS, "{line}");
    let detected = line["change_points"].as_array().unwrap();
    // The planted step is found (located within a run, as the detector places steps), and
    // the commits around it are those of the runs at its index: the duplicates shift nothing.
    assert!(
        detected.iter().any(|c| {
            let i = c["index"].as_u64().unwrap() as usize;
            (STEP_AT - 1..=STEP_AT + 1).contains(&i)
                && c["commit_before"] == commit(i - 1)
                && c["commit_after"] == commit(i)
        }),
        "{line}"
    );

    sb.run(&["report", "--out", "site"]).expect(0);
    let bench: Vec<_> = std::fs::read_dir(sb.path().join("site/bench"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(bench.len(), 1, "{bench:?}");
    let page = std::fs::read_to_string(&bench[0]).unwrap();
    assert!(page.contains(KEY), "the page is the benchmark's");
    let markers = report_markers(&page);
    assert_eq!(
        markers.len(),
        detected.len(),
        "detect: {line}\nreport markers: {markers:?}"
    );
    for (c, (from, to, before, after)) in detected.iter().zip(&markers) {
        let short = |k: &str| c[k].as_str().unwrap()[..10].to_string();
        assert_eq!(
            (&short("commit_before"), &short("commit_after")),
            (from, to),
            "{c}"
        );
        assert!(
            close(c["before"].as_f64().unwrap(), *before),
            "{c} {before}"
        );
        assert!(close(c["after"].as_f64().unwrap(), *after), "{c} {after}");
        // The table of changes lists the same commits.
        assert!(
            page.contains(&format!("<td><code>{from}</code>"))
                && page.contains(&format!("<td><code>{to}</code>")),
            "{to}"
        );
    }
}
