//! The machine around a measurement, for the commands that measure: pinning, clocks and GPU
//! monitoring set up before, the monitor's health said after, and the console side of the
//! pipeline's measuring use cases (`Console`, their `MeasureHooks`).

use std::cell::OnceCell;
use std::path::Path;
use std::sync::Arc;

use pitwall_cpu::CpuBackend;
use pitwall_cuda::CudaBackend;

use pitwall_engine::config::{BackendChoice, Config, SuiteSpec};
use pitwall_engine::defaults;
use pitwall_engine::{Isolation, RunObserver};
use pitwall_host::gpu::load_nvml;
use pitwall_host::machine::{DirSysfs, ProcessAffinity};
use pitwall_pipeline::measure::{EnvironmentError, MeasureHooks};
use pitwall_pipeline::request::{RunReport, Target};
use pitwall_pipeline::run::RunError;
use pitwall_pipeline::setup::{Mode, RunEnvironment};
use pitwall_schema::backend::BackendError;
use pitwall_schema::sections::GpuAvailability;
use pitwall_schema::{Alert, Backend, Run, SuiteKind};
use pitwall_store::Store;

use super::args::Global;
use super::exit::{self, Failure};
use super::progress::Progress;

/// Pins this process, applies the clock policy and starts GPU monitoring; prints what is not
/// as it should be. Built-in suites run each round in a fresh `pitwall __worker` process.
/// Keep the result alive while measuring.
fn prepare_env(
    config: &Config,
    g: &Global,
    suites: &SuiteBackend,
) -> Result<RunEnvironment, Failure> {
    // On SIGINT/SIGTERM: kill running benchmark commands, restore clocks, then die.
    pitwall_host::gpu::on_terminate(pitwall_engine::kill_running_commands);
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
            .suspend(|| prepare_env(config, self.g, &self.suites))
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
    let url = std::env::var(&config.alerts.webhook_env)
        .ok()
        .filter(|u| !u.trim().is_empty());
    if let Some(url) = url {
        let sent =
            pitwall_reports::notify::check_webhook_url(url.trim(), &config.alerts.webhook_env)
                .and_then(|()| {
                    pitwall_reports::notify::post_webhook(
                        url.trim(),
                        project,
                        &open,
                        defaults::ALERT_WEBHOOK_TIMEOUT,
                    )
                });
        if let Err(e) = sent {
            eprintln!("warning: {e}");
        }
    }
    match super::github::open_alert_issues(config, &open) {
        Ok(outcomes) if !outcomes.is_empty() && !g.quiet => {
            let list: Vec<String> = outcomes.iter().map(ToString::to_string).collect();
            eprintln!("alert issue(s) {}", list.join(", "));
        }
        Ok(_) => {}
        Err(e) => eprintln!(
            "warning: cannot open alert issues: {}",
            pitwall_reports::table::escape_controls(&e)
        ),
    }
}

/// The backend of the built-in suites and, when `auto` fell back to the CPU, why CUDA could not
/// run (its probe's short reason).
pub(super) struct SuiteBackend {
    backend: Box<dyn Backend>,
    cuda_skipped: Option<String>,
    /// Lines the run shows once before measuring (the CUDA collective suite's world size 1).
    notes: Vec<String>,
}

impl SuiteBackend {
    /// `[suites] backend`: `cpu` as asked; `cuda` or an infrastructure failure; `auto` CUDA
    /// when its probe succeeds, else the CPU. Without built-in suites nothing is probed.
    fn select(config: &Config) -> Result<SuiteBackend, Failure> {
        Ok(match choose(config)? {
            Ok(cuda) => {
                let layout = pitwall_rendezvous::Layout::from_env().ok();
                let notes = config
                    .suites
                    .iter()
                    .filter_map(|s| match (&s.spec, &layout) {
                        (
                            SuiteSpec::Builtin {
                                kind: SuiteKind::Collective,
                                options,
                                ..
                            },
                            Some(l),
                        ) => cuda.collective_note(l, options.ranks),
                        _ => None,
                    })
                    .take(1)
                    .collect();
                SuiteBackend {
                    backend: Box::new(cuda),
                    cuda_skipped: None,
                    notes,
                }
            }
            Err(cuda_skipped) => SuiteBackend {
                backend: Box::new(CpuBackend),
                cuda_skipped,
                notes: Vec::new(),
            },
        })
    }
}

/// The decision of `[suites] backend`: the CUDA backend, or the CPU with why CUDA was skipped
/// (`auto` without CUDA); `cuda` where CUDA cannot run is an infrastructure failure.
fn choose(config: &Config) -> Result<Result<CudaBackend, Option<String>>, Failure> {
    let builtin = config
        .suites
        .iter()
        .any(|s| matches!(s.spec, SuiteSpec::Builtin { .. }));
    match config.backend {
        BackendChoice::Cpu => Ok(Err(None)),
        _ if !builtin => Ok(Err(None)),
        BackendChoice::Cuda => match CudaBackend::probe() {
            Ok(cuda) => Ok(Ok(cuda)),
            Err(e) => Err(Failure::of_backend("[suites] backend = \"cuda\"", e)),
        },
        BackendChoice::Auto => Ok(CudaBackend::probe().map_err(|e| Some(short_reason(&e)))),
    }
}

/// The backend a rank other than 0 follows rank 0's collective suites with: the one rank 0
/// chooses from the same configuration (CUDA: NCCL sessions; `None`: the CPU's TCP ones).
pub(super) fn follower_backend(config: &Config) -> Result<Option<CudaBackend>, Failure> {
    Ok(choose(config)?.ok())
}

/// A backend error's reason without its hint: what fits in one line.
fn short_reason(e: &BackendError) -> String {
    let reason = match e {
        BackendError::Unavailable { reason, .. } | BackendError::Failed { reason, .. } => reason,
    };
    reason.split("; hint:").next().unwrap_or(reason).to_string()
}

/// The backends a `pitwall __worker` may be asked for by name (`Backend::name`), CUDA probed
/// only when asked for.
#[derive(Default)]
pub(super) struct WorkerBackends {
    cpu: CpuBackend,
    cuda: OnceCell<Result<CudaBackend, String>>,
}

impl WorkerBackends {
    pub(super) fn get(&self, name: &str) -> Result<&dyn Backend, BackendError> {
        let unavailable = |reason: String| BackendError::Unavailable {
            backend: "cuda",
            reason,
        };
        match name {
            "cuda" => match self
                .cuda
                .get_or_init(|| CudaBackend::probe().map_err(|e| short_reason(&e)))
            {
                Ok(cuda) => Ok(cuda),
                Err(reason) => Err(unavailable(reason.clone())),
            },
            "cpu" => Ok(&self.cpu),
            other => Err(BackendError::Failed {
                backend: "worker",
                reason: format!(
                    "the parent asked for backend `{other}`, which this pitwall does not have"
                ),
            }),
        }
    }
}

/// The one short line of a run without a usable GPU: the causes in a few words (the full
/// reasons, with their hints, are in the fingerprint, `pitwall env` and the probe's error).
/// `nvml` is why GPU monitoring is off; CUDA's reason comes from the backend selection.
fn no_gpu_line(nvml: Option<&str>, suites: &SuiteBackend) -> Option<String> {
    let nvml_cause = nvml.map(|reason| {
        if reason.contains("libnvidia-ml") && reason.contains("cannot load") {
            "no NVIDIA driver".to_string()
        } else {
            let first = reason.split("; hint:").next().unwrap_or(reason);
            pitwall_reports::table::escape_controls(
                first.trim_start_matches("nvml is not available: "),
            )
        }
    });
    let cuda_cause = suites
        .cuda_skipped
        .as_deref()
        .map(pitwall_reports::table::escape_controls);
    let on_cuda = suites.backend.name() == "cuda";
    Some(match (nvml_cause, cuda_cause) {
        (None, None) => return None,
        (Some(n), None) if on_cuda => {
            format!("no GPU monitoring ({n}): CUDA suites run without GPU state")
        }
        (Some(n), None) => format!("no GPU ({n}): GPU monitoring skipped, CPU suites only"),
        // No driver or no device: there is no GPU, whatever NVML was asked (clocks = "off").
        (None, Some(c)) if c == "no CUDA driver" || c == "no CUDA device" => {
            format!("no GPU ({c}): CUDA suites skipped, CPU suites only")
        }
        (None, Some(c)) => format!("no CUDA ({c}): CUDA suites skipped, CPU suites only"),
        (Some(n), Some(c)) => {
            // Without a driver both say so: name it once.
            let cause = if n == "no NVIDIA driver" && c == "no CUDA driver" {
                c
            } else {
                format!("{n}; {c}")
            };
            format!("no GPU ({cause}): GPU monitoring and CUDA suites skipped, CPU suites only")
        }
    })
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
    use super::{SuiteBackend, no_gpu_line};

    fn cpu(cuda_skipped: Option<&str>) -> SuiteBackend {
        SuiteBackend {
            backend: Box::new(pitwall_cpu::CpuBackend),
            cuda_skipped: cuda_skipped.map(str::to_string),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_no_gpu_line_is_short() {
        let reason = "nvml is not available: cannot load libnvidia-ml.so.1 (libnvidia-ml.so.1: cannot open shared object file: No such file or directory); hint: GPU features need the NVIDIA driver (libnvidia-ml.so.1); use clock mode off on machines without one";
        assert_eq!(
            no_gpu_line(Some(reason), &cpu(None)).unwrap(),
            "no GPU (no NVIDIA driver): GPU monitoring skipped, CPU suites only"
        );
        assert_eq!(
            no_gpu_line(
                Some("nvml is not available: NVML init failed: driver/library mismatch; hint: x"),
                &cpu(None)
            )
            .unwrap(),
            "no GPU (NVML init failed: driver/library mismatch): GPU monitoring skipped, CPU suites only"
        );
    }

    #[test]
    fn no_driver_for_nvml_nor_cuda_is_one_line() {
        let reason = "nvml is not available: cannot load libnvidia-ml.so.1 (x); hint: y";
        assert_eq!(
            no_gpu_line(Some(reason), &cpu(Some("no CUDA driver"))).unwrap(),
            "no GPU (no CUDA driver): GPU monitoring and CUDA suites skipped, CPU suites only"
        );
        assert_eq!(
            no_gpu_line(None, &cpu(Some("no NVRTC"))).unwrap(),
            "no CUDA (no NVRTC): CUDA suites skipped, CPU suites only"
        );
        assert_eq!(
            no_gpu_line(Some(reason), &cpu(Some("no NVRTC"))).unwrap(),
            "no GPU (no NVIDIA driver; no NVRTC): GPU monitoring and CUDA suites skipped, CPU suites only"
        );
        assert_eq!(
            no_gpu_line(None, &cpu(Some("no CUDA driver"))).unwrap(),
            "no GPU (no CUDA driver): CUDA suites skipped, CPU suites only"
        );
        assert_eq!(no_gpu_line(None, &cpu(None)), None);
    }

    #[test]
    fn a_worker_builds_the_backend_it_is_named() {
        let backends = super::WorkerBackends::default();
        assert_eq!(backends.get("cpu").unwrap().name(), "cpu");
        let e = backends.get("rocm").err().unwrap();
        assert!(e.to_string().contains("backend `rocm`"), "{e}");
        use pitwall_cuda::CudaSystem;
        if !pitwall_cuda::SystemCuda.driver_present() {
            let e = backends.get("cuda").err().unwrap();
            assert_eq!(e.to_string(), "cuda backend unavailable: no CUDA driver");
        }
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
