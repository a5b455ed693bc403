//! How a CUDA benchmark times itself: CUDA events on its stream around the measured work only,
//! a cold L2 before every timed iteration unless warm-cache is asked for (the flush is enqueued
//! before the start event, so it is never timed), and the stream synchronised before any event
//! is read. The engine sees nanoseconds, as from the CPU backend's wall clock.

use cudarc::driver::CudaEvent;
use cudarc::driver::sys::CUevent_flags;

use crate::device::{CudaError, Device};

/// Whether each timed iteration starts with a flushed L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// L2 overwritten (2× its size) before every iteration: what a kernel meets in a model,
    /// where other layers ran in between. The default.
    Cold,
    /// Iterations back to back: the data may stay in L2 from the previous one.
    Warm,
}

/// Event pairs in flight before the timer synchronises and sums them (cold mode).
const PAIRS: usize = 64;

/// Times iterations of a benchmark's work with events, reusing its events between samples.
pub struct EventTimer {
    pairs: Vec<(CudaEvent, CudaEvent)>,
    /// Iterations started so far, over every call: the rotation over buffer sets continues
    /// from sample to sample instead of restarting at set 0.
    next: u64,
}

impl EventTimer {
    pub fn new() -> EventTimer {
        EventTimer {
            pairs: Vec::new(),
            next: 0,
        }
    }

    /// Makes sure event pairs `0..n` exist.
    fn reserve(&mut self, dev: &Device, n: usize) -> Result<(), CudaError> {
        while self.pairs.len() < n {
            let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
            self.pairs
                .push((dev.ctx.new_event(flags)?, dev.ctx.new_event(flags)?));
        }
        Ok(())
    }

    /// Runs `op` `iters` times and returns the device time of the `op`s in nanoseconds. `op`
    /// gets the running iteration number (to pick a buffer set) and must only enqueue work on
    /// `dev.stream`.
    pub fn time(
        &mut self,
        dev: &Device,
        cache: Cache,
        iters: u64,
        mut op: impl FnMut(u64) -> Result<(), CudaError>,
    ) -> Result<f64, CudaError> {
        let mut total_ms = 0.0f64;
        match cache {
            Cache::Warm => {
                self.reserve(dev, 1)?;
                self.pairs[0].0.record(&dev.stream)?;
                for _ in 0..iters {
                    op(self.next)?;
                    self.next += 1;
                }
                self.pairs[0].1.record(&dev.stream)?;
                dev.stream.synchronize()?;
                total_ms += f64::from(self.pairs[0].0.elapsed_ms(&self.pairs[0].1)?);
            }
            Cache::Cold => {
                let mut left = iters;
                while left > 0 {
                    let batch = left.min(PAIRS as u64) as usize;
                    self.reserve(dev, batch)?;
                    for i in 0..batch {
                        dev.flush_l2()?;
                        self.pairs[i].0.record(&dev.stream)?;
                        op(self.next)?;
                        self.next += 1;
                        self.pairs[i].1.record(&dev.stream)?;
                    }
                    dev.stream.synchronize()?;
                    for (start, end) in &self.pairs[..batch] {
                        total_ms += f64::from(start.elapsed_ms(end)?);
                    }
                    left -= batch as u64;
                }
            }
        }
        Ok(total_ms * 1e6)
    }
}

impl Default for EventTimer {
    fn default() -> Self {
        EventTimer::new()
    }
}
