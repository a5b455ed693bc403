//! What every reader produces and how it fails: the benchmarks and run read from one tool
//! output, and the error naming where the output went wrong. Readers and the registry depend on
//! this module, never on each other.

use std::collections::BTreeMap;

use pitwall_schema::schema::{BenchmarkResult, Direction, ResultStatus, SampleMeta, Unit};

/// A benchmark read from tool output, before it is given a suite name.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedBenchmark {
    pub name: String,
    pub params: BTreeMap<String, String>,
    pub measure: String,
    pub unit: Unit,
    pub direction: Direction,
    pub samples: Vec<f64>,
    pub sample_meta: Vec<SampleMeta>,
    /// Set when the tool itself reports this benchmark as failed.
    pub error: Option<String>,
    /// Set (to the tool's reason) when the tool skipped this benchmark on purpose.
    pub skipped: Option<String>,
}

impl ParsedBenchmark {
    /// Failed when the tool reported an error, else skipped when it skipped the benchmark, else
    /// ok. An error wins over a skip, so that a failure is never hidden as a skip (pitwall JSON
    /// rejects an entry with both).
    pub fn status(&self) -> ResultStatus {
        if self.error.is_some() {
            ResultStatus::Failed
        } else if self.skipped.is_some() {
            ResultStatus::Skipped
        } else {
            ResultStatus::Ok
        }
    }

    /// The reason stored with the result: the error, else the skip reason.
    pub fn reason(&self) -> Option<String> {
        self.error.clone().or_else(|| self.skipped.clone())
    }

    /// The result stored for this benchmark in `suite`.
    pub fn into_result(self, suite: &str) -> BenchmarkResult {
        BenchmarkResult {
            status: self.status(),
            error: self.reason(),
            suite: suite.to_string(),
            name: self.name,
            params: self.params,
            measure: self.measure,
            unit: self.unit,
            direction: self.direction,
            samples: self.samples,
            sample_meta: self.sample_meta,
            replicates: Vec::new(),
            summary: None,
        }
    }
}

/// Why output could not be read in a format. The caller adds the file or command at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{format}: {position}{message}")]
pub struct FormatError {
    pub format: &'static str,
    /// `line L, column C: ` or `benchmark N (name): `, possibly empty.
    pub position: String,
    pub message: String,
}

impl FormatError {
    /// An error of reader `format` at `position` (`line L, column C: `, `benchmark N (name): `
    /// or empty).
    pub fn new(
        format: &'static str,
        position: impl Into<String>,
        message: impl Into<String>,
    ) -> FormatError {
        FormatError {
            format,
            position: position.into(),
            message: message.into(),
        }
    }
}

/// What a reader produced from one tool output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedRun {
    pub benchmarks: Vec<ParsedBenchmark>,
    /// What the tool knew about the machine (Google Benchmark's context, nvbench's devices…);
    /// goes into the run's fingerprint under `extra.<format>`.
    pub context: BTreeMap<String, serde_json::Value>,
    /// What the format cannot tell (e.g. "summary values only: no raw samples").
    pub notes: Vec<String>,
    /// What the reader left out of this output or doubts in it (e.g. criterion results older
    /// than the execution that should have written them), one line each: shown to the user.
    pub warnings: Vec<String>,
}

impl ParsedRun {
    pub fn new(benchmarks: Vec<ParsedBenchmark>) -> ParsedRun {
        ParsedRun {
            benchmarks,
            ..ParsedRun::default()
        }
    }
}

/// Units whose samples are times, which must not be negative.
pub(crate) const TIME_UNITS: [&str; 4] = ["ns", "us", "ms", "s"];
