//! GPU state through NVML: device inventory for the run environment, clock locking with a
//! guaranteed restore, and per-sample clock/throttle annotations. All of it goes through the
//! `Nvml` trait so that it builds and is tested on machines without a GPU.

mod fake;
mod file_fake;
mod guard;
mod libs;
mod monitor;
mod real;
mod types;

#[cfg(test)]
mod tests;

pub use fake::{FakeNvml, fake_device, idle_reading};
pub use file_fake::{FileNvml, FileNvmlState};
pub use guard::{
    ClockGuard, RESTORE_SIGNALS, active_count, install_signal_handler, on_terminate,
    restore_all_active, terminating,
};
pub use libs::cuda_library_versions;
pub use monitor::{ClockMonitor, MonitorHealth, RING_CAPACITY, ReadingLog};
pub use real::{FAKE_NVML_ENV, RealNvml, load_nvml, load_real_nvml};
pub use types::{
    ClockMode, ClockReading, GpuDevice, GpuError, Nvml, THROTTLE_SLOWDOWN_MASK, is_slowdown,
};
