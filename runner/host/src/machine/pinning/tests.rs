//! Tests of cpu list and PCI id syntax and of pinning plans on fake machines.

use crate::machine::fake_tree::FakeTree;
use crate::machine::{PinError, format_cpulist, normalize_pci_bus_id, parse_cpulist, plan_pinning};

#[test]
fn cpulist_ranges_singles_and_mixtures() {
    assert_eq!(parse_cpulist("0-3").unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(parse_cpulist("5").unwrap(), vec![5]);
    assert_eq!(
        parse_cpulist("0-3,8-11").unwrap(),
        vec![0, 1, 2, 3, 8, 9, 10, 11]
    );
    assert_eq!(parse_cpulist("9,2-3,2").unwrap(), vec![2, 3, 9]);
}

#[test]
fn cpulist_whitespace_and_empty() {
    assert_eq!(parse_cpulist(" 0 - 1 , 4\n").unwrap(), vec![0, 1, 4]);
    assert_eq!(parse_cpulist("").unwrap(), Vec::<usize>::new());
    assert_eq!(parse_cpulist("\n").unwrap(), Vec::<usize>::new());
    assert_eq!(parse_cpulist("1,,2").unwrap(), vec![1, 2]);
}

#[test]
fn cpulist_errors_name_the_text() {
    let e = parse_cpulist("3-1").unwrap_err();
    assert!(e.to_string().contains("`3-1`"), "{e}");
    assert!(e.reason.contains("backwards"));
    assert!(parse_cpulist("a").is_err());
    assert!(parse_cpulist("0-").is_err());
    assert!(parse_cpulist("0-3:2").is_err());
}

#[test]
fn cpulist_formatting_merges_runs() {
    assert_eq!(format_cpulist(&[0, 1, 2, 3, 8]), "0-3,8");
    assert_eq!(format_cpulist(&[7, 5, 6, 6]), "5-7");
    assert_eq!(format_cpulist(&[]), "none");
    let cpus = vec![0, 2, 3, 4, 9, 10];
    assert_eq!(parse_cpulist(&format_cpulist(&cpus)).unwrap(), cpus);
}

#[test]
fn pci_ids_normalise_case_and_domain() {
    let norm = |s| normalize_pci_bus_id(s);
    assert_eq!(norm("00000000:3B:00.0").as_deref(), Some("0000:3b:00.0"));
    assert_eq!(norm("0000:3b:00.0").as_deref(), Some("0000:3b:00.0"));
    assert_eq!(norm("3B:00.1").as_deref(), Some("0000:3b:00.1"));
    assert_eq!(norm(" 0000:af:1f.7 ").as_deref(), Some("0000:af:1f.7"));
    assert_eq!(norm("10000:01:00.0").as_deref(), Some("10000:01:00.0"));
    for bad in [
        "",
        "3b:00",
        "zz:00.0",
        "0000:3b:20.0",
        "0000:3b:00.8",
        "0:0:0:0.0",
    ] {
        assert_eq!(norm(bad), None, "{bad}");
    }
}

#[test]
fn gpu_on_node_one_gets_its_highest_cores_one_thread_each() {
    let t = FakeTree::two_nodes();
    let plan = plan_pinning(&t.sysfs(), Some("00000000:3B:00.0"), None, 2).unwrap();
    assert_eq!(plan.cpus, vec![6, 7]);
    assert_eq!(plan.numa_node, Some(1));
    assert_eq!(plan.source, "local_cpulist of GPU 0000:3b:00.0");
}

#[test]
fn want_zero_takes_every_local_core_without_siblings() {
    let t = FakeTree::two_nodes();
    let plan = plan_pinning(&t.sysfs(), Some("0000:3b:00.0"), None, 0).unwrap();
    assert_eq!(plan.cpus, vec![4, 5, 6, 7]);
}

#[test]
fn siblings_fill_in_only_when_cores_run_out() {
    let t = FakeTree::two_nodes();
    let plan = plan_pinning(&t.sysfs(), Some("0000:3b:00.0"), None, 6).unwrap();
    assert_eq!(plan.cpus, vec![4, 5, 6, 7, 14, 15]);
    let err = plan_pinning(&t.sysfs(), Some("0000:3b:00.0"), None, 9).unwrap_err();
    assert!(
        matches!(
            err,
            PinError::NotEnoughCpus {
                want: 9,
                available: 8,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("hint:"));
}

#[test]
fn gpu_without_numa_node_uses_the_whole_machine() {
    let t = FakeTree::two_nodes();
    t.gpu("0000:86:00.0", "-1", "0-15");
    let plan = plan_pinning(&t.sysfs(), Some("0000:86:00.0"), None, 0).unwrap();
    assert_eq!(plan.cpus, (0..8).collect::<Vec<_>>());
    assert_eq!(plan.numa_node, None);
    assert!(plan.source.contains("no NUMA node"), "{}", plan.source);
}

#[test]
fn gpu_without_local_cpulist_uses_its_node() {
    let t = FakeTree::two_nodes();
    t.file("sys/bus/pci/devices/0000:d8:00.0/numa_node", "0");
    let plan = plan_pinning(&t.sysfs(), Some("d8:00.0"), None, 1).unwrap();
    assert_eq!(plan.cpus, vec![3]);
    assert_eq!(plan.numa_node, Some(0));
}

#[test]
fn gpu_without_numa_node_file_uses_its_local_cpus() {
    let t = FakeTree::two_nodes();
    t.file("sys/bus/pci/devices/0000:5e:00.0/local_cpulist", "0-3,8-11");
    let plan = plan_pinning(&t.sysfs(), Some("0000:5e:00.0"), None, 1).unwrap();
    assert_eq!((plan.cpus, plan.numa_node), (vec![3], Some(0)));
}

#[test]
fn configured_cpus_win_over_the_gpu() {
    let t = FakeTree::two_nodes();
    let plan = plan_pinning(&t.sysfs(), Some("0000:3b:00.0"), Some(&[3, 1, 3]), 2).unwrap();
    assert_eq!(plan.cpus, vec![1, 3]);
    assert_eq!(plan.numa_node, Some(0));
    assert_eq!(plan.source, "configured cpus");
    let across = plan_pinning(&t.sysfs(), None, Some(&[0, 4]), 0).unwrap();
    assert_eq!(across.numa_node, None);
}

#[test]
fn configured_offline_cpu_is_an_error_naming_it() {
    let t = FakeTree::two_nodes();
    let err = plan_pinning(&t.sysfs(), None, Some(&[2, 20]), 0).unwrap_err();
    assert!(matches!(err, PinError::CpuOffline { cpu: 20, .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("cpu 20") && msg.contains("0-15"), "{msg}");
    assert!(msg.contains("hint:"), "{msg}");
}

#[test]
fn configured_cpu_outside_the_cpuset_is_an_error() {
    let t = FakeTree::two_nodes();
    t.allowed("0-3");
    let err = plan_pinning(&t.sysfs(), None, Some(&[5]), 0).unwrap_err();
    assert!(
        matches!(err, PinError::CpuNotAllowed { cpu: 5, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("0-3"));
}

#[test]
fn cpuset_narrows_the_candidates() {
    let t = FakeTree::two_nodes();
    t.allowed("4-5,12-13");
    let plan = plan_pinning(&t.sysfs(), Some("0000:3b:00.0"), None, 0).unwrap();
    assert_eq!(plan.cpus, vec![4, 5]);
    t.allowed("0-3");
    let err = plan_pinning(&t.sysfs(), Some("0000:3b:00.0"), None, 1).unwrap_err();
    assert!(matches!(err, PinError::NoAllowedCpus { .. }), "{err}");
}

#[test]
fn without_gpu_node_zero_is_the_default() {
    let t = FakeTree::two_nodes();
    let plan = plan_pinning(&t.sysfs(), None, None, 2).unwrap();
    assert_eq!(plan.cpus, vec![2, 3]);
    assert_eq!(plan.numa_node, Some(0));
    assert_eq!(plan.source, "default: last cores of NUMA node 0");
    t.allowed("5-7");
    let plan = plan_pinning(&t.sysfs(), None, None, 2).unwrap();
    assert_eq!((plan.cpus, plan.numa_node), (vec![6, 7], Some(1)));
}

#[test]
fn without_numa_information_all_online_cpus_count() {
    let t = FakeTree::new();
    t.file("sys/devices/system/cpu/online", "0-3");
    let plan = plan_pinning(&t.sysfs(), None, None, 2).unwrap();
    assert_eq!(plan.cpus, vec![2, 3]);
    assert_eq!(plan.numa_node, None);
    assert!(plan.source.contains("no NUMA information"));
}

#[test]
fn unknown_or_invalid_gpu_and_missing_sysfs_are_errors() {
    let t = FakeTree::two_nodes();
    let err = plan_pinning(&t.sysfs(), Some("0000:01:00.0"), None, 1).unwrap_err();
    assert!(matches!(err, PinError::GpuNotFound { .. }), "{err}");
    assert!(err.to_string().contains("0000:01:00.0"));
    let err = plan_pinning(&t.sysfs(), Some("gpu0"), None, 1).unwrap_err();
    assert!(matches!(err, PinError::InvalidPciId { .. }), "{err}");
    let err = plan_pinning(&FakeTree::new().sysfs(), None, None, 1).unwrap_err();
    assert!(matches!(err, PinError::Unreadable { .. }), "{err}");
}

#[test]
fn malformed_cpulist_keeps_its_cause() {
    let t = FakeTree::two_nodes();
    t.gpu("0000:3b:00.0", "1", "4-x");
    let err = plan_pinning(&t.sysfs(), Some("0000:3b:00.0"), None, 1).unwrap_err();
    assert!(matches!(err, PinError::Cpulist { .. }), "{err}");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn plan_on_this_machine_is_within_its_online_cpus() {
    use crate::machine::Sysfs;
    let sysfs = crate::machine::DirSysfs::real();
    if sysfs.read("sys/devices/system/cpu/online").is_none() {
        return; // not linux, or no /sys
    }
    let plan = plan_pinning(&sysfs, None, None, 1).unwrap();
    assert_eq!(plan.cpus.len(), 1);
}
