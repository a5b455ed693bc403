//! Per-sample machine state: the engine asks a source (the GPU clock monitor) what the device
//! did between the start and end of each sample, and stores it with the sample.

use std::time::Instant;

use pitwall_schema::SampleMeta;

/// Something that knows the machine's state over an interval.
pub trait SampleMetaSource {
    fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta;
}

impl SampleMetaSource for crate::gpu::ClockMonitor {
    fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta {
        crate::gpu::ClockMonitor::meta_between(self, start, end)
    }
}
