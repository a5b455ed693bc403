//! How contended the machine is while pitwall measures, read from procfs: other processes'
//! runnable threads on the benchmark CPUs (every thread, not only each process's main one),
//! the benchmark CPUs' steal time and CPU pressure stalls (PSI), system-wide and for
//! pitwall's own cgroup. Behind [`ContentionProbe`], so tests read fake `/proc` trees or
//! scripted samples; [`super::contention_watch`] samples it on a thread during a run.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::sysfs::{DirSysfs, Sysfs};

/// The benchmark CPUs' time as `/proc/stat` counts it, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// user + nice + system + idle + iowait + irq + softirq + steal (guest time is inside
    /// user and nice).
    pub total: u64,
    pub steal: u64,
}

/// One reading of the machine. `None`: the kernel does not say (file absent or unreadable).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentionSample {
    /// Threads of other processes in state `R` whose last CPU (`processor`) is a benchmark
    /// CPU.
    pub other_runnable_threads: Option<u32>,
    /// The benchmark CPUs' time so far.
    pub cpu: Option<CpuTicks>,
    /// `/proc/pressure/cpu`, `some` line, `total=` (µs stalled since boot).
    pub psi_some_us: Option<u64>,
    /// The same counter of pitwall's own cgroup (cgroup v2 `cpu.pressure`).
    pub psi_cgroup_some_us: Option<u64>,
}

/// Reads how contended the machine is now.
pub trait ContentionProbe: Send + Sync {
    fn sample(&self) -> ContentionSample;
}

/// [`ContentionProbe`] over procfs (and the cgroup filesystem) under a root: `/` for the real
/// machine, a fake tree in tests.
#[derive(Debug, Clone)]
pub struct ProcContention {
    fs: DirSysfs,
    /// pitwall's process: it and all its descendants (the benchmarks it starts) are not
    /// "other" processes.
    own_pid: u32,
    /// The benchmark CPUs, sorted; empty: every CPU.
    cpus: Vec<usize>,
    /// Where pitwall's own cgroup's `cpu.pressure` is, relative to the root.
    cgroup_pressure: Option<String>,
}

impl ProcContention {
    /// This process on this machine, measuring on `cpus` (the pinned CPUs; empty when not
    /// pinned: every CPU).
    pub fn real(cpus: &[usize]) -> Self {
        Self::new(DirSysfs::real(), std::process::id(), cpus)
    }

    /// Process `own_pid` of the machine under `fs`.
    pub fn new(fs: DirSysfs, own_pid: u32, cpus: &[usize]) -> Self {
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        let cgroup_pressure = own_cgroup_pressure(&fs, own_pid);
        Self {
            fs,
            own_pid,
            cpus,
            cgroup_pressure,
        }
    }

    /// The benchmark CPUs (empty: every CPU).
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// Whether pitwall's own cgroup has a `cpu.pressure` file to read.
    pub fn has_cgroup_pressure(&self) -> bool {
        self.cgroup_pressure.is_some()
    }

    fn on_benchmark_cpu(&self, cpu: usize) -> bool {
        self.cpus.is_empty() || self.cpus.binary_search(&cpu).is_ok()
    }

    /// Threads in state `R` on a benchmark CPU of every process but pitwall and its
    /// descendants, kernel threads left out; `None` when `proc` lists no process. One read per thread: a process's
    /// parent is in the `stat` of its main thread (the task whose id is the process's).
    fn other_runnable_threads(&self) -> Option<u32> {
        let mut parents: HashMap<u32, u32> = HashMap::new();
        let mut runnable: Vec<u32> = Vec::new();
        for pid in self
            .fs
            .list("proc")
            .iter()
            .filter_map(|name| name.parse::<u32>().ok())
        {
            for tid in self.fs.list(&format!("proc/{pid}/task")) {
                let Some(stat) = self.fs.read(&format!("proc/{pid}/task/{tid}/stat")) else {
                    continue; // exited since the listing
                };
                let Some(t) = parse_task_stat(&stat) else {
                    continue;
                };
                if tid.parse() == Ok(pid) {
                    parents.insert(pid, t.ppid);
                }
                // Kernel threads (kthreadd, pid 2, and its children) are no other workload:
                // housekeeping such as kworkers and DAMON wakes for a moment, and one such
                // wake-up in the 2 or 3 samples of a short run made an idle machine contended.
                let kernel = pid == KTHREADD_PID || t.ppid == KTHREADD_PID;
                if !kernel && t.state == 'R' && self.on_benchmark_cpu(t.processor) {
                    runnable.push(pid);
                }
            }
        }
        if parents.is_empty() {
            return None;
        }
        let own = descendants(&parents, self.own_pid);
        Some(runnable.iter().filter(|p| !own.contains(p)).count() as u32)
    }
}

/// The kernel's thread daemon: every kernel thread is it or its child.
const KTHREADD_PID: u32 = 2;

impl ContentionProbe for ProcContention {
    fn sample(&self) -> ContentionSample {
        ContentionSample {
            other_runnable_threads: self.other_runnable_threads(),
            cpu: self
                .fs
                .read("proc/stat")
                .and_then(|s| cpu_ticks(&s, &self.cpus)),
            psi_some_us: self
                .fs
                .read("proc/pressure/cpu")
                .and_then(|s| psi_some_total(&s)),
            psi_cgroup_some_us: self
                .cgroup_pressure
                .as_ref()
                .and_then(|p| self.fs.read(p))
                .and_then(|s| psi_some_total(&s)),
        }
    }
}

/// The test hook that replaces the machine's contention with a fake one (builds with the
/// `test-hooks` feature only): the number of other runnable threads every sample reads, steal
/// and pressure unknown. The end-to-end tests set it to 0 so that the load of the tests running
/// beside them does not make their runs contended.
pub const FAKE_CONTENTION_ENV: &str = "PITWALL_FAKE_CONTENTION";

/// The probe of process `own_pid` on the machine under `root`, measuring on `cpus`:
/// [`ProcContention`], or the fake `PITWALL_FAKE_CONTENTION` asks for in a build with the
/// `test-hooks` feature.
pub fn contention_probe(root: &Path, own_pid: u32, cpus: &[usize]) -> Arc<dyn ContentionProbe> {
    #[cfg(any(test, feature = "test-hooks"))]
    if let Some(threads) = std::env::var(FAKE_CONTENTION_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
    {
        return Arc::new(super::FakeContention::new(vec![ContentionSample {
            other_runnable_threads: Some(threads),
            ..ContentionSample::default()
        }]));
    }
    Arc::new(ProcContention::new(DirSysfs::new(root), own_pid, cpus))
}

/// What a `stat` line of a process or thread says of its scheduling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskStat {
    pub(crate) state: char,
    pub(crate) ppid: u32,
    pub(crate) processor: usize,
}

/// State (field 3), parent (field 4) and last CPU (field 39) of a `stat` line. The command
/// name in parentheses may hold spaces and parentheses, so fields are counted from the last
/// `)`.
pub(crate) fn parse_task_stat(stat: &str) -> Option<TaskStat> {
    let close = stat.rfind(')')?;
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    Some(TaskStat {
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        processor: rest.get(36)?.parse().ok()?,
    })
}

/// `root` and every process below it in the parent map.
fn descendants(parents: &HashMap<u32, u32>, root: u32) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&pid, &ppid) in parents {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = HashSet::from([root]);
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if found.insert(c) {
                todo.push(c);
            }
        }
    }
    found
}

/// The ticks of `cpus` in `/proc/stat` (every CPU, the `cpu` line, when empty); `None` when a
/// CPU's line is missing or malformed.
pub(crate) fn cpu_ticks(stat: &str, cpus: &[usize]) -> Option<CpuTicks> {
    let mut lines: HashMap<&str, Vec<u64>> = HashMap::new();
    for line in stat.lines() {
        let mut words = line.split_whitespace();
        let Some(name) = words.next().filter(|n| n.starts_with("cpu")) else {
            continue;
        };
        // A line with a field that is not a number is malformed: not read at all.
        if let Ok(v) = words.map(str::parse).collect::<Result<Vec<u64>, _>>() {
            lines.insert(name, v);
        }
    }
    let names: Vec<String> = if cpus.is_empty() {
        vec!["cpu".to_string()]
    } else {
        cpus.iter().map(|c| format!("cpu{c}")).collect()
    };
    let mut ticks = CpuTicks::default();
    for name in names {
        let v = lines.get(name.as_str()).filter(|v| v.len() >= 4)?;
        // user nice system idle iowait irq softirq steal [guest guest_nice]
        let steal = *v.get(7).unwrap_or(&0);
        ticks.total += v.iter().take(8).sum::<u64>();
        ticks.steal += steal;
    }
    Some(ticks)
}

/// The `total=` µs of the `some` line of a PSI file.
pub(crate) fn psi_some_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

/// pitwall's own cgroup v2 `cpu.pressure`, relative to the root: the `0::PATH` line of
/// `proc/PID/cgroup`, under `/sys/fs/cgroup` (unified) or `/sys/fs/cgroup/unified` (hybrid).
/// `None` for the root cgroup (its pressure is the system's) or when the file is absent.
fn own_cgroup_pressure(fs: &DirSysfs, own_pid: u32) -> Option<String> {
    let text = fs.read(&format!("proc/{own_pid}/cgroup"))?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let path = path.trim_matches('/');
    if path.is_empty() {
        return None;
    }
    ["sys/fs/cgroup", "sys/fs/cgroup/unified"]
        .iter()
        .map(|mount| format!("{mount}/{path}/cpu.pressure"))
        .find(|p| fs.read(p).is_some())
}

#[cfg(test)]
mod tests;
