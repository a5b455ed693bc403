//! Choosing which cores (and which NUMA node's memory) a benchmark runs on: the cores local
//! to the GPU under test, one thread per physical core, away from core 0; or the cores the
//! configuration names, which win over everything.

use serde::Serialize;

use super::sysfs::{
    CpulistError, Sysfs, allowed_cpus, format_cpulist, normalize_pci_bus_id, numa_nodes,
    read_cpulist,
};

const ONLINE: &str = "sys/devices/system/cpu/online";

/// Which cpus to pin to and which node's memory to prefer, with where that choice came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinPlan {
    /// Sorted ascending.
    pub cpus: Vec<usize>,
    /// The NUMA node holding all of `cpus`, when the machine reports one.
    pub numa_node: Option<u32>,
    /// Where the cpus came from, e.g. `"local_cpulist of GPU 0000:3b:00.0"`, `"configured
    /// cpus"`, `"default: last cores of NUMA node 0"`.
    pub source: String,
}

/// Why a pinning plan could not be made or applied.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("cannot read {path}; hint: cpu pinning needs linux sysfs mounted at /sys")]
    Unreadable { path: String },
    #[error("cannot parse {path}: {source}")]
    Cpulist {
        path: String,
        #[source]
        source: CpulistError,
    },
    #[error(
        "invalid gpu pci bus id `{id}`; hint: expected domain:bus:device.function, e.g. \
         0000:3b:00.0, as `nvidia-smi --query-gpu=pci.bus_id --format=csv` prints"
    )]
    InvalidPciId { id: String },
    #[error(
        "gpu {bdf} not found under /sys/bus/pci/devices; hint: check the bus id with \
         `nvidia-smi --query-gpu=pci.bus_id --format=csv`"
    )]
    GpuNotFound { bdf: String },
    #[error(
        "configured cpu {cpu} is not online (online: {online}); hint: fix [pinning] cpus in \
         pitwall.toml"
    )]
    CpuOffline { cpu: u32, online: String },
    #[error(
        "configured cpu {cpu} is outside the cpus this process may use ({allowed}); hint: a \
         cpuset, taskset or container limit restricts the process: pick [pinning] cpus from \
         that set"
    )]
    CpuNotAllowed { cpu: u32, allowed: String },
    #[error(
        "none of the cpus of {origin} ({candidates}) may be used by this process (allowed: \
         {allowed}); hint: list usable cores in [pinning] cpus, or run outside the \
         restricting cpuset"
    )]
    NoAllowedCpus {
        origin: String,
        candidates: String,
        allowed: String,
    },
    #[error(
        "{origin} offers {available} usable cpus, {want} wanted; hint: ask for fewer cores \
         or list them in [pinning] cpus"
    )]
    NotEnoughCpus {
        origin: String,
        want: usize,
        available: usize,
    },
    #[error(
        "cannot set cpu affinity to {cpus}: {source}; hint: the cpus must lie within the \
         process's cpuset (Cpus_allowed_list in /proc/self/status)"
    )]
    SetAffinity {
        cpus: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "cannot bind memory to numa node {node}: {source}; hint: container seccomp profiles \
         (docker's default) block set_mempolicy without CAP_SYS_NICE: add that capability, \
         or use [pinning] policy = \"prefer\""
    )]
    BindMemory {
        node: u32,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read back the {what}: {source}")]
    ReadBack {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{what} not applied: wanted {wanted}, the kernel reports {got}; hint: a cpuset or \
         memory policy limit of the process's cgroup may override it"
    )]
    NotApplied {
        what: &'static str,
        wanted: String,
        got: String,
    },
}

/// Plans which cpus to pin to.
///
/// - `configured_cpus` win over everything; each must be online and allowed to this process.
/// - With `gpu_pci_bus_id` (any case, NVML's 8-digit domain accepted), the GPU's
///   `local_cpulist` (or its node's cpulist); a `numa_node` of -1 means the machine gives no
///   locality, and all online cpus are candidates.
/// - Otherwise the first NUMA node with usable cpus (node 0 normally), or all online cpus on
///   a machine without NUMA information.
///
/// Candidates are intersected with the cpus the process may use, read from
/// `Cpus_allowed_list` in `proc/self/status` (through `sysfs`, so fake trees can restrict
/// it; when absent, every online cpu counts as allowed). Of the candidates, one thread per
/// physical core is kept (SMT siblings from `topology/thread_siblings_list`), and the
/// highest-numbered cores are preferred, leaving core 0 and its interrupts for last. `want`
/// is the number of cpus: 0 means every local core. When there are fewer physical cores than
/// `want`, SMT siblings fill the rest; fewer usable threads than `want` is an error.
pub fn plan_pinning(
    sysfs: &dyn Sysfs,
    gpu_pci_bus_id: Option<&str>,
    configured_cpus: Option<&[u32]>,
    want: usize,
) -> Result<PinPlan, PinError> {
    let online = cpulist_at(sysfs, ONLINE)?.ok_or_else(|| PinError::Unreadable {
        path: ONLINE.to_string(),
    })?;
    let allowed: Vec<usize> = match allowed_cpus(sysfs) {
        Some(allowed) => allowed.into_iter().filter(|c| online.contains(c)).collect(),
        None => online.clone(),
    };

    if let Some(configured) = configured_cpus {
        return configured_plan(sysfs, configured, &online, &allowed);
    }

    let (candidates, numa_node, origin) = match gpu_pci_bus_id {
        Some(id) => gpu_candidates(sysfs, id, &online)?,
        None => default_candidates(sysfs, &online, &allowed)?,
    };
    let usable: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|c| allowed.contains(c))
        .collect();
    if usable.is_empty() {
        return Err(PinError::NoAllowedCpus {
            origin,
            candidates: format_cpulist(&candidates),
            allowed: format_cpulist(&allowed),
        });
    }
    let cpus = choose_cores(sysfs, &usable, want).ok_or_else(|| PinError::NotEnoughCpus {
        origin: origin.clone(),
        want,
        available: usable.len(),
    })?;
    Ok(PinPlan {
        cpus,
        numa_node,
        source: origin,
    })
}

fn configured_plan(
    sysfs: &dyn Sysfs,
    configured: &[u32],
    online: &[usize],
    allowed: &[usize],
) -> Result<PinPlan, PinError> {
    let mut cpus = Vec::with_capacity(configured.len());
    for &cpu in configured {
        let c = cpu as usize;
        if !online.contains(&c) {
            return Err(PinError::CpuOffline {
                cpu,
                online: format_cpulist(online),
            });
        }
        if !allowed.contains(&c) {
            return Err(PinError::CpuNotAllowed {
                cpu,
                allowed: format_cpulist(allowed),
            });
        }
        cpus.push(c);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(PinPlan {
        numa_node: node_holding(sysfs, &cpus),
        cpus,
        source: "configured cpus".to_string(),
    })
}

/// Candidates for a GPU: its local cpus and node, or the whole machine without NUMA info.
fn gpu_candidates(
    sysfs: &dyn Sysfs,
    id: &str,
    online: &[usize],
) -> Result<(Vec<usize>, Option<u32>, String), PinError> {
    let bdf = normalize_pci_bus_id(id).ok_or_else(|| PinError::InvalidPciId { id: id.into() })?;
    let dir = format!("sys/bus/pci/devices/{bdf}");
    let numa = sysfs.read(&format!("{dir}/numa_node"));
    let local_path = format!("{dir}/local_cpulist");
    let local = cpulist_at(sysfs, &local_path)?;
    let numa: Option<i64> = numa.and_then(|n| n.parse().ok());
    let origin = format!("local_cpulist of GPU {bdf}");
    match (numa, local) {
        (Some(-1), _) => Ok((
            online.to_vec(),
            None,
            format!("all online cpus (GPU {bdf} reports no NUMA node)"),
        )),
        (Some(n), Some(local)) => Ok((local, u32::try_from(n).ok(), origin)),
        (Some(n), None) => {
            let path = format!("sys/devices/system/node/node{n}/cpulist");
            let cpus = cpulist_at(sysfs, &path)?.ok_or(PinError::Unreadable { path })?;
            Ok((
                cpus,
                u32::try_from(n).ok(),
                format!("cpus of NUMA node {n} of GPU {bdf}"),
            ))
        }
        // No readable numa_node: the local cpus still say where the GPU is.
        (None, Some(local)) => {
            let node = node_holding(sysfs, &local);
            Ok((local, node, origin))
        }
        (None, None) => Err(PinError::GpuNotFound { bdf }),
    }
}

/// Candidates without a GPU: the first NUMA node with cpus this process may use.
fn default_candidates(
    sysfs: &dyn Sysfs,
    online: &[usize],
    allowed: &[usize],
) -> Result<(Vec<usize>, Option<u32>, String), PinError> {
    let mut first = None;
    for node in numa_nodes(sysfs) {
        let path = format!("sys/devices/system/node/node{node}/cpulist");
        let Some(cpus) = cpulist_at(sysfs, &path)? else {
            continue;
        };
        if cpus.iter().any(|c| allowed.contains(c)) {
            return Ok((
                cpus,
                Some(node),
                format!("default: last cores of NUMA node {node}"),
            ));
        }
        first.get_or_insert((cpus, node));
    }
    if let Some((cpus, node)) = first {
        // No node has usable cpus: report against node `node` so the error names it.
        return Ok((
            cpus,
            Some(node),
            format!("default: last cores of NUMA node {node}"),
        ));
    }
    Ok((
        online.to_vec(),
        None,
        "default: last cores of the machine (no NUMA information)".to_string(),
    ))
}

/// `want` cpus from `usable`: one thread per physical core, highest cores first, siblings
/// only when physical cores run out. `None` when there are fewer than `want` threads.
fn choose_cores(sysfs: &dyn Sysfs, usable: &[usize], want: usize) -> Option<Vec<usize>> {
    // Physical core of each cpu, named by its lowest sibling; cpu itself without topology.
    let mut cores: Vec<(usize, usize)> = usable
        .iter()
        .map(|&cpu| {
            let path = format!("sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
            let core = read_cpulist(sysfs, &path)
                .and_then(Result::ok)
                .and_then(|s| s.first().copied())
                .unwrap_or(cpu);
            (core, cpu)
        })
        .collect();
    cores.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut chosen: Vec<usize> = Vec::new();
    let mut seen_cores: Vec<usize> = Vec::new();
    for &(core, cpu) in &cores {
        if !seen_cores.contains(&core) {
            seen_cores.push(core);
            chosen.push(cpu);
        }
    }
    let target = if want == 0 { chosen.len() } else { want };
    if target > usable.len() {
        return None;
    }
    chosen.truncate(target);
    // Fill with SMT siblings, highest first, when there are not enough physical cores.
    let mut rest: Vec<usize> = usable
        .iter()
        .copied()
        .filter(|c| !chosen.contains(c))
        .collect();
    rest.sort_unstable_by(|a, b| b.cmp(a));
    chosen.extend(rest.into_iter().take(target - chosen.len()));
    chosen.sort_unstable();
    Some(chosen)
}

/// The NUMA node whose cpulist holds every one of `cpus`.
pub(crate) fn node_holding(sysfs: &dyn Sysfs, cpus: &[usize]) -> Option<u32> {
    numa_nodes(sysfs).into_iter().find(|node| {
        let path = format!("sys/devices/system/node/node{node}/cpulist");
        matches!(read_cpulist(sysfs, &path), Some(Ok(list)) if cpus.iter().all(|c| list.contains(c)))
    })
}

fn cpulist_at(sysfs: &dyn Sysfs, path: &str) -> Result<Option<Vec<usize>>, PinError> {
    read_cpulist(sysfs, path)
        .transpose()
        .map_err(|source| PinError::Cpulist {
            path: path.to_string(),
            source,
        })
}

#[cfg(test)]
mod tests;
