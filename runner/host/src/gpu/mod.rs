//! GPU state through NVML: device inventory for the run environment, clock locking with a
//! guaranteed restore, per-sample clock/throttle annotations, and which GPU `[gpu] device`
//! is (`select`). All of it goes through the
//! `Nvml` trait so that it builds and is tested on machines without a GPU.

// Test fakes: compiled for this crate's tests and with the `test-hooks` feature (the
// end-to-end tests' binary), never in a release build.
#[cfg(any(test, feature = "test-hooks"))]
mod fake;
#[cfg(any(test, feature = "test-hooks"))]
mod file_fake;
mod guard;
mod libs;
mod monitor;
mod real;
mod select;
mod types;

#[cfg(test)]
mod tests;

#[cfg(any(test, feature = "test-hooks"))]
pub use fake::{FakeNvml, fake_device, fake_supported_sm_mhz, idle_reading};
#[cfg(any(test, feature = "test-hooks"))]
pub use file_fake::{FileNvml, FileNvmlState};
pub use guard::{
    ClockGuard, LOCK_FRACTION_OF_MAX, RESTORE_SIGNALS, TERMINATION_WAIT, active_count,
    await_termination, install_signal_handler, lock_target, on_terminate, restore_all_active,
    signal_name, terminating, termination_signal,
};
pub use libs::cuda_library_versions;
pub use monitor::{ClockMonitor, MonitorHealth, RING_CAPACITY, ReadingLog};
#[cfg(any(test, feature = "test-hooks"))]
pub use real::FAKE_NVML_ENV;
pub use real::{RealNvml, load_nvml, load_real_nvml};
pub use select::{CudaDevice0, CudaDriver, DeviceSelector, SelectedGpu, SystemCuda, select_gpu};
pub use types::{
    ClockMode, ClockReading, GpuDevice, GpuError, Nvml, ReadingField, THROTTLE_SLOWDOWN_MASK,
    is_slowdown,
};
