//! Which GPU a run uses (`[gpu] device`): the one whose clocks pitwall locks or watches and
//! whose NUMA node it pins to, which must be the GPU the CUDA suites run on. A value may be an
//! NVML index, a PCI bus id, or a GPU or MIG UUID. Unset, it is CUDA device 0 (after
//! `CUDA_VISIBLE_DEVICES`), found in NVML by the PCI bus id the driver gives for it
//! (`cuInit`, `cuDeviceGet(0)`, `cuDeviceGetPCIBusId`; no context is created). NVML's index 0
//! is not CUDA's device 0 on a runner whose `CUDA_VISIBLE_DEVICES` names another GPU. A MIG
//! instance is named by its UUID: its GPU's bus id is shared by every instance on it.

use std::ffi::{c_char, c_int};
use std::fmt;

use super::libs::Lib;
use super::types::{GpuDevice, GpuError, Nvml};
use crate::machine::normalize_pci_bus_id;

/// A value of `[gpu] device`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelector {
    /// An NVML index (`device = 1`).
    Index(u32),
    /// A PCI bus id, any case and domain width (`00000000:9A:00.0`, `0000:9a:00.0`).
    PciBusId(String),
    /// A GPU UUID (`GPU-…`) or a MIG instance's (`MIG-…`).
    Uuid(String),
}

impl DeviceSelector {
    /// Parses a string value: digits are an index, `GPU-…`/`MIG-…` a UUID, a bus id its PCI
    /// address. Anything else is an error with a hint.
    pub fn parse(s: &str) -> Result<DeviceSelector, String> {
        let t = s.trim();
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
            return t
                .parse()
                .map(DeviceSelector::Index)
                .map_err(|_| format!("device `{t}` is not a valid NVML index"));
        }
        let upper = t.to_ascii_uppercase();
        if (upper.starts_with("GPU-") || upper.starts_with("MIG-")) && t.len() > 4 {
            return Ok(DeviceSelector::Uuid(t.to_string()));
        }
        if normalize_pci_bus_id(t).is_some() {
            return Ok(DeviceSelector::PciBusId(t.to_string()));
        }
        Err(format!(
            "device `{t}` is not an NVML index, a PCI bus id or a GPU/MIG UUID; hint: `nvidia-smi -L` lists UUIDs, `nvidia-smi --query-gpu=index,pci.bus_id --format=csv` indices and bus ids"
        ))
    }

    /// Whether this names a MIG instance.
    pub fn is_mig(&self) -> bool {
        matches!(self, DeviceSelector::Uuid(u) if u.to_ascii_uppercase().starts_with("MIG-"))
    }
}

impl fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSelector::Index(i) => write!(f, "{i}"),
            DeviceSelector::PciBusId(s) | DeviceSelector::Uuid(s) => f.write_str(s),
        }
    }
}

/// What the CUDA driver says about CUDA device 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaDevice0 {
    /// Its PCI bus id (`0000:9A:00.0`).
    BusId(String),
    /// No CUDA driver library here (a machine without a GPU, or NVML only).
    NoDriver,
    /// The driver is there but could not say (no device visible, a stub library…).
    Failed(String),
}

/// The CUDA driver as device selection needs it: one question.
pub trait CudaDriver {
    fn device0(&self) -> CudaDevice0;
}

/// The machine's CUDA driver, `libcuda.so.1` loaded at run time.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemCuda;

/// `CUDA_ERROR_STUB_LIBRARY`: the toolkit's link stub was loaded instead of the driver.
const CUDA_ERROR_STUB_LIBRARY: c_int = 34;
/// `CUDA_ERROR_NO_DEVICE`.
const CUDA_ERROR_NO_DEVICE: c_int = 100;

impl CudaDriver for SystemCuda {
    fn device0(&self) -> CudaDevice0 {
        let Some((lib, _)) = Lib::open(&["libcuda.so.1"], &[]) else {
            return CudaDevice0::NoDriver;
        };
        let (Some(init), Some(get), Some(bus)) = (
            lib.symbol("cuInit"),
            lib.symbol("cuDeviceGet"),
            lib.symbol("cuDeviceGetPCIBusId"),
        ) else {
            return CudaDevice0::Failed("libcuda.so.1 lacks cuInit/cuDeviceGet".into());
        };
        // SAFETY: the documented driver API signatures: CUresult cuInit(unsigned int),
        // cuDeviceGet(CUdevice*, int), cuDeviceGetPCIBusId(char*, int, CUdevice); CUdevice
        // is an int. None of them creates a context.
        let (init, get, bus): (
            extern "C" fn(u32) -> c_int,
            extern "C" fn(*mut c_int, c_int) -> c_int,
            extern "C" fn(*mut c_char, c_int, c_int) -> c_int,
        ) = unsafe {
            (
                std::mem::transmute::<*mut std::ffi::c_void, extern "C" fn(u32) -> c_int>(init),
                std::mem::transmute::<
                    *mut std::ffi::c_void,
                    extern "C" fn(*mut c_int, c_int) -> c_int,
                >(get),
                std::mem::transmute::<
                    *mut std::ffi::c_void,
                    extern "C" fn(*mut c_char, c_int, c_int) -> c_int,
                >(bus),
            )
        };
        match init(0) {
            0 => {}
            CUDA_ERROR_STUB_LIBRARY => {
                return CudaDevice0::Failed(
                    "libcuda.so.1 is the toolkit's stub (CUDA_ERROR_STUB_LIBRARY), not the driver; hint: remove the toolkit's lib64/stubs directory from LD_LIBRARY_PATH".into(),
                );
            }
            CUDA_ERROR_NO_DEVICE => {
                return CudaDevice0::Failed(
                    "no CUDA device is visible (CUDA_ERROR_NO_DEVICE); hint: check CUDA_VISIBLE_DEVICES".into(),
                );
            }
            e => return CudaDevice0::Failed(format!("cuInit failed (CUresult {e})")),
        }
        let mut dev: c_int = 0;
        let rc = get(&mut dev, 0);
        if rc != 0 {
            return CudaDevice0::Failed(format!("cuDeviceGet(0) failed (CUresult {rc})"));
        }
        let mut buf = [0 as c_char; 32];
        let rc = bus(buf.as_mut_ptr(), buf.len() as c_int, dev);
        if rc != 0 {
            return CudaDevice0::Failed(format!("cuDeviceGetPCIBusId failed (CUresult {rc})"));
        }
        // SAFETY: the driver wrote a NUL-terminated string into `buf` (its length bounds it).
        let id = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        CudaDevice0::BusId(id.to_string_lossy().into_owned())
    }
}

/// The GPU a run uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedGpu {
    /// NVML index of the physical GPU (a MIG instance's parent): clocks, monitoring, pinning.
    pub index: u32,
    /// Its PCI bus id as NVML writes it, which the CUDA backend maps to its own ordinal.
    pub pci_bus_id: String,
    /// The MIG instance's UUID when one was named: the CUDA backend must pick it by UUID.
    pub mig_uuid: Option<String>,
    /// One line when the choice was a fallback the user should know about.
    pub warning: Option<String>,
}

fn same_bus(a: &str, b: &str) -> bool {
    match (normalize_pci_bus_id(a), normalize_pci_bus_id(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The GPU `selector` names among `devices` (NVML's), or CUDA device 0's when unset.
pub fn select_gpu(
    selector: Option<&DeviceSelector>,
    devices: &[GpuDevice],
    nvml: &dyn Nvml,
    cuda: &dyn CudaDriver,
) -> Result<SelectedGpu, GpuError> {
    let not_found = |selector: String, why: String| GpuError::NoSuchGpu { selector, why };
    let pick = |d: &GpuDevice, mig_uuid: Option<String>, warning: Option<String>| SelectedGpu {
        index: d.index,
        pci_bus_id: d.pci_bus_id.clone(),
        mig_uuid,
        warning,
    };
    let seen = || {
        let ids: Vec<String> = devices
            .iter()
            .map(|d| format!("{} {}", d.index, d.pci_bus_id))
            .collect();
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    };
    match selector {
        Some(DeviceSelector::Index(i)) => devices
            .iter()
            .find(|d| d.index == *i)
            .map(|d| pick(d, None, None))
            .ok_or_else(|| {
                not_found(
                    i.to_string(),
                    format!("no GPU with NVML index {i} (NVML sees {})", seen()),
                )
            }),
        Some(DeviceSelector::PciBusId(id)) => devices
            .iter()
            .find(|d| same_bus(&d.pci_bus_id, id))
            .map(|d| pick(d, None, None))
            .ok_or_else(|| {
                not_found(
                    id.clone(),
                    format!("no GPU at this PCI bus id (NVML sees {})", seen()),
                )
            }),
        Some(s @ DeviceSelector::Uuid(uuid)) if s.is_mig() => {
            let parent = nvml.mig_parent(uuid)?.ok_or_else(|| {
                not_found(
                    uuid.clone(),
                    "NVML knows no MIG instance of this UUID".into(),
                )
            })?;
            devices
                .iter()
                .find(|d| d.index == parent)
                .map(|d| pick(d, Some(uuid.clone()), None))
                .ok_or_else(|| {
                    not_found(
                        uuid.clone(),
                        format!("the MIG instance's GPU {parent} is not among NVML's devices"),
                    )
                })
        }
        Some(DeviceSelector::Uuid(uuid)) => devices
            .iter()
            .find(|d| d.uuid.eq_ignore_ascii_case(uuid))
            .map(|d| pick(d, None, None))
            .ok_or_else(|| not_found(uuid.clone(), "no GPU with this UUID".into())),
        None => {
            let fallback = |why: Option<String>| {
                devices
                    .iter()
                    .find(|d| d.index == 0)
                    .map(|d| pick(d, None, why.clone()))
                    .ok_or_else(|| not_found("(unset)".into(), "NVML sees no GPU".into()))
            };
            match cuda.device0() {
                CudaDevice0::BusId(bus) => devices
                    .iter()
                    .find(|d| same_bus(&d.pci_bus_id, &bus))
                    .map(|d| pick(d, None, None))
                    .ok_or_else(|| {
                        not_found(
                            "(unset)".into(),
                            format!(
                                "CUDA device 0 is at PCI {bus}, which no NVML device is (NVML sees {})",
                                seen()
                            ),
                        )
                    }),
                // Without a CUDA driver no CUDA suite runs: NVML's first GPU is as good as any.
                CudaDevice0::NoDriver => fallback(None),
                CudaDevice0::Failed(why) => fallback(Some(format!(
                    "gpu: CUDA device 0 is unknown ({why}): watching NVML device 0, which may not be the GPU the CUDA suites use (hint: set [gpu] device)"
                ))),
            }
        }
    }
}

#[cfg(test)]
mod tests;
