//! Built-in suites through the real binary run each round in a fresh `pitwall __worker`
//! process: a plain run and an interleaved `--base/--head` pair still produce results, the
//! fingerprint says so, the workers are children of pitwall with their own process ids, each
//! sample carries the GPU state pitwall monitored, and SIGTERM takes a running worker along.

use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use pitwall_e2e::{QUICK_BUILTINS, Sandbox, git};
use serde_json::Value;

fn runs(sb: &Sandbox) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    doc["runs"].as_array().unwrap().clone()
}

#[test]
fn a_builtin_benchmark_runs_in_a_worker_and_is_stored() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", QUICK_BUILTINS);
    let out = sb
        .run(&[
            "run",
            "--suite",
            "kernel",
            "--bench",
            "gemm_f32[n=64]",
            "--no-report",
        ])
        .expect(0);
    assert!(out.stdout().contains("gemm_f32[n=64]"), "{}", out.stdout());
    let stored = runs(&sb);
    assert_eq!(stored.len(), 1);
    let run = &stored[0];
    assert_eq!(run["status"], "complete");
    assert_eq!(run["fingerprint"]["extra"]["isolation"], "worker");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["name"], "gemm_f32");
    assert!(results[0]["samples"].as_array().unwrap().len() >= 5);
}

/// Process ids of the running `pitwall __worker` children of `parent`.
fn workers_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // `pid (comm) state ppid …`: comm may hold spaces, so split after its `)`.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            ppid == Some(parent) && cmdline.split(|b| *b == 0).any(|a| a == b"__worker")
        })
        .collect()
}

#[test]
fn interleaved_rounds_of_a_builtin_suite_run_in_separate_worker_processes() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    // Samples long enough that the test sees the workers come and go.
    let config = QUICK_BUILTINS.replace("max_time_s = 0.05", "max_time_s = 0.3");
    sb.write("pitwall.toml", &config);
    sb.write(".gitignore", ".pitwall/\n");
    for subject in ["first", "second"] {
        sb.write("NOTES", subject);
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", subject]);
    }
    let child = sb
        .cmd(&[
            "run",
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--rounds",
            "2",
            "--suite",
            "kernel",
            "--bench",
            "gemm_f32[n=64]",
            "--no-report",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pitwall");
    let pitwall = child.id();
    // Watch the children while it measures: 2 rounds × 2 commits = 4 workers, one at a time.
    let reader = std::thread::spawn(move || child.wait_with_output().expect("wait for pitwall"));
    let mut seen = BTreeSet::new();
    let start = Instant::now();
    while !reader.is_finished() && start.elapsed() < Duration::from_secs(300) {
        let now: Vec<u32> = workers_of(pitwall);
        assert!(now.len() <= 1, "more than one worker at once: {now:?}");
        seen.extend(now);
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = reader.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Identical commits: no regression expected, but noise may still call one.
    let code = out.status.code();
    assert!(matches!(code, Some(0 | 1)), "exit {code:?}: {stderr}");
    assert!(stderr.contains("2 rounds"), "{stderr}");
    assert!(
        seen.len() >= 2 && !seen.contains(&pitwall),
        "expected separate worker processes, saw {seen:?}"
    );

    let stored = runs(&sb);
    assert_eq!(stored.len(), 2);
    for run in &stored {
        assert_eq!(run["status"], "complete", "{run}");
        assert_eq!(run["pair"]["rounds"], 2);
        assert_eq!(run["fingerprint"]["extra"]["isolation"], "worker");
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{results:?}");
        // Two rounds of at least min_samples = 5 each, merged.
        assert!(results[0]["samples"].as_array().unwrap().len() >= 10);
    }
}

#[test]
fn every_sample_of_a_worker_carries_the_gpu_state_pitwall_monitored() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        &format!("{QUICK_BUILTINS}\n[gpu]\nclocks = \"lock\"\nmonitor_period_ms = 2\n"),
    );
    let nvml = sb.path().join("nvml.json");
    let out = sb
        .cmd(&[
            "run",
            "--suite",
            "kernel",
            "--bench",
            "gemm_f32[n=64]",
            "--no-report",
        ])
        .env("PITWALL_FAKE_NVML", &nvml)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = &runs(&sb)[0];
    pitwall_e2e::assert_samples_at_locked_clock(run);
}

#[test]
fn sigterm_kills_the_running_worker_with_pitwall() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        "[[suite]]\nkind = \"kernel\"\nwarmup_s = 0\nmin_samples = 50000\nmax_time_s = 100\ntimeout_s = 120\n",
    );
    let mut child = sb
        .cmd(&["run", "--quiet", "--bench", "gemm_f32[n=64]"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pitwall = child.id();
    let start = Instant::now();
    let worker = loop {
        if let Some(pid) = workers_of(pitwall).first() {
            break *pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no worker started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pitwall as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "dies of SIGTERM");
    let gone = (0..100).any(|_| {
        let stat = std::fs::read_to_string(format!("/proc/{worker}/stat")).unwrap_or_default();
        std::thread::sleep(Duration::from_millis(20));
        stat.is_empty() || stat.contains(") Z ")
    });
    assert!(gone, "worker {worker} outlived pitwall");
    assert!(!sb.db().exists() || sb.count("runs") == 0);
}
