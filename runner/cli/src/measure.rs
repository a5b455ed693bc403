//! Measuring exact commits, shared by `pitwall run --commit/--base --head` and `pitwall ci`:
//! resolve and build the commits (a failed build is stored as a failed run), then measure a
//! base/head pair interleaved, store both runs and print the comparison. The pair measured is
//! returned, so `ci` publishes exactly that pair and never whatever the store holds as latest.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use pitwall_cpu::CpuBackend;
use pitwall_pipeline::config::Config;
use pitwall_pipeline::git::Repo;
use pitwall_pipeline::pair::{LookProgress, PairPlan, PairStop, measure_pair, sides};
use pitwall_pipeline::run::{BuildOutcome, RunError, RunRequest, Target, build, failed_build_run};
use pitwall_pipeline::source::Side;
use pitwall_schema::RunStatus;
use pitwall_stats::ab::AbConfig;
use pitwall_store::Store;

use super::args::Global;
use super::environment::{halt_if_terminating, prepare_env, print_monitor_health};
use super::exit::{self, ExitClass, Failure};
use super::progress::Bars;
use super::site::{REPORT_DIR, write_report};

/// The commits built and ready to measure, and how building went (`Infra` when one failed).
pub(super) struct Built {
    pub targets: Vec<Target>,
    pub class: ExitClass,
}

/// Resolves every revision (before measuring anything), checks each out in the cached
/// worktrees and builds it. A failed build is stored as a failed run with its log tail and the
/// others go on.
pub(super) fn checkout_and_build(
    g: &Global,
    config: &Config,
    store: &mut dyn Store,
    repo_dir: &Path,
    revs: &[&str],
    rebuild: bool,
) -> Result<Built, Failure> {
    let repo = Repo::discover(repo_dir).map_err(|e| Failure::usage(e.into()))?;
    let commits = revs
        .iter()
        .map(|r| repo.resolve(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::usage(e.into()))?;
    let cache = repo.root().join(".pitwall").join("worktrees");
    let mut targets = Vec::new();
    let mut class = ExitClass::Ok;
    for c in &commits {
        let checkout = repo
            .checkout(c, &cache, rebuild)
            .map_err(|e| Failure::infra(anyhow::Error::new(e)))?;
        let target = Target {
            checkout: checkout.path,
            commit: c.sha.clone(),
            branch: c.branch.clone(),
            commit_info: Some(c.info.clone()),
        };
        let marker = cache.join(format!("{}.build", c.sha));
        match build(config, &target, Some(&marker), rebuild) {
            Ok(outcome) => {
                if !g.quiet && outcome == BuildOutcome::Cached {
                    eprintln!(
                        "{}: build cached (hint: --rebuild forces it)",
                        target.describe()
                    );
                }
                targets.push(target);
            }
            Err(e) => {
                // Keep the failure with its log tail, then go on with the other commits.
                let run = failed_build_run(config, &target, &e);
                store
                    .insert_run(&run)
                    .with_context(|| format!("cannot store run {}", run.id))
                    .map_err(Failure::infra)?;
                eprintln!("error: {e}");
                if let RunError::Build { log_tail, .. } = &e {
                    exit::print_details(log_tail);
                }
                eprintln!(
                    "stored failed run {} for {} in {}",
                    run.id,
                    target.describe(),
                    store.describe()
                );
                class = ExitClass::Infra;
            }
        }
    }
    Ok(Built { targets, class })
}

/// A pair measured and stored: its exit class and its two sides as stored.
pub(super) struct MeasuredPair {
    pub class: ExitClass,
    pub base: Side,
    pub head: Side,
}

/// `round 5/15: 22 decided, 3 given up, 5 undecided (12m30s left)`.
fn look_line(p: &LookProgress) -> String {
    let left = p.time_left.map_or(String::new(), |t| {
        let s = t.as_secs();
        format!(" ({}m{:02}s left)", s / 60, s % 60)
    });
    format!(
        "round {}/{}: {} decided, {} given up, {} undecided{left}",
        p.round, p.max_rounds, p.decided, p.given_up, p.undecided
    )
}

/// Measures `base` and `head` interleaved under `plan`, stores both runs, prints the
/// comparison table and (unless `no_report`) writes the HTML report. `built` is how building
/// went; the class returned is the worst of it, a partial run (`Infra`) and the verdict.
#[allow(clippy::too_many_arguments)]
pub(super) fn measure_and_store_pair(
    g: &Global,
    config: &Config,
    store: &mut dyn Store,
    request: &RunRequest,
    base: &Target,
    head: &Target,
    plan: &PairPlan,
    no_report: bool,
    built: ExitClass,
    bars: &Bars,
) -> Result<MeasuredPair, Failure> {
    let env = prepare_env(config, g)?;
    let quiet = g.quiet;
    let progress = |p: &LookProgress| {
        if !quiet {
            eprintln!("{}", look_line(p));
        }
    };
    let outcome = measure_pair(
        config,
        request,
        &CpuBackend,
        base,
        head,
        plan,
        &AbConfig::default(),
        &env,
        bars,
        &progress,
    )
    .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
    print_monitor_health(&env, g);
    if [&outcome.base, &outcome.head]
        .iter()
        .any(|r| r.run.results.is_empty())
    {
        return Err(Failure::usage(anyhow!(
            "no benchmark matched the selection (hint: check --suite and --bench)"
        )));
    }
    halt_if_terminating();
    for report in [&outcome.base, &outcome.head] {
        store
            .insert_run(&report.run)
            .with_context(|| format!("cannot store run {}", report.run.id))
            .map_err(Failure::infra)?;
    }
    let pair = outcome
        .base
        .run
        .pair
        .as_ref()
        .map(|p| p.id.clone())
        .unwrap_or_default();
    if !g.quiet {
        eprintln!(
            "stored base run {} and head run {} (pair {pair}, {} rounds{}) in {}",
            outcome.base.run.id,
            outcome.head.run.id,
            outcome.rounds,
            match outcome.stop {
                PairStop::Fixed => "",
                PairStop::AllDecided => ", every benchmark decided or given up",
                PairStop::MaxRounds => ", stopped at --max-rounds",
                PairStop::MaxTime => ", stopped at --max-time",
            },
            store.describe()
        );
    }
    let report = &outcome.comparison;
    print!("{}", pitwall_reports::compare::render_table(report));
    if !no_report {
        let out = PathBuf::from(REPORT_DIR);
        match write_report(config, store, &out) {
            Ok(_) if !g.quiet => eprintln!("report: {}", out.join("index.html").display()),
            Ok(_) => {}
            Err(f) => eprintln!("warning: report not written: {:#}", f.error),
        }
    }
    let partial = [&outcome.base, &outcome.head]
        .iter()
        .any(|r| r.run.status != RunStatus::Complete);
    let class = if partial || built != ExitClass::Ok {
        ExitClass::Infra
    } else {
        ExitClass::of_comparison(report)
    };
    let (base, head) = sides(&outcome.base, &outcome.head);
    Ok(MeasuredPair { class, base, head })
}
