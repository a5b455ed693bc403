//! What pitwall knows about and does to the host machine around a run: NUMA-aware cpu
//! pinning with memory binding, and host settings that make timings noisy.

mod affinity;
mod apply;
#[cfg(any(test, feature = "test-hooks"))]
mod fake_affinity;
mod host_checks;
mod pinning;
mod sysfs;

#[cfg(test)]
mod fake_tree;

pub use affinity::{Affinity, ProcessAffinity};
pub use apply::{PinOutcome, apply_pinning};
#[cfg(any(test, feature = "test-hooks"))]
pub use fake_affinity::{AffinityCall, FakeAffinity};
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
