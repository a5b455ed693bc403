//! `pitwall bisect --good REV --bad REV`: finds the first commit that made a benchmark slower,
//! measuring as few commits as a binary search allows (docs/BISECT.md).

use pitwall_pipeline::bisect::{BisectError, BisectRequest};
use pitwall_pipeline::measure::{MeasureError, bisect};
use pitwall_pipeline::request::RunRequest;
use pitwall_reports::bisect::{render_json, render_table};
use pitwall_reports::compare::render_table as render_comparison;

use super::args::{BisectArgs, Format, Global};
use super::context::{current_dir, load_config};
use super::exit::{ExitClass, Failure};
use super::measuring::measuring;

pub(super) fn cmd_bisect(g: &Global, a: &BisectArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let select = RunRequest {
        suites: a.suites.clone(),
        filter: a.bench.clone(),
    };
    let cwd = current_dir()?;
    let repo = a.search.repo.clone().unwrap_or(cwd);
    let request = BisectRequest {
        good: a.good.clone(),
        bad: a.bad.clone(),
        select,
        rounds: a.search.rounds,
        max_rounds: a.search.max_rounds.max(a.search.rounds),
        rebuild: a.search.rebuild,
    };
    // A bisection stores nothing.
    let report = measuring(g, &config, Default::default(), None, |m| {
        bisect(m, &repo, &request)
    })?;
    let report = report.map_err(|e| {
        // No regression: the endpoints' table says what was measured and how far it got.
        let table = match &e {
            MeasureError::Bisect(BisectError::NoRegression { endpoints, .. }) => {
                Some(render_comparison(endpoints))
            }
            _ => None,
        };
        let failure = Failure::of_measure(e);
        match table {
            Some(t) => failure.with_details(
                std::iter::once("the endpoints (good vs bad):".to_string())
                    .chain(t.lines().map(str::to_string))
                    .collect(),
            ),
            None => failure,
        }
    })?;
    if report.uncertain && !g.quiet {
        eprintln!(
            "warning: uncertain: some step could not be decided within --max-rounds; the first bad commit is a best guess (exit 0; see docs/BISECT.md)"
        );
    }
    print!(
        "{}",
        match a.search.format {
            Format::Table => render_table(&report),
            Format::Json => render_json(&report),
        }
    );
    Ok(ExitClass::Ok)
}
