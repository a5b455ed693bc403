//! `ClockMonitor`: samples NVML state (clocks, temperature, power, throttle reasons) on a
//! background thread so that each benchmark sample can be annotated with the conditions it ran
//! under (`SampleMeta`), and a throttled sample can be told from a slow one. Each field is its
//! own NVML query: one that fails (the deprecated throttle-reasons call on a newer driver) is
//! counted against its field and the others are kept. On Hopper, NVML's power reading is a
//! ~1 s running average (`nvmlDeviceGetPowerUsage`), not the power of the sample's window.

use std::collections::VecDeque;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pitwall_schema::SampleMeta;
use pitwall_schema::sections::GpuMonitor;

use super::types::{ClockReading, Nvml, ReadingField, THROTTLE_SLOWDOWN_MASK};

/// Readings kept: 65 536 at the usual 10 ms period is about 11 minutes of history.
pub const RING_CAPACITY: usize = 65_536;

/// Timestamped readings, oldest first, bounded (the oldest are dropped).
#[derive(Debug, Clone)]
pub struct ReadingLog {
    readings: VecDeque<(Instant, ClockReading)>,
    capacity: usize,
}

impl ReadingLog {
    pub fn new(capacity: usize) -> Self {
        ReadingLog {
            readings: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Appends a reading taken at `at` (readings must come in time order).
    pub fn push(&mut self, at: Instant, reading: ClockReading) {
        if self.readings.len() == self.capacity {
            self.readings.pop_front();
        }
        self.readings.push_back((at, reading));
    }

    pub fn len(&self) -> usize {
        self.readings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.readings.is_empty()
    }

    /// Summarises the readings taken in `[start, end]`: lowest SM and memory clocks, highest
    /// temperature and power, the OR of all throttle reasons, and `throttled` when any of them
    /// is in `THROTTLE_SLOWDOWN_MASK`. When no reading fell inside (a sample shorter than the
    /// period), the reading nearest the interval stands in. Empty log: empty `SampleMeta`.
    pub fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta {
        let (start, end) = if start <= end {
            (start, end)
        } else {
            (end, start)
        };
        let lo = self.readings.partition_point(|(t, _)| *t < start);
        let hi = self.readings.partition_point(|(t, _)| *t <= end);
        let inside: Vec<&ClockReading> = if lo < hi {
            self.readings.range(lo..hi).map(|(_, r)| r).collect()
        } else {
            // lo == hi: the readings just before and just after the interval are candidates.
            let before = lo
                .checked_sub(1)
                .and_then(|i| self.readings.get(i))
                .map(|(t, r)| (start - *t, r));
            let after = self.readings.get(lo).map(|(t, r)| (*t - end, r));
            match (before, after) {
                (Some(b), Some(a)) => vec![if a.0 < b.0 { a.1 } else { b.1 }],
                (Some((_, r)), None) | (None, Some((_, r))) => vec![r],
                (None, None) => return SampleMeta::default(),
            }
        };
        summarise(&inside)
    }

    /// The mean SM clock (MHz) of the readings taken inside `[start, end]` whose SM query
    /// succeeded; `None` when there is none (no stand-in: a sample's cycles need its own
    /// readings).
    pub fn mean_sm_mhz_between(&self, start: Instant, end: Instant) -> Option<f64> {
        let (start, end) = if start <= end {
            (start, end)
        } else {
            (end, start)
        };
        let lo = self.readings.partition_point(|(t, _)| *t < start);
        let hi = self.readings.partition_point(|(t, _)| *t <= end);
        let clocks: Vec<f64> = self
            .readings
            .range(lo..hi.max(lo))
            .filter_map(|(_, r)| r.sm())
            .map(f64::from)
            .collect();
        (!clocks.is_empty()).then(|| clocks.iter().sum::<f64>() / clocks.len() as f64)
    }
}

/// The summary of `readings`, each field over the readings whose query of it succeeded.
fn summarise(readings: &[&ClockReading]) -> SampleMeta {
    let ok = |field: ReadingField| readings.iter().filter(move |r| !r.field_failed(field));
    let max_f64 = |field: ReadingField, f: fn(&ClockReading) -> f64| {
        ok(field)
            .map(|r| f(r))
            .filter(|v| v.is_finite())
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    let throttle_known = ok(ReadingField::ThrottleReasons).next().is_some();
    let bits = ok(ReadingField::ThrottleReasons).fold(0u64, |acc, r| acc | r.throttle_reasons);
    SampleMeta {
        sm_clock_mhz: ok(ReadingField::SmMhz).map(|r| r.sm_mhz).min(),
        mem_clock_mhz: ok(ReadingField::MemMhz).map(|r| r.mem_mhz).min(),
        temperature_c: max_f64(ReadingField::TemperatureC, |r| r.temperature_c),
        power_w: max_f64(ReadingField::PowerW, |r| r.power_w),
        throttle_reasons: throttle_known.then_some(bits),
        throttled: bits & THROTTLE_SLOWDOWN_MASK != 0,
        cycles: None,
    }
}

/// How the monitor itself fared: how many reads it made, how many failed (and the first
/// error), and what one NVML query cost. Stored with each run as `gpu_monitor` (the schema's
/// section type, so there is one definition), so a run whose per-sample GPU state is missing
/// says why, and the polling cost is on record.
pub type MonitorHealth = GpuMonitor;

/// Counts one read (or its failure, keeping the first error), the fields whose query failed
/// in it, and what it cost.
fn record(health: &mut MonitorHealth, took: Duration, outcome: Result<&ClockReading, String>) {
    let us = took.as_secs_f64() * 1e6;
    let n = (health.readings + health.failed) as f64;
    health.query_us_mean = (health.query_us_mean * n + us) / (n + 1.0);
    health.query_us_max = health.query_us_max.max(us);
    match outcome {
        Ok(reading) => {
            health.readings += 1;
            for field in reading.failed_fields() {
                *health
                    .failed_by_field
                    .entry(field.as_str().to_string())
                    .or_insert(0) += 1;
                health
                    .first_error
                    .get_or_insert_with(|| format!("nvml: the {} query failed", field.as_str()));
            }
        }
        Err(e) => {
            health.failed += 1;
            health.first_error.get_or_insert(e);
        }
    }
}

/// Takes one reading into `log` and counts it (or its failure) in `health`.
fn read_once(nvml: &dyn Nvml, index: u32, log: &Mutex<ReadingLog>, health: &Mutex<MonitorHealth>) {
    let at = Instant::now();
    let result = nvml.read_clocks(index);
    let took = at.elapsed();
    let mut health = health.lock().unwrap_or_else(|e| e.into_inner());
    match result {
        Ok(reading) => {
            record(&mut health, took, Ok(&reading));
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(at, reading);
        }
        Err(e) => record(&mut health, took, Err(e.to_string())),
    }
}

/// A background thread reading one GPU every `period` into a `ReadingLog`. Stops on Drop.
pub struct ClockMonitor {
    log: Arc<Mutex<ReadingLog>>,
    health: Arc<Mutex<MonitorHealth>>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    index: u32,
}

impl std::fmt::Debug for ClockMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockMonitor")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl ClockMonitor {
    /// Starts reading GPU `index` every `period` (10 ms is a good default: an NVML query costs
    /// tens of microseconds). The first reading is taken before this returns. Failed reads are
    /// counted (see `health`), not logged; each reading is stamped with the time just before
    /// the query.
    pub fn start(
        nvml: Arc<dyn Nvml>,
        index: u32,
        period: Duration,
    ) -> std::io::Result<ClockMonitor> {
        let log = Arc::new(Mutex::new(ReadingLog::new(RING_CAPACITY)));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread_log = Arc::clone(&log);
        let health = Arc::new(Mutex::new(MonitorHealth {
            device: index,
            period_ms: period.as_millis() as u64,
            ..MonitorHealth::default()
        }));
        let thread_health = Arc::clone(&health);
        // One reading before returning, so the first sample already has a reading to go by.
        read_once(nvml.as_ref(), index, &log, &health);
        let thread = std::thread::Builder::new()
            .name(format!("pitwall-gpu{index}-monitor"))
            .spawn(move || {
                // Until told to stop (or the monitor is dropped): a reading every period.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(period) {
                    read_once(nvml.as_ref(), index, &thread_log, &thread_health);
                }
            })?;
        Ok(ClockMonitor {
            log,
            health,
            stop: Some(stop),
            thread: Some(thread),
            index,
        })
    }

    pub fn index(&self) -> u32 {
        self.index
    }

    /// See `ReadingLog::meta_between`.
    pub fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .meta_between(start, end)
    }

    /// See `ReadingLog::mean_sm_mhz_between`.
    pub fn mean_sm_mhz_between(&self, start: Instant, end: Instant) -> Option<f64> {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .mean_sm_mhz_between(start, end)
    }

    /// A copy of the readings so far (for a run-level summary or a debug dump).
    pub fn snapshot(&self) -> ReadingLog {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reads, failures and query cost so far.
    pub fn health(&self) -> MonitorHealth {
        self.health
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How many readings are held.
    pub fn readings(&self) -> usize {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

impl Drop for ClockMonitor {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
