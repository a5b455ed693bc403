//! `pitwall run`: parses the arguments into a request for the working tree, exact commits or a
//! base/head pair, calls the pipeline's use case, and prints the runs (or the pair's
//! comparison) it returns.

use pitwall_engine::defaults;
use pitwall_engine::{die_with_parent, serve_worker};
use pitwall_pipeline::measure::{
    CommitsRequest, PairRequest, PairResult, Revisions, measure_commits, measure_pair,
};
use pitwall_pipeline::pair::{PairRounds, UntilDecided};
use pitwall_pipeline::request::{RunReport, RunRequest};
use pitwall_reports::exporter_for;
use pitwall_store::{OpenMode, Store};

use super::alert_notice::announce_alerts;
use super::args::{Global, RunArgs};
use super::context::{current_dir, format, load_config, open_store};
use super::exit::{ExitClass, Failure};
use super::measure::{print_pair, report_after, report_dir};
use super::measuring::measuring;
use super::suite_backend::follower_backend;
use super::worker_backends::WorkerBackends;
use pitwall_cpu::multi;
use pitwall_pipeline::labels::Labels;
use pitwall_rendezvous::Layout;

/// `pitwall run`. Under a launcher (torchrun, srun: docs/SUITES.md "collective"), every rank
/// runs it: rank 0 measures and stores the run, its collective suites driving the other ranks,
/// which follow and store nothing; rank 0 releases them when its run is over.
pub(super) fn cmd_run(g: &Global, a: &RunArgs) -> Result<ExitClass, Failure> {
    let layout = Layout::from_env().map_err(Failure::of_layout)?;
    if layout.is_multi_process() && layout.rank != 0 {
        if !g.quiet {
            eprintln!(
                "rank {} of {} ({}): following rank 0 at {}; rank 0 stores the run",
                layout.rank,
                layout.world_size,
                layout.launcher.as_str(),
                layout.addr.as_deref().unwrap_or("?")
            );
        }
        // The backend rank 0 chooses from the same configuration: NCCL or TCP sessions.
        let config = load_config(g)?;
        match follower_backend(&config)? {
            Some(cuda) => cuda.follow_collective(&layout).map_err(Failure::of_nccl)?,
            None => multi::follow(&layout).map_err(Failure::of_collective)?,
        }
        return Ok(ExitClass::Ok);
    }
    let result = run_rank0(g, a);
    if layout.is_multi_process() {
        // Followers exit 0 however rank 0's run ended; one that is gone changes nothing.
        if let Err(e) = multi::release_followers(&layout) {
            eprintln!("warning: other ranks not released: {e}");
        }
    }
    result
}

fn run_rank0(g: &Global, a: &RunArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let mut store = open_store(g, &config, OpenMode::Create)?;
    // Decided before measuring: a store without a place for the report is a usage error now,
    // not a warning after an hour of measuring.
    let report = if a.no_report {
        None
    } else {
        report_dir(a.report_dir.as_deref(), &config, store.as_ref())?
    };
    let cwd = current_dir()?;
    let select = RunRequest {
        suites: a.suites.clone(),
        filter: a.bench.clone(),
    };
    let repo = a.repo.clone().unwrap_or(cwd.clone());
    if let (Some(base), Some(head)) = (&a.base, &a.head) {
        let request = PairRequest {
            select,
            repo,
            base: base.clone(),
            head: head.clone(),
            rounds: PairRounds {
                rounds: a.rounds.unwrap_or(defaults::ROUNDS),
                until_decided: a.until_decided.then(|| UntilDecided {
                    max_rounds: a.max_rounds.unwrap_or(defaults::MAX_ROUNDS),
                    max_time: a.max_time,
                }),
            },
            rebuild: a.rebuild,
        };
        let labels = Labels::from_env(&config, &a.labels.request());
        let result = measuring(g, &config, labels, None, |m| {
            measure_pair(m, store.as_mut(), &request)
        })?;
        let result = result.map_err(Failure::of_measure)?;
        return Ok(match result {
            PairResult::NotBuilt => ExitClass::Infra,
            PairResult::Measured(pair) => {
                announce_alerts(g, &config, &pair.new_alerts);
                print_pair(g, &config, store.as_mut(), &pair, report.as_deref())
            }
        });
    }
    let revisions = if a.commits.is_empty() {
        Revisions::WorkingTree(cwd)
    } else {
        Revisions::Commits {
            repo,
            revs: a.commits.clone(),
            rebuild: a.rebuild,
        }
    };
    let request = CommitsRequest { select, revisions };
    let print = |r: &RunReport, store: &mut dyn Store| print_run(g, a, store, r);
    let labels = Labels::from_env(&config, &a.labels.request());
    let outcome = measuring(g, &config, labels, Some(&print), |m| {
        measure_commits(m, store.as_mut(), &request)
    })?;
    let outcome = outcome.map_err(|e| {
        // The progress output showed each skip as it happened, except under --quiet: then
        // the reasons come here, before the error, so the refusal still says why.
        if let pitwall_pipeline::measure::MeasureError::NothingRan { skipped, .. } = &e
            && g.quiet
        {
            for s in skipped {
                eprintln!("{}", pitwall_reports::table::escape_controls(s));
            }
        }
        Failure::of_measure(e)
    })?;
    announce_alerts(g, &config, &outcome.new_alerts);
    // Once, after the last commit: the report of many commits shows them all.
    if let Some(out) = report.as_deref() {
        report_after(g, &config, store.as_ref(), out);
    }
    let built = if outcome.build_failed {
        ExitClass::Infra
    } else {
        ExitClass::Ok
    };
    Ok(outcome
        .runs
        .iter()
        .map(|r| ExitClass::of_run(r.run.status))
        .fold(built, ExitClass::max))
}

/// `pitwall __worker`: one round of a built-in suite for the parent pitwall, which started it
/// (docs/REPRODUCIBILITY.md). The backend is the one every measuring command uses.
pub(super) fn cmd_worker() -> Result<ExitClass, Failure> {
    if !die_with_parent() {
        return Ok(ExitClass::Infra);
    }
    let backends = WorkerBackends::default();
    serve_worker(
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &|name| backends.get(name),
    )
    .map_err(Failure::of_worker)?;
    Ok(ExitClass::Ok)
}

/// A stored run, printed in the chosen format (the HTML report is written once, after the
/// last run).
fn print_run(g: &Global, a: &RunArgs, store: &mut dyn Store, report: &RunReport) {
    let run = &report.run;
    print!(
        "{}",
        exporter_for(format(a.format)).render(run, &report.skipped)
    );
    if !g.quiet {
        eprintln!(
            "stored run {} ({}) in {}",
            run.id,
            run.status.as_str(),
            store.describe()
        );
    }
}
