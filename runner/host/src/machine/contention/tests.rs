//! Tests of the contention probe on fake `/proc` trees, and of the tally of sampled windows.

use crate::machine::Window;
use std::sync::Arc;
use std::time::Duration;

use pitwall_schema::ContentionLimits;

use crate::machine::contention::{cpu_ticks, parse_task_stat, psi_some_total};
use crate::machine::fake_tree::{FakeTree, stat_line};
use crate::machine::{
    ContentionProbe, ContentionSample, ContentionTally, ContentionWatch, CpuTicks, FakeContention,
    ProcContention,
};

const LIMITS: ContentionLimits = ContentionLimits {
    runnable_threads: 0.5,
    steal_pct: 2.0,
    psi_some_pct: 10.0,
};

const PSI: &str = "some avg10=1.47 avg60=7.37 avg300=9.38 total=4526669970\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0";

#[test]
fn stat_lines_give_state_parent_and_cpu_even_with_parentheses_in_the_name() {
    let line = stat_line(42, "rustc (x) y", 'R', 3).replacen(") R 0 ", ") R 7 ", 1);
    let t = parse_task_stat(&line).unwrap();
    assert_eq!((t.state, t.ppid, t.processor), ('R', 7, 3));
    assert_eq!(parse_task_stat("42 (short) R 1 2"), None);
}

#[test]
fn counts_threads_not_processes_and_leaves_out_pitwall_and_its_descendants() {
    let t = FakeTree::new();
    // A compiler whose main thread sleeps while two of its threads run on cpus 0 and 1.
    t.thread(100, 100, 1, 'S', 0)
        .thread(100, 101, 1, 'R', 0)
        .thread(100, 102, 1, 'R', 1);
    // Another process running on cpu 3, outside the benchmark cpus.
    t.thread(200, 200, 1, 'R', 3);
    // pitwall (pid 300), its benchmark (301) and that benchmark's child (302), all running.
    t.thread(300, 300, 1, 'R', 0)
        .thread(300, 303, 1, 'R', 1)
        .thread(301, 301, 300, 'R', 0)
        .thread(302, 302, 301, 'R', 1);
    let probe = ProcContention::new(t.sysfs(), 300, &[1, 0]);
    assert_eq!(probe.cpus(), &[0, 1]);
    assert_eq!(probe.sample().other_runnable_threads, Some(2));
    // Not pinned: every cpu is a benchmark cpu.
    let all = ProcContention::new(t.sysfs(), 300, &[]);
    assert_eq!(all.sample().other_runnable_threads, Some(3));
}

#[test]
fn a_machine_without_the_files_is_unknown_never_an_error() {
    let t = FakeTree::new();
    let probe = ProcContention::new(t.sysfs(), 1, &[0]);
    assert_eq!(probe.sample(), ContentionSample::default());
    assert!(!probe.has_cgroup_pressure());
    // Garbage in every file: unknown too.
    t.file("proc/stat", "cpu0 x y z")
        .file("proc/pressure/cpu", "nonsense")
        .file("proc/5/stat", "5 (a");
    assert_eq!(probe.sample(), ContentionSample::default());
}

#[test]
fn steal_ticks_of_the_benchmark_cpus_or_all() {
    let stat = "cpu  10 0 10 70 0 0 0 10 5 0\n\
                cpu0 5 0 5 35 0 0 0 5 5 0\n\
                cpu1 5 0 5 35 0 0 0 5 0 0\n\
                intr 1 2 3";
    assert_eq!(
        cpu_ticks(stat, &[]),
        Some(CpuTicks {
            total: 100,
            steal: 10
        })
    );
    assert_eq!(
        cpu_ticks(stat, &[1]),
        Some(CpuTicks {
            total: 50,
            steal: 5
        })
    );
    assert_eq!(cpu_ticks(stat, &[2]), None, "a missing cpu is unknown");
    // Old kernels without steal: no steal.
    assert_eq!(cpu_ticks("cpu0 1 2 3 4", &[0]).map(|t| t.steal), Some(0));
}

#[test]
fn psi_some_total_and_pitwalls_own_cgroup() {
    assert_eq!(psi_some_total(PSI), Some(4_526_669_970));
    assert_eq!(psi_some_total("full total=3"), None);
    let t = FakeTree::new();
    t.file("proc/pressure/cpu", PSI)
        .file("proc/9/cgroup", "0::/user.slice/pitwall.scope")
        .file(
            "sys/fs/cgroup/user.slice/pitwall.scope/cpu.pressure",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=17\nfull total=0",
        );
    let probe = ProcContention::new(t.sysfs(), 9, &[]);
    assert!(probe.has_cgroup_pressure());
    let s = probe.sample();
    assert_eq!(
        (s.psi_some_us, s.psi_cgroup_some_us),
        (Some(4_526_669_970), Some(17))
    );
    // The root cgroup's pressure is the system's: not read as pitwall's own.
    let root = FakeTree::new();
    root.file("proc/9/cgroup", "0::/")
        .file("sys/fs/cgroup/cpu.pressure", PSI);
    assert!(!ProcContention::new(root.sysfs(), 9, &[]).has_cgroup_pressure());
    // A hybrid hierarchy mounts cgroup v2 at /sys/fs/cgroup/unified.
    let hybrid = FakeTree::new();
    hybrid
        .file("proc/9/cgroup", "4:memory:/x\n0::/ci/job")
        .file("sys/fs/cgroup/unified/ci/job/cpu.pressure", PSI);
    assert!(ProcContention::new(hybrid.sysfs(), 9, &[]).has_cgroup_pressure());
}

fn sample(threads: u32, total: u64, steal: u64, psi: u64, own: Option<u64>) -> ContentionSample {
    ContentionSample {
        other_runnable_threads: Some(threads),
        cpu: Some(CpuTicks { total, steal }),
        psi_some_us: Some(psi),
        psi_cgroup_some_us: own,
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn a_tally_differences_counters_within_windows_and_averages_threads() {
    let mut tally = ContentionTally::default();
    assert_eq!(tally.summary(&LIMITS), None, "nothing sampled: no summary");
    tally.add_window(&vec![
        (ms(0), sample(1, 1000, 10, 5_000, Some(0))),
        (ms(100), sample(2, 1100, 13, 55_000, Some(40_000))),
    ]);
    let mut other = ContentionTally::default();
    // Counters jumped between the windows: that time is not counted.
    other.add_window(&vec![
        (ms(0), sample(1, 9000, 500, 900_000, Some(90_000))),
        (ms(100), sample(1, 9100, 500, 900_000, Some(90_000))),
    ]);
    tally.merge(&other);
    assert_eq!(tally.samples(), 4);
    let c = tally.summary(&LIMITS).unwrap();
    assert_eq!(c.samples, 4);
    // Four samples: too few for a mean; every one saw at least one other runnable thread.
    assert_eq!(c.other_runnable_threads, Some(1.0));
    assert_eq!(c.steal_pct, Some(1.5), "3 of 200 ticks");
    assert_eq!(c.psi_some_pct, Some(25.0), "50 ms of 200 ms");
    assert_eq!(c.psi_cgroup_some_pct, Some(20.0));
    assert!(c.contended);
    assert_eq!(c.reasons, vec!["other runnable threads 1.0 ≥ 0.5"]);
}

#[test]
fn a_tally_of_unknown_samples_is_unknown_not_zero() {
    let mut tally = ContentionTally::default();
    tally.add_window(&vec![
        (ms(0), ContentionSample::default()),
        (ms(100), ContentionSample::default()),
    ]);
    let c = tally.summary(&LIMITS).unwrap();
    assert_eq!(c.samples, 2);
    assert_eq!(
        (
            c.other_runnable_threads,
            c.steal_pct,
            c.psi_some_pct,
            c.psi_cgroup_some_pct
        ),
        (None, None, None, None)
    );
    assert!(!c.contended);
}

#[test]
fn a_watch_samples_at_start_and_stop_and_in_between() {
    let probe = Arc::new(FakeContention::new(vec![sample(3, 0, 0, 0, None)]));
    let watch = ContentionWatch::start(probe.clone(), ms(10));
    std::thread::sleep(ms(60));
    let window = watch.stop();
    assert!(window.len() >= 3, "{} samples", window.len());
    assert_eq!(window.len(), probe.reads());
    assert!(window.windows(2).all(|w| w[0].0 <= w[1].0));
}

#[test]
fn the_real_machine_is_read_without_panicking() {
    let probe = ProcContention::real(&[]);
    let s = probe.sample();
    if std::path::Path::new("/proc/stat").exists() {
        assert!(s.cpu.is_some());
        assert!(s.other_runnable_threads.is_some());
    }
}

/// The CPU time this thread has used.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[test]
#[ignore = "prints what sampling costs on this machine; run with --ignored --nocapture"]
fn what_a_sample_costs() {
    let probe = ProcContention::real(&[]);
    let before = thread_cpu_time();
    for _ in 0..50 {
        probe.sample();
    }
    let per = (thread_cpu_time() - before) / 50;
    eprintln!("one sample of this machine costs {per:?} of cpu time");
}

#[test]
fn a_blip_in_a_short_run_is_no_contention_and_a_long_run_is_judged_by_its_mean() {
    let window = |threads: &[u32]| -> Window {
        threads
            .iter()
            .enumerate()
            .map(|(i, &t)| (ms(100 * i as u64), sample(t, 1000, 0, 0, None)))
            .collect()
    };
    // A short run: one passing thread in 2 of 3 samples is a mean of 0.67, not a load.
    let mut short = ContentionTally::default();
    short.add_window(&window(&[1, 0, 1]));
    let c = short.summary(&LIMITS).unwrap();
    assert_eq!(c.other_runnable_threads, Some(0.0));
    assert!(!c.contended, "{c:?}");
    // A load in every sample of a short run counts.
    let mut loaded = ContentionTally::default();
    loaded.add_window(&window(&[2, 1, 2]));
    assert!(loaded.summary(&LIMITS).unwrap().contended);
    // A long run is judged by its mean: 6 of 12 samples with a thread is 0.5.
    let mut long = ContentionTally::default();
    long.add_window(&window(&[1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]));
    let c = long.summary(&LIMITS).unwrap();
    assert_eq!(c.other_runnable_threads, Some(0.5));
    assert!(c.contended);
}
