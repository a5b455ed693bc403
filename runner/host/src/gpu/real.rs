//! The `Nvml` trait over the real NVIDIA Management Library (nvml-wrapper, which loads
//! `libnvidia-ml.so.1` at run time), and `load_nvml`, the one entry point that picks a backend.
//! Only the pure helpers here run in this crate's tests: the machines that build pitwall have
//! no GPU (ci/gpu-check.sh exercises the rest on a lent one).

use nvml_wrapper::Nvml as NvmlLib;
use std::collections::BTreeMap;

use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor, TopologyLevel};
use nvml_wrapper::enums::device::{DeviceArchitecture, GpuLockedClocksSetting};
use nvml_wrapper::error::NvmlError;

use super::types::{ClockReading, GpuDevice, GpuError, Nvml, ReadingField};

/// Environment variable naming a `FileNvml` state file. **Test hook only**: when it is set,
/// `load_nvml` returns the file-backed fake instead of the real NVML, so end-to-end tests can
/// run `pitwall` (locking, signals, restore) on machines without a GPU. Only with the
/// `test-hooks` feature: a release build always opens the real NVML.
#[cfg(any(test, feature = "test-hooks"))]
pub const FAKE_NVML_ENV: &str = "PITWALL_FAKE_NVML";

/// NVLink slots NVML can address per GPU (`NVML_NVLINK_MAX_LINKS` in `nvml.h`).
const NVLINK_MAX_LINKS: u32 = 18;

/// Opens NVML: the `FileNvml` named by `PITWALL_FAKE_NVML` when that is set (a test hook),
/// else the real library. Without the library or driver this returns
/// `GpuError::Unavailable`; it never panics.
pub fn load_nvml() -> Result<Box<dyn Nvml>, GpuError> {
    #[cfg(any(test, feature = "test-hooks"))]
    if let Some(path) = std::env::var_os(FAKE_NVML_ENV).filter(|p| !p.is_empty()) {
        let fake = super::file_fake::FileNvml::open(std::path::Path::new(&path))?;
        return Ok(Box::new(fake));
    }
    load_real_nvml().map(|n| Box::new(n) as Box<dyn Nvml>)
}

/// Opens the real NVML, ignoring `PITWALL_FAKE_NVML`.
pub fn load_real_nvml() -> Result<RealNvml, GpuError> {
    // nvml-wrapper reports a missing library or driver as an error; catch_unwind is a second
    // line of defence so that no GPU-less machine can ever be taken down by probing for one.
    match std::panic::catch_unwind(NvmlLib::init) {
        Ok(Ok(lib)) => Ok(RealNvml {
            lib,
            handles: std::sync::Mutex::new(BTreeMap::new()),
        }),
        Ok(Err(e)) => Err(GpuError::Unavailable {
            reason: unavailable_reason(&e),
        }),
        Err(_) => Err(GpuError::Unavailable {
            reason: "initialising NVML panicked".into(),
        }),
    }
}

fn unavailable_reason(e: &NvmlError) -> String {
    match e {
        NvmlError::LibloadingError(inner) => format!("cannot load libnvidia-ml.so.1 ({inner})"),
        NvmlError::DriverNotLoaded => "the NVIDIA driver is not loaded".into(),
        NvmlError::NoPermission => "no permission to talk to the NVIDIA driver".into(),
        other => other.to_string(),
    }
}

/// The real NVML. Holds the initialised library and each device's handle, looked up once
/// (the monitor reads every few milliseconds; a handle lookup per field cost five calls).
pub struct RealNvml {
    lib: NvmlLib,
    /// `nvmlDevice_t` by index, as an address: valid while `lib` is initialised.
    handles: std::sync::Mutex<BTreeMap<u32, usize>>,
}

fn call(op: &'static str, index: u32) -> impl FnOnce(NvmlError) -> GpuError {
    move |e| GpuError::Call {
        op,
        index,
        source: Box::new(e),
    }
}

impl RealNvml {
    fn device(&self, index: u32) -> Result<nvml_wrapper::Device<'_>, GpuError> {
        let mut handles = self.handles.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(raw) = handles.get(&index) {
            // SAFETY: the handle came from `nvmlDeviceGetHandleByIndex` on this initialised
            // library, and NVML handles stay valid until `nvmlShutdown` (when `lib` drops).
            return Ok(unsafe { nvml_wrapper::Device::new(*raw as _, &self.lib) });
        }
        let d = self.lookup(index)?;
        // SAFETY: reading the raw handle of a live device.
        handles.insert(index, unsafe { d.handle() } as usize);
        Ok(d)
    }

    fn lookup(&self, index: u32) -> Result<nvml_wrapper::Device<'_>, GpuError> {
        let count = self
            .lib
            .device_count()
            .map_err(call("nvmlDeviceGetCount", index))?;
        if index >= count {
            return Err(GpuError::NoDevice {
                index,
                count: count as usize,
            });
        }
        self.lib
            .device_by_index(index)
            .map_err(call("nvmlDeviceGetHandleByIndex", index))
    }

    fn describe(&self, index: u32) -> Result<GpuDevice, GpuError> {
        let d = self.device(index)?;
        let bus_id = d
            .pci_info()
            .map_err(call("nvmlDeviceGetPciInfo", index))?
            .bus_id;
        let own_pid = std::process::id();
        let mut other_processes: Vec<u32> = d
            .running_compute_processes()
            .map(|ps| {
                ps.into_iter()
                    .map(|p| p.pid)
                    .filter(|p| *p != own_pid)
                    .collect()
            })
            .unwrap_or_default();
        other_processes.sort_unstable();
        other_processes.dedup();
        let numa_node = d
            .numa_node_id()
            .ok()
            .map(|n| n as i32)
            .or_else(|| sysfs_numa_node(&bus_id));
        Ok(GpuDevice {
            index,
            name: d.name().map_err(call("nvmlDeviceGetName", index))?,
            uuid: d.uuid().map_err(call("nvmlDeviceGetUUID", index))?,
            driver_version: self.lib.sys_driver_version().unwrap_or_default(),
            cuda_driver_version: self.lib.sys_cuda_driver_version().ok().map(|v| {
                format!(
                    "{}.{}",
                    nvml_wrapper::cuda_driver_version_major(v),
                    nvml_wrapper::cuda_driver_version_minor(v)
                )
            }),
            vbios: d.vbios_version().ok(),
            pcie_gen: d.current_pcie_link_gen().ok(),
            pcie_width: d.current_pcie_link_width().ok(),
            power_limit_w: d
                .enforced_power_limit()
                .ok()
                .map(|mw| f64::from(mw) / 1000.0),
            max_sm_mhz: d.max_clock_info(Clock::SM).ok(),
            max_mem_mhz: d.max_clock_info(Clock::Memory).ok(),
            base_sm_mhz: d
                .default_applications_clock(Clock::SM)
                .ok()
                .filter(|m| *m > 0),
            supported_sm_mhz: {
                let mem = d.max_clock_info(Clock::Memory).unwrap_or(0);
                let mut clocks = d.supported_graphics_clocks(mem).unwrap_or_default();
                clocks.sort_unstable_by(|a, b| b.cmp(a));
                clocks.dedup();
                clocks
            },
            persistence_mode: d.is_in_persistent_mode().ok(),
            ecc_enabled: d.is_ecc_enabled().ok().map(|s| s.currently_enabled),
            other_processes,
            numa_node,
            nvlink_peers: {
                let mut peers = nvlink_remotes(&d);
                peers.sort();
                peers.dedup();
                peers
            },
            topology: BTreeMap::new(),
            pci_bus_id: bus_id,
        })
    }

    /// Fills each device's `topology`: direct NVLinks counted per peer, else the closest
    /// common PCIe ancestor NVML reports (`nvmlDeviceGetTopologyCommonAncestor`).
    fn fill_topology(&self, devices: &mut [GpuDevice]) {
        let bus_ids: Vec<(u32, String)> = devices
            .iter()
            .map(|d| (d.index, d.pci_bus_id.clone()))
            .collect();
        for dev in devices.iter_mut() {
            let Ok(d) = self.device(dev.index) else {
                continue;
            };
            let remotes = nvlink_remotes(&d);
            for (other, other_bus) in &bus_ids {
                if *other == dev.index {
                    continue;
                }
                let links = remotes.iter().filter(|r| *r == other_bus).count();
                let level = self
                    .device(*other)
                    .ok()
                    .and_then(|o| d.topology_common_ancestor(o).ok());
                if let Some(label) = topology_label(links, level) {
                    dev.topology.insert(other.to_string(), label);
                }
            }
        }
    }
}

/// `nvidia-smi topo -m`'s word for a GPU pair: `NV<links>` when they share NVLinks, else the
/// PCIe level; `None` when NVML told neither.
pub(crate) fn topology_label(nvlinks: usize, level: Option<TopologyLevel>) -> Option<String> {
    if nvlinks > 0 {
        return Some(format!("NV{nvlinks}"));
    }
    Some(
        match level? {
            TopologyLevel::Internal | TopologyLevel::Single => "PIX",
            TopologyLevel::Multiple => "PXB",
            TopologyLevel::HostBridge => "PHB",
            TopologyLevel::Node => "NODE",
            TopologyLevel::System => "SYS",
        }
        .to_string(),
    )
}

/// Remote PCI bus ids of the active NVLinks, one per link (GPUs, or NVSwitches on HGX boards).
fn nvlink_remotes(d: &nvml_wrapper::Device<'_>) -> Vec<String> {
    (0..NVLINK_MAX_LINKS)
        .map(|l| d.link_wrapper_for(l))
        .filter(|link| link.is_active().unwrap_or(false))
        .filter_map(|link| link.remote_pci_info().ok().map(|p| p.bus_id))
        .collect()
}

/// NUMA node from sysfs, for drivers without `nvmlDeviceGetNumaNodeId`. NVML writes an 8-digit
/// PCI domain (`00000000:17:00.0`), sysfs a 4-digit lower-case one (`0000:17:00.0`).
fn sysfs_numa_node(bus_id: &str) -> Option<i32> {
    let (domain, rest) = bus_id.split_once(':')?;
    let domain = u32::from_str_radix(domain, 16).ok()?;
    let path = format!(
        "/sys/bus/pci/devices/{domain:04x}:{}/numa_node",
        rest.to_ascii_lowercase()
    );
    let node: i32 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
    (node >= 0).then_some(node)
}

impl Nvml for RealNvml {
    fn devices(&self) -> Result<Vec<GpuDevice>, GpuError> {
        let count = self
            .lib
            .device_count()
            .map_err(call("nvmlDeviceGetCount", 0))?;
        let mut devices = (0..count)
            .map(|i| self.describe(i))
            .collect::<Result<Vec<_>, _>>()?;
        if devices.len() > 1 {
            self.fill_topology(&mut devices);
        }
        Ok(devices)
    }

    /// Each field is its own query: a failing one (the throttle-reasons call NVML deprecated
    /// in CUDA 12.2) is flagged in the reading and the others are kept. Only when every field
    /// failed is the reading an error.
    fn read_clocks(&self, index: u32) -> Result<ClockReading, GpuError> {
        let d = self.device(index)?;
        let mut r = ClockReading::default();
        let mut first_error = None;
        let mut keep =
            |field: ReadingField, outcome: Result<(), NvmlError>, r: &mut ClockReading| {
                if let Err(e) = outcome {
                    r.mark_failed(field);
                    first_error.get_or_insert((field, e));
                }
            };
        let sm = d.clock_info(Clock::SM).map(|v| r.sm_mhz = v);
        keep(ReadingField::SmMhz, sm, &mut r);
        let mem = d.clock_info(Clock::Memory).map(|v| r.mem_mhz = v);
        keep(ReadingField::MemMhz, mem, &mut r);
        let temp = d
            .temperature(TemperatureSensor::Gpu)
            .map(|v| r.temperature_c = f64::from(v));
        keep(ReadingField::TemperatureC, temp, &mut r);
        // On Hopper this is a ~1 s running average, not the power of the last few ms.
        let power = d.power_usage().map(|mw| r.power_w = f64::from(mw) / 1000.0);
        keep(ReadingField::PowerW, power, &mut r);
        let throttle = d
            .current_throttle_reasons()
            .map(|bits| r.throttle_reasons = bits.bits());
        keep(ReadingField::ThrottleReasons, throttle, &mut r);
        if r.failed_fields().count() == ReadingField::ALL.len() {
            if let Some((field, e)) = first_error {
                return Err(GpuError::Call {
                    op: field.as_str(),
                    index,
                    source: Box::new(e),
                });
            }
        }
        Ok(r)
    }

    /// NVML has no capability query for locked clocks; its documentation says
    /// `nvmlDeviceSetGpuLockedClocks` "supports Volta and newer fully supported devices", so
    /// this answers from the architecture. Permission is only known when locking.
    fn locked_clocks_supported(&self, index: u32) -> bool {
        let Ok(d) = self.device(index) else {
            return false;
        };
        match d.architecture() {
            Ok(
                DeviceArchitecture::Kepler
                | DeviceArchitecture::Maxwell
                | DeviceArchitecture::Pascal,
            ) => false,
            Ok(DeviceArchitecture::Unknown) => false,
            Ok(_) => true,
            // An architecture this nvml-wrapper does not know yet is newer than it.
            Err(NvmlError::UnexpectedVariant(_)) => true,
            Err(_) => false,
        }
    }

    fn set_locked_clocks(&self, index: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError> {
        let mut d = self.device(index)?;
        let setting = GpuLockedClocksSetting::Numeric {
            min_clock_mhz: min_mhz,
            max_clock_mhz: max_mhz,
        };
        d.set_gpu_locked_clocks(setting).map_err(|e| match e {
            NvmlError::NoPermission => GpuError::LockDenied {
                index,
                source: Box::new(e),
            },
            NvmlError::NotSupported => GpuError::LockUnsupported {
                index,
                name: d.name().unwrap_or_else(|_| "unknown".into()),
            },
            other => GpuError::Call {
                op: "nvmlDeviceSetGpuLockedClocks",
                index,
                source: Box::new(other),
            },
        })
    }

    fn mig_parent(&self, mig_uuid: &str) -> Result<Option<u32>, GpuError> {
        let Ok(mig) = self.lib.device_by_uuid(mig_uuid) else {
            return Ok(None);
        };
        let parent = mig
            .mig_parent_device()
            .map_err(call("nvmlDeviceGetDeviceHandleFromMigDeviceHandle", 0))?;
        parent
            .index()
            .map(Some)
            .map_err(call("nvmlDeviceGetIndex", 0))
    }

    fn reset_locked_clocks(&self, index: u32) -> Result<(), GpuError> {
        let mut d = self.device(index)?;
        d.reset_gpu_locked_clocks().map_err(|e| match e {
            NvmlError::NoPermission => GpuError::LockDenied {
                index,
                source: Box::new(e),
            },
            other => GpuError::Call {
                op: "nvmlDeviceResetGpuLockedClocks",
                index,
                source: Box::new(other),
            },
        })
    }
}

#[cfg(test)]
mod tests;
