//! Tests of the host checks on fake machines, and of reading `proc/<pid>/stat`.

use crate::machine::fake_tree::{FakeTree, stat_line};
use crate::machine::host_checks::parse_stat;
use crate::machine::{DirSysfs, HostCheck, UNKNOWN, host_checks};

fn check(checks: &[HostCheck], name: &str) -> HostCheck {
    checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name} in {checks:?}"))
        .clone()
}

fn governors(t: &FakeTree, govs: &[(usize, &str)]) {
    for (cpu, gov) in govs {
        t.file(
            &format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"),
            gov,
        );
    }
}

#[test]
fn missing_files_are_unknown_not_failures() {
    let t = FakeTree::new();
    let checks = host_checks(&t.sysfs(), &[2, 3]);
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cpu_governor",
            "turbo",
            "smt",
            "aslr",
            "isolated_cpus",
            "busy_cpus"
        ]
    );
    for c in &checks {
        assert_eq!(c.value, UNKNOWN, "{c:?}");
        assert!(c.ok && c.advice.is_none(), "{c:?}");
    }
}

#[test]
fn powersave_governor_is_not_ok_with_advice() {
    let t = FakeTree::new();
    governors(&t, &[(2, "powersave"), (3, "powersave")]);
    let c = check(&host_checks(&t.sysfs(), &[2, 3]), "cpu_governor");
    assert_eq!(c.value, "powersave");
    assert!(!c.ok);
    let advice = c.advice.unwrap();
    assert!(
        advice.contains("cpupower frequency-set -g performance"),
        "{advice}"
    );
    assert!(advice.contains("-c 2-3"), "{advice}");
}

#[test]
fn performance_governor_is_ok_and_mixed_ones_are_listed() {
    let t = FakeTree::new();
    governors(&t, &[(2, "performance"), (3, "performance")]);
    let c = check(&host_checks(&t.sysfs(), &[2, 3]), "cpu_governor");
    assert!(
        c.ok && c.value == "performance" && c.advice.is_none(),
        "{c:?}"
    );
    governors(&t, &[(3, "schedutil")]);
    let c = check(&host_checks(&t.sysfs(), &[2, 3]), "cpu_governor");
    assert_eq!(c.value, "cpu2=performance, cpu3=schedutil");
    assert!(!c.ok);
    assert!(c.advice.unwrap().contains("-c 3"));
}

#[test]
fn turbo_on_is_warned_either_way_the_kernel_says_it() {
    let t = FakeTree::new();
    t.file("sys/devices/system/cpu/intel_pstate/no_turbo", "0");
    let c = check(&host_checks(&t.sysfs(), &[0]), "turbo");
    assert_eq!((c.value.as_str(), c.ok), ("on", false));
    assert!(c.advice.unwrap().contains("no_turbo"));
    t.file("sys/devices/system/cpu/intel_pstate/no_turbo", "1");
    assert!(check(&host_checks(&t.sysfs(), &[0]), "turbo").ok);

    let t = FakeTree::new();
    t.file("sys/devices/system/cpu/cpufreq/boost", "1");
    let c = check(&host_checks(&t.sysfs(), &[0]), "turbo");
    assert_eq!((c.value.as_str(), c.ok), ("on", false));
    assert!(c.advice.unwrap().contains("cpufreq/boost"));
    t.file("sys/devices/system/cpu/cpufreq/boost", "0");
    assert_eq!(check(&host_checks(&t.sysfs(), &[0]), "turbo").value, "off");
}

#[test]
fn smt_and_aslr_on_are_warned() {
    let t = FakeTree::new();
    t.file("sys/devices/system/cpu/smt/active", "1");
    t.file("proc/sys/kernel/randomize_va_space", "2");
    let checks = host_checks(&t.sysfs(), &[0]);
    let smt = check(&checks, "smt");
    assert_eq!((smt.value.as_str(), smt.ok), ("on", false));
    assert!(smt.advice.unwrap().contains("smt/control"));
    let aslr = check(&checks, "aslr");
    assert!(!aslr.ok && aslr.value.contains('2'), "{aslr:?}");
    assert!(aslr.advice.unwrap().contains("randomize_va_space=0"));

    t.file("sys/devices/system/cpu/smt/active", "0");
    t.file("proc/sys/kernel/randomize_va_space", "0");
    let checks = host_checks(&t.sysfs(), &[0]);
    assert!(check(&checks, "smt").ok && check(&checks, "aslr").ok);
}

#[test]
fn isolation_of_the_chosen_cores() {
    let t = FakeTree::new();
    t.file("sys/devices/system/cpu/isolated", "");
    let c = check(&host_checks(&t.sysfs(), &[2, 3]), "isolated_cpus");
    assert!(!c.ok);
    assert_eq!(c.value, "chosen 2-3, isolated none");
    assert!(c.advice.unwrap().contains("isolcpus=2-3"));

    t.file("sys/devices/system/cpu/isolated", "2-3");
    assert!(check(&host_checks(&t.sysfs(), &[2, 3]), "isolated_cpus").ok);
    let c = check(&host_checks(&t.sysfs(), &[1, 2]), "isolated_cpus");
    assert!(!c.ok);
    assert!(c.advice.unwrap().contains("cpus = [2, 3]"));
}

#[test]
fn running_processes_on_the_chosen_cores_are_listed() {
    let t = FakeTree::new();
    t.process(100, "stress", 'R', 3)
        .process(101, "sleepy", 'S', 3)
        .process(102, "elsewhere", 'R', 0)
        .process(103, "pitwall", 'R', 3)
        .process(104, "my (odd) name", 'R', 2);
    t.file("proc/self/stat", &stat_line(103, "pitwall", 'R', 3));
    let c = check(&host_checks(&t.sysfs(), &[2, 3]), "busy_cpus");
    assert!(!c.ok);
    assert_eq!(
        c.value,
        "2 running: 100 (stress) on cpu 3, 104 (my (odd) name) on cpu 2"
    );
    assert!(c.advice.is_some());
    let c = check(&host_checks(&t.sysfs(), &[5]), "busy_cpus");
    assert!(c.ok && c.value == "none running", "{c:?}");
}

#[test]
fn empty_cpu_list_checks_all_online_cpus() {
    let t = FakeTree::new();
    t.file("sys/devices/system/cpu/online", "0-1");
    governors(&t, &[(0, "performance"), (1, "powersave")]);
    let c = check(&host_checks(&t.sysfs(), &[]), "cpu_governor");
    assert!(!c.ok);
    assert!(c.value.contains("cpu1=powersave"), "{c:?}");
}

#[test]
fn stat_lines_parse_from_the_last_parenthesis() {
    let line = stat_line(7, "a) R 9 (b", 'S', 12);
    assert_eq!(parse_stat(&line), Some(("a) R 9 (b".to_string(), 'S', 12)));
    assert_eq!(parse_stat("7 (short) R 1 2"), None);
    assert_eq!(parse_stat("garbage"), None);
}

#[test]
fn checks_run_on_this_machine() {
    let checks = host_checks(&DirSysfs::real(), &[0]);
    assert_eq!(checks.len(), 6);
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        // The main thread's line; its state is whatever the test harness is doing.
        let (comm, _, _) = parse_stat(&stat).expect("this process's stat line parses");
        assert!(!comm.is_empty());
    }
}

#[test]
fn busy_cpus_sees_running_threads_of_a_sleeping_main_thread() {
    let t = FakeTree::new();
    t.file("sys/devices/system/cpu/online", "0-1");
    t.thread(100, 100, 1, 'S', 0)
        .thread(100, 101, 1, 'R', 0)
        .thread(100, 102, 1, 'R', 1);
    let busy = check(&host_checks(&t.sysfs(), &[0, 1]), "busy_cpus");
    assert!(!busy.ok);
    assert_eq!(busy.value, "1 running: 100 (worker) on cpu 0, 2 threads");
}
