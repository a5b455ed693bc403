//! The host fingerprint.

use super::*;
use serde_json::json;

#[test]
fn reads_a_fake_tree() {
    let root = tempfile::tempdir().unwrap();
    let w = |p: &str, s: &str| {
        let path = root.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, s).unwrap();
    };
    w(
        "proc/cpuinfo",
        "processor\t: 0\nmodel name\t: Fake CPU 9000\n\nprocessor\t: 1\nmodel name\t: Fake CPU 9000\n",
    );
    w("proc/meminfo", "MemTotal:       2048 kB\nMemFree: 1 kB\n");
    w("proc/sys/kernel/hostname", "runner-7\n");
    w("proc/sys/kernel/osrelease", "6.1.0-test\n");
    w(
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "performance\n",
    );
    let env = vec![
        ("CUDA_VISIBLE_DEVICES".to_string(), "0".to_string()),
        ("HOME".to_string(), "/root".to_string()),
        ("OMP_NUM_THREADS".to_string(), "4".to_string()),
        ("CUDA_PASSWORD".to_string(), "cuda-pass-123".to_string()),
        ("NCCL_TOKEN".to_string(), "nccl-token-456".to_string()),
        ("NVIDIA_API_KEY".to_string(), "nv-key-789".to_string()),
    ];
    let f = collect(root.path(), env.into_iter());
    assert_eq!(f.hostname, "runner-7");
    assert_eq!(f.kernel, "6.1.0-test");
    assert_eq!(f.cpu_model, "Fake CPU 9000");
    assert_eq!(f.logical_cpus, 2);
    assert_eq!(f.memory_bytes, 2048 * 1024);
    assert_eq!(f.cpu_governor.as_deref(), Some("performance"));
    assert_eq!(
        f.env.keys().collect::<Vec<_>>(),
        ["CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS"]
    );
}

#[test]
fn differences_name_the_fields_that_matter() {
    let mut a = Fingerprint {
        cpu_model: "EPYC".into(),
        logical_cpus: 64,
        pitwall_version: "0.1.0 (release)".into(),
        hostname: "a".into(),
        ..Default::default()
    };
    let mut b = Fingerprint {
        hostname: "b".into(),
        kernel: "other".into(),
        ..a.clone()
    };
    assert!(
        differences(&a, &b).is_empty(),
        "hostname and kernel do not matter"
    );
    a.gpus.push(pitwall_schema::GpuInfo {
        model: "NVIDIA H200".into(),
        driver: Some("580".into()),
        ..Default::default()
    });
    b.gpus.push(pitwall_schema::GpuInfo {
        model: "NVIDIA H100".into(),
        driver: Some("580".into()),
        ..Default::default()
    });
    b.pitwall_version = "0.1.0 (debug)".into();
    assert_eq!(
        differences(&a, &b),
        [
            "gpu model: NVIDIA H200 vs NVIDIA H100",
            "pitwall build: release vs debug"
        ]
    );
    a.extra
        .insert("clocks".into(), serde_json::json!({"mode": "lock"}));
    assert!(differences(&a, &b).contains(&"gpu clock policy: lock vs unknown".to_string()));

    // Same model, different ECC state and power limit: both named; unknown on one side
    // (an older run, a driver that does not say) is not a difference.
    b.gpus[0].model = "NVIDIA H200".into();
    b.pitwall_version = a.pitwall_version.clone();
    b.extra = a.extra.clone();
    assert!(differences(&a, &b).is_empty());
    a.gpus[0].extra.insert("ecc_enabled".into(), json!(true));
    assert!(differences(&a, &b).is_empty(), "unknown on one side");
    b.gpus[0].extra.insert("ecc_enabled".into(), json!(false));
    a.gpus[0].extra.insert("power_limit_w".into(), json!(700.0));
    b.gpus[0].extra.insert("power_limit_w".into(), json!(500.0));
    assert_eq!(
        differences(&a, &b),
        [
            "gpu ecc: true vs false",
            "gpu power limit W: 700.0 vs 500.0"
        ]
    );
    b.gpus[0].extra.insert("ecc_enabled".into(), json!(true));
    b.gpus[0].extra.insert("power_limit_w".into(), json!(700.0));
    assert!(differences(&a, &b).is_empty());
}

#[test]
fn missing_files_are_unknown_not_errors() {
    let root = tempfile::tempdir().unwrap();
    let f = collect(root.path(), std::iter::empty());
    assert_eq!(f.cpu_model, "");
    assert_eq!(f.memory_bytes, 0);
    assert_eq!(f.cpu_governor, None);
}
