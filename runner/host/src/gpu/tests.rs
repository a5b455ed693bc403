//! Tests of the GPU module through the `Nvml` trait, with fakes: no GPU needed. The SIGTERM
//! and SIGINT tests re-run this test binary as a child that holds a clock lock on a `FileNvml`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::*;

/// Guard tests share the process-wide registry of active locks (and `restore_all_active`
/// drains all of it), so they run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn shared(fake: &FakeNvml) -> Arc<dyn Nvml> {
    Arc::new(fake.clone())
}

fn reading(sm_mhz: u32, throttle_reasons: u64) -> ClockReading {
    ClockReading {
        sm_mhz,
        mem_mhz: 3201,
        temperature_c: 50.0,
        power_w: 300.0,
        throttle_reasons,
        failed: 0,
    }
}

#[test]
fn lock_then_drop_restores() {
    let _s = serial();
    let fake = FakeNvml::new();
    {
        let guard =
            ClockGuard::acquire(shared(&fake), 0, ClockMode::Lock { sm_mhz: Some(1980) }).unwrap();
        assert_eq!(guard.locked_mhz(), Some(1980));
        assert_eq!(fake.locked(0), Some((1980, 1980)));
        assert_eq!(active_count(), 1);
    }
    assert_eq!(
        fake.clock_calls(),
        ["set_locked_clocks(0, 1980, 1980)", "reset_locked_clocks(0)"]
    );
    assert_eq!(fake.locked(0), None);
    assert_eq!(active_count(), 0);
}

#[test]
fn lock_is_below_the_datasheet_base_clock_never_the_default_applications_clock() {
    let _s = serial();
    // A card not in the datasheet table: the highest offered clock ≤ 0.8 × 1980 = 1584.
    let fake = FakeNvml::new();
    let guard = ClockGuard::acquire(shared(&fake), 0, ClockMode::Lock { sm_mhz: None }).unwrap();
    assert_eq!(guard.locked_mhz(), Some(1575));
    guard.restore().unwrap();
    assert_eq!(
        fake.clock_calls(),
        ["set_locked_clocks(0, 1575, 1575)", "reset_locked_clocks(0)"]
    );
    // An H200 (base 1590 MHz, default applications clock 1980 MHz): the highest offered clock
    // at or below the base clock.
    let h200 = |supported: Vec<u32>| GpuDevice {
        name: "NVIDIA H200".into(),
        base_sm_mhz: Some(1980),
        supported_sm_mhz: supported,
        ..fake_device(0)
    };
    assert_eq!(
        lock_target(&h200(fake_supported_sm_mhz()), None).unwrap(),
        1590
    );
    assert_eq!(
        lock_target(&h200(vec![1980, 1650, 1580, 1500]), None).unwrap(),
        1580
    );
    // Nothing offered: the bound itself (NVML rounds it).
    assert_eq!(lock_target(&h200(Vec::new()), None).unwrap(), 1590);
    // `lock:<MHz>` stays as given.
    assert_eq!(lock_target(&h200(Vec::new()), Some(1700)).unwrap(), 1700);
}

#[test]
fn lock_without_base_or_maximum_clock_asks_for_one() {
    let _s = serial();
    let device = GpuDevice {
        base_sm_mhz: None,
        max_sm_mhz: None,
        ..fake_device(0)
    };
    let fake = FakeNvml::new().with_devices(vec![device]);
    let e = ClockGuard::acquire(shared(&fake), 0, ClockMode::Lock { sm_mhz: None })
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("neither a known base clock nor a maximum SM clock")
            && e.contains("hint: give the clock explicitly (lock:<MHz>"),
        "{e}"
    );
    assert!(fake.clock_calls().is_empty());
}

#[test]
fn lock_unsupported_fails_with_a_hint_and_touches_nothing() {
    let _s = serial();
    let fake = FakeNvml::new().without_lock_support();
    let e =
        ClockGuard::acquire(shared(&fake), 0, ClockMode::Lock { sm_mhz: Some(1500) }).unwrap_err();
    assert!(
        matches!(e, GpuError::LockUnsupported { index: 0, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("hint: clock locking needs a Volta or newer"),
        "{e}"
    );
    assert!(fake.clock_calls().is_empty());
    assert_eq!(active_count(), 0);
}

#[test]
fn lock_denied_says_root_is_needed_and_registers_nothing() {
    let _s = serial();
    let fake = FakeNvml::new().denying_lock();
    let e = ClockGuard::acquire(shared(&fake), 0, ClockMode::Lock { sm_mhz: Some(1500) })
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("hint: locking clocks needs root") && e.contains("persistence mode"),
        "{e}"
    );
    assert!(e.contains("fake: NO_PERMISSION"), "cause kept: {e}");
    assert_eq!(fake.clock_calls(), ["set_locked_clocks(0, 1500, 1500)"]);
    assert_eq!(active_count(), 0);
}

#[test]
fn lock_above_the_maximum_or_on_a_missing_device_is_refused() {
    let _s = serial();
    let fake = FakeNvml::new();
    let e =
        ClockGuard::acquire(shared(&fake), 0, ClockMode::Lock { sm_mhz: Some(2500) }).unwrap_err();
    assert!(
        matches!(
            e,
            GpuError::ClockOutOfRange {
                requested: 2500,
                max: 1980,
                ..
            }
        ),
        "{e:?}"
    );
    let e =
        ClockGuard::acquire(shared(&fake), 3, ClockMode::Lock { sm_mhz: Some(1500) }).unwrap_err();
    assert!(
        matches!(e, GpuError::NoDevice { index: 3, count: 1 }),
        "{e:?}"
    );
    assert!(fake.clock_calls().is_empty());
}

#[test]
fn observe_and_off_never_set_or_reset() {
    let _s = serial();
    let fake = FakeNvml::new();
    for mode in [ClockMode::Observe, ClockMode::Off] {
        let guard = ClockGuard::acquire(shared(&fake), 0, mode).unwrap();
        assert_eq!(guard.locked_mhz(), None);
        drop(guard);
    }
    assert!(fake.calls().is_empty(), "{:?}", fake.calls());
}

#[test]
fn panic_while_locked_restores() {
    let _s = serial();
    let fake = FakeNvml::new();
    let nvml = shared(&fake);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let _guard = ClockGuard::acquire(nvml, 0, ClockMode::Lock { sm_mhz: Some(1600) }).unwrap();
        panic!("benchmark blew up while clocks were locked");
    }));
    assert!(outcome.is_err());
    assert_eq!(
        fake.clock_calls(),
        ["set_locked_clocks(0, 1600, 1600)", "reset_locked_clocks(0)"]
    );
    assert_eq!(active_count(), 0);
}

#[test]
fn restore_all_active_resets_every_lock_once() {
    let _s = serial();
    let fake = FakeNvml::new().with_devices(vec![fake_device(0), fake_device(1)]);
    let a = ClockGuard::acquire(shared(&fake), 0, ClockMode::Lock { sm_mhz: Some(1500) }).unwrap();
    let b = ClockGuard::acquire(shared(&fake), 1, ClockMode::Lock { sm_mhz: None }).unwrap();
    let restored = restore_all_active();
    assert_eq!(
        restored
            .iter()
            .map(|(i, r)| (*i, r.is_ok()))
            .collect::<Vec<_>>(),
        [(0, true), (1, true)]
    );
    assert_eq!((fake.locked(0), fake.locked(1)), (None, None));
    drop(a);
    drop(b);
    // The guards saw they had been restored already: no second reset.
    assert_eq!(
        fake.clock_calls(),
        [
            "set_locked_clocks(0, 1500, 1500)",
            "set_locked_clocks(1, 1575, 1575)",
            "reset_locked_clocks(0)",
            "reset_locked_clocks(1)"
        ]
    );
}

#[test]
fn failed_restore_is_reported_by_restore() {
    let _s = serial();
    let fake = FakeNvml::new().failing_reset();
    let guard =
        ClockGuard::acquire(shared(&fake), 0, ClockMode::Lock { sm_mhz: Some(1500) }).unwrap();
    let e = guard.restore().unwrap_err().to_string();
    assert!(
        e.contains("nvmlDeviceResetGpuLockedClocks failed on GPU 0: fake: UNKNOWN"),
        "{e}"
    );
    assert_eq!(active_count(), 0);
}

#[test]
fn clock_mode_parses_and_prints() {
    for (text, mode) in [
        ("lock", ClockMode::Lock { sm_mhz: None }),
        ("lock:1410", ClockMode::Lock { sm_mhz: Some(1410) }),
        ("observe", ClockMode::Observe),
        ("off", ClockMode::Off),
    ] {
        assert_eq!(text.parse::<ClockMode>().unwrap(), mode);
        assert_eq!(mode.to_string(), text);
    }
    let e = "lock:fast".parse::<ClockMode>().unwrap_err();
    assert!(
        e.contains("hint: use lock, lock:<MHz>, observe or off"),
        "{e}"
    );
    assert!("lock:0".parse::<ClockMode>().is_err());
}

#[test]
fn slowdown_mask_counts_thermal_and_power_but_not_policy() {
    for bit in [0x04, 0x08, 0x20, 0x40, 0x80] {
        assert!(is_slowdown(bit), "{bit:#x}");
    }
    // idle, applications/locked clocks, sync boost, display clock.
    for bit in [0x01, 0x02, 0x10, 0x100] {
        assert!(!is_slowdown(bit), "{bit:#x}");
    }
}

#[test]
fn meta_between_flags_the_throttled_interval_only() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut log = ReadingLog::new(100);
    for ms in 0..10 {
        // 40–59 ms: SW thermal slowdown at a lower clock; always the locked-clocks bit (0x02).
        let r = if (4..6).contains(&ms) {
            reading(1400, 0x02 | 0x20)
        } else {
            reading(1980, 0x02)
        };
        log.push(at(ms * 10), r);
    }
    let hot = log.meta_between(at(35), at(65));
    assert!(hot.throttled);
    assert_eq!(hot.throttle_reasons, Some(0x22));
    assert_eq!(hot.sm_clock_mhz, Some(1400));
    assert_eq!(hot.mem_clock_mhz, Some(3201));
    assert_eq!((hot.temperature_c, hot.power_w), (Some(50.0), Some(300.0)));
    let cool = log.meta_between(at(0), at(35));
    assert!(!cool.throttled);
    assert_eq!(
        (cool.sm_clock_mhz, cool.throttle_reasons),
        (Some(1980), Some(0x02))
    );
    assert!(!log.meta_between(at(60), at(95)).throttled);
    // No reading inside: the nearest one stands in (41 ms is nearer the 40 ms reading).
    assert!(log.meta_between(at(41), at(42)).throttled);
    assert!(!log.meta_between(at(500), at(600)).throttled);
    assert!(ReadingLog::new(4).meta_between(at(0), at(10)).is_empty());
}

#[test]
fn reading_log_drops_the_oldest_beyond_capacity() {
    let t0 = Instant::now();
    let mut log = ReadingLog::new(3);
    for i in 0..5u32 {
        log.push(
            t0 + Duration::from_millis(u64::from(i)),
            reading(1000 + i, 0),
        );
    }
    assert_eq!(log.len(), 3);
    assert_eq!(
        log.meta_between(t0, t0 + Duration::from_secs(1))
            .sm_clock_mhz,
        Some(1002)
    );
}

#[test]
fn the_first_reading_is_taken_before_start_returns() {
    let fake = FakeNvml::new();
    // A period far longer than the test: only the reading taken in `start` can be there.
    let monitor = ClockMonitor::start(shared(&fake), 0, Duration::from_secs(3600)).unwrap();
    assert_eq!(monitor.readings(), 1);
    let now = Instant::now();
    assert_eq!(monitor.meta_between(now, now).sm_clock_mhz, Some(1980));
    drop(monitor); // stops at once despite the long period
    assert_eq!(fake.reads(), 1);
}

#[test]
fn monitor_health_counts_reads_failures_and_query_cost() {
    let fake = FakeNvml::new();
    let good = ClockMonitor::start(shared(&fake), 0, Duration::from_millis(1)).unwrap();
    // Device 7 does not exist: every read fails with NVML's answer.
    let bad = ClockMonitor::start(shared(&fake), 7, Duration::from_millis(1)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while (good.health().readings < 5 || bad.health().failed < 5) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    let (g, b) = (good.health(), bad.health());
    assert!(
        g.readings >= 5 && g.failed == 0 && g.first_error.is_none(),
        "{g:?}"
    );
    assert_eq!((g.device, g.period_ms), (0, 1));
    assert!(
        g.query_us_mean > 0.0 && g.query_us_max >= g.query_us_mean,
        "{g:?}"
    );
    assert_eq!(b.readings, 0, "{b:?}");
    assert!(b.failed >= 5);
    let err = b.first_error.clone().unwrap();
    assert!(err.contains('7'), "{err}");
    let line = b.summary();
    assert!(
        line.starts_with("gpu 7 monitor: 0 readings every 1 ms, "),
        "{line}"
    );
    assert!(line.contains("failed") && line.contains(&err), "{line}");
    assert_eq!(bad.readings(), 0, "failed reads are not logged");
}

#[test]
fn one_failing_field_costs_only_that_field_and_is_counted() {
    // The deprecated throttle-reasons query fails on every read (as on a driver that dropped
    // it); clocks, temperature and power still arrive.
    let fake = FakeNvml::new().failing_field(ReadingField::ThrottleReasons);
    let start = Instant::now();
    let monitor = ClockMonitor::start(shared(&fake), 0, Duration::from_millis(1)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while monitor.health().readings < 5 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    let h = monitor.health();
    assert!(h.readings >= 5 && h.failed == 0, "{h:?}");
    assert_eq!(
        h.failed_by_field.get("throttle_reasons").copied(),
        Some(h.readings),
        "{h:?}"
    );
    assert_eq!(h.failed_by_field.len(), 1, "{h:?}");
    assert!(
        h.summary().contains("failed fields: throttle_reasons "),
        "{}",
        h.summary()
    );
    let meta = monitor.meta_between(start, Instant::now());
    assert_eq!(meta.sm_clock_mhz, Some(1980), "{meta:?}");
    assert_eq!(meta.power_w, Some(120.0), "{meta:?}");
    assert_eq!(meta.throttle_reasons, None, "unknown, not zero: {meta:?}");
    assert!(!meta.throttled);
}

#[test]
fn mean_sm_clock_comes_only_from_readings_inside_the_window() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let mut log = ReadingLog::new(16);
    log.push(at(0), reading(1980, 0));
    log.push(at(10), reading(1500, 0));
    let mut failed_sm = reading(0, 0);
    failed_sm.mark_failed(ReadingField::SmMhz);
    log.push(at(20), failed_sm);
    log.push(at(30), reading(1700, 0));
    assert_eq!(log.mean_sm_mhz_between(at(5), at(35)), Some(1600.0));
    assert_eq!(log.mean_sm_mhz_between(at(0), at(0)), Some(1980.0));
    // No reading inside: no value, even with readings around it.
    assert_eq!(log.mean_sm_mhz_between(at(11), at(19)), None);
    assert_eq!(
        log.mean_sm_mhz_between(at(19), at(21)),
        None,
        "its SM failed"
    );
    // The summary skips the failed SM query instead of reading it as 0 MHz.
    assert_eq!(log.meta_between(at(15), at(25)).sm_clock_mhz, None);
    assert_eq!(log.meta_between(at(5), at(35)).sm_clock_mhz, Some(1500));
}

#[test]
fn monitor_reads_in_the_background_and_stops_on_drop() {
    let mut script: Vec<ClockReading> = (0..5).map(|_| reading(1980, 0)).collect();
    script.push(reading(1300, 0x08)); // HW slowdown once, then normal again
    script.extend((0..5).map(|_| reading(1980, 0)));
    let fake = FakeNvml::new().with_readings(0, script);
    let start = Instant::now();
    let monitor = ClockMonitor::start(shared(&fake), 0, Duration::from_millis(1)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while fake.reads() < 12 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    let meta = monitor.meta_between(start, Instant::now());
    assert!(meta.throttled, "{meta:?}");
    assert_eq!(meta.sm_clock_mhz, Some(1300));
    assert_eq!(meta.throttle_reasons, Some(0x08));
    assert!(monitor.readings() >= 12);
    drop(monitor);
    let reads = fake.reads();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(fake.reads(), reads, "the thread stopped");
}

#[test]
fn file_nvml_keeps_state_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nvml.json");
    let nvml = FileNvml::open(&path).unwrap();
    assert_eq!(nvml.devices().unwrap(), [fake_device(0)]);
    nvml.set_locked_clocks(0, 1500, 1500).unwrap();
    assert_eq!(nvml.read_clocks(0).unwrap().sm_mhz, 1500);
    // Another handle (another process, in the end-to-end test) sees the same state.
    let other = FileNvml::open(&path).unwrap();
    assert_eq!(other.load().unwrap().locked.get(&0), Some(&(1500, 1500)));
    other.reset_locked_clocks(0).unwrap();
    let state = nvml.load().unwrap();
    assert!(state.locked.is_empty());
    assert_eq!(
        state.calls,
        [
            "devices()",
            "set_locked_clocks(0, 1500, 1500)",
            "reset_locked_clocks(0)"
        ]
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["nvml.json"], "no temporary file left behind");
    assert!(matches!(
        nvml.read_clocks(7),
        Err(GpuError::NoDevice { index: 7, .. })
    ));
}

#[test]
fn file_nvml_reports_a_broken_file_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nvml.json");
    std::fs::write(&path, "{ not json").unwrap();
    let e = FileNvml::open(&path).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("fake nvml state file {}: ", path.display())),
        "{e}"
    );
    assert!(e.contains("hint: PITWALL_FAKE_NVML is a test hook"), "{e}");
}

#[test]
fn load_nvml_without_a_driver_is_unavailable_not_a_panic() {
    let outcome = load_real_nvml();
    if !Path::new("/dev/nvidiactl").exists() {
        let e = outcome
            .err()
            .expect("no NVIDIA driver here, yet NVML loaded");
        assert!(matches!(e, GpuError::Unavailable { .. }), "{e:?}");
        assert!(e.to_string().starts_with("nvml is not available: "), "{e}");
    }
    if std::env::var_os(FAKE_NVML_ENV).is_none() && !Path::new("/dev/nvidiactl").exists() {
        assert!(matches!(load_nvml(), Err(GpuError::Unavailable { .. })));
    }
}

/// Environment variable that turns `sigterm_child_helper` into the child of the signal tests.
const CHILD_ENV: &str = "PITWALL_GPU_SIGNAL_CHILD";

/// Not a test on its own: the signal tests re-run this binary with only this test selected and
/// `CHILD_ENV` naming a `FileNvml` file. It locks the clocks, says it is ready, and then does
/// what the binary does: once terminating, its use case returns the cancellation (dropping the
/// guard while the restore thread restores) and it waits to be ended by the signal. Without
/// the variable it returns at once.
#[test]
fn sigterm_child_helper() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let nvml: Arc<dyn Nvml> = Arc::new(FileNvml::open(Path::new(&path)).unwrap());
    let guard = ClockGuard::acquire(nvml, 0, ClockMode::Lock { sm_mhz: Some(1500) }).unwrap();
    let mut ready = path.clone();
    ready.push(".ready");
    std::fs::write(ready, "locked\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let signo = loop {
        if let Some(signo) = termination_signal() {
            break signo;
        }
        assert!(
            Instant::now() < deadline,
            "the parent test never sent the signal"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    drop(guard);
    await_termination(signo);
}

#[test]
fn not_terminating_until_a_signal_and_signals_are_named() {
    assert_eq!(termination_signal(), None);
    assert!(!terminating());
    assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
    assert_eq!(signal_name(libc::SIGINT), "SIGINT");
    assert_eq!(signal_name(9), "signal 9");
}

fn signal_restores_in_a_child_process(signo: i32) {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nvml.json");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "gpu::tests::sigterm_child_helper",
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ENV, &path)
        .env_remove(FAKE_NVML_ENV)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ready = dir.path().join("nvml.json.ready");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready.exists() {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!(
                "the child never locked the clocks (status {:?})",
                child.wait()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let locked = FileNvml::open(&path).unwrap().load().unwrap();
    assert_eq!(locked.locked.get(&0), Some(&(1500, 1500)));
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signo) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the child did not die of signal {signo}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(
        status.signal(),
        Some(signo),
        "killed by the re-raised signal: {status:?}"
    );
    let state = FileNvml::open(&path).unwrap().load().unwrap();
    assert!(state.locked.is_empty(), "clocks restored: {state:?}");
    assert_eq!(
        state.calls,
        [
            "devices()",
            "set_locked_clocks(0, 1500, 1500)",
            "reset_locked_clocks(0)"
        ]
    );
}

#[test]
fn sigterm_restores_clocks_then_dies_of_sigterm() {
    signal_restores_in_a_child_process(libc::SIGTERM);
}

#[test]
fn sigint_restores_clocks_then_dies_of_sigint() {
    signal_restores_in_a_child_process(libc::SIGINT);
}
