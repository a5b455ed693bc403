//! `pitwall run`: the working tree or exact commits, the machine set up around the measurement,
//! storing and printing the runs.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use pitwall_cpu::CpuBackend;
use pitwall_host::gpu::load_nvml;
use pitwall_host::machine::{DirSysfs, ProcessAffinity};
use pitwall_pipeline::config::Config;
use pitwall_pipeline::engine::{Isolation, serve_worker};
use pitwall_pipeline::git::Repo;
use pitwall_pipeline::pair::{
    DEFAULT_MAX_ROUNDS, DEFAULT_ROUNDS, LookProgress, PairPlan, PairStop, UntilDecided,
    measure_pair,
};
use pitwall_pipeline::run::{
    BuildOutcome, RunError, RunReport, RunRequest, Target, build, check_suites, execute,
    failed_build_run,
};
use pitwall_pipeline::setup::{Mode, RunEnvironment};
use pitwall_reports::exporter_for;
use pitwall_schema::RunStatus;
use pitwall_stats::ab::AbConfig;
use pitwall_store::{OpenMode, Store};
use std::sync::Arc;

use super::args::{Global, RunArgs};
use super::commands::{format, load_config, open_store};
use super::exit::{self, Failure};
use super::progress::Bars;
use super::publish_cmd::{REPORT_DIR, write_report};

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

pub(super) fn cmd_run(g: &Global, a: &RunArgs) -> Result<u8, Failure> {
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
pub(super) fn cmd_worker() -> Result<u8, Failure> {
    serve_worker(
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &CpuBackend,
    )
    .map_err(|e| Failure::infra(e.into()))?;
    Ok(exit::OK)
}

/// Pins this process, applies the clock policy and starts GPU monitoring; prints what is not
/// as it should be. Built-in suites run each round in a fresh `pitwall __worker` process.
/// Keep the result alive while measuring.
pub(super) fn prepare_env(config: &Config, g: &Global) -> Result<RunEnvironment, Failure> {
    // On SIGINT/SIGTERM: kill running benchmark commands, restore clocks, then die.
    pitwall_host::gpu::on_terminate(pitwall_pipeline::engine::kill_running_commands);
    pitwall_host::gpu::install_signal_handler().map_err(|e| Failure::infra(e.into()))?;
    let nvml = load_nvml().map(Arc::from);
    let mut env = RunEnvironment::prepare(
        config,
        Path::new("/"),
        &DirSysfs::real(),
        &ProcessAffinity,
        nvml,
        Mode::Apply,
    )
    .map_err(|e| Failure::infra(e.into()))?;
    let exe = std::env::current_exe()
        .context("cannot find pitwall's own executable to start suite workers")
        .map_err(Failure::infra)?;
    env.set_isolation(Isolation::Worker { exe });
    if !g.quiet {
        if let Some(reason) = env
            .fingerprint
            .extra
            .get("gpu")
            .and_then(|g| g.get("reason"))
            .and_then(|r| r.as_str())
        {
            eprintln!("no GPU: {reason}; GPU monitoring skipped, CPU suites only");
        }
        for w in &env.warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok(env)
}

/// After measuring: one line on how the GPU monitor fared (a warning when reads failed, so a
/// run without per-sample GPU state says why).
pub(super) fn print_monitor_health(env: &RunEnvironment, g: &Global) {
    match env.monitor_health() {
        Some(h) if h.failed > 0 => eprintln!("warning: {}", h.summary()),
        Some(h) if !g.quiet => eprintln!("{}", h.summary()),
        _ => {}
    }
}

/// A run interrupted by SIGINT/SIGTERM is not stored: wait here for the signal to end the
/// process once the clocks are restored.
pub(super) fn halt_if_terminating() {
    while pitwall_host::gpu::terminating() {
        std::thread::park();
    }
}

/// Stores a finished run and prints it; the exit code follows its status.
pub(super) fn store_and_print(
    g: &Global,
    a: &RunArgs,
    store: &mut dyn Store,
    report: &RunReport,
) -> Result<u8, Failure> {
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
    Ok(match run.status {
        RunStatus::Complete => exit::OK,
        RunStatus::Partial | RunStatus::Failed => exit::INFRA,
    })
}

/// `--commit REV…` and `--base REV --head REV`: exact commits in cached worktrees.
pub(super) fn run_commits(
    g: &Global,
    a: &RunArgs,
    config: &Config,
    store: &mut dyn Store,
    cwd: &Path,
    request: &RunRequest,
    bars: &Bars,
) -> Result<u8, Failure> {
    let repo =
        Repo::discover(a.repo.as_deref().unwrap_or(cwd)).map_err(|e| Failure::usage(e.into()))?;
    let revs: Vec<&str> = match (&a.base, &a.head) {
        (Some(b), Some(h)) => vec![b, h],
        _ => a.commits.iter().map(String::as_str).collect(),
    };
    // Resolve every revision before measuring anything.
    let commits = revs
        .iter()
        .map(|r| repo.resolve(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::usage(e.into()))?;
    let cache = repo.root().join(".pitwall").join("worktrees");
    let mut targets = Vec::new();
    let mut code = exit::OK;
    for c in &commits {
        let checkout = repo
            .checkout(c, &cache, a.rebuild)
            .map_err(|e| Failure::infra(anyhow::Error::new(e)))?;
        let target = Target {
            checkout: checkout.path,
            commit: c.sha.clone(),
            branch: c.branch.clone(),
            commit_info: Some(c.info.clone()),
        };
        let marker = cache.join(format!("{}.build", c.sha));
        match build(config, &target, Some(&marker), a.rebuild) {
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
                code = exit::INFRA;
            }
        }
    }
    if a.base.is_some() {
        if targets.len() < 2 {
            return Ok(exit::INFRA);
        }
        let plan = PairPlan {
            rounds: a.rounds.unwrap_or(DEFAULT_ROUNDS),
            until_decided: a.until_decided.then(|| UntilDecided {
                max_rounds: a.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS),
                max_time: a.max_time,
            }),
        };
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
            &targets[0],
            &targets[1],
            &plan,
            &AbConfig::default(),
            &env,
            bars,
            &progress,
        )
        .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
        print_monitor_health(&env, g);
        let reports = [outcome.base, outcome.head];
        if reports.iter().any(|r| r.run.results.is_empty()) {
            return Err(Failure::usage(anyhow!(
                "no benchmark matched the selection (hint: check --suite and --bench)"
            )));
        }
        halt_if_terminating();
        for report in &reports {
            store
                .insert_run(&report.run)
                .with_context(|| format!("cannot store run {}", report.run.id))
                .map_err(Failure::infra)?;
        }
        let pair = reports[0]
            .run
            .pair
            .as_ref()
            .map(|p| p.id.clone())
            .unwrap_or_default();
        if !g.quiet {
            eprintln!(
                "stored base run {} and head run {} (pair {pair}, {} rounds{}) in {}",
                reports[0].run.id,
                reports[1].run.id,
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
        let report = outcome.comparison;
        print!("{}", pitwall_reports::compare::render_table(&report));
        if !a.no_report {
            let out = PathBuf::from(REPORT_DIR);
            match write_report(config, store, &out) {
                Ok(_) if !g.quiet => eprintln!("report: {}", out.join("index.html").display()),
                Ok(_) => {}
                Err(f) => eprintln!("warning: report not written: {:#}", f.error),
            }
        }
        let partial = reports.iter().any(|r| r.run.status != RunStatus::Complete);
        return Ok(if partial || code != exit::OK {
            exit::INFRA
        } else if report.has_regression() {
            exit::REGRESSION
        } else {
            exit::OK
        });
    }
    let env = prepare_env(config, g)?;
    for target in &targets {
        let report = execute(config, request, &CpuBackend, target, &env, bars)
            .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
        print_monitor_health(&env, g);
        let c = store_and_print(g, a, store, &report)?;
        code = code.max(c);
    }
    Ok(code)
}
