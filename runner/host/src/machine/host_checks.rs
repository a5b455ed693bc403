//! Host settings that make CPU-side timings noisy (frequency governor, turbo, SMT, ASLR,
//! isolated cores, other processes on the benchmark's cores), read from sysfs and procfs and
//! reported with how to fix them. GPU-side checks live with the NVML code.

use serde::Serialize;

use super::sysfs::{Sysfs, format_cpulist, parse_cpulist};

/// The value of a check whose file is absent or unreadable.
pub const UNKNOWN: &str = "unknown";

/// One host setting as found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostCheck {
    /// `"cpu_governor"`, `"turbo"`, `"smt"`, `"aslr"`, `"isolated_cpus"`, `"busy_cpus"`.
    pub name: String,
    /// What was found; `"unknown"` when the kernel does not say.
    pub value: String,
    /// False when the setting is known to hurt reproducibility. An unknown value is not known
    /// to hurt, so it is ok: tell it apart by `value == "unknown"`.
    pub ok: bool,
    /// How to fix it, when not ok.
    pub advice: Option<String>,
}

impl HostCheck {
    fn good(name: &str, value: impl Into<String>) -> Self {
        Self {
            name: name.to_string(),
            value: value.into(),
            ok: true,
            advice: None,
        }
    }

    fn bad(name: &str, value: impl Into<String>, advice: impl Into<String>) -> Self {
        Self {
            name: name.to_string(),
            value: value.into(),
            ok: false,
            advice: Some(advice.into()),
        }
    }

    fn unknown(name: &str) -> Self {
        Self::good(name, UNKNOWN)
    }
}

/// Checks the host for the benchmark's `cpus` (all online cpus when empty).
pub fn host_checks(sysfs: &dyn Sysfs, cpus: &[usize]) -> Vec<HostCheck> {
    let cpus = if cpus.is_empty() {
        sysfs
            .read("sys/devices/system/cpu/online")
            .and_then(|s| parse_cpulist(&s).ok())
            .unwrap_or_default()
    } else {
        let mut c = cpus.to_vec();
        c.sort_unstable();
        c.dedup();
        c
    };
    vec![
        governor(sysfs, &cpus),
        turbo(sysfs),
        smt(sysfs),
        aslr(sysfs),
        isolated(sysfs, &cpus),
        busy_cpus(sysfs, &cpus),
    ]
}

fn governor(sysfs: &dyn Sysfs, cpus: &[usize]) -> HostCheck {
    const NAME: &str = "cpu_governor";
    let found: Vec<(usize, String)> = cpus
        .iter()
        .filter_map(|&c| {
            sysfs
                .read(&format!(
                    "sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
                ))
                .map(|g| (c, g))
        })
        .collect();
    if found.is_empty() {
        return HostCheck::unknown(NAME);
    }
    let all_same = found.iter().all(|(_, g)| *g == found[0].1);
    let value = if all_same && found.len() == cpus.len() {
        found[0].1.clone()
    } else {
        let parts: Vec<String> = found.iter().map(|(c, g)| format!("cpu{c}={g}")).collect();
        parts.join(", ")
    };
    let slow: Vec<usize> = found
        .iter()
        .filter(|(_, g)| g != "performance")
        .map(|(c, _)| *c)
        .collect();
    if slow.is_empty() {
        HostCheck::good(NAME, value)
    } else {
        HostCheck::bad(
            NAME,
            value,
            format!(
                "set the performance governor: sudo cpupower frequency-set -g performance \
                 (all cores; add -c {} for the benchmark cores only)",
                format_cpulist(&slow)
            ),
        )
    }
}

fn turbo(sysfs: &dyn Sysfs) -> HostCheck {
    const NAME: &str = "turbo";
    if let Some(no_turbo) = sysfs.read("sys/devices/system/cpu/intel_pstate/no_turbo") {
        return match no_turbo.as_str() {
            "1" => HostCheck::good(NAME, "off"),
            "0" => HostCheck::bad(
                NAME,
                "on",
                "turbo makes clocks depend on temperature and load: \
                 echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo",
            ),
            other => HostCheck::good(NAME, format!("{UNKNOWN} (intel_pstate/no_turbo = {other})")),
        };
    }
    if let Some(boost) = sysfs.read("sys/devices/system/cpu/cpufreq/boost") {
        return match boost.as_str() {
            "0" => HostCheck::good(NAME, "off"),
            "1" => HostCheck::bad(
                NAME,
                "on",
                "boost makes clocks depend on temperature and load: \
                 echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost",
            ),
            other => HostCheck::good(NAME, format!("{UNKNOWN} (cpufreq/boost = {other})")),
        };
    }
    HostCheck::unknown(NAME)
}

fn smt(sysfs: &dyn Sysfs) -> HostCheck {
    const NAME: &str = "smt";
    match sysfs.read("sys/devices/system/cpu/smt/active").as_deref() {
        Some("0") => HostCheck::good(NAME, "off"),
        Some("1") => HostCheck::bad(
            NAME,
            "on",
            "a sibling thread shares the core's caches and pipelines: \
             echo off | sudo tee /sys/devices/system/cpu/smt/control (or boot with nosmt)",
        ),
        Some(other) => HostCheck::good(NAME, format!("{UNKNOWN} (smt/active = {other})")),
        None => HostCheck::unknown(NAME),
    }
}

fn aslr(sysfs: &dyn Sysfs) -> HostCheck {
    const NAME: &str = "aslr";
    match sysfs.read("proc/sys/kernel/randomize_va_space").as_deref() {
        Some("0") => HostCheck::good(NAME, "off"),
        Some(level @ ("1" | "2")) => HostCheck::bad(
            NAME,
            format!("on (randomize_va_space = {level})"),
            "address layout changes between runs and can shift cpu-side timings; on a \
             dedicated benchmark machine only (it weakens security): \
             sudo sysctl kernel.randomize_va_space=0",
        ),
        Some(other) => HostCheck::good(NAME, format!("{UNKNOWN} (randomize_va_space = {other})")),
        None => HostCheck::unknown(NAME),
    }
}

fn isolated(sysfs: &dyn Sysfs, cpus: &[usize]) -> HostCheck {
    const NAME: &str = "isolated_cpus";
    let Some(text) = sysfs.read("sys/devices/system/cpu/isolated") else {
        return HostCheck::unknown(NAME);
    };
    let Ok(isolated) = parse_cpulist(&text) else {
        return HostCheck::good(NAME, format!("{UNKNOWN} (isolated = {text})"));
    };
    let outside: Vec<usize> = cpus
        .iter()
        .copied()
        .filter(|c| !isolated.contains(c))
        .collect();
    let value = format!(
        "chosen {}, isolated {}",
        format_cpulist(cpus),
        format_cpulist(&isolated)
    );
    if outside.is_empty() && !cpus.is_empty() {
        return HostCheck::good(NAME, value);
    }
    let advice = if isolated.is_empty() {
        format!(
            "keep the scheduler off the benchmark cores: boot with isolcpus={0} nohz_full={0} \
             rcu_nocbs={0}",
            format_cpulist(&outside)
        )
    } else {
        format!(
            "cpus {} are not isolated: pin to isolated cores with [pinning] cpus = [{}]",
            format_cpulist(&outside),
            isolated
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    HostCheck::bad(NAME, value, advice)
}

/// A snapshot of processes with a thread in state R whose last cpu is one of `cpus`, other
/// than this one. Every thread (`proc/<pid>/task/<tid>/stat`) is looked at, but a thread that
/// ran a moment before the snapshot is not seen: it finds steady competitors, not all of them
/// (a run's `contention`, sampled every 100 ms, is the measure).
fn busy_cpus(sysfs: &dyn Sysfs, cpus: &[usize]) -> HostCheck {
    const NAME: &str = "busy_cpus";
    let pids: Vec<u32> = sysfs
        .list("proc")
        .iter()
        .filter_map(|name| name.parse().ok())
        .collect();
    if pids.is_empty() {
        return HostCheck::unknown(NAME);
    }
    let own = sysfs
        .read("proc/self/stat")
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(std::process::id);
    let mut busy = Vec::new();
    for pid in pids.into_iter().filter(|&p| p != own) {
        // Every thread: a compiler's main thread sleeps while its workers run.
        let mut stats: Vec<String> = sysfs
            .list(&format!("proc/{pid}/task"))
            .iter()
            .filter_map(|tid| sysfs.read(&format!("proc/{pid}/task/{tid}/stat")))
            .collect();
        if stats.is_empty() {
            stats.extend(sysfs.read(&format!("proc/{pid}/stat"))); // no task directory
        }
        let running: Vec<(String, usize)> = stats
            .iter()
            .filter_map(|s| parse_stat(s))
            .filter(|(_, state, cpu)| *state == 'R' && cpus.contains(cpu))
            .map(|(comm, _, cpu)| (comm, cpu))
            .collect();
        if let Some((comm, cpu)) = running.first() {
            let threads = match running.len() {
                1 => String::new(),
                n => format!(", {n} threads"),
            };
            busy.push(format!("{pid} ({comm}) on cpu {cpu}{threads}"));
        }
    }
    if busy.is_empty() {
        HostCheck::good(NAME, "none running")
    } else {
        HostCheck::bad(
            NAME,
            format!("{} running: {}", busy.len(), busy.join(", ")),
            "other processes compete for the benchmark cores: stop them, or choose other \
             cores with [pinning] cpus",
        )
    }
}

/// Command name, state and last cpu (field 39) of a `proc/<pid>/stat` line. The command
/// name is in parentheses and may itself hold spaces and parentheses, so fields are counted
/// from the last `)`.
pub(crate) fn parse_stat(stat: &str) -> Option<(String, char, usize)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    // `rest[0]` is field 3 (state), so field 39 (processor) is `rest[36]`.
    let state = rest.first()?.chars().next()?;
    let cpu = rest.get(36)?.parse().ok()?;
    Some((comm, state, cpu))
}

#[cfg(test)]
mod tests;
