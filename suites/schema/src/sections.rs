//! The typed sections of `Fingerprint.extra`. The store and the export format keep `extra` as
//! one JSON object (so old data reads unchanged), but each section that pitwall writes has a
//! struct here with its key, and writers and readers go through
//! [`Fingerprint::section`]/[`Fingerprint::set_section`] instead of string lookups. Keys a
//! section does not know (from older or newer pitwall) are kept in its `other` map.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Fingerprint, GpuInfo};

/// A section of `Fingerprint.extra`: its key and its shape.
pub trait Section: Serialize + DeserializeOwned {
    const KEY: &'static str;
}

impl Fingerprint {
    /// The section `S`, when present and of its shape (a malformed one reads as absent).
    pub fn section<S: Section>(&self) -> Option<S> {
        self.extra.get(S::KEY).and_then(|v| S::deserialize(v).ok())
    }

    /// Writes the section `S`, replacing what was under its key.
    pub fn set_section<S: Section>(&mut self, section: &S) {
        let value = serde_json::to_value(section).expect("fingerprint sections serialize");
        self.extra.insert(S::KEY.to_string(), value);
    }
}

/// Keys of sections written by pitwall whose shape is owned by the host crate (serialized
/// from its types); readers look them up under these keys.
pub mod keys {
    /// `pitwall_host::machine::PinOutcome`, or a plan (`pitwall env`); see [`super::Pinning`].
    pub const PINNING: &str = "pinning";
    /// `pitwall_host::machine::HostCheck` list; see [`super::HostCheckRow`].
    pub const HOST_CHECKS: &str = "host_checks";
    /// The GPU monitor's summary of a run (per-sample state is in the samples); see
    /// [`super::GpuMonitor`].
    pub const GPU_MONITOR: &str = "gpu_monitor";
}

impl GpuInfo {
    /// What NVML said about this GPU besides its model, uuid and driver (`extra`), when it
    /// is of its shape (a malformed `extra` reads as absent).
    pub fn details(&self) -> Option<GpuDetails> {
        let map: serde_json::Map<String, Value> = self
            .extra
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        GpuDetails::deserialize(Value::Object(map)).ok()
    }

    /// Writes `details` as this GPU's `extra`, replacing it.
    pub fn set_details(&mut self, details: &GpuDetails) {
        self.extra = match serde_json::to_value(details).expect("gpu details serialize") {
            Value::Object(map) => map.into_iter().collect(),
            _ => BTreeMap::new(),
        };
    }
}

/// A GPU's `extra` (`GpuInfo.extra`, per GPU rather than a section of the fingerprint): the
/// fields of the host's `GpuDevice` other than the model, uuid and driver. Fields NVML could
/// not read are written as null; keys an older run lacks read as `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuDetails {
    /// NVML index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// PCI bus id as NVML writes it (`00000000:17:00.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    #[serde(default)]
    pub cuda_driver_version: Option<String>,
    #[serde(default)]
    pub vbios: Option<String>,
    #[serde(default)]
    pub pcie_gen: Option<u32>,
    #[serde(default)]
    pub pcie_width: Option<u32>,
    #[serde(default)]
    pub power_limit_w: Option<f64>,
    #[serde(default)]
    pub max_sm_mhz: Option<u32>,
    #[serde(default)]
    pub max_mem_mhz: Option<u32>,
    #[serde(default)]
    pub base_sm_mhz: Option<u32>,
    #[serde(default)]
    pub persistence_mode: Option<bool>,
    #[serde(default)]
    pub ecc_enabled: Option<bool>,
    /// Pids of other processes with a compute context on the GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_processes: Option<Vec<u32>>,
    #[serde(default)]
    pub numa_node: Option<i32>,
    /// PCI bus ids at the far end of active NVLinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_peers: Option<Vec<String>>,
    /// Link to each other GPU, by its index, in `nvidia-smi topo -m`'s words; not written
    /// when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<BTreeMap<String, String>>,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// `gpu_monitor`: how the GPU monitor fared during a run: how many reads it made, how many
/// failed (and the first error), how many times each field's query failed (each field is read
/// on its own, so one failing query costs only its field), and what one NVML query cost. The host's monitor keeps its
/// count in this type, so what it counts is what is stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuMonitor {
    #[serde(default)]
    pub device: u32,
    #[serde(default)]
    pub period_ms: u64,
    #[serde(default)]
    pub readings: u64,
    #[serde(default)]
    pub failed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Failed queries by field (`sm_mhz`, `mem_mhz`, `temperature_c`, `power_w`,
    /// `throttle_reasons`); a reading with some fields failed still counts in `readings`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_by_field: BTreeMap<String, u64>,
    /// Mean and largest wall time of one `read_clocks` call (all of its NVML queries).
    #[serde(default)]
    pub query_us_mean: f64,
    #[serde(default)]
    pub query_us_max: f64,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl Section for GpuMonitor {
    const KEY: &'static str = keys::GPU_MONITOR;
}

impl GpuMonitor {
    /// One line for the terminal: `gpu 0 monitor: 812 readings every 10 ms, 0 failed, one
    /// query 41 µs mean / 230 µs max`.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "gpu {} monitor: {} readings every {} ms, {} failed, one query {:.0} µs mean / {:.0} µs max",
            self.device,
            self.readings,
            self.period_ms,
            self.failed,
            self.query_us_mean,
            self.query_us_max
        );
        if !self.failed_by_field.is_empty() {
            let fields: Vec<String> = self
                .failed_by_field
                .iter()
                .map(|(f, n)| format!("{f} {n}"))
                .collect();
            line.push_str(&format!("; failed fields: {}", fields.join(", ")));
        }
        if let Some(e) = &self.first_error {
            line.push_str(&format!(" (first error: {e})"));
        }
        line
    }
}

/// `toolchain`: the compilers pitwall and the suites were built with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Toolchain {
    pub rustc: Option<String>,
    pub cc: Option<String>,
    pub nvcc: Option<String>,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl Section for Toolchain {
    const KEY: &'static str = "toolchain";
}

/// `cuda_libraries`: library name → version (and the file it came from).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CudaLibraries(pub BTreeMap<String, String>);

impl Section for CudaLibraries {
    const KEY: &'static str = "cuda_libraries";
}

/// `gpu`: written only when no GPU could be read, with why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuAvailability {
    #[serde(default)]
    pub available: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl Section for GpuAvailability {
    const KEY: &'static str = "gpu";
}

/// `numa_nodes`: node name (`node0`) → its cpu list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NumaNodes(pub BTreeMap<String, String>);

impl Section for NumaNodes {
    const KEY: &'static str = "numa_nodes";
}

/// `cpus`: the cpus the process was pinned to, as a cpu list (`8-15`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PinnedCpus(pub String);

impl Section for PinnedCpus {
    const KEY: &'static str = "cpus";
}

/// `clocks`: the clock policy, the device and the SM clock locked (null when none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default)]
    pub locked_sm_mhz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
    /// The SM clock `clocks = "lock"` (or the configured `lock:<MHz>`) locks this GPU to, or
    /// would: recorded whatever the mode, so a check can set it beside the card's maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_target_sm_mhz: Option<u32>,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl Section for Clocks {
    const KEY: &'static str = "clocks";
}

/// `sampling_targets`: the precision each suite's sampling aimed for, by suite name: the
/// relative half-width of the median's 95% interval, in percent (`target_ci_pct`). A result
/// whose interval is wider than its suite's target is shown as `noisy`
/// (`pitwall_analysis::precision`). Runs stored before it was recorded have none, and are never
/// flagged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SamplingTargets(pub BTreeMap<String, f64>);

impl Section for SamplingTargets {
    const KEY: &'static str = "sampling_targets";
}

/// `isolation`: where built-in suites ran, `worker` or `in_process`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Isolation(pub String);

impl Section for Isolation {
    const KEY: &'static str = "isolation";
}

/// `imported_from`: the file and format an imported run was read from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportedFrom {
    pub file: String,
    pub format: String,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl Section for ImportedFrom {
    const KEY: &'static str = "imported_from";
}

/// `tool_context`: what other tools said about their machine, by tool (format) name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolContext(pub BTreeMap<String, Value>);

impl Section for ToolContext {
    const KEY: &'static str = "tool_context";
}

/// `format_notes`: what a format reader noticed (one line each).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FormatNotes(pub Vec<String>);

impl Section for FormatNotes {
    const KEY: &'static str = "format_notes";
}

/// `pinning`, as read back: the policy and either the plan or why there was none. What the
/// host wrote besides (applied cpus and memory nodes, what did not take effect) is in `other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pinning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Absent (`None`), or present and null when the host had no plan (`Some(None)`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub plan: Option<Option<PinningPlan>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl Section for Pinning {
    const KEY: &'static str = keys::PINNING;
}

/// A pinning plan: the cpus, their NUMA node and where the choice came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PinningPlan {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    #[serde(default)]
    pub numa_node: Option<u32>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// A field that is present, whatever its value (null included).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// `host_checks`, as read back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HostChecks(pub Vec<HostCheckRow>);

impl Section for HostChecks {
    const KEY: &'static str = keys::HOST_CHECKS;
}

/// One host check: its name, the value found, whether it is fine, and how to fix it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCheckRow {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub ok: Option<bool>,
    #[serde(default)]
    pub advice: Option<String>,
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sections_write_todays_json_and_keep_unknown_keys() {
        let mut fp = Fingerprint::default();
        fp.set_section(&Clocks {
            mode: Some("observe".into()),
            locked_sm_mhz: None,
            device: Some(0),
            lock_target_sm_mhz: None,
            other: BTreeMap::new(),
        });
        assert_eq!(
            fp.extra["clocks"],
            json!({ "mode": "observe", "locked_sm_mhz": null, "device": 0 })
        );
        fp.extra.insert(
            "toolchain".into(),
            json!({ "rustc": "1.90", "cc": null, "nvcc": null, "zig": "0.14" }),
        );
        let tc: Toolchain = fp.section().expect("toolchain");
        assert_eq!(tc.rustc.as_deref(), Some("1.90"));
        assert_eq!(tc.other["zig"], json!("0.14"));
        let before = fp.extra["toolchain"].clone();
        fp.set_section(&tc);
        assert_eq!(fp.extra["toolchain"], before);
        fp.set_section(&GpuAvailability {
            available: false,
            reason: Some("no libnvidia-ml".into()),
            other: BTreeMap::new(),
        });
        assert_eq!(
            fp.extra["gpu"],
            json!({ "available": false, "reason": "no libnvidia-ml" })
        );
        fp.extra.insert("isolation".into(), json!(42));
        assert_eq!(fp.section::<Isolation>(), None, "malformed reads as absent");
    }

    #[test]
    fn gpu_details_and_monitor_write_todays_json() {
        // What `serde_json::to_value(&GpuDevice)` less model, uuid and driver wrote before.
        let before = json!({
            "index": 0, "pci_bus_id": "00000000:17:00.0", "cuda_driver_version": "13.0",
            "vbios": null, "pcie_gen": 5, "pcie_width": 16, "power_limit_w": 700.0,
            "max_sm_mhz": 1980, "max_mem_mhz": 3201, "base_sm_mhz": 1755,
            "persistence_mode": true, "ecc_enabled": true, "other_processes": [],
            "numa_node": null, "nvlink_peers": ["00000000:18:00.0"],
        });
        let mut gpu = GpuInfo {
            extra: before.as_object().unwrap().clone().into_iter().collect(),
            ..Default::default()
        };
        let d = gpu.details().expect("details");
        assert_eq!(d.power_limit_w, Some(700.0));
        assert_eq!(d.topology, None);
        gpu.set_details(&d);
        assert_eq!(serde_json::to_value(&gpu.extra).unwrap(), before);
        gpu.extra.insert("mig".into(), json!("off"));
        gpu.extra.remove("nvlink_peers");
        let d = gpu.details().expect("details");
        assert_eq!(d.nvlink_peers, None, "an older run without the key");
        assert_eq!(d.other["mig"], json!("off"));
        gpu.extra.insert("pcie_gen".into(), json!("five"));
        assert_eq!(gpu.details(), None, "malformed reads as absent");

        let mut fp = Fingerprint::default();
        fp.set_section(&GpuMonitor {
            device: 0,
            period_ms: 10,
            readings: 3,
            query_us_mean: 40.0,
            query_us_max: 50.0,
            ..Default::default()
        });
        assert_eq!(
            fp.extra["gpu_monitor"],
            json!({ "device": 0, "period_ms": 10, "readings": 3, "failed": 0,
                    "query_us_mean": 40.0, "query_us_max": 50.0 })
        );
        assert_eq!(fp.section::<GpuMonitor>().unwrap().readings, 3);
    }
}
