//! One `pitwall run`: the build step (cached per commit), then every selected suite, gathered
//! into a `Run` with its fingerprint and config hash; for `--base/--head`, both sides measured
//! in interleaved rounds so drift on the host cancels. Storing is the caller's job.

use std::path::Path;
use std::time::{Duration, Instant};

use pitwall_schema::{Backend, Run};

use crate::request::{RunReport, RunRequest, Target, new_run};
use crate::rounds::Rounds;
use crate::setup::RunEnvironment;
use pitwall_engine::config::Config;
use pitwall_engine::{ChildEnv, CommandOutcome, RunObserver, Step, run_command};
use pitwall_host::fingerprint;
use pitwall_schema::time::now_rfc3339;

/// Limit on the build command.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);
/// Lines of a failed build's output kept in the error and the stored run.
const BUILD_LOG_LINES: usize = 20;

/// Why a run could not start or produced nothing to store.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("unknown suite `{name}` (hint: configured suites are {known})")]
    UnknownSuite { name: String, known: String },
    /// One line; the last lines of the build's output are in `log_tail`, for printing after
    /// it and for the stored run.
    #[error("{target}: build command `{command}` failed: {detail}")]
    Build {
        target: String,
        command: String,
        detail: String,
        log_tail: Vec<String>,
    },
}

/// Whether the build ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildOutcome {
    NotConfigured,
    Built,
    /// A build of this commit with the same command already succeeded.
    Cached,
}

/// Runs `[project] build` in the target. With a `marker` file (per commit), a successful build
/// is remembered and skipped next time unless `rebuild`. The observer is told when the build
/// starts and ends, or that it was cached.
pub fn build(
    config: &Config,
    target: &Target,
    marker: Option<&Path>,
    rebuild: bool,
    observer: &dyn RunObserver,
) -> Result<BuildOutcome, RunError> {
    let Some(command) = &config.project.build else {
        return Ok(BuildOutcome::NotConfigured);
    };
    let described = target.describe();
    if let Some(m) = marker {
        if !rebuild && std::fs::read_to_string(m).is_ok_and(|c| c == *command) {
            observer.step(&Step::BuildCached { target: &described });
            return Ok(BuildOutcome::Cached);
        }
        let _ = std::fs::remove_file(m);
    }
    observer.step(&Step::BuildStarted {
        target: &described,
        command: &pitwall_engine::shown_command(command),
    });
    let started = Instant::now();
    let finished = |ok: bool| {
        observer.step(&Step::BuildFinished {
            target: &described,
            elapsed: started.elapsed(),
            ok,
        });
    };
    let fail = |detail: String, log_tail: Vec<String>| RunError::Build {
        target: target.describe(),
        command: command.clone(),
        detail,
        log_tail,
    };
    let outcome = run_command(
        command,
        &target.checkout,
        &ChildEnv::scrubbed(
            &Default::default(),
            &config.project.env_pass,
            &config.token_vars(),
        ),
        BUILD_TIMEOUT,
    )
    .map_err(|e| {
        finished(false);
        fail(format!("cannot start: {e}"), Vec::new())
    })?;
    finished(outcome.success());
    if !outcome.success() {
        let out = String::from_utf8_lossy(&outcome.stdout);
        let log: Vec<&str> = out.lines().chain(outcome.stderr_tail.lines()).collect();
        let tail = log[log.len().saturating_sub(BUILD_LOG_LINES)..]
            .iter()
            .map(|l| l.to_string())
            .collect();
        // The outcome without its stderr tail: the log tail (stdout too) is kept apart.
        let quiet = CommandOutcome {
            stderr_tail: String::new(),
            ..outcome
        };
        let status = quiet.failure_message(command, BUILD_TIMEOUT.as_secs_f64());
        return Err(fail(status, tail));
    }
    if let Some(m) = marker {
        let _ = std::fs::write(m, command);
    }
    Ok(BuildOutcome::Built)
}

/// Fails on a `--suite` name that is not configured.
pub fn check_suites(config: &Config, request: &RunRequest) -> Result<(), RunError> {
    let known: Vec<&str> = config.suites.iter().map(|s| s.name.as_str()).collect();
    for name in &request.suites {
        if !known.contains(&name.as_str()) {
            return Err(RunError::UnknownSuite {
                name: name.clone(),
                known: known.join(", "),
            });
        }
    }
    Ok(())
}

/// Runs the selected suites once in `target` (build it first with [`build`]).
pub fn execute(
    config: &Config,
    request: &RunRequest,
    backend: &dyn Backend,
    target: &Target,
    env: &RunEnvironment,
    observer: &dyn RunObserver,
) -> Result<RunReport, RunError> {
    let mut reports = execute_interleaved(
        config,
        request,
        backend,
        std::slice::from_ref(target),
        1,
        env,
        observer,
    )?;
    Ok(reports.remove(0))
}

/// Measures every target in `rounds` interleaved rounds (t0, t1, t0, t1, …), merging each
/// benchmark's samples over the rounds and keeping the replicate (process) each came from; one
/// run per target, in the order given.
pub fn execute_interleaved(
    config: &Config,
    request: &RunRequest,
    backend: &dyn Backend,
    targets: &[Target],
    rounds: u32,
    env: &RunEnvironment,
    observer: &dyn RunObserver,
) -> Result<Vec<RunReport>, RunError> {
    check_suites(config, request)?;
    let mut acc = Rounds::new(targets.len()).announced(rounds.max(1), &[]);
    for _ in 0..rounds.max(1) {
        acc.round(config, request, None, backend, targets, env, observer);
    }
    Ok(acc.reports(config, targets, env, None))
}

/// The stored record of a target whose build failed: status failed, no results, the log tail.
pub fn failed_build_run(config: &Config, target: &Target, error: &RunError) -> Run {
    let now = now_rfc3339();
    let mut run = new_run(config, target, fingerprint::current(), &now, Vec::new());
    run.error = Some(match error {
        RunError::Build { log_tail, .. } if !log_tail.is_empty() => {
            format!("{error}; log tail:\n{}", log_tail.join("\n"))
        }
        _ => error.to_string(),
    });
    run
}
