//! The CPU backend: real kernels, an MLP and a thread all-reduce, so every suite runs and is
//! tested on a machine without a GPU.

mod collective;
mod inference;
mod kernel;

use crate::backend::{Backend, BackendError, SuiteKind, SuiteOptions};
use crate::benchmark::Benchmark;

/// The CPU backend.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn benchmarks(
        &self,
        kind: SuiteKind,
        options: &SuiteOptions,
    ) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
        Ok(match kind {
            SuiteKind::Kernel => kernel::suite(options),
            SuiteKind::Inference => inference::suite(options),
            SuiteKind::Collective => collective::suite(options),
        })
    }
}
