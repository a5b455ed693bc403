//! The machine around a measurement, for the commands that measure: pinning, clocks and GPU
//! monitoring set up before, the monitor's health said after, and the console side of the
//! pipeline's measuring use cases (`Console`, their `MeasureHooks`).

use std::path::Path;
use std::sync::Arc;

use pitwall_host::gpu::load_nvml;
use pitwall_host::machine::{DirSysfs, ProcessAffinity};
use pitwall_pipeline::config::Config;
use pitwall_pipeline::defaults;
use pitwall_pipeline::engine::{Isolation, RunObserver};
use pitwall_pipeline::measure::{EnvironmentError, MeasureHooks};
use pitwall_pipeline::run::{RunError, RunReport, Target};
use pitwall_pipeline::setup::{Mode, RunEnvironment};
use pitwall_schema::sections::GpuAvailability;
use pitwall_schema::{Alert, Run};
use pitwall_store::Store;

use super::args::Global;
use super::exit::{self, Failure};
use super::progress::Progress;

/// Pins this process, applies the clock policy and starts GPU monitoring; prints what is not
/// as it should be. Built-in suites run each round in a fresh `pitwall __worker` process.
/// Keep the result alive while measuring.
fn prepare_env(config: &Config, g: &Global) -> Result<RunEnvironment, Failure> {
    // On SIGINT/SIGTERM: kill running benchmark commands, restore clocks, then die.
    pitwall_host::gpu::on_terminate(pitwall_pipeline::engine::kill_running_commands);
    pitwall_host::gpu::install_signal_handler().map_err(Failure::of_gpu)?;
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
    if !g.quiet {
        if let Some(reason) = env
            .fingerprint
            .section::<GpuAvailability>()
            .and_then(|g| g.reason)
        {
            eprintln!("{}", no_gpu_line(&reason));
        }
        for w in &env.warnings {
            eprintln!("warning: {w}");
        }
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
}

impl<'a> Console<'a> {
    pub(super) fn new(g: &'a Global) -> Console<'a> {
        Console {
            g,
            progress: Progress::new(g.quiet),
            on_stored: None,
        }
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
            .suspend(|| prepare_env(config, self.g))
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
        if let Some(f) = self.on_stored {
            self.progress.suspend(|| f(report, store));
        }
    }

    fn alerts_raised(&self, config: &Config, alerts: &[Alert]) {
        self.progress
            .suspend(|| announce_alerts(self.g, config, alerts));
    }
}

/// Says on stderr how many new alerts need attention, posts the open ones to the webhook
/// `PITWALL_ALERT_WEBHOOK` names (when set) and opens a GitHub issue for each when
/// `[github] publish` names `issue`. A notification that fails is a warning: the runs and
/// alerts are stored, and `pitwall alerts` lists them.
pub fn announce_alerts(g: &Global, config: &Config, alerts: &[Alert]) {
    let project = config.project.name.as_str();
    let open: Vec<Alert> = alerts
        .iter()
        .filter(|a| a.status.is_open())
        .cloned()
        .collect();
    if open.is_empty() {
        return;
    }
    if !g.quiet {
        eprintln!(
            "{} new alert(s) (hint: `pitwall alerts` lists them)",
            open.len()
        );
    }
    let url = std::env::var(defaults::ALERT_WEBHOOK_ENV)
        .ok()
        .filter(|u| !u.trim().is_empty());
    if let Some(url) = url {
        let sent = pitwall_reports::notify::post_webhook(
            url.trim(),
            project,
            &open,
            defaults::ALERT_WEBHOOK_TIMEOUT,
        );
        if let Err(e) = sent {
            eprintln!("warning: {e}");
        }
    }
    match super::github::open_alert_issues(config, &open) {
        Ok(numbers) if !numbers.is_empty() && !g.quiet => {
            let list: Vec<String> = numbers.iter().map(|n| format!("#{n}")).collect();
            eprintln!("opened alert issue(s) {}", list.join(", "));
        }
        Ok(_) => {}
        Err(e) => eprintln!(
            "warning: cannot open alert issues: {}",
            pitwall_reports::table::escape_controls(&e)
        ),
    }
}

/// The one short line of a run without a usable GPU: the cause in a few words (the full
/// reason, with its hint, is in the fingerprint and `pitwall env`).
fn no_gpu_line(reason: &str) -> String {
    let cause = if reason.contains("libnvidia-ml") && reason.contains("cannot load") {
        "no NVIDIA driver".to_string()
    } else {
        let first = reason.split("; hint:").next().unwrap_or(reason);
        pitwall_reports::table::escape_controls(first.trim_start_matches("nvml is not available: "))
    };
    format!("no GPU ({cause}): GPU monitoring skipped, CPU suites only")
}

/// Makes this process non-dumpable (`PR_SET_DUMPABLE` 0): its memory and its environment
/// (`/proc/PID/environ`, which keeps the token even after the commands it starts are given a
/// scrubbed one) can no longer be read by the build and benchmark commands it runs as the same
/// user, nor can they ptrace it. Also no core dump. A failure is ignored: it only means the
/// kernel does not offer this (docs/CI.md).
pub fn keep_secrets_from_children() {
    // SAFETY: prctl(PR_SET_DUMPABLE) takes integer arguments and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_no_gpu_line_is_short() {
        let reason = "nvml is not available: cannot load libnvidia-ml.so.1 (libnvidia-ml.so.1: cannot open shared object file: No such file or directory); hint: GPU features need the NVIDIA driver (libnvidia-ml.so.1); use clock mode off on machines without one";
        assert_eq!(
            super::no_gpu_line(reason),
            "no GPU (no NVIDIA driver): GPU monitoring skipped, CPU suites only"
        );
        assert_eq!(
            super::no_gpu_line(
                "nvml is not available: NVML init failed: driver/library mismatch; hint: x"
            ),
            "no GPU (NVML init failed: driver/library mismatch): GPU monitoring skipped, CPU suites only"
        );
    }

    #[test]
    fn pitwall_becomes_non_dumpable() {
        // A child, so that the test process itself stays as it was.
        // SAFETY: fork in a test; the child only calls async-signal-safe functions and _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            super::keep_secrets_from_children();
            // SAFETY: prctl with PR_GET_DUMPABLE reads a flag; _exit ends the child.
            let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
            unsafe { libc::_exit(if dumpable == 0 { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}
