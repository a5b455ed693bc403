//! Report budget: renders the HTML site for 200 benchmark measures × 1000 runs of 10 synthetic
//! samples each and prints the time and the size of `index.html`.
//!
//! `cargo run --release -p pitwall-reports --example report_budget [-- BENCHMARKS RUNS OUT_DIR]`
//! (the site goes to a temporary directory unless OUT_DIR is given; the budget is 5 s and an
//! index under 5 MB).

use std::time::Instant;

use pitwall_reports::html::{ReportInput, synthetic, write_site};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let benchmarks = args.first().and_then(|a| a.parse().ok()).unwrap_or(200);
    let runs = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let t = Instant::now();
    let history = synthetic::runs(benchmarks, runs, 10);
    let comparisons = vec![pitwall_reports::html::PageComparison::new(
        "first-vs-last",
        "first vs last run",
        synthetic::comparison(&history[0], &history[runs - 1]),
    )];
    let made = t.elapsed();
    let tmp = std::env::temp_dir().join(format!("pitwall-report-budget-{}", std::process::id()));
    let out = args
        .get(2)
        .map(std::path::PathBuf::from)
        .unwrap_or(tmp.clone());
    let t = Instant::now();
    let input = ReportInput {
        project: "budget",
        runs: &history,
        comparisons: &comparisons,
        generated_at: "now",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: None,
    };
    let summary = match write_site(&input, &out) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let took = t.elapsed();
    let total: u64 = walk(&out);
    println!(
        "{benchmarks} benchmarks x {runs} runs x 10 samples: data {:.2} s, site {:.2} s; {} pages, index.html {:.0} KiB, site {:.1} MiB",
        made.as_secs_f64(),
        took.as_secs_f64(),
        summary.pages,
        summary.index_bytes as f64 / 1024.0,
        total as f64 / (1024.0 * 1024.0)
    );
    if args.get(2).is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

fn walk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => walk(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}
