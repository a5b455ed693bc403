//! Placeholder: the CPU collective suite (being written).

use crate::backend::SuiteOptions;
use crate::benchmark::Benchmark;

pub fn suite(_options: &SuiteOptions) -> Vec<Box<dyn Benchmark>> {
    Vec::new()
}
