//! The static HTML report written after measuring and by `pitwall report`: every stored run,
//! with the latest interleaved pair (or else the two latest runs) as its comparison.

use std::path::Path;

use pitwall_engine::config::Config;
use pitwall_pipeline::{compare, source};
use pitwall_stats::ab::AbConfig;
use pitwall_store::{Store, StoreError};

use super::exit::Failure;

/// Default report directory.
pub(super) const REPORT_DIR: &str = ".pitwall/report";

/// Writes the HTML report of every stored run, with the latest interleaved pair (or else the
/// two latest runs) as its comparison.
pub(super) fn write_report(
    config: &Config,
    store: &dyn Store,
    out: &Path,
) -> Result<pitwall_reports::html::SiteSummary, Failure> {
    let filter = pitwall_pipeline::detect::HistoryFilter::branch(&config.history_branch);
    // Every run without its results, and the histories read one series at a time: the store
    // is never read whole. The compared runs are read whole, for their samples.
    let (mut runs, histories) =
        pitwall_pipeline::detect::report_history(store, &filter).map_err(Failure::of_store)?;
    let mut comparisons = Vec::new();
    let sides = match source::resolve_pair("latest", store) {
        Ok(pair) => Some(("latest base/head pair".to_string(), pair)),
        Err(_) if runs.len() >= 2 => {
            let side = |r: pitwall_schema::Run| source::Side {
                label: format!("run {}", r.id),
                results: r.results.clone(),
                run: Some(r),
            };
            let full = |r: &pitwall_schema::Run| store.get_run(&r.id);
            match (full(&runs[runs.len() - 2]), full(&runs[runs.len() - 1])) {
                (Ok(before), Ok(latest)) => Some((
                    "latest run vs the one before (separate runs: noise between runs is not in the samples; `pitwall run --base --head` interleaves)".to_string(),
                    (side(before), side(latest)),
                )),
                // A run that cannot be read costs the report its comparison, not the report.
                (Err(e @ StoreError::Corrupt { .. }), _) | (_, Err(e @ StoreError::Corrupt { .. })) => {
                    eprintln!("warning: {e}; the report has no comparison");
                    None
                }
                (Err(e), _) | (_, Err(e)) => return Err(Failure::of_store(e)),
            }
        }
        Err(_) => None,
    };
    if let Some((_, (base, head))) = &sides {
        for full in [&base.run, &head.run].into_iter().flatten() {
            if let Some(slot) = runs.iter_mut().find(|r| r.id == full.id) {
                *slot = full.clone();
            }
        }
    }
    if let Some((title, (base, head))) = sides {
        // The page's id: the pair's, else both runs' (stable for the same comparison).
        let run_id = |s: &source::Side| s.run.as_ref().map(|r| r.id.clone()).unwrap_or_default();
        let id = head
            .run
            .as_ref()
            .and_then(|r| r.pair.as_ref())
            .map(|p| p.id.clone())
            .unwrap_or_else(|| format!("runs-{}-{}", run_id(&base), run_id(&head)));
        let noise = pitwall_pipeline::noise::book_for_sides(store, &base, &head)
            .map_err(Failure::of_store)?;
        let report = compare::compare(
            &base,
            &head,
            config,
            None,
            &AbConfig::default(),
            compare::CompareOptions {
                allow_env_mismatch: true,
                exclude_throttled: false,
            },
            &noise,
        );
        if !report.benchmarks.is_empty() || !report.identical.is_empty() {
            comparisons.push(pitwall_reports::html::PageComparison::new(
                id, title, report,
            ));
        }
    }
    let alerts = store.list_alerts().map_err(Failure::of_store)?;
    let local = pitwall_pipeline::detect::latest_local(store, &runs).map_err(Failure::of_store)?;
    let generated_at = pitwall_schema::time::now_rfc3339();
    let input = pitwall_reports::html::ReportInput {
        project: &config.project.name,
        runs: &runs,
        comparisons: &comparisons,
        generated_at: &generated_at,
        history_branch: &config.history_branch,
        alerts: &alerts,
        histories: Some(&histories),
        local: local.as_ref(),
    };
    pitwall_reports::html::write_site(&input, out)
        .map_err(|e| Failure::of_site(format!("cannot write the report to {}", out.display()), e))
}
