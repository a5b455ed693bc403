//! `FakeNvml`: an in-memory `Nvml` for tests and for callers that want to exercise GPU code
//! paths without a GPU. Devices and readings are configurable (a scripted sequence of
//! readings can simulate throttling) and every call is recorded for assertions.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::types::{ClockReading, GpuDevice, GpuError, Nvml, ReadingField};

/// The SM clocks a fake GPU offers: 1980 MHz down to 210 MHz in 15 MHz steps, as an H100
/// SXM's list runs.
pub fn fake_supported_sm_mhz() -> Vec<u32> {
    (0..=118).map(|i| 1980 - 15 * i).collect()
}

/// A plausible single data-center GPU: what `FakeNvml::new` and a fresh `FileNvml` report.
pub fn fake_device(index: u32) -> GpuDevice {
    GpuDevice {
        index,
        name: "Fake GPU".into(),
        uuid: format!("GPU-00000000-0000-0000-0000-{index:012}"),
        pci_bus_id: format!("00000000:{:02X}:00.0", 0x17 + index),
        driver_version: "580.00.00".into(),
        cuda_driver_version: Some("13.0".into()),
        vbios: Some("96.00.00.00.00".into()),
        pcie_gen: Some(5),
        pcie_width: Some(16),
        power_limit_w: Some(700.0),
        max_sm_mhz: Some(1980),
        max_mem_mhz: Some(3201),
        base_sm_mhz: Some(1755),
        supported_sm_mhz: fake_supported_sm_mhz(),
        persistence_mode: Some(true),
        ecc_enabled: Some(true),
        other_processes: Vec::new(),
        numa_node: Some(0),
        nvlink_peers: Vec::new(),
        topology: BTreeMap::new(),
    }
}

/// The reading a fake reports when nothing was scripted.
pub fn idle_reading() -> ClockReading {
    ClockReading {
        sm_mhz: 1980,
        mem_mhz: 3201,
        temperature_c: 40.0,
        power_w: 120.0,
        throttle_reasons: 0,
        failed: 0,
    }
}

#[derive(Debug, Default)]
struct FakeState {
    devices: Vec<GpuDevice>,
    /// Scripted readings per device; each `read_clocks` takes the next, the last one repeats.
    script: BTreeMap<u32, Vec<ClockReading>>,
    next: BTreeMap<u32, usize>,
    reads: usize,
    lock_supported: bool,
    deny_lock: bool,
    fail_reset: bool,
    /// Fields whose query fails in every reading (their values read as zero).
    failing_fields: Vec<ReadingField>,
    /// MIG instances by UUID: the NVML index of their GPU.
    mig: BTreeMap<String, u32>,
    locked: BTreeMap<u32, (u32, u32)>,
    calls: Vec<String>,
}

/// In-memory fake NVML. Cloning gives another handle on the same state (`Arc<Mutex<..>>`),
/// so a test can keep one handle while code under test owns another.
#[derive(Clone, Debug)]
pub struct FakeNvml {
    state: Arc<Mutex<FakeState>>,
}

impl Default for FakeNvml {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeNvml {
    /// One `fake_device(0)` that supports locked clocks and reads `idle_reading()`.
    pub fn new() -> Self {
        let state = FakeState {
            devices: vec![fake_device(0)],
            lock_supported: true,
            ..FakeState::default()
        };
        FakeNvml {
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn state(&self) -> MutexGuard<'_, FakeState> {
        // A test that panicked while holding the lock must not hide the state from the next.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the device list.
    pub fn with_devices(self, devices: Vec<GpuDevice>) -> Self {
        self.state().devices = devices;
        self
    }

    /// Scripts the readings of one device: each `read_clocks(index)` returns the next one; the
    /// last repeats forever.
    pub fn with_readings(self, index: u32, readings: Vec<ClockReading>) -> Self {
        {
            let mut s = self.state();
            s.script.insert(index, readings);
            s.next.insert(index, 0);
        }
        self
    }

    /// Makes `locked_clocks_supported` false and `set_locked_clocks` fail as NVML's
    /// `NOT_SUPPORTED` would.
    pub fn without_lock_support(self) -> Self {
        self.state().lock_supported = false;
        self
    }

    /// Makes `set_locked_clocks` fail as NVML's `NO_PERMISSION` does for non-root users.
    pub fn denying_lock(self) -> Self {
        self.state().deny_lock = true;
        self
    }

    /// Makes `reset_locked_clocks` fail (it is still recorded).
    pub fn failing_reset(self) -> Self {
        self.state().fail_reset = true;
        self
    }

    /// Makes the query of `field` fail in every reading, as a deprecated or unsupported NVML
    /// call does; the other fields still read.
    pub fn failing_field(self, field: ReadingField) -> Self {
        self.state().failing_fields.push(field);
        self
    }

    /// Adds a MIG instance `uuid` on the GPU of NVML index `parent`.
    pub fn with_mig(self, uuid: &str, parent: u32) -> Self {
        self.state().mig.insert(uuid.to_string(), parent);
        self
    }

    /// Every call so far, as `name(args)`: `set_locked_clocks(0, 1980, 1980)`, `read_clocks(0)`…
    pub fn calls(&self) -> Vec<String> {
        self.state().calls.clone()
    }

    /// The calls that change device state (`set_locked_clocks`, `reset_locked_clocks`).
    pub fn clock_calls(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .filter(|c| c.contains("locked_clocks("))
            .collect()
    }

    /// The `(min, max)` SM clock lock currently applied to a device, if any.
    pub fn locked(&self, index: u32) -> Option<(u32, u32)> {
        self.state().locked.get(&index).copied()
    }

    /// How many readings have been taken (of any device).
    pub fn reads(&self) -> usize {
        self.state().reads
    }

    fn check_index(s: &FakeState, index: u32) -> Result<(), GpuError> {
        if s.devices.iter().any(|d| d.index == index) {
            Ok(())
        } else {
            Err(GpuError::NoDevice {
                index,
                count: s.devices.len(),
            })
        }
    }
}

impl Nvml for FakeNvml {
    fn devices(&self) -> Result<Vec<GpuDevice>, GpuError> {
        let mut s = self.state();
        s.calls.push("devices()".into());
        Ok(s.devices.clone())
    }

    fn read_clocks(&self, index: u32) -> Result<ClockReading, GpuError> {
        let mut s = self.state();
        s.calls.push(format!("read_clocks({index})"));
        Self::check_index(&s, index)?;
        s.reads += 1;
        let at = s.next.get(&index).copied().unwrap_or(0);
        let mut reading = match s.script.get(&index) {
            Some(script) if !script.is_empty() => script[at.min(script.len() - 1)],
            _ => idle_reading(),
        };
        for field in s.failing_fields.clone() {
            reading.mark_failed(field);
            match field {
                ReadingField::SmMhz => reading.sm_mhz = 0,
                ReadingField::MemMhz => reading.mem_mhz = 0,
                ReadingField::TemperatureC => reading.temperature_c = f64::NAN,
                ReadingField::PowerW => reading.power_w = f64::NAN,
                ReadingField::ThrottleReasons => reading.throttle_reasons = 0,
            }
        }
        s.next.insert(index, at + 1);
        Ok(reading)
    }

    fn locked_clocks_supported(&self, index: u32) -> bool {
        let mut s = self.state();
        s.calls.push(format!("locked_clocks_supported({index})"));
        s.lock_supported && Self::check_index(&s, index).is_ok()
    }

    fn set_locked_clocks(&self, index: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError> {
        let mut s = self.state();
        s.calls
            .push(format!("set_locked_clocks({index}, {min_mhz}, {max_mhz})"));
        Self::check_index(&s, index)?;
        if !s.lock_supported {
            let name = s
                .devices
                .iter()
                .find(|d| d.index == index)
                .map(|d| d.name.clone())
                .unwrap_or_default();
            return Err(GpuError::LockUnsupported { index, name });
        }
        if s.deny_lock {
            return Err(GpuError::LockDenied {
                index,
                source: "fake: NO_PERMISSION".into(),
            });
        }
        s.locked.insert(index, (min_mhz, max_mhz));
        Ok(())
    }

    fn reset_locked_clocks(&self, index: u32) -> Result<(), GpuError> {
        let mut s = self.state();
        s.calls.push(format!("reset_locked_clocks({index})"));
        Self::check_index(&s, index)?;
        if s.fail_reset {
            return Err(GpuError::Call {
                op: "nvmlDeviceResetGpuLockedClocks",
                index,
                source: "fake: UNKNOWN".into(),
            });
        }
        s.locked.remove(&index);
        Ok(())
    }

    fn mig_parent(&self, mig_uuid: &str) -> Result<Option<u32>, GpuError> {
        let mut s = self.state();
        s.calls.push(format!("mig_parent({mig_uuid})"));
        Ok(s.mig.get(mig_uuid).copied())
    }
}
