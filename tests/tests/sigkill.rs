//! `pitwall run` killed with SIGKILL (no handler of its own can run) takes what it started
//! along: a benchmark command's whole process group, grandchildren included, through the
//! watchdog, and a built-in suite's worker, through PR_SET_PDEATHSIG.

use std::process::Stdio;
use std::time::{Duration, Instant};

use pitwall_e2e::Sandbox;

/// Pids whose command line contains `needle` as one argument.
fn pids_with_arg(needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            !stat.contains(") Z ") && cmdline.split(|b| *b == 0).any(|a| a == needle.as_bytes())
        })
        .collect()
}

fn wait_for(what: &str, mut found: impl FnMut() -> bool) {
    let start = Instant::now();
    while !found() {
        assert!(start.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sigkill(pid: u32) {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
}

#[test]
fn a_benchmark_command_and_its_children_die_with_a_killed_pitwall() {
    let sb = Sandbox::new();
    // A unique argument so that only this test's sleep is looked for; the shell keeps a
    // grandchild (`sleep`) in the benchmark's process group.
    let marker = format!("{}.{}", 300 + std::process::id() % 500, std::process::id());
    sb.write(
        "pitwall.toml",
        &format!(
            "[[suite]]\nname = \"slow\"\nkind = \"command\"\ncommand = \"sleep {marker}; echo done\"\ntimeout_s = 600\n"
        ),
    );
    let mut child = sb
        .cmd(&["run", "--quiet", "--no-report"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the benchmark's sleep started", || {
        !pids_with_arg(&marker).is_empty()
    });
    sigkill(child.id());
    let _ = child.wait();
    // Before: the sleep stayed alive for its full 300+ seconds.
    wait_for("the benchmark's sleep outlived pitwall", || {
        pids_with_arg(&marker).is_empty()
    });
}

#[test]
fn a_suite_worker_dies_with_a_killed_pitwall() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        "[[suite]]\nkind = \"kernel\"\nwarmup_s = 0\nmin_samples = 50000\nmax_time_s = 100\ntimeout_s = 120\n",
    );
    let mut child = sb
        .cmd(&["run", "--quiet", "--no-report", "--bench", "gemm_f32[n=64]"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pitwall = child.id();
    let workers = || -> Vec<u32> {
        pids_with_arg("__worker")
            .into_iter()
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
                ppid == Some(pitwall)
            })
            .collect()
    };
    let mut worker = Vec::new();
    wait_for("a worker started", || {
        worker = workers();
        !worker.is_empty()
    });
    sigkill(pitwall);
    let _ = child.wait();
    let w = worker[0];
    wait_for("the worker outlived pitwall", || {
        let stat = std::fs::read_to_string(format!("/proc/{w}/stat")).unwrap_or_default();
        stat.is_empty() || stat.contains(") Z ")
    });
}
