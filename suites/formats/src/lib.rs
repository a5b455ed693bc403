//! Readers for benchmark output formats: what a `command` suite prints, or a file given to
//! `pitwall import`/`pitwall compare`, becomes results. One module per format; `registry`
//! names them, dispatches and auto-detects.

pub mod bmf;
mod checks;
pub mod criterion;
pub mod google_benchmark;
pub mod hyperfine;
mod json_util;
pub mod mlperf_loadgen;
pub mod nccl;
pub mod nvbench;
mod nvbench_samples;
mod parsed;
pub mod pitwall_json;
pub mod pytest_benchmark;
mod registry;
pub mod side_files;

pub use checks::{merge_duplicates, strip_bom};
pub use parsed::{FormatError, ParsedBenchmark, ParsedRun};
pub use pitwall_json::parse_pitwall_json;
pub use registry::{Input, InputFormat, detect, parse};
pub use side_files::{DirFiles, MemFiles, SideFiles};
