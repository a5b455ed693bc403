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

use crate::config::{Config, PinPolicy, SuiteConfig, SuiteSpec};
use crate::engine::{Isolation, SampleMetaSource};
use crate::fingerprint;
use crate::gpu::{ClockGuard, ClockMode, ClockMonitor, GpuDevice, GpuError, MonitorHealth, Nvml};
use crate::machine::{
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
    /// process and applies the clock policy.
    pub fn prepare(
        config: &Config,
        root: &Path,
        sysfs: &dyn Sysfs,
        affinity: &dyn Affinity,
        nvml: Result<Arc<dyn Nvml>, GpuError>,
        mode: Mode,
    ) -> Result<RunEnvironment, SetupError> {
        let mut fp = fingerprint::collect(root, std::env::vars());
        let mut warnings = Vec::new();
        fp.set_section(&fingerprint::toolchain());
        let libs = crate::gpu::cuda_library_versions();
        if !libs.is_empty() {
            fp.set_section(&CudaLibraries(libs));
        }

        // The GPU: facts for the fingerprint and the checks only NVML can make.
        let (nvml, device) = match nvml {
            Ok(nvml) => match nvml.devices() {
                Ok(devices) => {
                    fp.gpus = devices.iter().map(gpu_info).collect();
                    let device = devices.into_iter().find(|d| d.index == config.gpu.device);
                    if device.is_none() {
                        warnings.push(format!(
                            "gpu: no device {} (hint: [gpu] device)",
                            config.gpu.device
                        ));
                    }
                    (Some(nvml), device)
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
        let bus_id = device.as_ref().map(|d| d.pci_bus_id.clone());
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
        match (&nvml, &device) {
            (Some(nvml), Some(d)) if mode == Mode::Apply => {
                if clock_mode == ClockMode::Observe {
                    warnings.push(format!("gpu {}: clocks are not locked (observe mode); boost and throttling can move results (hint: [gpu] clocks = \"lock\" on a dedicated runner)", d.index));
                }
                guard = Some(ClockGuard::acquire(Arc::clone(nvml), d.index, clock_mode)?);
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
        fp.set_section(&Clocks {
            mode: Some(clock_mode.to_string()),
            locked_sm_mhz: locked,
            device: Some(config.gpu.device),
            other: Default::default(),
        });
        Ok(RunEnvironment {
            fingerprint: fp,
            warnings,
            isolation: Isolation::InProcess,
            gpu_pci_bus_id: bus_id,
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
        match (&self.gpu_pci_bus_id, &mut owned.spec) {
            (Some(id), SuiteSpec::Builtin { options, .. }) => {
                options.gpu_pci_bus_id = Some(id.clone());
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
    while crate::gpu::terminating() {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
