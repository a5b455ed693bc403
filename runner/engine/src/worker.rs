//! The worker's side of a built-in suite run in a fresh process per round (`pitwall
//! __worker`): read the request, run the suite here, stream progress, sample windows and the
//! outcome back; `protocol.rs` holds what crosses the pipe, `worker_parent.rs` spawns and
//! watches workers.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::time::Instant;

use pitwall_schema::backend::{BackendError, SuiteOptions};
use pitwall_schema::{Backend, SampleMeta, SuiteKind};

use crate::meta::SampleMetaSource;
use crate::observer::RunObserver;
use crate::outcome::Selection;
use crate::protocol::{
    ClockAnchor, Isolation, PROTOCOL, WorkerEvent, WorkerRequest, encode_non_finite,
};
use crate::suite::run_suite;

/// Why a worker could not serve its request. Printed on its stderr, which the parent quotes.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot read the worker request on stdin: {0}")]
    Read(std::io::Error),
    #[error(
        "invalid worker request: {0} (hint: `pitwall __worker` is started by pitwall itself, not by hand)"
    )]
    Request(serde_json::Error),
    #[error(
        "worker request speaks protocol {got}, this pitwall {PROTOCOL} (hint: the pitwall executable was replaced while it ran; run it again)"
    )]
    Protocol { got: u32 },
    #[error("cannot write to the parent pitwall: {0}")]
    Write(std::io::Error),
}

/// A backend that could not be built in the worker: every suite is skipped with why.
struct Absent(String);

impl Backend for Absent {
    fn name(&self) -> &'static str {
        "absent"
    }

    fn benchmarks(
        &self,
        _kind: SuiteKind,
        _options: &SuiteOptions,
    ) -> Result<Vec<Box<dyn pitwall_schema::Benchmark>>, BackendError> {
        Err(BackendError::Unavailable {
            backend: "worker",
            reason: self.0.clone(),
        })
    }
}

/// The worker: reads one request from `input`, runs the suite in this process with the backend
/// `backends` gives for the name the parent chose
/// and streams its progress, each sample's window (when asked) and the outcome to `output`.
/// Makes this worker process die with the pitwall that started it, even when that pitwall is
/// killed with SIGKILL and no handler of its own runs (Linux `PR_SET_PDEATHSIG`). Called first
/// thing by `pitwall __worker`; the parent starts workers from its main thread, whose exit is
/// what the kernel watches. Returns false when the parent is already gone.
pub fn die_with_parent() -> bool {
    let parent = std::os::unix::process::parent_id();
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and touches no memory.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    // The parent may have died before the call above: then this process was already adopted.
    std::os::unix::process::parent_id() == parent
}

pub fn serve_worker<'b>(
    input: &mut dyn Read,
    output: &mut dyn Write,
    backends: &dyn Fn(&str) -> Result<&'b dyn Backend, BackendError>,
) -> Result<(), WorkerError> {
    let mut text = String::new();
    input.read_to_string(&mut text).map_err(WorkerError::Read)?;
    #[derive(serde::Deserialize)]
    struct Version {
        protocol: u32,
    }
    let version: Version = serde_json::from_str(&text).map_err(WorkerError::Request)?;
    if version.protocol != PROTOCOL {
        return Err(WorkerError::Protocol {
            got: version.protocol,
        });
    }
    let request: WorkerRequest = serde_json::from_str(&text).map_err(WorkerError::Request)?;
    let emitter = Emitter {
        out: RefCell::new(output),
        error: RefCell::new(None),
        anchor: ClockAnchor::now(),
    };
    emitter.emit(&WorkerEvent::Hello {
        protocol: PROTOCOL,
        pid: std::process::id(),
    });
    let suite = request.suite_config();
    // A backend the parent could use but this process cannot (it went away in between) skips
    // the suite with the reason, as the parent would have.
    let absent;
    let backend = match backends(&request.backend) {
        Ok(b) => b,
        Err(e) => {
            absent = Absent(e.to_string());
            &absent as &dyn Backend
        }
    };
    let windows = request
        .sample_windows
        .then_some(&emitter as &dyn SampleMetaSource);
    let outcome = run_suite(
        &suite,
        backend,
        &request.checkout,
        Selection {
            filter: request.filter.as_deref(),
            only: request.only.as_ref(),
        },
        &emitter,
        windows,
        &Isolation::InProcess,
    );
    let (outcome, non_finite) = encode_non_finite(outcome);
    emitter.emit(&WorkerEvent::Outcome {
        outcome,
        non_finite,
    });
    match emitter.error.into_inner() {
        Some(e) => Err(WorkerError::Write(e)),
        None => Ok(()),
    }
}

/// Writes events as JSON lines; the first write error is kept and stops further writes.
struct Emitter<'a> {
    out: RefCell<&'a mut dyn Write>,
    error: RefCell<Option<std::io::Error>>,
    anchor: ClockAnchor,
}

impl Emitter<'_> {
    fn emit(&self, event: &WorkerEvent) {
        if self.error.borrow().is_some() {
            return;
        }
        let written = serde_json::to_vec(event)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                let mut out = self.out.borrow_mut();
                out.write_all(&line)?;
                out.flush()
            });
        if let Err(e) = written {
            *self.error.borrow_mut() = Some(e);
        }
    }
}

impl RunObserver for Emitter<'_> {
    fn suite_started(&self, _suite: &str, benchmarks: usize) {
        self.emit(&WorkerEvent::SuiteStarted { benchmarks });
    }
    fn benchmark_started(&self, _suite: &str, benchmark: &str) {
        self.emit(&WorkerEvent::BenchmarkStarted {
            benchmark: benchmark.to_string(),
        });
    }
    fn benchmark_finished(&self, _suite: &str, benchmark: &str, error: Option<&str>) {
        self.emit(&WorkerEvent::BenchmarkFinished {
            benchmark: benchmark.to_string(),
            error: error.map(str::to_string),
        });
    }
    fn suite_skipped(&self, _suite: &str, reason: &str) {
        self.emit(&WorkerEvent::SuiteSkipped {
            reason: reason.to_string(),
        });
    }
    fn suite_finished(&self, _suite: &str) {
        self.emit(&WorkerEvent::SuiteFinished);
    }
}

/// In the worker, the "machine state" of a sample is its window, sent to the parent, which
/// asks its own source; the placeholder returned here is replaced there.
impl SampleMetaSource for Emitter<'_> {
    fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta {
        self.emit(&WorkerEvent::Sample {
            start_ns: self.anchor.to_monotonic_ns(start),
            end_ns: self.anchor.to_monotonic_ns(end),
            ns_per_iter: None,
        });
        SampleMeta::default()
    }

    fn sample_meta(&self, start: Instant, end: Instant, ns_per_iter: f64) -> SampleMeta {
        self.emit(&WorkerEvent::Sample {
            start_ns: self.anchor.to_monotonic_ns(start),
            end_ns: self.anchor.to_monotonic_ns(end),
            ns_per_iter: Some(ns_per_iter),
        });
        SampleMeta::default()
    }
}

#[cfg(test)]
mod tests;
