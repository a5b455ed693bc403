//! Tests of applying pinning plans under each policy, with the recording fake and with the
//! real system calls on this machine.

use std::io::ErrorKind;

use crate::machine::{
    Affinity, AffinityCall, FakeAffinity, PinError, PinPlan, PinPolicy, ProcessAffinity,
    apply_pinning,
};

fn plan() -> PinPlan {
    PinPlan {
        cpus: vec![6, 7],
        numa_node: Some(1),
        source: "local_cpulist of GPU 0000:3b:00.0".into(),
    }
}

fn plan_error() -> PinError {
    PinError::GpuNotFound {
        bdf: "0000:01:00.0".into(),
    }
}

#[test]
fn prefer_applies_everything_and_reads_it_back() {
    let fake = FakeAffinity::new((0..16).collect());
    let out = apply_pinning(PinPolicy::Prefer, Ok(plan()), &fake).unwrap();
    assert_eq!(out.policy, "prefer");
    assert_eq!(out.plan, Some(plan()));
    assert_eq!(out.applied_cpus, vec![6, 7]);
    assert_eq!(out.applied_memory_nodes, Some(vec![1]));
    assert!(out.not_applied.is_empty(), "{:?}", out.not_applied);
    assert_eq!(
        fake.calls(),
        vec![
            AffinityCall::SetCpus(vec![6, 7]),
            AffinityCall::BindMemory(1),
            AffinityCall::Cpus,
            AffinityCall::MemoryNodes,
        ]
    );
}

#[test]
fn prefer_with_refused_memory_binding_records_it() {
    let fake = FakeAffinity::new((0..16).collect()).refusing_memory();
    let out = apply_pinning(PinPolicy::Prefer, Ok(plan()), &fake).unwrap();
    assert_eq!(out.applied_cpus, vec![6, 7]);
    assert_eq!(out.applied_memory_nodes, None);
    assert_eq!(out.not_applied.len(), 1, "{:?}", out.not_applied);
    let line = &out.not_applied[0];
    assert!(line.contains("numa node 1"), "{line}");
    assert!(line.contains("hint:"), "{line}");
}

#[test]
fn require_with_refused_memory_binding_fails_naming_it() {
    let fake = FakeAffinity::new((0..16).collect()).refusing_memory();
    let err = apply_pinning(PinPolicy::Require, Ok(plan()), &fake).unwrap_err();
    let PinError::BindMemory { node, source } = &err else {
        panic!("wrong error: {err}");
    };
    assert_eq!(*node, 1);
    assert_eq!(source.kind(), ErrorKind::PermissionDenied);
    assert!(std::error::Error::source(&err).is_some());
    assert!(err.to_string().contains("CAP_SYS_NICE"), "{err}");
}

#[test]
fn off_calls_nothing() {
    let fake = FakeAffinity::new(vec![0, 1]);
    let out = apply_pinning(PinPolicy::Off, Ok(plan()), &fake).unwrap();
    assert_eq!(out.policy, "off");
    assert_eq!(out.plan, None);
    assert!(out.applied_cpus.is_empty() && out.not_applied.is_empty());
    assert!(fake.calls().is_empty());
    let out = apply_pinning(PinPolicy::Off, Err(plan_error()), &fake).unwrap();
    assert!(out.not_applied.is_empty());
    assert!(fake.calls().is_empty());
}

#[test]
fn a_cpuset_that_narrows_the_cpus_shows_in_the_read_back() {
    let fake = FakeAffinity::new(vec![6]).within_cpuset(vec![6]);
    let out = apply_pinning(PinPolicy::Prefer, Ok(plan()), &fake).unwrap();
    assert_eq!(out.applied_cpus, vec![6]);
    assert_eq!(out.not_applied.len(), 1);
    assert!(
        out.not_applied[0].contains("wanted 6-7"),
        "{:?}",
        out.not_applied
    );

    let fake = FakeAffinity::new(vec![6]).within_cpuset(vec![6]);
    let err = apply_pinning(PinPolicy::Require, Ok(plan()), &fake).unwrap_err();
    assert!(
        matches!(
            err,
            PinError::NotApplied {
                what: "cpu affinity",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn refused_cpus_under_prefer_still_bind_memory() {
    let fake = FakeAffinity::new(vec![0, 1]).refusing_cpus();
    let out = apply_pinning(PinPolicy::Prefer, Ok(plan()), &fake).unwrap();
    assert_eq!(out.applied_cpus, vec![0, 1]);
    assert_eq!(out.applied_memory_nodes, Some(vec![1]));
    assert_eq!(out.not_applied.len(), 1);
    assert!(out.not_applied[0].contains("cpu affinity to 6-7"));
    let err = apply_pinning(PinPolicy::Require, Ok(plan()), &fake).unwrap_err();
    assert!(matches!(err, PinError::SetAffinity { .. }), "{err}");
}

#[test]
fn a_plan_that_failed_is_recorded_under_prefer_and_raised_under_require() {
    let fake = FakeAffinity::new(vec![0, 1]);
    let out = apply_pinning(PinPolicy::Prefer, Err(plan_error()), &fake).unwrap();
    assert_eq!(out.plan, None);
    assert_eq!(out.applied_cpus, vec![0, 1]);
    assert_eq!(out.not_applied.len(), 1);
    assert!(out.not_applied[0].contains("0000:01:00.0"));
    assert!(!fake.calls().contains(&AffinityCall::SetCpus(vec![6, 7])));

    let err = apply_pinning(PinPolicy::Require, Err(plan_error()), &fake).unwrap_err();
    assert!(matches!(err, PinError::GpuNotFound { .. }));
}

#[test]
fn a_plan_without_numa_node_binds_no_memory_and_says_so() {
    let fake = FakeAffinity::new((0..4).collect());
    let plan = PinPlan {
        cpus: vec![2, 3],
        numa_node: None,
        source: "default: last cores of the machine (no NUMA information)".into(),
    };
    let out = apply_pinning(PinPolicy::Require, Ok(plan), &fake).unwrap();
    assert_eq!(out.applied_cpus, vec![2, 3]);
    assert_eq!(out.applied_memory_nodes, None);
    assert_eq!(out.not_applied.len(), 1);
    assert!(out.not_applied[0].contains("no NUMA node"));
    assert!(
        !fake
            .calls()
            .iter()
            .any(|c| matches!(c, AffinityCall::BindMemory(_)))
    );
}

/// Runs on a thread of its own: both settings stick to the calling thread.
#[test]
fn real_affinity_on_this_machine() {
    std::thread::spawn(|| {
        let real = ProcessAffinity;
        let current = real.cpus().expect("sched_getaffinity needs no privileges");
        assert!(!current.is_empty());
        real.set_cpus(&current)
            .expect("setting the current set needs no privileges");
        assert_eq!(real.cpus().unwrap(), current);

        match real.bind_memory(0) {
            Ok(()) => assert_eq!(real.memory_nodes().unwrap(), Some(vec![0])),
            Err(e) => {
                let code = e.raw_os_error();
                assert!(
                    code == Some(libc::EPERM) || code == Some(libc::ENOSYS),
                    "unexpected error: {e}"
                );
                // The same refusal must surface through apply_pinning, not vanish.
                let plan = PinPlan {
                    cpus: current.clone(),
                    numa_node: Some(0),
                    source: "test".into(),
                };
                let out = apply_pinning(PinPolicy::Prefer, Ok(plan.clone()), &real).unwrap();
                assert_eq!(out.applied_cpus, current);
                assert!(
                    out.not_applied.iter().any(|l| l.contains("numa node 0")),
                    "{:?}",
                    out.not_applied
                );
                let err = apply_pinning(PinPolicy::Require, Ok(plan), &real).unwrap_err();
                assert!(matches!(err, PinError::BindMemory { node: 0, .. }), "{err}");
            }
        }
        assert!(real.set_cpus(&[]).is_err());
        assert!(real.set_cpus(&[1 << 20]).is_err());
    })
    .join()
    .unwrap();
}
