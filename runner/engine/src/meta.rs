//! Per-sample machine state: the engine asks a source (the GPU clock monitor) what the device
//! did between the start and end of each sample, and stores it with the sample: clocks,
//! throttling, and the SM cycles the sample's time is worth.

use std::time::Instant;

use pitwall_schema::SampleMeta;

/// Something that knows the machine's state over an interval.
pub trait SampleMetaSource {
    fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta;

    /// The mean SM clock (MHz) of the readings taken inside `[start, end]`; `None` when none
    /// was (or the source does not watch a clock).
    fn mean_sm_mhz_between(&self, _start: Instant, _end: Instant) -> Option<f64> {
        None
    }

    /// The state of a sample taken over `[start, end]` at `ns_per_iter`, with its `cycles`
    /// where the SM clock was read inside its window.
    fn sample_meta(&self, start: Instant, end: Instant, ns_per_iter: f64) -> SampleMeta {
        let mut meta = self.meta_between(start, end);
        meta.cycles = self
            .mean_sm_mhz_between(start, end)
            .and_then(|mhz| cycles(ns_per_iter, mhz));
        meta
    }
}

/// SM cycles of `ns` nanoseconds at `mhz`: ns × MHz ÷ 1000.
pub fn cycles(ns: f64, mhz: f64) -> Option<f64> {
    let c = ns * mhz / 1000.0;
    (c.is_finite() && c >= 0.0).then_some(c)
}

impl SampleMetaSource for pitwall_host::gpu::ClockMonitor {
    fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta {
        pitwall_host::gpu::ClockMonitor::meta_between(self, start, end)
    }

    fn mean_sm_mhz_between(&self, start: Instant, end: Instant) -> Option<f64> {
        pitwall_host::gpu::ClockMonitor::mean_sm_mhz_between(self, start, end)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use pitwall_host::gpu::{ClockMonitor, ClockReading, FakeNvml, Nvml, idle_reading};

    #[test]
    fn cycles_are_time_times_the_mean_clock_inside_the_window() {
        assert_eq!(cycles(1000.0, 1500.0), Some(1500.0));
        assert_eq!(cycles(f64::NAN, 1500.0), None);
        let slow = ClockReading {
            sm_mhz: 1000,
            ..idle_reading()
        };
        let fake = FakeNvml::new().with_readings(0, vec![slow]);
        let nvml: Arc<dyn Nvml> = Arc::new(fake);
        let monitor = ClockMonitor::start(nvml, 0, Duration::from_millis(1)).unwrap();
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_millis(30));
        let meta = monitor.sample_meta(t0, Instant::now(), 2000.0);
        assert_eq!(meta.cycles, Some(2000.0), "{meta:?}");
        // A window with no reading inside has no cycles, though it has a nearest reading.
        let now = Instant::now();
        let meta = monitor.sample_meta(now, now, 2000.0);
        assert_eq!(meta.cycles, None, "{meta:?}");
        assert_eq!(meta.sm_clock_mhz, Some(1000));
    }
}
