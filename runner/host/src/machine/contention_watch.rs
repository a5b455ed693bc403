//! Sampling contention during a run: a thread reads a [`ContentionProbe`] every 100 ms
//! ([`ContentionWatch`]) and the windows it sampled add up to a tally ([`ContentionTally`])
//! whose summary is the run's `Contention`.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pitwall_schema::{Contention, ContentionLimits};

use super::contention::{ContentionProbe, ContentionSample};

/// How often a run's contention is sampled.
pub const SAMPLE_PERIOD: Duration = Duration::from_millis(100);

/// The most of one CPU sampling may take: where a sample costs more than this share of the
/// period (a machine with many thousands of threads to read), the watch waits longer. A sample
/// of a machine with 150 threads costs about 2 ms in a release build.
pub const MAX_SAMPLING_SHARE: f64 = 0.05;

/// Samples of one window, each with its time since the window began.
pub type Window = Vec<(Duration, ContentionSample)>;

/// Fewest samples (1 s at the default period) whose mean of other runnable threads judges a
/// run; a shorter run is judged by the fewest threads one of its samples saw.
pub const MIN_SAMPLES_FOR_MEAN: u32 = 10;

/// Sums over the sampled windows of a run; counters are differenced within a window, never
/// across windows (what ran between them was not the run).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContentionTally {
    samples: u32,
    runnable_sum: u64,
    runnable_known: u32,
    /// The fewest other runnable threads one sample saw.
    runnable_min: Option<u32>,
    steal_ticks: u64,
    cpu_ticks: u64,
    cpu_known: bool,
    psi: Stall,
    psi_cgroup: Stall,
}

/// Stalled µs over wall µs, summed over windows where the counter was read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Stall {
    stalled_us: u64,
    wall_us: u64,
    known: bool,
}

impl Stall {
    fn add(&mut self, window: &Window, counter: impl Fn(&ContentionSample) -> Option<u64>) {
        let known: Vec<(Duration, u64)> = window
            .iter()
            .filter_map(|(at, s)| Some((*at, counter(s)?)))
            .collect();
        if let (Some(first), Some(last)) = (known.first(), known.last()) {
            if last.0 > first.0 {
                self.stalled_us += last.1.saturating_sub(first.1);
                self.wall_us += (last.0 - first.0).as_micros() as u64;
                self.known = true;
            }
        }
    }

    fn merge(&mut self, other: &Stall) {
        self.stalled_us += other.stalled_us;
        self.wall_us += other.wall_us;
        self.known |= other.known;
    }

    fn pct(&self) -> Option<f64> {
        (self.known && self.wall_us > 0)
            .then(|| (100.0 * self.stalled_us as f64 / self.wall_us as f64).min(100.0))
    }
}

impl ContentionTally {
    /// Adds one sampled window (samples in time order).
    pub fn add_window(&mut self, window: &Window) {
        self.samples += window.len() as u32;
        for (_, s) in window {
            if let Some(t) = s.other_runnable_threads {
                self.runnable_sum += u64::from(t);
                self.runnable_known += 1;
                self.runnable_min = Some(self.runnable_min.map_or(t, |m| m.min(t)));
            }
        }
        let cpu: Vec<_> = window.iter().filter_map(|(_, s)| s.cpu).collect();
        if let (Some(first), Some(last)) = (cpu.first(), cpu.last()) {
            if cpu.len() >= 2 {
                self.steal_ticks += last.steal.saturating_sub(first.steal);
                self.cpu_ticks += last.total.saturating_sub(first.total);
                self.cpu_known = true;
            }
        }
        self.psi.add(window, |s| s.psi_some_us);
        self.psi_cgroup.add(window, |s| s.psi_cgroup_some_us);
    }

    /// Adds another tally's windows.
    pub fn merge(&mut self, other: &ContentionTally) {
        self.samples += other.samples;
        self.runnable_sum += other.runnable_sum;
        self.runnable_known += other.runnable_known;
        self.runnable_min = match (self.runnable_min, other.runnable_min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.steal_ticks += other.steal_ticks;
        self.cpu_ticks += other.cpu_ticks;
        self.cpu_known |= other.cpu_known;
        self.psi.merge(&other.psi);
        self.psi_cgroup.merge(&other.psi_cgroup);
    }

    /// Samples taken.
    pub fn samples(&self) -> u32 {
        self.samples
    }

    /// The run's contention classified by `limits`; `None` when nothing was sampled.
    pub fn summary(&self, limits: &ContentionLimits) -> Option<Contention> {
        if self.samples == 0 {
            return None;
        }
        // A short run's mean rests on a few samples, and one passing thread in 1 of 2 samples
        // is a mean of 0.5: below `MIN_SAMPLES_FOR_MEAN` the figure is the fewest threads any
        // sample saw, so a load counts when every sample saw it, a blip never.
        let runnable = (self.runnable_known > 0).then(|| {
            if self.runnable_known < MIN_SAMPLES_FOR_MEAN {
                f64::from(self.runnable_min.unwrap_or(0))
            } else {
                self.runnable_sum as f64 / f64::from(self.runnable_known)
            }
        });
        let steal = (self.cpu_known && self.cpu_ticks > 0)
            .then(|| 100.0 * self.steal_ticks as f64 / self.cpu_ticks as f64);
        Some(Contention::classified(
            self.samples,
            runnable,
            steal,
            self.psi.pct(),
            self.psi_cgroup.pct(),
            limits,
        ))
    }
}

/// A thread sampling a probe every period until stopped. Sampling is best effort: if the
/// thread cannot start, the window is empty.
#[derive(Debug)]
pub struct ContentionWatch {
    stop: Sender<()>,
    thread: Option<JoinHandle<Window>>,
}

impl ContentionWatch {
    /// Starts sampling `probe` now and every `period` after (longer where a sample costs more
    /// than [`MAX_SAMPLING_SHARE`] of it).
    pub fn start(probe: Arc<dyn ContentionProbe>, period: Duration) -> ContentionWatch {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("pitwall-contention".into())
            .spawn(move || {
                let began = Instant::now();
                let mut window = Window::new();
                loop {
                    let at = began.elapsed();
                    window.push((at, probe.sample()));
                    let cost = began.elapsed().saturating_sub(at);
                    let wait = period.max(cost.div_f64(MAX_SAMPLING_SHARE));
                    match stopped.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                window.push((began.elapsed(), probe.sample()));
                window
            })
            .ok();
        ContentionWatch { stop, thread }
    }

    /// Stops sampling (after one last sample) and returns the window.
    pub fn stop(mut self) -> Window {
        let _ = self.stop.send(());
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for ContentionWatch {
    fn drop(&mut self) {
        let _ = self.stop.send(());
    }
}
