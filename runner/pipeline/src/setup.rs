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
    Affinity, PinError, Sysfs, UNKNOWN, apply_pinning, format_cpulist, host_checks, plan_pinning,
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
        let mut fp = fingerprint::collect(root, std::env::vars());
        let mut warnings = Vec::new();
        fp.set_section(&fingerprint::toolchain());
        let libs = pitwall_host::gpu::cuda_library_versions();
        if !libs.is_empty() {
            fp.set_section(&CudaLibraries(libs));
        }

        // The GPU: facts for the fingerprint and the checks only NVML can make.
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

        // CPU and memory next to the GPU.
        // Without NVML's device, a bus id or UUID the configuration names still tells the CUDA
        // suites (and pinning) which GPU; an index means nothing to CUDA.
        let (bus_id, named_uuid) = match (&device, &config.gpu.device) {
            (Some(d), _) => (Some(d.pci_bus_id.clone()), None),
            (None, Some(DeviceSelector::PciBusId(b))) => (Some(b.clone()), None),
            (None, Some(DeviceSelector::Uuid(u))) => (None, Some(u.clone())),
            (None, _) => (None, None),
        };
        let plan = plan_pinning(sysfs, bus_id.as_deref(), config.pinning.cpus.as_deref(), 0);
        let pinned_cpus = match mode {
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
        };
        let checks = host_checks(sysfs, &pinned_cpus);
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
        // NUMA layout: each node's CPUs.
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
            fp.set_section(&PinnedCpus(format_cpulist(&pinned_cpus)));
        }

        // Clocks: lock or observe, and watch them during the run.
        let mut guard = None;
        let mut monitor = None;
        let clock_mode = config.gpu.clocks;
        let mut recorded_mode = clock_mode.to_string();
        match (&nvml, &device) {
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
                warnings.push(
                    "gpu: clocks = lock, but no GPU is available: nothing locked".to_string(),
                );
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
            device: selected.as_ref().map(|s| s.index),
            lock_target_sm_mhz: device
                .as_ref()
                .and_then(|d| pitwall_host::gpu::lock_target(d, requested).ok()),
            other: Default::default(),
        });
        Ok(RunEnvironment {
            fingerprint: fp,
            warnings,
            isolation: Isolation::InProcess,
            gpu_pci_bus_id: bus_id,
            gpu_mig_uuid: selected.and_then(|s| s.mig_uuid).or(named_uuid),
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
            monitor: None,
            guard: None,
        }
    }
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

/// A run interrupted by SIGINT/SIGTERM is not stored: wait here for the signal to end the
/// process once the clocks are restored.
pub fn halt_if_terminating() {
    while pitwall_host::gpu::terminating() {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_host::gpu::{CudaDevice0, FakeNvml, fake_device};
    use pitwall_host::machine::{DirSysfs, FakeAffinity};

    struct Cuda(CudaDevice0);

    impl CudaDriver for Cuda {
        fn device0(&self) -> CudaDevice0 {
            self.0.clone()
        }
    }

    /// `prepare` on an empty machine tree with `nvml`, CUDA device 0 at `cuda0`.
    fn prepare(config: &Config, nvml: &FakeNvml, cuda0: CudaDevice0) -> RunEnvironment {
        let root = tempfile::tempdir().unwrap();
        let shared: Arc<dyn Nvml> = Arc::new(nvml.clone());
        RunEnvironment::prepare_with(
            config,
            root.path(),
            &DirSysfs::new(root.path()),
            &FakeAffinity::new(vec![0, 1]),
            Ok(shared),
            &Cuda(cuda0),
            Mode::Apply,
        )
        .unwrap()
    }

    #[test]
    fn unset_device_is_cuda_device_0_for_clocks_monitor_and_pinning() {
        // NVML 0–2; CUDA_VISIBLE_DEVICES=2 makes NVML 2 (bus 0x19) CUDA's device 0.
        let nvml = FakeNvml::new().with_devices((0..3).map(fake_device).collect());
        let mut config = Config::builtin_default("p");
        config.gpu.clocks = ClockMode::Lock { sm_mhz: None };
        let env = prepare(&config, &nvml, CudaDevice0::BusId("0000:19:00.0".into()));
        assert_eq!(env.gpu_pci_bus_id.as_deref(), Some("00000000:19:00.0"));
        assert_eq!(env.monitor_health().map(|h| h.device), Some(2));
        assert_eq!(nvml.locked(2), Some((1575, 1575)), "{:?}", nvml.calls());
        assert_eq!(nvml.locked(0), None);
        let clocks = env.fingerprint.section::<Clocks>().unwrap();
        assert_eq!(clocks.device, Some(2));
        assert_eq!(clocks.lock_target_sm_mhz, Some(1575));
        env.finish().unwrap();
        assert_eq!(nvml.locked(2), None, "restored");
    }

    #[test]
    fn without_nvml_a_named_bus_id_or_uuid_still_reaches_the_cuda_suites() {
        let root = tempfile::tempdir().unwrap();
        let suite_options = |device: &str| {
            let mut config = Config::builtin_default("p");
            config.gpu.device = Some(DeviceSelector::parse(device).unwrap());
            let env = RunEnvironment::prepare_with(
                &config,
                root.path(),
                &DirSysfs::new(root.path()),
                &FakeAffinity::new(vec![0]),
                Err(GpuError::Unavailable {
                    reason: "no driver".into(),
                }),
                &Cuda(CudaDevice0::NoDriver),
                Mode::Inspect,
            )
            .unwrap();
            let suite = config
                .suites
                .iter()
                .find(|s| matches!(s.spec, SuiteSpec::Builtin { .. }))
                .unwrap();
            match &env.with_gpu(suite).spec {
                SuiteSpec::Builtin { options, .. } => {
                    (options.gpu_pci_bus_id.clone(), options.gpu_uuid.clone())
                }
                _ => unreachable!(),
            }
        };
        assert_eq!(
            suite_options("0000:9a:00.0"),
            (Some("0000:9a:00.0".into()), None)
        );
        assert_eq!(
            suite_options("MIG-abcd-1"),
            (None, Some("MIG-abcd-1".into()))
        );
        assert_eq!(
            suite_options("3"),
            (None, None),
            "an index means nothing to CUDA"
        );
    }

    #[test]
    fn a_denied_lock_observes_and_is_recorded_as_such() {
        let nvml = FakeNvml::new().denying_lock();
        let mut config = Config::builtin_default("p");
        config.gpu.clocks = ClockMode::Lock { sm_mhz: None };
        let env = prepare(&config, &nvml, CudaDevice0::NoDriver);
        let clocks = env.fingerprint.section::<Clocks>().unwrap();
        assert_eq!(clocks.mode.as_deref(), Some(LOCK_DENIED_MODE));
        assert_eq!(clocks.locked_sm_mhz, None);
        assert!(env.monitor_health().is_some(), "observed");
        let said: Vec<&String> = env
            .warnings
            .iter()
            .filter(|w| w.contains("not allowed to lock the clocks"))
            .collect();
        assert_eq!(said.len(), 1, "{:?}", env.warnings);
        assert!(said[0].contains("hint:"), "{}", said[0]);
        // Once per process: a second set-up says nothing more.
        let again = prepare(&config, &nvml, CudaDevice0::NoDriver);
        assert!(
            !again
                .warnings
                .iter()
                .any(|w| w.contains("not allowed to lock")),
            "{:?}",
            again.warnings
        );
        // A denied-lock run never compares with a locked one.
        let mut locked = env.fingerprint.clone();
        locked.set_section(&Clocks {
            mode: Some("lock".into()),
            ..Clocks::default()
        });
        let d = pitwall_host::fingerprint::differences(&env.fingerprint, &locked);
        assert!(
            d.iter()
                .any(|l| l == "gpu clock policy: observe (lock denied) vs lock"),
            "{d:?}"
        );
    }

    #[test]
    fn built_in_suites_carry_the_pci_bus_id_of_gpu_device() {
        let config = Config::builtin_default("p");
        let suite = config
            .suites
            .iter()
            .find(|s| matches!(s.spec, SuiteSpec::Builtin { .. }))
            .expect("the default has built-in suites");
        let bus_id = |s: &SuiteConfig| match &s.spec {
            SuiteSpec::Builtin { options, .. } => options.gpu_pci_bus_id.clone(),
            _ => None,
        };
        let mut env = RunEnvironment::plain(Fingerprint::default());
        // Without NVML's device the suite is passed on as configured.
        assert!(matches!(env.with_gpu(suite), std::borrow::Cow::Borrowed(_)));
        env.gpu_pci_bus_id = Some("00000000:9A:00.0".to_string());
        let on_gpu = env.with_gpu(suite);
        assert_eq!(bus_id(&on_gpu).as_deref(), Some("00000000:9A:00.0"));
        assert_eq!(on_gpu.name, suite.name);
        assert_eq!(bus_id(suite), None, "the configuration itself is unchanged");
    }
}
