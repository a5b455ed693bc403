//! The typed sections of `Fingerprint.extra`. The store and the export format keep `extra` as
//! one JSON object (so old data reads unchanged), but each section that pitwall writes has a
//! struct here with its key, and writers and readers go through
//! [`Fingerprint::section`]/[`Fingerprint::set_section`] instead of string lookups. Keys a
//! section does not know (from older or newer pitwall) are kept in its `other` map.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Fingerprint;

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
    /// The GPU monitor's summary of a run (per-sample state is in the samples).
    pub const GPU_MONITOR: &str = "gpu_monitor";
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
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl Section for Clocks {
    const KEY: &'static str = "clocks";
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
}
