//! `pitwall bisect --good REV --bad REV`: finds the first commit that made a benchmark slower,
//! measuring as few commits as a binary search allows (docs/BISECT.md).

use pitwall_pipeline::bisect::BisectRequest;
use pitwall_pipeline::measure::bisect;
use pitwall_pipeline::request::RunRequest;
use pitwall_reports::bisect::{render_json, render_table};

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
    let report = report.map_err(Failure::of_measure)?;
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
