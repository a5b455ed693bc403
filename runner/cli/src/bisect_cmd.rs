//! `pitwall bisect --good REV --bad REV`: finds the first commit that made a benchmark slower,
//! measuring as few commits as a binary search allows (docs/BISECT.md).

use anyhow::Context;
use pitwall_cpu::CpuBackend;
use pitwall_pipeline::bisect::{BisectRequest, bisect};
use pitwall_pipeline::run::{RunRequest, check_suites};
use pitwall_pipeline::setup::halt_if_terminating;
use pitwall_reports::bisect::{render_json, render_table};
use pitwall_stats::ab::AbConfig;

use super::args::{BisectArgs, Format, Global};
use super::context::load_config;
use super::environment::{prepare_env, print_monitor_health};
use super::exit::{ExitClass, Failure};
use super::progress::Bars;

pub(super) fn cmd_bisect(g: &Global, a: &BisectArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let select = RunRequest {
        suites: a.suites.clone(),
        filter: a.bench.clone(),
    };
    check_suites(&config, &select).map_err(|e| Failure::usage(e.into()))?;
    let cwd = std::env::current_dir()
        .context("cannot read the working directory")
        .map_err(Failure::infra)?;
    let repo = a.repo.clone().unwrap_or(cwd);
    let request = BisectRequest {
        good: a.good.clone(),
        bad: a.bad.clone(),
        select,
        rounds: a.rounds,
        max_rounds: a.max_rounds.max(a.rounds),
        rebuild: a.rebuild,
    };
    let bars = Bars::new(g.quiet);
    let env = prepare_env(&config, g)?;
    let report = bisect(
        &repo,
        &config,
        &request,
        &CpuBackend,
        &env,
        &bars,
        &AbConfig::default(),
    )
    .map_err(Failure::of_bisect)?;
    print_monitor_health(&env, g);
    halt_if_terminating();
    if report.uncertain && !g.quiet {
        eprintln!(
            "warning: uncertain: some step could not be decided within --max-rounds; the first bad commit is a best guess (exit 0; see docs/BISECT.md)"
        );
    }
    print!(
        "{}",
        match a.format {
            Format::Table => render_table(&report),
            Format::Json => render_json(&report),
        }
    );
    Ok(ExitClass::Ok)
}
