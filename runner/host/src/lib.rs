//! The machine around a measurement: NUMA-aware cpu pinning, NVML/GPU state and clock
//! locking with a guaranteed restore on signals, and the environment fingerprint. Nothing
//! here knows about configuration files, suites or the store.

pub mod fingerprint;
pub mod gpu;
pub mod machine;
