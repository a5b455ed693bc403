//! The vocabulary shared by every NVML backend (real, in-memory fake, file-backed fake): the
//! `Nvml` trait, what it reports (`GpuDevice`, `ClockReading`), the clock policy (`ClockMode`)
//! and the errors. Everything above this trait is testable without a GPU.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One reading of the clocks and the conditions that move them, taken by `Nvml::read_clocks`.
/// Each field is queried on its own: a field whose query failed is flagged in `failed` (its
/// value is then meaningless) and the others are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockReading {
    /// Current SM clock (`nvmlDeviceGetClockInfo(NVML_CLOCK_SM)`).
    pub sm_mhz: u32,
    /// Current memory clock (`nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)`).
    pub mem_mhz: u32,
    /// GPU die temperature.
    pub temperature_c: f64,
    /// Board power draw.
    pub power_w: f64,
    /// Raw `nvmlClocksThrottleReasons` bitmask; see [`THROTTLE_SLOWDOWN_MASK`].
    pub throttle_reasons: u64,
    /// The fields whose query failed, as a set of [`ReadingField`] bits.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u8,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// A field of a [`ClockReading`], each its own NVML query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReadingField {
    SmMhz,
    MemMhz,
    TemperatureC,
    PowerW,
    ThrottleReasons,
}

impl ReadingField {
    pub const ALL: [ReadingField; 5] = [
        ReadingField::SmMhz,
        ReadingField::MemMhz,
        ReadingField::TemperatureC,
        ReadingField::PowerW,
        ReadingField::ThrottleReasons,
    ];

    /// The field's name as the monitor's failure counts show it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReadingField::SmMhz => "sm_mhz",
            ReadingField::MemMhz => "mem_mhz",
            ReadingField::TemperatureC => "temperature_c",
            ReadingField::PowerW => "power_w",
            ReadingField::ThrottleReasons => "throttle_reasons",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl ClockReading {
    /// Whether `field`'s query failed in this reading.
    pub fn field_failed(&self, field: ReadingField) -> bool {
        self.failed & field.bit() != 0
    }

    /// Flags `field` as failed.
    pub fn mark_failed(&mut self, field: ReadingField) {
        self.failed |= field.bit();
    }

    /// The fields whose query failed, in `ReadingField::ALL` order.
    pub fn failed_fields(&self) -> impl Iterator<Item = ReadingField> + '_ {
        ReadingField::ALL
            .into_iter()
            .filter(|f| self.field_failed(*f))
    }

    /// The SM clock, unless its query failed.
    pub fn sm(&self) -> Option<u32> {
        (!self.field_failed(ReadingField::SmMhz)).then_some(self.sm_mhz)
    }
}

/// What pitwall records about one GPU in a run's environment. Fields NVML cannot report on a
/// given device or driver are `None` (or empty), never an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuDevice {
    /// NVML index (the order of `nvmlDeviceGetHandleByIndex`, not necessarily CUDA's order).
    pub index: u32,
    pub name: String,
    pub uuid: String,
    /// PCI bus id as NVML writes it (`00000000:17:00.0`).
    pub pci_bus_id: String,
    pub driver_version: String,
    /// CUDA version the driver supports (`13.0`).
    pub cuda_driver_version: Option<String>,
    pub vbios: Option<String>,
    /// Current PCIe link generation and width (they drop at idle on some boards).
    pub pcie_gen: Option<u32>,
    pub pcie_width: Option<u32>,
    /// Enforced power limit.
    pub power_limit_w: Option<f64>,
    pub max_sm_mhz: Option<u32>,
    pub max_mem_mhz: Option<u32>,
    /// Default applications SM clock (recorded; on H100/H200 it is the boost clock, so
    /// `ClockMode::Lock { sm_mhz: None }` does not use it: see `guard::lock_target`).
    pub base_sm_mhz: Option<u32>,
    /// The SM clocks NVML offers at the maximum memory clock
    /// (`nvmlDeviceGetSupportedGraphicsClocks`), highest first; empty when unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_sm_mhz: Vec<u32>,
    pub persistence_mode: Option<bool>,
    pub ecc_enabled: Option<bool>,
    /// Pids of other processes holding a compute context on this GPU (our own pid excluded).
    pub other_processes: Vec<u32>,
    /// NUMA node nearest the GPU (`None` when unknown or the machine has a single node).
    pub numa_node: Option<i32>,
    /// PCI bus ids at the far end of active NVLinks (peers GPUs or NVSwitches), sorted, unique.
    pub nvlink_peers: Vec<String>,
    /// How this GPU reaches each other GPU, by the other's index, in `nvidia-smi topo -m`'s
    /// words: `NV<links>` (direct NVLinks), `PIX` (one PCIe switch), `PXB` (several switches),
    /// `PHB` (the host bridge), `NODE` (host bridges of one NUMA node), `SYS` (across NUMA
    /// nodes). Empty with one GPU, or when NVML cannot tell.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub topology: BTreeMap<String, String>,
}

/// Throttle-reason bits that mean a sample ran slower than the clock policy asked for.
///
/// From NVML's `nvmlClocksThrottleReasons` (renamed `nvmlClocksEventReasons` in CUDA 12.2+, same
/// bits; `nvml.h`, "Clocks Throttle Reasons" / "Clocks Event Reasons"):
/// - `0x04` `SwPowerCap`: SW power scaling lowered clocks to stay under the power limit;
/// - `0x08` `HwSlowdown`: HW slowdown (clocks cut by a factor of 2 or more: thermal, power brake);
/// - `0x20` `SwThermalSlowdown`: SW thermal slowdown (die or memory above max operating temp);
/// - `0x40` `HwThermalSlowdown`: HW thermal slowdown (temperature too high);
/// - `0x80` `HwPowerBrakeSlowdown`: HW power brake (external power-brake assertion).
///
/// Deliberately excluded, since they describe policy or idleness rather than a slowed sample:
/// `0x01` `GpuIdle`, `0x02` `ApplicationsClocksSetting` / `UserDefinedClocks` (set whenever clocks
/// are locked or application clocks are set, i.e. always set under `ClockMode::Lock`), `0x10`
/// `SyncBoost` (a configured sync-boost group) and `0x100` `DisplayClockSetting`.
pub const THROTTLE_SLOWDOWN_MASK: u64 = 0x04 | 0x08 | 0x20 | 0x40 | 0x80;

/// Whether a bitmask of throttle reasons marks the sample as slowed.
pub fn is_slowdown(throttle_reasons: u64) -> bool {
    throttle_reasons & THROTTLE_SLOWDOWN_MASK != 0
}

/// How a run treats the GPU clocks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockMode {
    /// Lock the SM clock to `sm_mhz` (min = max), or when `None` to the highest clock NVML
    /// offers at or below the card's datasheet base clock (`pitwall_schema::datasheet`), else
    /// at or below 0.8 × its maximum SM clock; restore on exit. Needs root (or an admin-set
    /// permission) on Volta or newer; denied, the run observes instead.
    Lock { sm_mhz: Option<u32> },
    /// Leave clocks alone but record them with each sample (and warn that they float).
    Observe,
    /// No NVML at all.
    Off,
}

impl fmt::Display for ClockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockMode::Lock { sm_mhz: None } => f.write_str("lock"),
            ClockMode::Lock { sm_mhz: Some(mhz) } => write!(f, "lock:{mhz}"),
            ClockMode::Observe => f.write_str("observe"),
            ClockMode::Off => f.write_str("off"),
        }
    }
}

impl FromStr for ClockMode {
    type Err = String;

    /// Parses `lock`, `lock:<MHz>`, `observe` or `off` (the `Display` form).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad =
            || format!("clock mode `{s}` is not valid; hint: use lock, lock:<MHz>, observe or off");
        match s.trim() {
            "lock" => Ok(ClockMode::Lock { sm_mhz: None }),
            "observe" => Ok(ClockMode::Observe),
            "off" => Ok(ClockMode::Off),
            other => match other.strip_prefix("lock:") {
                Some(mhz) => mhz
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|m| *m > 0)
                    .map(|m| ClockMode::Lock { sm_mhz: Some(m) })
                    .ok_or_else(bad),
                None => Err(bad()),
            },
        }
    }
}

/// A cause carried by `GpuError`: an `NvmlError`, an I/O or JSON error, or a fake's message.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong talking to NVML (or to a fake standing in for it).
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error(
        "nvml is not available: {reason}; hint: GPU features need the NVIDIA driver (libnvidia-ml.so.1); use clock mode off on machines without one"
    )]
    Unavailable { reason: String },
    #[error(
        "no GPU with index {index} (found {count}); hint: `pitwall env` lists the GPUs NVML sees"
    )]
    NoDevice { index: u32, count: usize },
    #[error("nvml: {op} failed on GPU {index}: {source}")]
    Call {
        op: &'static str,
        index: u32,
        #[source]
        source: Cause,
    },
    #[error(
        "GPU {index} ({name}) does not support locked clocks; hint: clock locking needs a Volta or newer data-center or workstation GPU; use clock mode observe"
    )]
    LockUnsupported { index: u32, name: String },
    #[error(
        "not allowed to lock the clocks of GPU {index}: {source}; hint: locking clocks needs root (run under sudo or have an admin run `nvidia-smi -lgc <MHz>`); persistence mode (`nvidia-smi -pm 1`) keeps the setting between processes; or use clock mode observe"
    )]
    LockDenied {
        index: u32,
        #[source]
        source: Cause,
    },
    #[error(
        "GPU {index} reports neither a known base clock nor a maximum SM clock to lock below; hint: give the clock explicitly (lock:<MHz>, e.g. lock:{suggest})"
    )]
    NoBaseClock { index: u32, suggest: u32 },
    #[error("[gpu] device `{selector}`: {why}; hint: `pitwall env` lists the GPUs NVML sees")]
    NoSuchGpu { selector: String, why: String },
    #[error(
        "cannot lock GPU {index} to {requested} MHz: its maximum SM clock is {max} MHz; hint: pick a clock at or below the maximum"
    )]
    ClockOutOfRange {
        index: u32,
        requested: u32,
        max: u32,
    },
    #[error("cannot install the SIGINT/SIGTERM handler that restores GPU clocks: {source}")]
    SignalSetup {
        #[source]
        source: std::io::Error,
    },
    #[cfg(any(test, feature = "test-hooks"))]
    #[error(
        "fake nvml state file {path}: {source}; hint: PITWALL_FAKE_NVML is a test hook: unset it to use the real NVML"
    )]
    FakeState {
        path: String,
        #[source]
        source: Cause,
    },
}

/// The NVML operations pitwall uses. Implemented by the real library (`load_nvml`), by
/// `FakeNvml` (in memory) and by `FileNvml` (state in a JSON file, for end-to-end tests).
pub trait Nvml: Send + Sync {
    /// Every GPU NVML sees, in index order.
    fn devices(&self) -> Result<Vec<GpuDevice>, GpuError>;
    /// Current clocks, temperature, power and throttle reasons of one GPU.
    fn read_clocks(&self, index: u32) -> Result<ClockReading, GpuError>;
    /// Whether `set_locked_clocks` can work on this GPU at all (permission aside).
    fn locked_clocks_supported(&self, index: u32) -> bool;
    /// Locks the SM clock into `[min_mhz, max_mhz]` (`nvmlDeviceSetGpuLockedClocks`).
    fn set_locked_clocks(&self, index: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError>;
    /// Undoes `set_locked_clocks` (`nvmlDeviceResetGpuLockedClocks`).
    fn reset_locked_clocks(&self, index: u32) -> Result<(), GpuError>;
    /// The NVML index of the physical GPU a MIG instance (`MIG-…` UUID) lives on; `None` when
    /// NVML knows no such instance.
    fn mig_parent(&self, _mig_uuid: &str) -> Result<Option<u32>, GpuError> {
        Ok(None)
    }
}
