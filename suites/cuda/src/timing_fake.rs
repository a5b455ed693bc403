//! The recording fake of the timing seam (tests only): a [`Stream`] without a GPU that keeps
//! the ordered list of device operations a timing loop enqueued, and answers every event pair
//! with the same elapsed time, so tests check what a timed region contains.

use crate::error::CudaError;
use crate::timing::{DeviceOp, Stream};

/// A stream that records instead of running.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub ops: Vec<DeviceOp>,
    /// What `elapsed_ms` answers for every pair.
    pub pair_ms: f64,
    /// Pairs reserved so far; recording an unreserved pair is a bug in the loop.
    pub pairs: usize,
    /// How many of the next blocking kernels give up before their release.
    pub timeouts: u32,
    pub warnings: Vec<String>,
}

impl Recording {
    pub fn new(pair_ms: f64) -> Recording {
        Recording {
            pair_ms,
            ..Recording::default()
        }
    }

    /// The operations between the start and end events of `pair`'s last recording.
    pub fn timed(&self, pair: usize) -> Vec<DeviceOp> {
        let end = self
            .ops
            .iter()
            .rposition(|&o| o == DeviceOp::End(pair))
            .expect("end event recorded");
        let start = self.ops[..end]
            .iter()
            .rposition(|&o| o == DeviceOp::Start(pair))
            .expect("start event recorded");
        self.ops[start + 1..end].to_vec()
    }

    fn check(&self, pair: usize) -> Result<(), CudaError> {
        if pair < self.pairs {
            Ok(())
        } else {
            Err(CudaError::Setup(format!("event pair {pair} not reserved")))
        }
    }
}

impl Stream for Recording {
    fn flush(&mut self) -> Result<(), CudaError> {
        self.ops.push(DeviceOp::Flush);
        Ok(())
    }

    fn reserve(&mut self, pairs: usize) -> Result<(), CudaError> {
        self.pairs = self.pairs.max(pairs);
        Ok(())
    }

    fn record_start(&mut self, pair: usize) -> Result<(), CudaError> {
        self.check(pair)?;
        self.ops.push(DeviceOp::Start(pair));
        Ok(())
    }

    fn record_end(&mut self, pair: usize) -> Result<(), CudaError> {
        self.check(pair)?;
        self.ops.push(DeviceOp::End(pair));
        Ok(())
    }

    fn launch(&mut self, iter: u64) -> Result<(), CudaError> {
        self.ops.push(DeviceOp::Launch(iter));
        Ok(())
    }

    fn graph_launch(&mut self) -> Result<(), CudaError> {
        self.ops.push(DeviceOp::GraphLaunch);
        Ok(())
    }

    fn synchronize(&mut self) -> Result<(), CudaError> {
        self.ops.push(DeviceOp::Synchronize);
        Ok(())
    }

    fn elapsed_ms(&mut self, pair: usize) -> Result<f64, CudaError> {
        self.check(pair)?;
        Ok(self.pair_ms)
    }

    fn block(&mut self) -> Result<(), CudaError> {
        self.ops.push(DeviceOp::Block);
        Ok(())
    }

    fn release(&mut self) -> Result<(), CudaError> {
        self.ops.push(DeviceOp::Release);
        Ok(())
    }

    fn block_timed_out(&mut self) -> Result<bool, CudaError> {
        let gave_up = self.timeouts > 0;
        self.timeouts = self.timeouts.saturating_sub(1);
        Ok(gave_up)
    }

    fn warn(&mut self, message: &str) {
        self.warnings.push(message.to_string());
    }
}
