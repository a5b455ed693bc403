//! The console side of the pipeline's measuring use cases (`Console`, their `MeasureHooks`):
//! progress, the machine set up before measuring (pinning, clocks, GPU monitoring) with what
//! is not as it should be said, the monitor's health said after, failed builds, stored runs
//! and new alerts.

use std::path::Path;
use std::sync::Arc;

use pitwall_engine::config::Config;
use pitwall_engine::{Isolation, RunObserver};
use pitwall_host::gpu::load_nvml;
use pitwall_host::machine::{DirSysfs, ProcessAffinity};
use pitwall_pipeline::measure::{EnvironmentError, MeasureHooks};
use pitwall_pipeline::request::{RunReport, Target};
use pitwall_pipeline::run::RunError;
use pitwall_pipeline::setup::{Mode, RunEnvironment};
use pitwall_schema::sections::GpuAvailability;
use pitwall_schema::{Backend, Run};
use pitwall_store::Store;

use super::args::Global;
use super::exit::{self, Failure};
use super::progress::Progress;
use super::suite_backend::{SuiteBackend, no_gpu_line};

/// Pins this process, applies the clock policy and starts GPU monitoring; prints what is not
/// as it should be. Built-in suites run each round in a fresh `pitwall __worker` process.
/// Keep the result alive while measuring.
fn prepare_env(config: &Config, suites: &SuiteBackend) -> Result<RunEnvironment, Failure> {
    let nvml = load_nvml().map(Arc::from);
    let mut env = RunEnvironment::prepare(
        config,
        Path::new("/"),
        &DirSysfs::real(),
        &ProcessAffinity,
        nvml,
        Mode::Apply,
    )
    .map_err(Failure::of_setup)?;
    let exe = std::env::current_exe().map_err(|e| {
        Failure::of_io(
            "cannot find pitwall's own executable to start suite workers",
            e,
        )
    })?;
    env.set_isolation(Isolation::Worker { exe });
    // Shown under `--quiet` too (issue 24): `-q` hides progress, never a warning, and on a
    // GPU runner whose driver broke the no-GPU line is the one that matters.
    let nvml = env
        .fingerprint
        .section::<GpuAvailability>()
        .and_then(|g| g.reason);
    if let Some(line) = no_gpu_line(nvml.as_deref(), suites) {
        eprintln!("{line}");
    }
    for w in &env.warnings {
        eprintln!("warning: {w}");
    }
    Ok(env)
}

/// After measuring: one line on how the GPU monitor fared (a warning when reads failed, so a
/// run without per-sample GPU state says why).
fn print_monitor_health(env: &RunEnvironment, g: &Global) {
    match env.monitor_health() {
        Some(h) if h.failed > 0 => eprintln!("warning: {}", h.summary()),
        Some(h) if !g.quiet => eprintln!("{}", h.summary()),
        _ => {}
    }
}

/// What a run of `pitwall run` prints once it is stored.
pub(super) type OnStored<'a> = dyn Fn(&RunReport, &mut dyn Store) + 'a;

/// The console around a measuring use case: progress (a live line on a terminal, plain lines
/// otherwise), the machine set up when asked, and one line for each thing worth saying on
/// stderr (none with `--quiet` but warnings and errors). Call [`Console::finish`] when the use
/// case returns, before printing its result.
pub(super) struct Console<'a> {
    g: &'a Global,
    progress: Progress,
    on_stored: Option<&'a OnStored<'a>>,
    suites: SuiteBackend,
}

impl<'a> Console<'a> {
    /// The console of a measuring command, with the backend `[suites] backend` selects
    /// (`cuda` where CUDA cannot run is an infrastructure failure).
    pub(super) fn new(g: &'a Global, config: &Config) -> Result<Console<'a>, Failure> {
        // On SIGINT/SIGTERM from here on (builds included): kill running benchmark and build
        // commands, restore clocks, then die; the use case returns `Cancelled` meanwhile.
        pitwall_host::gpu::on_terminate(pitwall_engine::kill_running_commands);
        pitwall_host::gpu::install_signal_handler().map_err(Failure::of_gpu)?;
        let suites = SuiteBackend::select(config)?;
        if !g.quiet {
            for note in &suites.notes {
                eprintln!("{note}");
            }
        }
        Ok(Console {
            g,
            progress: Progress::new(g.quiet),
            on_stored: None,
            suites,
        })
    }

    /// The backend of the built-in suites, for the use case's `Measurer`.
    pub(super) fn backend(&self) -> &dyn Backend {
        self.suites.backend.as_ref()
    }

    /// Measuring is over: the terminal's progress line is cleared.
    pub(super) fn finish(&self) {
        self.progress.finish();
    }

    /// Renders each run of `measure_commits` as soon as it is stored.
    pub(super) fn on_stored(mut self, f: &'a OnStored<'a>) -> Console<'a> {
        self.on_stored = Some(f);
        self
    }
}

impl MeasureHooks for Console<'_> {
    fn observer(&self) -> &dyn RunObserver {
        &self.progress
    }

    fn prepare(&self, config: &Config) -> Result<RunEnvironment, EnvironmentError> {
        self.progress
            .suspend(|| prepare_env(config, &self.suites))
            .map_err(|f| f.error.into())
    }

    fn measured(&self, env: &RunEnvironment) {
        self.progress.suspend(|| print_monitor_health(env, self.g));
    }

    fn build_failed(&self, target: &Target, run: &Run, error: &RunError, store: &str) {
        self.progress.suspend(|| {
            eprintln!("error: {error}");
            if let RunError::Build { log_tail, .. } = error {
                exit::print_details(log_tail);
            }
            eprintln!(
                "stored failed run {} for {} in {store}",
                run.id,
                target.describe()
            );
        });
    }

    fn run_stored(&self, report: &RunReport, store: &mut dyn Store) {
        // A warning, shown under `--quiet` too: the run is kept out of change detection.
        if let Some(c) = report.run.contention.as_ref().filter(|c| c.contended) {
            self.progress.suspend(|| {
                eprintln!(
                    "warning: run {} was measured on a contended machine ({}); it is stored but left out of change detection (hint: `pitwall env` shows what competes for the cpus)",
                    report.run.id,
                    c.reasons.join(", ")
                );
            });
        }
        if let Some(f) = self.on_stored {
            self.progress.suspend(|| f(report, store));
        }
    }
}
