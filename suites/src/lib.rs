//! What pitwall measures: the result schema, the benchmark and backend traits, the built-in
//! suites (CPU backend now, CUDA beside it later) and readers for benchmark output formats.

pub mod backend;
pub mod benchmark;
pub mod cpu;
pub mod export;
pub mod formats;
pub mod schema;

pub use backend::{Backend, BackendError, SuiteKind};
pub use benchmark::{BenchError, Benchmark, BenchmarkId, Conversion, MetricSpec, SamplingHint};
pub use schema::{
    BenchmarkResult, CommitInfo, Direction, ExportDoc, Fingerprint, GpuInfo, PairInfo, PairRole,
    ResultStatus, Run, RunStatus, SCHEMA_V1, SCHEMA_V2, SampleMeta, SchemaError,
    SequentialPlanInfo, Unit, WORKING_TREE,
};
