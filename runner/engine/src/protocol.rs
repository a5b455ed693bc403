//! Built-in suites in a fresh process per round: samples taken in one process share its code
//! layout, heap placement and frequency state, so only separate processes are independent
//! replicates. This file holds the protocol between pitwall and its `pitwall __worker` child
//! (a JSON request on stdin, JSON lines on stdout) and the clock mapping that lets the parent
//! attach its GPU monitor's state to the worker's samples; `worker.rs` is the worker's side,
//! `worker_parent.rs` spawns and watches workers.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pitwall_schema::SuiteKind;
use pitwall_schema::backend::{CacheMode, SuiteOptions};
use serde::{Deserialize, Serialize};

use crate::config::{Sampling, SuiteConfig, SuiteSpec};
use crate::outcome::SuiteOutcome;

/// Version of the request and event protocol. Parent and worker are the same executable, so
/// a mismatch means the executable was replaced while pitwall ran.
pub const PROTOCOL: u32 = 2;

/// The hidden subcommand a worker is started with (`<exe> __worker`).
pub const WORKER_SUBCOMMAND: &str = "__worker";

/// Where the benchmarks of a built-in suite run. Command suites always run in their own
/// processes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Isolation {
    /// In the calling process: every round of a run shares it (library callers, unit tests).
    #[default]
    InProcess,
    /// Each `run_suite` of a built-in suite in a fresh `<exe> __worker` process, so each
    /// round is a replicate. The worker builds the backend of the name the parent's has
    /// (`Backend::name`), so only its name crosses the process boundary.
    Worker { exe: PathBuf },
}

impl Isolation {
    /// How the fingerprint records it (`extra.isolation`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Isolation::InProcess => "in_process",
            Isolation::Worker { .. } => "worker",
        }
    }
}

/// The backend options of a built-in suite, as the request carries them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WireOptions {
    pub ranks: Option<usize>,
    pub max_bytes: Option<u64>,
    pub cache: CacheMode,
    /// The PCI bus id of `[gpu] device`, for the CUDA backend (docs/SUITES.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_pci_bus_id: Option<String>,
    /// The MIG instance of `[gpu] device`, which the CUDA backend picks by UUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_uuid: Option<String>,
}

/// What a worker needs to rebuild and run one built-in suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WorkerRequest {
    pub protocol: u32,
    /// The backend the parent chose (`Backend::name`: `cpu`, `cuda`); the worker builds the same.
    pub backend: String,
    pub suite: String,
    pub kind: SuiteKind,
    pub options: WireOptions,
    /// The configured keys, as `SuiteSpec::Builtin` keeps them.
    pub ranks: Option<u32>,
    pub max_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheMode>,
    /// A `cuda-kernels` suite's manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<pitwall_schema::manifest::KernelManifest>,
    pub sampling: Sampling,
    pub threshold_pct: Option<f64>,
    pub filter: Option<String>,
    /// Display names a round of `--until-decided` still measures (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<std::collections::BTreeSet<String>>,
    pub checkout: PathBuf,
    /// Report each sample's window (the parent has a machine-state source to ask).
    pub sample_windows: bool,
}

impl WorkerRequest {
    /// The request for `suite` (`None` for a command suite, which needs no worker).
    pub fn new(
        backend: &str,
        suite: &SuiteConfig,
        checkout: &Path,
        filter: Option<&str>,
        sample_windows: bool,
    ) -> Option<WorkerRequest> {
        let SuiteSpec::Builtin {
            kind,
            options,
            ranks,
            max_bytes,
            cache,
            kernels,
        } = &suite.spec
        else {
            return None;
        };
        Some(WorkerRequest {
            protocol: PROTOCOL,
            backend: backend.to_string(),
            suite: suite.name.clone(),
            kind: *kind,
            options: WireOptions {
                ranks: options.ranks,
                max_bytes: options.max_bytes,
                cache: options.cache,
                gpu_pci_bus_id: options.gpu_pci_bus_id.clone(),
                gpu_uuid: options.gpu_uuid.clone(),
            },
            ranks: *ranks,
            max_bytes: *max_bytes,
            cache: *cache,
            kernels: kernels.clone(),
            sampling: suite.sampling,
            threshold_pct: suite.threshold_pct,
            filter: filter.map(str::to_string),
            only: None,
            checkout: std::path::absolute(checkout).unwrap_or_else(|_| checkout.to_path_buf()),
            sample_windows,
        })
    }

    /// The suite as the parent configured it.
    pub fn suite_config(&self) -> SuiteConfig {
        SuiteConfig {
            name: self.suite.clone(),
            spec: SuiteSpec::Builtin {
                kind: self.kind,
                options: SuiteOptions {
                    ranks: self.options.ranks,
                    max_bytes: self.options.max_bytes,
                    cache: self.options.cache,
                    gpu_pci_bus_id: self.options.gpu_pci_bus_id.clone(),
                    gpu_uuid: self.options.gpu_uuid.clone(),
                    kernels: self.kernels.clone(),
                    checkout: None,
                },
                ranks: self.ranks,
                max_bytes: self.max_bytes,
                cache: self.cache,
                kernels: self.kernels.clone(),
            },
            sampling: self.sampling,
            threshold_pct: self.threshold_pct,
            // Thresholds are the parent's business (comparisons); a worker only measures.
            threshold_auto: false,
        }
    }
}

/// One line a worker writes on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum WorkerEvent {
    /// First line: the protocol spoken and the worker's process id.
    Hello {
        protocol: u32,
        pid: u32,
    },
    SuiteStarted {
        benchmarks: usize,
    },
    BenchmarkStarted {
        benchmark: String,
    },
    /// One sample's window on CLOCK_MONOTONIC, in nanoseconds.
    Sample {
        start_ns: u64,
        end_ns: u64,
        /// The sample's time per iteration, for its cycles (absent from older workers).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ns_per_iter: Option<f64>,
    },
    BenchmarkFinished {
        benchmark: String,
        error: Option<String>,
    },
    SuiteSkipped {
        reason: String,
    },
    SuiteFinished,
    /// Last line: what the suite produced (without the per-sample machine state, which the
    /// parent fills in from the windows).
    Outcome {
        outcome: SuiteOutcome,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        non_finite: Vec<NonFinite>,
    },
}

/// A sample JSON cannot carry (NaN, ±infinity): sent as 0 and restored from this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct NonFinite {
    pub result: usize,
    pub sample: usize,
    /// `nan`, `inf` or `-inf`.
    pub value: String,
}

/// `outcome` with its non-finite samples replaced by 0, and where they were.
pub(crate) fn encode_non_finite(mut outcome: SuiteOutcome) -> (SuiteOutcome, Vec<NonFinite>) {
    let mut found = Vec::new();
    for (result, r) in outcome.results.iter_mut().enumerate() {
        for (sample, v) in r.samples.iter_mut().enumerate() {
            if !v.is_finite() {
                let value = if v.is_nan() {
                    "nan"
                } else if *v > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                found.push(NonFinite {
                    result,
                    sample,
                    value: value.to_string(),
                });
                *v = 0.0;
            }
        }
    }
    (outcome, found)
}

/// Puts the samples [`encode_non_finite`] took out back; `Err` names a bad entry.
pub(crate) fn decode_non_finite(
    outcome: &mut SuiteOutcome,
    non_finite: &[NonFinite],
) -> Result<(), String> {
    for n in non_finite {
        let value = match n.value.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => return Err(format!("unknown non-finite sample value `{other}`")),
        };
        let slot = outcome
            .results
            .get_mut(n.result)
            .and_then(|r| r.samples.get_mut(n.sample))
            .ok_or_else(|| {
                format!(
                    "non-finite sample {} of result {} does not exist",
                    n.sample, n.result
                )
            })?;
        *slot = value;
    }
    Ok(())
}

/// Now on CLOCK_MONOTONIC, in nanoseconds: one clock for every process on a Linux host.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `ts`, a valid and exclusively borrowed
    // local; CLOCK_MONOTONIC always exists on Linux, so it cannot fail.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// One moment read on both clocks, so a process can turn its `Instant`s into CLOCK_MONOTONIC
/// nanoseconds (the worker) and back (the parent).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClockAnchor {
    pub instant: Instant,
    pub monotonic_ns: u64,
}

impl ClockAnchor {
    pub fn now() -> ClockAnchor {
        ClockAnchor {
            instant: Instant::now(),
            monotonic_ns: monotonic_ns(),
        }
    }

    /// `at` in CLOCK_MONOTONIC nanoseconds.
    pub fn to_monotonic_ns(self, at: Instant) -> u64 {
        if at >= self.instant {
            self.monotonic_ns
                .saturating_add(duration_ns(at - self.instant))
        } else {
            self.monotonic_ns
                .saturating_sub(duration_ns(self.instant - at))
        }
    }

    /// The `Instant` of `ns` on CLOCK_MONOTONIC (the anchor's own when out of range).
    pub fn to_instant(self, ns: u64) -> Instant {
        if ns >= self.monotonic_ns {
            self.instant
                .checked_add(Duration::from_nanos(ns - self.monotonic_ns))
        } else {
            self.instant
                .checked_sub(Duration::from_nanos(self.monotonic_ns - ns))
        }
        .unwrap_or(self.instant)
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
