//! The machine around a measurement, for the commands that measure: pinning, clocks and GPU
//! monitoring set up before, the monitor's health said after, and a run interrupted by a
//! signal never stored.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use pitwall_host::gpu::load_nvml;
use pitwall_host::machine::{DirSysfs, ProcessAffinity};
use pitwall_pipeline::config::Config;
use pitwall_pipeline::engine::Isolation;
use pitwall_pipeline::setup::{Mode, RunEnvironment};

use super::args::Global;
use super::exit::Failure;

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
