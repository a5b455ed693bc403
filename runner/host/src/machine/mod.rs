//! What pitwall knows about and does to the host machine around a run: NUMA-aware cpu
//! pinning with memory binding, host settings that make timings noisy, and how contended
//! the machine is during a run.

mod affinity;
mod apply;
mod contention;
mod contention_watch;
#[cfg(any(test, feature = "test-hooks"))]
mod fake_affinity;
#[cfg(any(test, feature = "test-hooks"))]
mod fake_contention;
mod host_checks;
mod pinning;
mod sysfs;

#[cfg(test)]
mod fake_tree;

pub use affinity::{Affinity, ProcessAffinity, lower_thread_priority};
pub use apply::{PinOutcome, apply_pinning};
pub use contention::{
    ContentionProbe, ContentionSample, CpuTicks, FAKE_CONTENTION_ENV, ProcContention,
    contention_probe,
};
pub use contention_watch::{ContentionTally, ContentionWatch, SAMPLE_PERIOD, Window};
#[cfg(any(test, feature = "test-hooks"))]
pub use fake_affinity::{AffinityCall, FakeAffinity};
#[cfg(any(test, feature = "test-hooks"))]
pub use fake_contention::FakeContention;
pub use host_checks::{HostCheck, UNKNOWN, host_checks};
pub use pinning::{PinError, PinPlan, plan_pinning};
pub use sysfs::{
    CpulistError, DirSysfs, Sysfs, format_cpulist, normalize_pci_bus_id, parse_cpulist,
};

/// What to do when the configured pinning cannot be applied (`[pinning] policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PinPolicy {
    Require,
    Prefer,
    Off,
}
