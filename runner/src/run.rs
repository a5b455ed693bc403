//! One `pitwall run`: the optional build step, then every selected suite, gathered into a
//! `Run` with its fingerprint and config hash. Storing it is the caller's job.

use std::path::Path;
use std::time::Duration;

use pitwall_suites::{Backend, Run, RunStatus, WORKING_TREE};

use crate::config::Config;
use crate::engine::{RunObserver, run_command, run_suite};
use crate::fingerprint;

/// Limit on the build command.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Suite names to run; all configured suites when empty.
    pub suites: Vec<String>,
    /// Keep only benchmarks whose `name[params]` contains this text.
    pub filter: Option<String>,
}

/// A finished run and the suites that were skipped (one line each).
#[derive(Debug, Clone)]
pub struct RunReport {
    pub run: Run,
    pub skipped: Vec<String>,
}

/// Why a run could not start or produced nothing to store.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("unknown suite `{name}` (hint: configured suites are {known})")]
    UnknownSuite { name: String, known: String },
    #[error("build command `{command}` failed: {detail}")]
    Build { command: String, detail: String },
}

/// Runs the build and the selected suites in `checkout`.
pub fn execute(
    config: &Config,
    request: &RunRequest,
    backend: &dyn Backend,
    checkout: &Path,
    observer: &dyn RunObserver,
) -> Result<RunReport, RunError> {
    let known: Vec<&str> = config.suites.iter().map(|s| s.name.as_str()).collect();
    for name in &request.suites {
        if !known.contains(&name.as_str()) {
            return Err(RunError::UnknownSuite {
                name: name.clone(),
                known: known.join(", "),
            });
        }
    }
    if let Some(build) = &config.project.build {
        let outcome =
            run_command(build, checkout, &Default::default(), BUILD_TIMEOUT).map_err(|e| {
                RunError::Build {
                    command: build.clone(),
                    detail: e.to_string(),
                }
            })?;
        if !outcome.success() {
            return Err(RunError::Build {
                command: build.clone(),
                detail: outcome.failure_message(build, BUILD_TIMEOUT.as_secs_f64()),
            });
        }
    }
    let started_at = now_rfc3339();
    let fingerprint = fingerprint::current();
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for suite in &config.suites {
        if !request.suites.is_empty() && !request.suites.contains(&suite.name) {
            continue;
        }
        let outcome = run_suite(
            suite,
            backend,
            checkout,
            request.filter.as_deref(),
            observer,
        );
        results.extend(outcome.results);
        skipped.extend(outcome.skipped);
    }
    let run = Run {
        id: uuid::Uuid::now_v7().to_string(),
        project: config.project.name.clone(),
        commit: WORKING_TREE.to_string(),
        branch: None,
        started_at,
        finished_at: now_rfc3339(),
        config_hash: config.hash(),
        fingerprint,
        status: RunStatus::from_results(&results),
        results,
    };
    Ok(RunReport { run, skipped })
}

/// Current UTC time, RFC 3339 with microseconds.
pub fn now_rfc3339() -> String {
    let ts = jiff::Timestamp::now();
    format!("{:.6}", ts)
}
