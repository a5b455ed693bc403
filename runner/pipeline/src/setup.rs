//! The machine state a run is measured in: the environment fingerprint, CPU/NUMA pinning next
//! to the GPU, host checks, and the GPU's clocks (locked or observed, sampled during the run).
//! Everything is recorded in the fingerprint; what could not be controlled becomes a warning.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pitwall_schema::sections::{
    Clocks, CudaLibraries, GpuAvailability, GpuDetails, Isolation as SectionIsolation, NumaNodes,
    PinnedCpus, keys,
};
use pitwall_schema::{Fingerprint, GpuInfo};
use serde_json::json;

use pitwall_engine::config::{Config, PinPolicy, SuiteConfig, SuiteSpec};
use pitwall_engine::{Isolation, SampleMetaSource};
use pitwall_host::fingerprint;
use pitwall_host::gpu::{
    ClockGuard, ClockMode, ClockMonitor, CudaDriver, DeviceSelector, GpuDevice, GpuError,
    MonitorHealth, Nvml, SelectedGpu, SystemCuda, select_gpu,
};
use pitwall_host::machine::{
    Affinity, ContentionProbe, PinError, Sysfs, UNKNOWN, apply_pinning, contention_probe,
    format_cpulist, host_checks, plan_pinning,
};

/// Why the machine could not be put in the requested state.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("pinning (policy require): {0}")]
    Pinning(#[from] PinError),
    #[error("gpu clocks: {0}")]
    Clocks(#[from] GpuError),
    #[error("gpu monitor: {0}")]
    Monitor(std::io::Error),
}

/// The prepared machine. Keep it alive for the whole measurement: dropping it restores the
/// clocks and stops the monitor.
pub struct RunEnvironment {
    pub fingerprint: Fingerprint,
    /// One line each: what is not as a careful benchmarker would want it.
    pub warnings: Vec<String>,
    /// Where built-in suites run; set with [`RunEnvironment::set_isolation`].
    isolation: Isolation,
    /// The PCI bus id of `[gpu] device` as NVML reports it, for the CUDA backend's suites.
    gpu_pci_bus_id: Option<String>,
    /// The MIG instance `[gpu] device` names, which the CUDA backend picks by UUID.
    gpu_mig_uuid: Option<String>,
    /// Reads how contended the benchmark CPUs are; sampled while each side measures.
    contention: Option<Arc<dyn ContentionProbe>>,
    // Field order matters: the monitor stops before the clocks are restored.
    monitor: Option<ClockMonitor>,
    guard: Option<ClockGuard>,
}

impl std::fmt::Debug for RunEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEnvironment")
            .field("warnings", &self.warnings)
            .finish()
    }
}

/// The clock policy a run records when `lock` was asked for but denied (not root): it ran
/// observed, and never compares with a locked run (`fingerprint::differences`).
pub const LOCK_DENIED_MODE: &str = "observe (lock denied)";

/// Set once the denied lock was reported: one warning per process.
static LOCK_DENIED_WARNED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// What `prepare` may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Apply pinning and the clock policy, and monitor the GPU (`pitwall run`).
    Apply,
    /// Only read and plan (`pitwall env`).
    Inspect,
}

impl RunEnvironment {
    /// Reads the machine through `root`/`sysfs` and `nvml`, and in `Mode::Apply` pins this
    /// process and applies the clock policy. `[gpu] device` unset is CUDA device 0 as the
    /// machine's driver reports it.
    pub fn prepare(
        config: &Config,
        root: &Path,
        sysfs: &dyn Sysfs,
        affinity: &dyn Affinity,
        nvml: Result<Arc<dyn Nvml>, GpuError>,
        mode: Mode,
    ) -> Result<RunEnvironment, SetupError> {
        Self::prepare_with(config, root, sysfs, affinity, nvml, &SystemCuda, mode)
    }

    /// `prepare` with the CUDA driver that says which GPU is CUDA device 0.
    pub fn prepare_with(
        config: &Config,
        root: &Path,
        sysfs: &dyn Sysfs,
        affinity: &dyn Affinity,
        nvml: Result<Arc<dyn Nvml>, GpuError>,
        cuda: &dyn CudaDriver,
        mode: Mode,
    ) -> Result<RunEnvironment, SetupError> {
        let mut fp = base_fingerprint(root);
        let mut warnings = Vec::new();
        let gpu = find_gpu(config, nvml, cuda, &mut fp, &mut warnings);
        // CPU and memory next to the GPU.
        // Without NVML's device, a bus id or UUID the configuration names still tells the CUDA
        // suites (and pinning) which GPU; an index means nothing to CUDA.
        let (bus_id, named_uuid) = match (&gpu.device, &config.gpu.device) {
            (Some(d), _) => (Some(d.pci_bus_id.clone()), None),
            (None, Some(DeviceSelector::PciBusId(b))) => (Some(b.clone()), None),
            (None, Some(DeviceSelector::Uuid(u))) => (None, Some(u.clone())),
            (None, _) => (None, None),
        };
        let pinned_cpus = pin(
            config,
            sysfs,
            affinity,
            bus_id.as_deref(),
            mode,
            &mut fp,
            &mut warnings,
        )?;
        record_host_checks(sysfs, &pinned_cpus, &mut fp, &mut warnings);
        record_numa(sysfs, &pinned_cpus, &mut fp);
        let (guard, monitor) = clocks(config, &gpu, mode, &mut fp, &mut warnings)?;
        let contention = contention_probe(root, std::process::id(), &pinned_cpus);
        Ok(RunEnvironment {
            fingerprint: fp,
            warnings,
            isolation: Isolation::InProcess,
            gpu_pci_bus_id: bus_id,
            gpu_mig_uuid: gpu.selected.and_then(|s| s.mig_uuid).or(named_uuid),
            contention: Some(contention),
            monitor,
            guard,
        })
    }

    /// The per-sample GPU state source, when a GPU is monitored.
    pub fn meta_source(&self) -> Option<&dyn SampleMetaSource> {
        self.monitor.as_ref().map(|m| m as &dyn SampleMetaSource)
    }

    /// Runs built-in suites as `isolation` says (in process by default) and records it in
    /// the fingerprint (`extra.isolation`: `worker` or `in_process`).
    pub fn set_isolation(&mut self, isolation: Isolation) {
        self.fingerprint
            .set_section(&SectionIsolation(isolation.as_str().to_string()));
        self.isolation = isolation;
    }

    /// Where built-in suites run.
    pub fn isolation(&self) -> &Isolation {
        &self.isolation
    }

    /// `suite` as a backend gets it: a built-in suite carries the PCI bus id of `[gpu]
    /// device` (when NVML found it), which the CUDA backend maps to its own device number.
    pub fn with_gpu<'a>(&self, suite: &'a SuiteConfig) -> std::borrow::Cow<'a, SuiteConfig> {
        let mut owned = suite.clone();
        match (&self.gpu_pci_bus_id, &self.gpu_mig_uuid, &mut owned.spec) {
            (None, None, _) => std::borrow::Cow::Borrowed(suite),
            (id, uuid, SuiteSpec::Builtin { options, .. }) => {
                options.gpu_pci_bus_id = id.clone();
                options.gpu_uuid = uuid.clone();
                std::borrow::Cow::Owned(owned)
            }
            _ => std::borrow::Cow::Borrowed(suite),
        }
    }

    /// How the GPU monitor has fared so far, when a GPU is monitored.
    pub fn monitor_health(&self) -> Option<MonitorHealth> {
        self.monitor.as_ref().map(ClockMonitor::health)
    }

    /// Stops monitoring and restores the clocks, reporting a failed restore.
    pub fn finish(mut self) -> Result<(), GpuError> {
        self.monitor.take();
        match self.guard.take() {
            Some(g) => g.restore(),
            None => Ok(()),
        }
    }

    /// An environment with only the fingerprint (tests and library callers without a machine).
    pub fn plain(fingerprint: Fingerprint) -> RunEnvironment {
        RunEnvironment {
            fingerprint,
            warnings: Vec::new(),
            isolation: Isolation::InProcess,
            gpu_pci_bus_id: None,
            gpu_mig_uuid: None,
            contention: None,
            monitor: None,
            guard: None,
        }
    }
}

/// The fingerprint of this machine before any GPU or pinning facts: host, toolchain and the
/// CUDA libraries found.
fn base_fingerprint(root: &Path) -> Fingerprint {
    let mut fp = fingerprint::collect(root, std::env::vars());
    fp.set_section(&fingerprint::toolchain());
    let libs = pitwall_host::gpu::cuda_library_versions();
    if !libs.is_empty() {
        fp.set_section(&CudaLibraries(libs));
    }
    fp
}

/// The GPU a run measures on, as NVML found it.
struct FoundGpu {
    nvml: Option<Arc<dyn Nvml>>,
    device: Option<GpuDevice>,
    selected: Option<SelectedGpu>,
}

/// The GPU: facts for the fingerprint and the checks only NVML can make.
fn find_gpu(
    config: &Config,
    nvml: Result<Arc<dyn Nvml>, GpuError>,
    cuda: &dyn CudaDriver,
    fp: &mut Fingerprint,
    warnings: &mut Vec<String>,
) -> FoundGpu {
    let mut selected: Option<SelectedGpu> = None;
    let (nvml, device) = match nvml {
        Ok(nvml) => match nvml.devices() {
            Ok(devices) => {
                fp.gpus = devices.iter().map(gpu_info).collect();
                match select_gpu(config.gpu.device.as_ref(), &devices, nvml.as_ref(), cuda) {
                    Ok(sel) => {
                        warnings.extend(sel.warning.clone());
                        let device = devices.into_iter().find(|d| d.index == sel.index);
                        selected = Some(sel);
                        (Some(nvml), device)
                    }
                    Err(e) => {
                        warnings.push(format!("gpu: {e}"));
                        (Some(nvml), None)
                    }
                }
            }
            Err(e) => {
                warnings.push(format!("gpu: {e}"));
                (None, None)
            }
        },
        Err(e) => {
            fp.set_section(&GpuAvailability {
                available: false,
                reason: Some(e.to_string()),
                other: Default::default(),
            });
            (None, None)
        }
    };
    if let Some(d) = &device {
        if d.persistence_mode == Some(false) {
            warnings.push(format!(
                "gpu {}: persistence mode is off (hint: nvidia-smi -pm 1)",
                d.index
            ));
        }
        if !d.other_processes.is_empty() {
            warnings.push(format!(
                "gpu {}: other processes use it: {:?}",
                d.index, d.other_processes
            ));
        }
    }
    FoundGpu {
        nvml,
        device,
        selected,
    }
}

/// Pins this process next to the GPU (`Mode::Apply`) or only plans it (`Mode::Inspect`),
/// recording either in the fingerprint; the CPUs pinned (or planned).
fn pin(
    config: &Config,
    sysfs: &dyn Sysfs,
    affinity: &dyn Affinity,
    bus_id: Option<&str>,
    mode: Mode,
    fp: &mut Fingerprint,
    warnings: &mut Vec<String>,
) -> Result<Vec<usize>, SetupError> {
    let plan = plan_pinning(sysfs, bus_id, config.pinning.cpus.as_deref(), 0);
    Ok(match mode {
        Mode::Apply => {
            let outcome = apply_pinning(config.pinning.policy, plan, affinity)?;
            for line in &outcome.not_applied {
                warnings.push(format!("pinning: {line}"));
            }
            let cpus = outcome.applied_cpus.clone();
            fp.extra.insert(
                keys::PINNING.into(),
                serde_json::to_value(&outcome).unwrap_or_default(),
            );
            cpus
        }
        Mode::Inspect => {
            let value = match &plan {
                Ok(p) => {
                    json!({ "policy": policy_name(config.pinning.policy), "plan": p, "applied": false })
                }
                Err(e) => {
                    json!({ "policy": policy_name(config.pinning.policy), "error": e.to_string() })
                }
            };
            fp.extra.insert(keys::PINNING.into(), value);
            plan.map(|p| p.cpus).unwrap_or_default()
        }
    })
}

/// The host checks (governor, turbo, SMT, …) on the pinned CPUs, with one warning for those
/// that fail.
fn record_host_checks(
    sysfs: &dyn Sysfs,
    pinned_cpus: &[usize],
    fp: &mut Fingerprint,
    warnings: &mut Vec<String>,
) {
    let checks = host_checks(sysfs, pinned_cpus);
    let failing: Vec<String> = checks
        .iter()
        .filter(|c| !c.ok && c.value != UNKNOWN)
        .map(|c| format!("{} {}", c.name, c.value))
        .collect();
    if !failing.is_empty() {
        warnings.push(format!(
            "host: {} (hint: `pitwall env` shows how to fix each)",
            failing.join("; ")
        ));
    }
    fp.extra.insert(
        keys::HOST_CHECKS.into(),
        serde_json::to_value(&checks).unwrap_or_default(),
    );
}

/// NUMA layout (each node's CPUs) and the pinned CPUs, in the fingerprint.
fn record_numa(sysfs: &dyn Sysfs, pinned_cpus: &[usize], fp: &mut Fingerprint) {
    let numa: BTreeMap<String, String> = sysfs
        .list("sys/devices/system/node")
        .into_iter()
        .filter(|n| {
            n.len() > 4 && n.starts_with("node") && n[4..].chars().all(|c| c.is_ascii_digit())
        })
        .filter_map(|n| {
            let cpus = sysfs.read(&format!("sys/devices/system/node/{n}/cpulist"))?;
            Some((n, cpus))
        })
        .collect();
    if !numa.is_empty() {
        fp.set_section(&NumaNodes(numa));
    }
    if !pinned_cpus.is_empty() {
        fp.set_section(&PinnedCpus(format_cpulist(pinned_cpus)));
    }
}

/// Clocks: lock or observe, and watch them during the run (`Mode::Apply`); the clock policy
/// recorded in the fingerprint either way.
fn clocks(
    config: &Config,
    gpu: &FoundGpu,
    mode: Mode,
    fp: &mut Fingerprint,
    warnings: &mut Vec<String>,
) -> Result<(Option<ClockGuard>, Option<ClockMonitor>), SetupError> {
    let mut guard = None;
    let mut monitor = None;
    let clock_mode = config.gpu.clocks;
    let mut recorded_mode = clock_mode.to_string();
    match (&gpu.nvml, &gpu.device) {
        (Some(nvml), Some(d)) if mode == Mode::Apply => {
            if clock_mode == ClockMode::Observe {
                warnings.push(format!("gpu {}: clocks are not locked (observe mode); boost and throttling can move results (hint: [gpu] clocks = \"lock\" on a dedicated runner)", d.index));
            }
            match ClockGuard::acquire(Arc::clone(nvml), d.index, clock_mode) {
                Ok(g) => guard = Some(g),
                // Not root: measure anyway, observed, and say so in the run.
                Err(GpuError::LockDenied { .. }) => {
                    recorded_mode = LOCK_DENIED_MODE.to_string();
                    if !LOCK_DENIED_WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                        warnings.push(format!("gpu {}: not allowed to lock the clocks (not root): observing them instead; these runs are recorded as clocks = \"{LOCK_DENIED_MODE}\" and never compare with locked ones (hint: run as root, or set [gpu] clocks = \"observe\")", d.index));
                    }
                }
                Err(e) => return Err(e.into()),
            }
            if clock_mode != ClockMode::Off {
                let period = Duration::from_millis(config.gpu.monitor_period_ms);
                monitor = Some(
                    ClockMonitor::start(Arc::clone(nvml), d.index, period)
                        .map_err(SetupError::Monitor)?,
                );
            }
        }
        (None, _) if matches!(clock_mode, ClockMode::Lock { .. }) && mode == Mode::Apply => {
            warnings
                .push("gpu: clocks = lock, but no GPU is available: nothing locked".to_string());
        }
        _ => {}
    }
    let locked = guard.as_ref().and_then(ClockGuard::locked_mhz);
    let requested = match clock_mode {
        ClockMode::Lock { sm_mhz } => sm_mhz,
        _ => None,
    };
    fp.set_section(&Clocks {
        mode: Some(recorded_mode),
        locked_sm_mhz: locked,
        device: gpu.selected.as_ref().map(|s| s.index),
        lock_target_sm_mhz: gpu
            .device
            .as_ref()
            .and_then(|d| pitwall_host::gpu::lock_target(d, requested).ok()),
        other: Default::default(),
    });
    Ok((guard, monitor))
}

fn policy_name(p: PinPolicy) -> &'static str {
    match p {
        PinPolicy::Require => "require",
        PinPolicy::Prefer => "prefer",
        PinPolicy::Off => "off",
    }
}

fn gpu_info(d: &GpuDevice) -> GpuInfo {
    let mut info = GpuInfo {
        model: d.name.clone(),
        uuid: Some(d.uuid.clone()),
        driver: Some(d.driver_version.clone()),
        extra: Default::default(),
    };
    info.set_details(&GpuDetails {
        index: Some(d.index),
        pci_bus_id: Some(d.pci_bus_id.clone()),
        cuda_driver_version: d.cuda_driver_version.clone(),
        vbios: d.vbios.clone(),
        pcie_gen: d.pcie_gen,
        pcie_width: d.pcie_width,
        power_limit_w: d.power_limit_w,
        max_sm_mhz: d.max_sm_mhz,
        max_mem_mhz: d.max_mem_mhz,
        base_sm_mhz: d.base_sm_mhz,
        persistence_mode: d.persistence_mode,
        ecc_enabled: d.ecc_enabled,
        other_processes: Some(d.other_processes.clone()),
        numa_node: d.numa_node,
        nvlink_peers: Some(d.nvlink_peers.clone()),
        topology: (!d.topology.is_empty()).then(|| d.topology.clone()),
        other: Default::default(),
    });
    info
}

mod contention;
#[cfg(test)]
mod tests;
