//! Tests of pitwall's side of a worker: scripted workers (`/bin/sh` running a `__worker`
//! script in the checkout) that crash, hang, print garbage or follow the protocol, and real
//! `pitwall __worker` processes: every failure is one failed result with its reason, and the
//! machine state of each sample comes from the parent's source.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pitwall_schema::{BenchmarkResult, ResultStatus, SampleMeta, SuiteKind};

use super::*;
use crate::config::{Sampling, SuiteConfig};
use crate::protocol::{Isolation, NonFinite, encode_non_finite, monotonic_ns};
use crate::{Selection, run_suite};

/// Records what it is told, one line per event.
#[derive(Default)]
struct Recorder(RefCell<Vec<String>>);

impl RunObserver for Recorder {
    fn suite_started(&self, suite: &str, n: usize) {
        self.0.borrow_mut().push(format!("started {suite} {n}"));
    }
    fn benchmark_started(&self, _: &str, b: &str) {
        self.0.borrow_mut().push(format!("bench {b}"));
    }
    fn benchmark_finished(&self, _: &str, b: &str, error: Option<&str>) {
        let e = error.map_or("ok".to_string(), |e| format!("failed: {e}"));
        self.0.borrow_mut().push(format!("done {b} {e}"));
    }
    fn suite_skipped(&self, _: &str, reason: &str) {
        self.0.borrow_mut().push(format!("skipped {reason}"));
    }
    fn suite_finished(&self, suite: &str) {
        self.0.borrow_mut().push(format!("finished {suite}"));
    }
    fn worker_started(&self, _: &str, pid: u32) {
        self.0.borrow_mut().push(format!("worker {pid}"));
    }
    fn warning(&self, _: &str, line: &str) {
        self.0.borrow_mut().push(format!("warning {line}"));
    }
}

impl Recorder {
    fn events(&self) -> Vec<String> {
        self.0.borrow().clone()
    }
    fn pids(&self) -> Vec<u32> {
        self.events()
            .iter()
            .filter_map(|e| e.strip_prefix("worker ")?.parse().ok())
            .collect()
    }
}

/// Answers every window with a numbered clock reading and keeps the windows.
#[derive(Default)]
struct Windows(RefCell<Vec<(Instant, Instant)>>);

impl SampleMetaSource for Windows {
    fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta {
        let mut w = self.0.borrow_mut();
        w.push((start, end));
        SampleMeta {
            sm_clock_mhz: Some(1000 + w.len() as u32),
            ..Default::default()
        }
    }
    fn mean_sm_mhz_between(&self, _start: Instant, _end: Instant) -> Option<f64> {
        Some(1500.0)
    }
}

fn suite(timeout_s: f64) -> SuiteConfig {
    let mut s = SuiteConfig::builtin(SuiteKind::Kernel);
    s.sampling = Sampling {
        warmup_s: 0.0,
        min_samples: 5,
        max_samples: 1000,
        target_rel_ci: 0.01,
        max_time_s: 0.05,
        timeout_s,
    };
    s
}

/// A checkout whose `__worker` file is `script`, so `/bin/sh __worker` runs it (never
/// executing a file just written, which can fail with ETXTBSY while other tests fork).
fn scripted(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(WORKER_SUBCOMMAND), script).unwrap();
    dir
}

fn run(
    exe: &str,
    checkout: &Path,
    obs: &Recorder,
    meta: Option<&dyn SampleMetaSource>,
) -> SuiteOutcome {
    run_in_worker(
        Worker {
            exe: Path::new(exe),
            backend: "cpu",
        },
        &suite(0.3),
        checkout,
        Selection::default(),
        obs,
        meta,
        Duration::from_millis(300),
    )
}

/// The one failed result a broken worker leaves, and its reason.
fn failure(outcome: &SuiteOutcome) -> String {
    assert_eq!(outcome.results.len(), 1, "{:?}", outcome.results);
    let r = &outcome.results[0];
    assert_eq!((r.suite.as_str(), r.name.as_str()), ("kernel", "worker"));
    assert_eq!(r.status, ResultStatus::Failed);
    let msg = r.error.clone().unwrap();
    assert!(!msg.contains('\n'), "one line: {msg:?}");
    msg
}

#[test]
fn a_worker_exiting_non_zero_is_a_failed_result() {
    let obs = Recorder::default();
    let outcome = run_suite(
        &suite(10.0),
        &pitwall_cpu::CpuBackend,
        Path::new("/"),
        Selection::default(),
        &obs,
        None,
        &Isolation::Worker {
            exe: PathBuf::from("/bin/false"),
        },
    );
    let msg = failure(&outcome);
    assert_eq!(msg, "suite worker exited with status 1");
    assert_eq!(
        obs.events(),
        [
            "started kernel 0".to_string(),
            format!("done worker failed: {msg}"),
            "finished kernel".to_string()
        ]
    );
}

#[test]
fn a_missing_executable_is_a_failed_result() {
    let obs = Recorder::default();
    let msg = failure(&run("/nonexistent/pitwall", Path::new("/"), &obs, None));
    assert!(
        msg.starts_with("cannot start suite worker `/nonexistent/pitwall __worker` in /:"),
        "{msg}"
    );
}

#[test]
fn garbage_on_stdout_kills_the_worker_with_the_line_escaped() {
    // stderr first: the stdout line gets the worker killed at once, and what it had not yet
    // written to stderr by then would not be in the tail.
    let dir = scripted("echo oops >&2; printf 'hello \\033[2J world\\n'; sleep 30\n");
    let start = Instant::now();
    let msg = failure(&run("/bin/sh", dir.path(), &Recorder::default(), None));
    assert!(start.elapsed() < Duration::from_secs(20), "not waited for");
    assert!(
        msg.starts_with(r"suite worker broke the protocol: it printed `hello \x1b[2J world`, which is not a protocol message"),
        "{msg}"
    );
    assert!(msg.ends_with("it was killed; stderr tail: oops"), "{msg}");
}

#[test]
fn a_crash_names_the_signal_the_running_benchmark_and_the_stderr_tail() {
    let dir = scripted(&format!(
        "cat <<'EOF'\n{}\n{}\n{}\nEOF\nprintf 'fault at \\033[31m0x0\\n' >&2\nkill -SEGV $$\n",
        r#"{"event":"hello","protocol":2,"pid":4242}"#,
        r#"{"event":"suite_started","benchmarks":2}"#,
        r#"{"event":"benchmark_started","benchmark":"gemm[n=8]"}"#,
    ));
    let obs = Recorder::default();
    let msg = failure(&run("/bin/sh", dir.path(), &obs, None));
    assert_eq!(
        msg,
        r"suite worker (pid 4242) was killed by signal 11 while running gemm[n=8]; stderr tail: fault at \x1b[31m0x0"
    );
    assert_eq!(
        obs.events(),
        [
            "worker 4242".to_string(),
            "started kernel 2".to_string(),
            "bench gemm[n=8]".to_string(),
            format!("done gemm[n=8] failed: {msg}"),
            "finished kernel".to_string()
        ]
    );
}

#[test]
fn a_hung_worker_is_killed_with_its_process_group() {
    let dir = scripted(
        "echo '{\"event\":\"hello\",\"protocol\":2,\"pid\":1}'\nsleep 30 &\necho $! > child.pid\nwait\n",
    );
    let start = Instant::now();
    let msg = failure(&run("/bin/sh", dir.path(), &Recorder::default(), None));
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(
        msg.starts_with(
            "suite worker (pid 1) timed out: no progress for 0.6s (warmup_s + timeout_s + 0.3s)"
        ),
        "{msg}"
    );
    let pid = std::fs::read_to_string(dir.path().join("child.pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    let gone = (0..100).any(|_| {
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        std::thread::sleep(Duration::from_millis(20));
        s.is_empty() || s.contains(") Z ")
    });
    assert!(gone, "the worker's child {pid} survived");
}

#[test]
fn exiting_without_an_outcome_is_a_failed_result() {
    let dir =
        scripted("echo '{\"event\":\"hello\",\"protocol\":2,\"pid\":1}'\nprintf '{\"event\"'\n");
    let msg = failure(&run("/bin/sh", dir.path(), &Recorder::default(), None));
    assert_eq!(
        msg,
        "suite worker (pid 1) exited without reporting the suite's outcome (its output ended in the middle of a line)"
    );
}

/// A scripted worker that follows the protocol: two samples of `steady[n=8]` in windows 1–2
/// and 3–5 ms after `t0_ns`, the second sample not finite; `meta_len` machine-state entries.
fn protocol_script(t0_ns: u64, meta_len: usize) -> String {
    let ms = 1_000_000;
    let mut result = BenchmarkResult::failed("kernel", "steady", BTreeMap::new(), String::new());
    result.params.insert("n".into(), "8".into());
    result.status = ResultStatus::Ok;
    result.error = None;
    result.samples = vec![10.0, f64::INFINITY];
    result.sample_meta = vec![SampleMeta::default(); meta_len];
    let (outcome, non_finite) = encode_non_finite(SuiteOutcome {
        results: vec![result],
        skipped: None,
        context: BTreeMap::new(),
        notes: vec!["a note".into()],
        unfinished: Vec::new(),
    });
    assert_eq!(
        non_finite,
        [NonFinite {
            result: 0,
            sample: 1,
            value: "inf".into()
        }]
    );
    let lines = [
        serde_json::json!({"event": "hello", "protocol": PROTOCOL, "pid": 77}),
        serde_json::json!({"event": "suite_started", "benchmarks": 1}),
        serde_json::json!({"event": "benchmark_started", "benchmark": "steady[n=8]"}),
        serde_json::json!({"event": "sample", "start_ns": t0_ns + ms, "end_ns": t0_ns + 2 * ms}),
        serde_json::json!({"event": "sample", "start_ns": t0_ns + 3 * ms, "end_ns": t0_ns + 5 * ms}),
        serde_json::json!({"event": "benchmark_finished", "benchmark": "steady[n=8]", "error": null}),
        serde_json::json!({"event": "suite_finished"}),
        serde_json::to_value(WorkerEvent::Outcome {
            outcome,
            non_finite,
        })
        .unwrap(),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    format!("cat <<'EOF'\n{}\nEOF\n", text.join("\n"))
}

#[test]
fn sample_windows_get_the_parents_machine_state() {
    let (t0_ns, t0) = (monotonic_ns(), Instant::now());
    let dir = scripted(&protocol_script(t0_ns, 2));
    let obs = Recorder::default();
    let source = Windows::default();
    let outcome = run("/bin/sh", dir.path(), &obs, Some(&source));
    assert_eq!(outcome.results.len(), 1, "{:?}", outcome.results);
    let r = &outcome.results[0];
    assert_eq!(r.status, ResultStatus::Ok, "{:?}", r.error);
    assert_eq!(r.samples[0], 10.0);
    assert_eq!(r.samples[1], f64::INFINITY);
    let clocks: Vec<Option<u32>> = r.sample_meta.iter().map(|m| m.sm_clock_mhz).collect();
    assert_eq!(clocks, [Some(1001), Some(1002)]);
    // A worker that sends no time per iteration with its windows (an older one): no cycles.
    assert!(r.sample_meta.iter().all(|m| m.cycles.is_none()));
    assert_eq!(outcome.notes, ["a note"]);
    let windows = source.0.borrow();
    assert_eq!(windows[0].1 - windows[0].0, Duration::from_millis(1));
    assert_eq!(windows[1].0 - windows[0].0, Duration::from_millis(2));
    let from_t0 = windows[0].0.saturating_duration_since(t0);
    let off = from_t0.abs_diff(Duration::from_millis(1));
    assert!(off < Duration::from_millis(20), "window mapped {off:?} off");
    assert_eq!(
        obs.events(),
        [
            "worker 77",
            "started kernel 1",
            "bench steady[n=8]",
            "done steady[n=8] ok",
            "finished kernel",
            // The worker's notes (a backend's benchmarks left out) are shown by the parent.
            "warning a note"
        ]
    );
}

#[test]
fn results_with_more_samples_than_windows_break_the_protocol() {
    let dir = scripted(&protocol_script(monotonic_ns(), 3));
    let msg = failure(&run(
        "/bin/sh",
        dir.path(),
        &Recorder::default(),
        Some(&Windows::default()),
    ));
    assert_eq!(
        msg,
        "suite worker (pid 77) broke the protocol: its result steady[n=8] has 3 samples with machine state, pitwall saw 2 sample windows; it was killed"
    );
}

#[test]
fn each_round_runs_in_its_own_pitwall_worker() {
    let exe = pitwall_e2e::pitwall_bin();
    let isolation = Isolation::Worker { exe };
    let obs = Recorder::default();
    let source = Windows::default();
    let checkout = tempfile::tempdir().unwrap();
    let before = Instant::now();
    for _ in 0..2 {
        let outcome = run_suite(
            &suite(60.0),
            &pitwall_cpu::CpuBackend,
            checkout.path(),
            Selection {
                filter: Some("gemm_f32[n=64]"),
                only: None,
            },
            &obs,
            Some(&source),
            &isolation,
        );
        assert_eq!(outcome.results.len(), 1, "{:?}", outcome.results);
        let r = &outcome.results[0];
        assert_eq!(r.status, ResultStatus::Ok, "{:?}", r.error);
        assert!(r.samples.len() >= 5);
        assert_eq!(r.sample_meta.len(), r.samples.len());
        assert!(r.sample_meta.iter().all(|m| m.sm_clock_mhz.is_some()));
        // The worker sends each sample's time with its window; the parent adds its cycles
        // (time × the mean SM clock inside the window, 1500 MHz here).
        assert!(
            r.sample_meta
                .iter()
                .all(|m| m.cycles.is_some_and(|c| c > 0.0)),
            "{:?}",
            r.sample_meta
        );
    }
    let after = Instant::now();
    let pids = obs.pids();
    assert_eq!(pids.len(), 2, "{:?}", obs.events());
    assert_ne!(pids[0], pids[1], "each round has its own process");
    assert!(!pids.contains(&std::process::id()));
    let windows = source.0.borrow();
    assert!(
        windows
            .iter()
            .all(|(s, e)| before <= *s && s <= e && *e <= after),
        "sample windows fall outside the rounds"
    );
    assert!(obs.events().contains(&"bench gemm_f32[n=64]".to_string()));
}
