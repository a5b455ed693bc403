//! The kernel's view of the machine (sysfs, procfs) behind a trait, so pinning and host
//! checks run against fake trees in tests; plus the syntax those files use (cpu lists, PCI
//! bus ids).

use std::path::{Path, PathBuf};

/// Reads files of the kernel's sysfs/procfs. Paths are relative to a root, without a leading
/// slash: `"sys/devices/system/node/online"`, `"proc/self/status"`.
pub trait Sysfs {
    /// The file's contents with surrounding whitespace trimmed; `None` when it is absent or
    /// cannot be read.
    fn read(&self, rel_path: &str) -> Option<String>;
    /// The entry names of a directory, sorted; empty when it is absent or cannot be read.
    fn list(&self, rel_dir: &str) -> Vec<String>;
}

/// [`Sysfs`] over a directory: `/` for the real machine, a temporary tree in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirSysfs {
    root: PathBuf,
}

impl DirSysfs {
    /// The real machine: paths are read under `/`.
    pub fn real() -> Self {
        Self::new("/")
    }

    /// A tree rooted at `root` (a fake machine in tests).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Sysfs for DirSysfs {
    fn read(&self, rel_path: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.root.join(rel_path)).ok()?;
        Some(text.trim().to_string())
    }

    fn list(&self, rel_dir: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.root.join(rel_dir)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }
}

/// A cpu list that does not follow the kernel's syntax.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid cpu list `{text}`: {reason}")]
pub struct CpulistError {
    pub text: String,
    pub reason: String,
}

/// Parses the kernel's cpu list syntax (`"0-3,8-11"`, `"5"`, `""`) into sorted, distinct cpu
/// ids. Whitespace around items is ignored; an empty list is valid (no cpus).
pub fn parse_cpulist(text: &str) -> Result<Vec<usize>, CpulistError> {
    let err = |reason: String| CpulistError {
        text: text.to_string(),
        reason,
    };
    let mut cpus = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| err(format!("`{s}` is not a cpu number")))
        };
        match item.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (num(lo)?, num(hi)?);
                if lo > hi {
                    return Err(err(format!("range `{item}` runs backwards")));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(num(item)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Writes cpu ids in the kernel's cpu list syntax, merging runs: `[0,1,2,3,8]` → `"0-3,8"`.
/// An empty set is written as `"none"`, which reads better in messages than an empty string.
pub fn format_cpulist(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.is_empty() {
        return "none".to_string();
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// Normalises a PCI bus id to the form sysfs uses under `sys/bus/pci/devices`: lowercase
/// hex, a 4-digit domain (wider only when the domain needs it), `dddd:bb:dd.f`. Accepts
/// NVML's 8-digit domain (`"00000000:3B:00.0"`) and ids without a domain (`"3b:00.0"`).
/// `None` when the text is not a bus id.
pub fn normalize_pci_bus_id(id: &str) -> Option<String> {
    let id = id.trim();
    let parts: Vec<&str> = id.split(':').collect();
    let (domain, bus, devfn) = match parts.as_slice() {
        [domain, bus, devfn] => (*domain, *bus, *devfn),
        [bus, devfn] => ("0", *bus, *devfn),
        _ => return None,
    };
    let (dev, func) = devfn.split_once('.')?;
    let hex = |s: &str, max_len: usize| {
        if s.is_empty() || s.len() > max_len || !s.chars().all(|c| c.is_ascii_hexdigit()) {
            None
        } else {
            u32::from_str_radix(s, 16).ok()
        }
    };
    let domain = hex(domain, 8)?;
    let bus = hex(bus, 2)?;
    let dev = hex(dev, 2)?;
    let func = hex(func, 1)?;
    if dev > 0x1f || func > 7 {
        return None;
    }
    Some(format!("{domain:04x}:{bus:02x}:{dev:02x}.{func:x}"))
}

/// Reads and parses a cpu list file; `None` when the file is absent, an error when it is
/// present but malformed.
pub(crate) fn read_cpulist(
    sysfs: &dyn Sysfs,
    rel_path: &str,
) -> Option<Result<Vec<usize>, CpulistError>> {
    sysfs.read(rel_path).map(|text| parse_cpulist(&text))
}

/// The NUMA nodes the kernel lists under `sys/devices/system/node`, in numeric order.
pub(crate) fn numa_nodes(sysfs: &dyn Sysfs) -> Vec<u32> {
    let mut nodes: Vec<u32> = sysfs
        .list("sys/devices/system/node")
        .iter()
        .filter_map(|name| name.strip_prefix("node")?.parse().ok())
        .collect();
    nodes.sort_unstable();
    nodes
}

/// The cpus `Cpus_allowed_list` in `proc/self/status` names: what the process's cpuset,
/// taskset or container lets it run on. `None` when the file or line is absent or malformed.
pub(crate) fn allowed_cpus(sysfs: &dyn Sysfs) -> Option<Vec<usize>> {
    let status = sysfs.read("proc/self/status")?;
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    parse_cpulist(line).ok()
}
