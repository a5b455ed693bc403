//! `pitwall run`: the working tree or exact commits, the machine set up around the measurement,
//! storing and printing the runs.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use pitwall_cpu::CpuBackend;
use pitwall_pipeline::config::Config;
use pitwall_pipeline::engine::{die_with_parent, serve_worker};
use pitwall_pipeline::git::Repo;
use pitwall_pipeline::pair::{DEFAULT_MAX_ROUNDS, DEFAULT_ROUNDS, PairPlan, UntilDecided};
use pitwall_pipeline::run::{
    RunError, RunReport, RunRequest, Target, build, check_suites, execute,
};
use pitwall_reports::exporter_for;
use pitwall_store::{OpenMode, Store};

use super::args::{Global, RunArgs};
use super::context::{format, load_config, open_store};
use super::environment::{halt_if_terminating, prepare_env, print_monitor_health};
use super::exit::{ExitClass, Failure};
use super::measure::{checkout_and_build, measure_and_store_pair};
use super::progress::Bars;
use super::site::{REPORT_DIR, write_report};

pub(super) fn cmd_run(g: &Global, a: &RunArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let mut store = open_store(g, &config, OpenMode::Create)?;
    let cwd = std::env::current_dir()
        .context("cannot read the working directory")
        .map_err(Failure::infra)?;
    let request = RunRequest {
        suites: a.suites.clone(),
        filter: a.bench.clone(),
    };
    let bars = Bars::new(g.quiet);
    check_suites(&config, &request).map_err(|e| Failure::usage(e.into()))?;
    if a.base.is_some() || !a.commits.is_empty() {
        return run_commits(g, a, &config, store.as_mut(), &cwd, &request, &bars);
    }
    let mut target = Target::working_tree(&cwd);
    if let Ok(repo) = Repo::discover(&cwd) {
        if let Some((_, branch, _)) = repo.head_state() {
            target.branch = branch;
        }
    }
    build(&config, &target, None, true).map_err(build_failure)?;
    let env = prepare_env(&config, g)?;
    let report = execute(&config, &request, &CpuBackend, &target, &env, &bars)
        .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
    print_monitor_health(&env, g);
    store_and_print(g, a, store.as_mut(), &report)
}

/// A failed build: its one-line error, then the log tail as indented lines.
fn build_failure(e: RunError) -> Failure {
    let tail = match &e {
        RunError::Build { log_tail, .. } => log_tail.clone(),
        _ => Vec::new(),
    };
    Failure::infra(e.into()).with_details(tail)
}

/// `pitwall __worker`: one round of a built-in suite for the parent pitwall, which started it
/// (docs/REPRODUCIBILITY.md). The backend is the one every measuring command uses.
pub(super) fn cmd_worker() -> Result<ExitClass, Failure> {
    if !die_with_parent() {
        return Ok(ExitClass::Infra);
    }
    serve_worker(
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &CpuBackend,
    )
    .map_err(|e| Failure::infra(e.into()))?;
    Ok(ExitClass::Ok)
}

/// Stores a finished run and prints it; the exit code follows its status.
pub(super) fn store_and_print(
    g: &Global,
    a: &RunArgs,
    store: &mut dyn Store,
    report: &RunReport,
) -> Result<ExitClass, Failure> {
    halt_if_terminating();
    let run = &report.run;
    if run.results.is_empty() {
        let msg = if a.bench.is_some() || !a.suites.is_empty() {
            "no benchmark matched the selection (hint: check --suite and --bench)"
        } else {
            "no benchmark ran (every suite was skipped)"
        };
        for s in &report.skipped {
            eprintln!("{s}");
        }
        return Err(Failure::usage(anyhow!(msg)));
    }
    store
        .insert_run(run)
        .with_context(|| format!("cannot store run {}", run.id))
        .map_err(Failure::infra)?;
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
    if !a.no_report {
        let out = PathBuf::from(REPORT_DIR);
        match load_config(g).and_then(|config| write_report(&config, store, &out)) {
            Ok(_) if !g.quiet => eprintln!("report: {}", out.join("index.html").display()),
            Ok(_) => {}
            Err(f) => eprintln!("warning: report not written: {:#}", f.error),
        }
    }
    Ok(ExitClass::of_run(run.status))
}

/// `--commit REV…` and `--base REV --head REV`: exact commits in cached worktrees.
fn run_commits(
    g: &Global,
    a: &RunArgs,
    config: &Config,
    store: &mut dyn Store,
    cwd: &Path,
    request: &RunRequest,
    bars: &Bars,
) -> Result<ExitClass, Failure> {
    let revs: Vec<&str> = match (&a.base, &a.head) {
        (Some(b), Some(h)) => vec![b, h],
        _ => a.commits.iter().map(String::as_str).collect(),
    };
    let repo_dir = a.repo.as_deref().unwrap_or(cwd);
    let built = checkout_and_build(g, config, store, repo_dir, &revs, a.rebuild)?;
    if a.base.is_some() {
        let [base, head] = built.targets.as_slice() else {
            return Ok(ExitClass::Infra);
        };
        let plan = PairPlan {
            rounds: a.rounds.unwrap_or(DEFAULT_ROUNDS),
            until_decided: a.until_decided.then(|| UntilDecided {
                max_rounds: a.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS),
                max_time: a.max_time,
            }),
        };
        let measured = measure_and_store_pair(
            g,
            config,
            store,
            request,
            base,
            head,
            &plan,
            a.no_report,
            built.class,
            bars,
        )?;
        return Ok(measured.class);
    }
    let mut class = built.class;
    let env = prepare_env(config, g)?;
    for target in &built.targets {
        let report = execute(config, request, &CpuBackend, target, &env, bars)
            .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
        print_monitor_health(&env, g);
        class = class.max(store_and_print(g, a, store, &report)?);
    }
    Ok(class)
}
