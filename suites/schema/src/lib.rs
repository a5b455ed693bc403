//! What every pitwall crate shares: the result schema and its export format, and the contracts
//! between a suite and the engine (benchmark, backend). Readers of other tools' formats and
//! the built-in CPU kernels live in their own crates, so readers of results never build them.

pub mod alerts;
pub mod backend;
pub mod benchmark;
pub mod check;
pub mod consistency;
pub mod contention;
pub mod datasheet;
pub mod export;
pub mod expr;
pub mod forge;
pub mod identical;
pub mod labels;
pub mod manifest;
pub mod plausible;
pub mod run;
pub mod schema;
pub mod secrets;
pub mod sections;
pub mod time;
pub mod upload;
pub mod work;

pub use alerts::{
    Alert, AlertChange, AlertKind, AlertLabel, AlertSeries, AlertStatus, AlertTransition,
    AlertUpdate, DETECTION,
};
pub use backend::{Backend, BackendError, SuiteKind};
pub use benchmark::{
    Annotated, BenchError, Benchmark, BenchmarkId, Ceiling, Conversion, MetricSpec, SamplingHint,
};
pub use contention::{Contention, ContentionLimits};
pub use export::{ExportDoc, SchemaError};
pub use identical::{IdenticalBasis, IdenticalCode};
pub use labels::{UNKNOWN_TESTBED, default_testbed, sanitize_testbed};
pub use plausible::{ComputeBound, MemoryBound, PLAUSIBLE_MARGIN, Plausibility};
pub use run::{
    CommitInfo, Exclusion, Fingerprint, GpuInfo, PairInfo, PairRole, RoundOrder, Run, RunRole,
    RunStatus, SequentialPlanRecord, WORKING_TREE,
};
pub use schema::{
    BenchmarkResult, Direction, ResultStatus, SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4,
    SCHEMA_V5, SCHEMA_V6, SCHEMA_V7, SCHEMA_V8, SampleMeta, SampleSummary, Unit,
};
pub use secrets::Redactor;
pub use sections::Section;
pub use time::UnixTime;
pub use upload::{API_VERSION, MAX_BATCH_RUNS, Upload, UploadAlertRules, UploadBatch};
