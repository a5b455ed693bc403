//! GPU clock control and monitoring end to end, with the real binary and NVML replaced by the
//! file-backed fake (`PITWALL_FAKE_NVML`): lock → run → restore, restore after SIGTERM with
//! the running benchmark command killed too, throttled samples flagged and excludable, and the
//! fingerprint check of `pitwall compare`.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use pitwall_e2e::Sandbox;
use serde_json::{Value, json};

/// Runs `pitwall ARGS` with one environment variable set, expecting success; its output.
fn ok_with(
    sb: &Sandbox,
    args: &[&str],
    var: &str,
    value: &std::path::Path,
) -> std::process::Output {
    let out = sb.cmd(args).env(var, value).output().unwrap();
    assert!(
        out.status.success(),
        "pitwall {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn state(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const WALL: &str = "[[suite]]\nname = \"t\"\nkind = \"command\"\nformat = \"wall-time\"\ncommand = \"true\"\nwarmup_s = 0\nmax_time_s = 0.05\nmin_samples = 5\n";

#[test]
fn locked_clocks_are_restored_and_every_sample_carries_gpu_state() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        &format!("[gpu]\nclocks = \"lock\"\nmonitor_period_ms = 2\n\n{WALL}"),
    );
    let nvml = sb.path().join("nvml.json");
    ok_with(
        &sb,
        &["run", "--format", "json"],
        "PITWALL_FAKE_NVML",
        &nvml,
    );
    let st = state(&nvml);
    assert_eq!(st["locked"], json!({}), "clocks restored: {st}");
    let calls: Vec<&str> = st["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let set = calls
        .iter()
        .position(|c| c.starts_with("set_locked_clocks(0,"))
        .expect("locked");
    let reset = calls
        .iter()
        .position(|c| *c == "reset_locked_clocks(0)")
        .expect("reset");
    assert!(set < reset, "{calls:?}");
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(run["fingerprint"]["gpus"].as_array().unwrap().len(), 1);
    assert_eq!(run["fingerprint"]["extra"]["clocks"]["mode"], "lock");
    pitwall_e2e::assert_samples_at_locked_clock(run);
}

#[test]
fn sigterm_restores_clocks_and_kills_the_running_benchmark() {
    let sb = Sandbox::new();
    let pidfile = sb.path().join("bench.pid");
    sb.write(
        "pitwall.toml",
        &format!(
            "[gpu]\nclocks = \"lock\"\n\n[[suite]]\nname = \"slow\"\nkind = \"command\"\ncommand = \"echo $$ > {}; sleep 60\"\ntimeout_s = 120\n",
            pidfile.display()
        ),
    );
    let nvml = sb.path().join("nvml.json");
    let mut child = sb
        .cmd(&["run", "--quiet"])
        .env("PITWALL_FAKE_NVML", &nvml)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !pidfile.exists()
        || std::fs::read_to_string(&pidfile)
            .unwrap_or_default()
            .trim()
            .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "benchmark never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_ne!(state(&nvml)["locked"], json!({}), "locked while running");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(libc::SIGTERM),
        "dies of SIGTERM after restoring"
    );
    let st = state(&nvml);
    assert_eq!(st["locked"], json!({}), "restored: {st}");
    assert_eq!(
        st["calls"].as_array().unwrap().last().unwrap(),
        "reset_locked_clocks(0)"
    );
    let bench: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut gone = false;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{bench}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gone, "the benchmark command {bench} outlived pitwall");
    // Nothing half-written: the interrupted run is simply not stored.
    assert!(!sb.db().exists() || sb.count("runs") == 0);
}

#[test]
fn throttled_samples_are_flagged_and_can_be_excluded() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        &format!("[gpu]\nmonitor_period_ms = 2\n\n{WALL}"),
    );
    let nvml = sb.path().join("nvml.json");
    // A device that reports HW slowdown (0x8) on every reading.
    let mut st = json!({"devices": [], "readings": {"0": {"sm_mhz": 900, "mem_mhz": 2619, "temperature_c": 91.0, "power_w": 700.0, "throttle_reasons": 8}}});
    ok_with(&sb, &["env"], "PITWALL_FAKE_NVML", &nvml);
    st["devices"] = state(&nvml)["devices"].clone();
    std::fs::write(&nvml, st.to_string()).unwrap();
    let out = ok_with(
        &sb,
        &["run", "--format", "json"],
        "PITWALL_FAKE_NVML",
        &nvml,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("clocks are not locked (observe mode)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("gpu 0 monitor: ") && stderr.contains(" readings every 2 ms, 0 failed"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let health = &doc["runs"][0]["fingerprint"]["extra"]["gpu_monitor"];
    assert!(
        health["readings"].as_u64().unwrap() > 0 && health["failed"] == 0,
        "{health}"
    );
    let meta = doc["runs"][0]["results"][0]["sample_meta"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        !meta.is_empty()
            && meta
                .iter()
                .all(|m| m["throttled"] == true && m["throttle_reasons"] == 8),
        "{meta:?}"
    );
    // Every sample throttled: excluding them leaves too few samples to decide.
    let id = doc["runs"][0]["id"].as_str().unwrap();
    let v = sb.compare_json(id, id, &["--exclude-throttled"], 0);
    assert_eq!(v["benchmarks"][0]["verdict"], "inconclusive", "{v}");
    assert!(
        v["benchmarks"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("too few samples (0 baseline, 0 candidate)"),
        "{v}"
    );
    let v = sb.compare_json(id, id, &[], 0);
    assert!(v["benchmarks"][0]["base_n"].as_u64().unwrap() >= 5);
    assert!(
        !v["benchmarks"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("too few samples"),
        "{v}"
    );
}

#[test]
fn runs_from_different_environments_are_incomparable_unless_allowed() {
    let sb = Sandbox::new();
    // Fixed samples, so that the allowed comparison's verdict is not left to timing noise.
    sb.write(
        "pitwall.toml",
        r#"[[suite]]
name = "t"
kind = "command"
command = '''printf '{"schema":"pitwall/v1","benchmarks":[{"name":"t","samples":[5,6,5,6,5,6,5,6,5,6]}]}''''
"#,
    );
    sb.run(&["run", "--quiet"]).expect(0);
    let nvml = sb.path().join("nvml.json");
    let out = sb
        .cmd(&["run", "--quiet"])
        .env("PITWALL_FAKE_NVML", &nvml)
        .output()
        .unwrap();
    assert!(out.status.success());
    let runs = sb.run(&["runs", "--format", "json"]).expect(0).json();
    let (newer, older) = (
        runs[0]["id"].as_str().unwrap(),
        runs[1]["id"].as_str().unwrap(),
    );
    let out = sb
        .run(&["compare", "--baseline", older, "--candidate", newer])
        .expect(2);
    assert!(
        out.stdout()
            .contains("INCOMPARABLE: the environments differ (gpu model: none vs"),
        "{}",
        out.stdout()
    );
    assert!(
        out.stderr().contains("--allow-env-mismatch"),
        "{}",
        out.stderr()
    );
    sb.run(&[
        "compare",
        "--baseline",
        older,
        "--candidate",
        newer,
        "--allow-env-mismatch",
    ])
    .expect(0);
}

/// The CUDA library versions in the fingerprint come from the libraries the loader finds:
/// stand-ins built from tests/fixtures/fake_cuda and put on LD_LIBRARY_PATH are loaded and
/// asked, and `pitwall env` and a stored run both carry what they answered.
#[test]
fn cuda_library_versions_come_from_the_libraries_on_the_loader_path() {
    let sb = Sandbox::new();
    let libs = sb.path().join("cuda-libs");
    std::fs::create_dir_all(&libs).unwrap();
    let src =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake_cuda/fake_cuda.c");
    for name in [
        "libcudart.so.12",
        "libcublas.so.12",
        "libnvrtc.so.12",
        "libnccl.so.2",
    ] {
        let ok = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(libs.join(name))
            .arg(&src)
            .status()
            .unwrap()
            .success();
        assert!(ok, "cc builds {name}");
    }
    let env = ok_with(&sb, &["env", "--format", "json"], "LD_LIBRARY_PATH", &libs);
    let fp: Value = serde_json::from_slice(&env.stdout).unwrap();
    let got = &fp["fingerprint"]["extra"]["cuda_libraries"];
    assert_eq!(got["cuda_runtime"], "12.4 (libcudart.so.12)", "{fp}");
    assert_eq!(got["cublas"], "12.4.5 (libcublas.so.12)");
    assert_eq!(got["nvrtc"], "12.4 (libnvrtc.so.12)");
    assert_eq!(got["nccl"], "2.21.5 (libnccl.so.2)");
    let text = ok_with(&sb, &["env"], "LD_LIBRARY_PATH", &libs);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("2.21.5"), "{text}");

    sb.write("pitwall.toml", WALL);
    ok_with(&sb, &["run", "--no-report"], "LD_LIBRARY_PATH", &libs);
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    assert_eq!(
        doc["runs"][0]["fingerprint"]["extra"]["cuda_libraries"]["nccl"],
        "2.21.5 (libnccl.so.2)"
    );
}

/// GPU-to-GPU topology, as the NVML backend reports it, reaches the fingerprint and `pitwall env`.
#[test]
fn gpu_topology_is_recorded_and_shown() {
    let sb = Sandbox::new();
    let nvml = sb.path().join("nvml.json");
    ok_with(&sb, &["env"], "PITWALL_FAKE_NVML", &nvml);
    let mut st = state(&nvml);
    let mut second = st["devices"][0].clone();
    second["index"] = json!(1);
    second["pci_bus_id"] = json!("00000000:18:00.0");
    second["topology"] = json!({"0": "NV18"});
    st["devices"][0]["topology"] = json!({"1": "NV18"});
    st["devices"].as_array_mut().unwrap().push(second);
    std::fs::write(&nvml, st.to_string()).unwrap();
    let out = ok_with(
        &sb,
        &["env", "--format", "json"],
        "PITWALL_FAKE_NVML",
        &nvml,
    );
    let fp: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        fp["fingerprint"]["gpus"][1]["extra"]["topology"]["0"], "NV18",
        "{fp}"
    );
    let text = ok_with(&sb, &["env"], "PITWALL_FAKE_NVML", &nvml);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("gpu 0 topology") && text.contains("gpu 1 NV18"),
        "{text}"
    );
}

#[test]
fn a_denied_lock_runs_observed_says_so_once_and_records_it() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        &format!("[gpu]\nclocks = \"lock\"\nmonitor_period_ms = 2\n\n{WALL}"),
    );
    let nvml = sb.path().join("nvml.json");
    // A fresh state file, then the NO_PERMISSION a non-root user gets.
    ok_with(&sb, &["env"], "PITWALL_FAKE_NVML", &nvml);
    let mut st = state(&nvml);
    st["deny_lock"] = json!(true);
    std::fs::write(&nvml, st.to_string()).unwrap();
    let out = ok_with(&sb, &["run"], "PITWALL_FAKE_NVML", &nvml);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("not allowed to lock the clocks").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("observe (lock denied)"), "{stderr}");
    let st = state(&nvml);
    assert_eq!(st["locked"], json!({}), "{st}");
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(
        run["fingerprint"]["extra"]["clocks"]["mode"],
        "observe (lock denied)"
    );
    assert_eq!(run["status"], "complete");
    // Observed: every sample still carries the GPU's state.
    let meta = run["results"][0]["sample_meta"].as_array().unwrap();
    assert!(
        meta.iter().all(|m| m["sm_clock_mhz"].is_number()),
        "{meta:?}"
    );
}
