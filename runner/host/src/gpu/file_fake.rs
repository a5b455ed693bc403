//! `FileNvml`: a fake `Nvml` whose state (devices, readings, locked clocks, call log) lives in
//! a JSON file, so that a test can run the real `pitwall` binary (selected through
//! `PITWALL_FAKE_NVML=<path>`, see `load_nvml`), kill it, and then read what it did to the
//! "GPU" from the file. Writes are atomic (temporary file + rename).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::fake::{fake_device, idle_reading};
use super::types::{ClockReading, GpuDevice, GpuError, Nvml};

/// The content of a `FileNvml` state file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileNvmlState {
    pub devices: Vec<GpuDevice>,
    /// What `read_clocks` reports per device index (`idle_reading()` when absent); while a
    /// device is locked its `sm_mhz` reads as the lock's maximum.
    #[serde(default)]
    pub readings: BTreeMap<u32, ClockReading>,
    #[serde(default = "yes")]
    pub lock_supported: bool,
    /// Refuse `set_locked_clocks` as NVML's `NO_PERMISSION` does for a non-root user.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deny_lock: bool,
    /// MIG instances by UUID: the NVML index of their GPU.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mig: BTreeMap<String, u32>,
    /// Current `(min, max)` SM clock lock per device index.
    #[serde(default)]
    pub locked: BTreeMap<u32, (u32, u32)>,
    /// Mutating calls (and `devices()`), in order: `set_locked_clocks(0, 1755, 1755)`,
    /// `reset_locked_clocks(0)`. Reads are not logged: a monitor reads every few milliseconds.
    #[serde(default)]
    pub calls: Vec<String>,
}

fn yes() -> bool {
    true
}

impl Default for FileNvmlState {
    /// One `fake_device(0)`, lockable, unlocked, empty log.
    fn default() -> Self {
        FileNvmlState {
            devices: vec![fake_device(0)],
            readings: BTreeMap::new(),
            lock_supported: true,
            deny_lock: false,
            mig: BTreeMap::new(),
            locked: BTreeMap::new(),
            calls: Vec::new(),
        }
    }
}

/// File-backed fake NVML (a test hook; see the module docs). Each call reads the file, and
/// mutating calls write it back, so the file is always the truth, also for other processes.
/// Calls within one process are serialised; concurrent writers in several processes are not
/// supported (last rename wins).
#[derive(Debug)]
pub struct FileNvml {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileNvml {
    /// Opens the state file, creating it with `FileNvmlState::default()` when it is missing.
    pub fn open(path: &Path) -> Result<FileNvml, GpuError> {
        let nvml = FileNvml {
            path: path.to_path_buf(),
            lock: Mutex::new(()),
        };
        if !path.exists() {
            nvml.save(&FileNvmlState::default())?;
        }
        nvml.load()?;
        Ok(nvml)
    }

    /// Writes `state` to `path` (atomically) and opens it.
    pub fn create(path: &Path, state: &FileNvmlState) -> Result<FileNvml, GpuError> {
        let nvml = FileNvml {
            path: path.to_path_buf(),
            lock: Mutex::new(()),
        };
        nvml.save(state)?;
        Ok(nvml)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, source: impl Into<super::types::Cause>) -> GpuError {
        GpuError::FakeState {
            path: self.path.display().to_string(),
            source: source.into(),
        }
    }

    /// Reads the current state from the file.
    pub fn load(&self) -> Result<FileNvmlState, GpuError> {
        let text = std::fs::read_to_string(&self.path).map_err(|e| self.err(e))?;
        serde_json::from_str(&text).map_err(|e| self.err(e))
    }

    /// Writes the state: to `<file>.tmp.<pid>` first, then renamed over the file, so a reader
    /// (or a process killed mid-write) never sees half a file.
    fn save(&self, state: &FileNvmlState) -> Result<(), GpuError> {
        let mut text = serde_json::to_string_pretty(state).map_err(|e| self.err(e))?;
        text.push('\n');
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(format!(".tmp.{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, text).map_err(|e| self.err(e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            self.err(e)
        })
    }

    /// Runs `f` on the state under the in-process lock and writes the result back.
    fn update<T>(
        &self,
        f: impl FnOnce(&mut FileNvmlState) -> Result<T, GpuError>,
    ) -> Result<T, GpuError> {
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut state = self.load()?;
        let out = f(&mut state);
        self.save(&state)?;
        out
    }
}

fn check_index(state: &FileNvmlState, index: u32) -> Result<(), GpuError> {
    if state.devices.iter().any(|d| d.index == index) {
        Ok(())
    } else {
        Err(GpuError::NoDevice {
            index,
            count: state.devices.len(),
        })
    }
}

impl Nvml for FileNvml {
    fn devices(&self) -> Result<Vec<GpuDevice>, GpuError> {
        self.update(|s| {
            s.calls.push("devices()".into());
            Ok(s.devices.clone())
        })
    }

    fn read_clocks(&self, index: u32) -> Result<ClockReading, GpuError> {
        let s = self.load()?;
        check_index(&s, index)?;
        let mut reading = s.readings.get(&index).copied().unwrap_or_else(idle_reading);
        if let Some((_, max)) = s.locked.get(&index) {
            reading.sm_mhz = *max;
        }
        Ok(reading)
    }

    fn locked_clocks_supported(&self, index: u32) -> bool {
        self.load()
            .is_ok_and(|s| s.lock_supported && check_index(&s, index).is_ok())
    }

    fn set_locked_clocks(&self, index: u32, min_mhz: u32, max_mhz: u32) -> Result<(), GpuError> {
        self.update(|s| {
            s.calls
                .push(format!("set_locked_clocks({index}, {min_mhz}, {max_mhz})"));
            check_index(s, index)?;
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
        })
    }

    fn reset_locked_clocks(&self, index: u32) -> Result<(), GpuError> {
        self.update(|s| {
            s.calls.push(format!("reset_locked_clocks({index})"));
            check_index(s, index)?;
            s.locked.remove(&index);
            Ok(())
        })
    }

    fn mig_parent(&self, mig_uuid: &str) -> Result<Option<u32>, GpuError> {
        Ok(self.load()?.mig.get(mig_uuid).copied())
    }
}
