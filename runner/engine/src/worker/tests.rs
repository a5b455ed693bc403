//! Tests of the worker protocol: the request rebuilds the suite exactly, events have a stable
//! JSON form, samples JSON cannot carry survive, the clock mapping is exact, and a worker
//! serves a request end to end in memory.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use pitwall_schema::backend::{CacheMode, SuiteOptions};
use pitwall_schema::{
    Backend, BackendError, BenchError, Benchmark, BenchmarkId, BenchmarkResult, MetricSpec,
    ResultStatus, SampleMeta, SamplingHint, SuiteKind,
};

use super::*;
use crate::config::{CommandSuite, OutputFormat, Sampling, SuiteConfig, SuiteSpec};
use crate::outcome::SuiteOutcome;
use crate::protocol::{
    ClockAnchor, Isolation, NonFinite, PROTOCOL, WorkerEvent, WorkerRequest, decode_non_finite,
    encode_non_finite, monotonic_ns,
};
use std::path::Path;

fn quick_sampling() -> Sampling {
    Sampling {
        warmup_s: 0.0,
        min_samples: 5,
        max_samples: 5,
        target_rel_ci: 0.01,
        max_time_s: 1.0,
        timeout_s: 10.0,
    }
}

fn builtin_suite() -> SuiteConfig {
    SuiteConfig {
        name: "coll".into(),
        spec: SuiteSpec::Builtin {
            kind: SuiteKind::Collective,
            options: SuiteOptions {
                ranks: Some(4),
                max_bytes: Some(4096),
                cache: CacheMode::Warm,
                gpu_pci_bus_id: None,
                ..Default::default()
            },
            ranks: Some(4),
            max_bytes: Some(4096),
            cache: Some(CacheMode::Warm),
            kernels: None,
        },
        sampling: quick_sampling(),
        threshold_pct: Some(3.5),
        threshold_auto: false,
    }
}

#[test]
fn a_cuda_kernels_manifest_travels_to_the_worker() {
    let config = crate::config::parse_str(
        crate::config::kernels_tests::EXAMPLE,
        "pitwall.toml",
        "example",
    )
    .unwrap();
    let suite = &config.suites[0];
    let request = WorkerRequest::new("cuda", suite, Path::new("/repo"), None, false).unwrap();
    let back: WorkerRequest =
        serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
    assert_eq!(back.kind, SuiteKind::CudaKernels);
    assert_eq!(&back.suite_config(), suite);
    let SuiteSpec::Builtin { options, .. } = back.suite_config().spec else {
        panic!("built-in");
    };
    assert_eq!(options.kernels.unwrap().kernels.len(), 2);
}

#[test]
fn the_request_rebuilds_the_suite_exactly() {
    let suite = builtin_suite();
    let request =
        WorkerRequest::new("cpu", &suite, Path::new("rel/dir"), Some("bytes=8"), true).unwrap();
    assert!(request.checkout.is_absolute(), "{:?}", request.checkout);
    assert!(request.checkout.ends_with("rel/dir"));
    let json = serde_json::to_string(&request).unwrap();
    let back: WorkerRequest = serde_json::from_str(&json).unwrap();
    assert_eq!(back, request);
    assert_eq!(back.suite_config(), suite);
    assert_eq!(back.filter.as_deref(), Some("bytes=8"));
    assert!(back.sample_windows);

    // The GPU of `[gpu] device` (its PCI bus id) reaches the worker's backend; a request
    // without one has no such key.
    let mut on_gpu = suite.clone();
    if let SuiteSpec::Builtin { options, .. } = &mut on_gpu.spec {
        options.gpu_pci_bus_id = Some("00000000:9A:00.0".into());
    }
    let request = WorkerRequest::new("cuda", &on_gpu, Path::new("/"), None, false).unwrap();
    let json_gpu = serde_json::to_string(&request).unwrap();
    assert!(json_gpu.contains("\"gpu_pci_bus_id\":\"00000000:9A:00.0\""));
    assert!(!json.contains("gpu_pci_bus_id"), "{json}");
    let back: WorkerRequest = serde_json::from_str(&json_gpu).unwrap();
    assert_eq!(back.suite_config(), on_gpu);

    let command = SuiteConfig {
        name: "cmd".into(),
        spec: SuiteSpec::Command(CommandSuite {
            command: "true".into(),
            format: OutputFormat::WallTime,
            workdir: None,
            env: BTreeMap::new(),
            env_pass: Vec::new(),
            token_vars: Vec::new(),
            runs: 1,
            output: None,
            artifacts: Vec::new(),
        }),
        sampling: quick_sampling(),
        threshold_pct: None,
        threshold_auto: false,
    };
    assert_eq!(
        WorkerRequest::new("cpu", &command, Path::new("/"), None, false),
        None
    );
}

#[test]
fn events_are_tagged_json_lines_and_round_trip() {
    let hello = WorkerEvent::Hello {
        protocol: PROTOCOL,
        pid: 7,
    };
    assert_eq!(
        serde_json::to_string(&hello).unwrap(),
        format!(r#"{{"event":"hello","protocol":{PROTOCOL},"pid":7}}"#)
    );
    assert_eq!(
        serde_json::to_string(&WorkerEvent::Sample {
            start_ns: 1,
            end_ns: 2,
            ns_per_iter: None,
        })
        .unwrap(),
        r#"{"event":"sample","start_ns":1,"end_ns":2}"#
    );
    assert_eq!(
        serde_json::to_string(&WorkerEvent::Sample {
            start_ns: 1,
            end_ns: 2,
            ns_per_iter: Some(1.5),
        })
        .unwrap(),
        r#"{"event":"sample","start_ns":1,"end_ns":2,"ns_per_iter":1.5}"#
    );
    let outcome = SuiteOutcome {
        results: vec![BenchmarkResult::failed(
            "s",
            "b",
            BTreeMap::new(),
            "boom".into(),
        )],
        skipped: Some("skipped: why".into()),
        context: BTreeMap::from([("k".to_string(), serde_json::json!({"a": 1}))]),
        notes: vec!["note".into()],
        unfinished: vec!["b[n=1]".into()],
    };
    for event in [
        hello,
        WorkerEvent::SuiteStarted { benchmarks: 3 },
        WorkerEvent::BenchmarkStarted {
            benchmark: "gemm[n=8]".into(),
        },
        WorkerEvent::BenchmarkFinished {
            benchmark: "gemm[n=8]".into(),
            error: Some("bad\nline".into()),
        },
        WorkerEvent::SuiteSkipped {
            reason: "no gpu".into(),
        },
        WorkerEvent::SuiteFinished,
        WorkerEvent::Outcome {
            outcome,
            non_finite: vec![],
        },
    ] {
        let line = serde_json::to_string(&event).unwrap();
        assert!(!line.contains('\n'), "{line}");
        assert_eq!(serde_json::from_str::<WorkerEvent>(&line).unwrap(), event);
    }
}

#[test]
fn samples_json_cannot_carry_survive_the_trip() {
    let mut r = BenchmarkResult::failed("s", "b", BTreeMap::new(), "x".into());
    r.samples = vec![1.5, f64::NAN, f64::INFINITY, 2.0, f64::NEG_INFINITY];
    let outcome = SuiteOutcome {
        results: vec![r],
        skipped: None,
        context: BTreeMap::new(),
        notes: Vec::new(),
        unfinished: Vec::new(),
    };
    let (encoded, non_finite) = encode_non_finite(outcome);
    assert_eq!(non_finite.len(), 3);
    let line = serde_json::to_string(&WorkerEvent::Outcome {
        outcome: encoded,
        non_finite,
    })
    .unwrap();
    let WorkerEvent::Outcome {
        mut outcome,
        non_finite,
    } = serde_json::from_str(&line).unwrap()
    else {
        panic!("not an outcome: {line}");
    };
    decode_non_finite(&mut outcome, &non_finite).unwrap();
    let s = &outcome.results[0].samples;
    assert_eq!(
        (s[0], s[2], s[3], s[4]),
        (1.5, f64::INFINITY, 2.0, f64::NEG_INFINITY)
    );
    assert!(s[1].is_nan());

    let bad = NonFinite {
        result: 0,
        sample: 9,
        value: "nan".into(),
    };
    assert!(decode_non_finite(&mut outcome, &[bad]).is_err());
}

#[test]
fn clock_mapping_is_exact_both_ways_and_around_the_anchor() {
    let base = Instant::now();
    let anchor = ClockAnchor {
        instant: base + Duration::from_secs(10),
        monotonic_ns: 50_000_000_000,
    };
    for offset_ms in [0u64, 1, 2_500, 9_999] {
        let later = anchor.instant + Duration::from_millis(offset_ms);
        let ns = anchor.to_monotonic_ns(later);
        assert_eq!(ns, 50_000_000_000 + offset_ms * 1_000_000);
        assert_eq!(anchor.to_instant(ns), later);
        let earlier = anchor.instant - Duration::from_millis(offset_ms);
        let ns = anchor.to_monotonic_ns(earlier);
        assert_eq!(ns, 50_000_000_000 - offset_ms * 1_000_000);
        assert_eq!(anchor.to_instant(ns), earlier);
    }
    // A worker's anchor and the parent's differ; a time on the shared clock maps to the same
    // moment in both.
    let worker = ClockAnchor {
        instant: base,
        monotonic_ns: 1_000,
    };
    let parent = ClockAnchor {
        instant: base + Duration::from_millis(3),
        monotonic_ns: 3_001_000,
    };
    let sample_start = base + Duration::from_millis(7);
    assert_eq!(
        parent.to_instant(worker.to_monotonic_ns(sample_start)),
        sample_start
    );
    // Before the clock's zero or past what an Instant holds: the anchor, never a panic.
    assert_eq!(worker.to_monotonic_ns(base - Duration::from_secs(1)), 0);
    let _ = worker.to_instant(u64::MAX);
}

#[test]
fn instant_and_clock_monotonic_are_the_same_clock() {
    let a = ClockAnchor::now();
    std::thread::sleep(Duration::from_millis(20));
    let b = ClockAnchor::now();
    assert!(b.monotonic_ns > a.monotonic_ns);
    let mapped = a.to_instant(b.monotonic_ns);
    let gap = if mapped > b.instant {
        mapped - b.instant
    } else {
        b.instant - mapped
    };
    assert!(gap < Duration::from_millis(5), "clocks drift by {gap:?}");
}

/// One benchmark of constant speed, or an unavailable backend.
struct Fake {
    available: bool,
}

struct Steady;

impl Benchmark for Steady {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new("steady", &[("n", "8".to_string())])
    }
    fn sampling(&self) -> SamplingHint {
        SamplingHint::PerIteration
    }
    fn metrics(&self) -> Vec<MetricSpec> {
        vec![MetricSpec::time("time")]
    }
    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        Ok(1000.0 * iters as f64)
    }
}

impl Backend for Fake {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn benchmarks(
        &self,
        _: SuiteKind,
        _: &SuiteOptions,
    ) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
        if self.available {
            Ok(vec![Box::new(Steady)])
        } else {
            Err(BackendError::Unavailable {
                backend: "fake",
                reason: "no device".into(),
            })
        }
    }
}

fn serve(request: &WorkerRequest, backend: &dyn Backend) -> Vec<WorkerEvent> {
    let input = serde_json::to_vec(request).unwrap();
    let mut out = Vec::new();
    serve_worker(&mut input.as_slice(), &mut out, &|_| Ok(backend)).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_worker_streams_progress_windows_and_the_outcome() {
    let mut suite = SuiteConfig::builtin(SuiteKind::Kernel);
    suite.sampling = quick_sampling();
    let request = WorkerRequest::new("cpu", &suite, Path::new("/"), None, true).unwrap();
    let before = monotonic_ns();
    let events = serve(&request, &Fake { available: true });
    let after = monotonic_ns();
    assert_eq!(
        events[..3],
        [
            WorkerEvent::Hello {
                protocol: PROTOCOL,
                pid: std::process::id()
            },
            WorkerEvent::SuiteStarted { benchmarks: 1 },
            WorkerEvent::BenchmarkStarted {
                benchmark: "steady[n=8]".into()
            },
        ]
    );
    let windows: Vec<(u64, u64)> = events
        .iter()
        .filter_map(|e| match e {
            WorkerEvent::Sample {
                start_ns, end_ns, ..
            } => Some((*start_ns, *end_ns)),
            _ => None,
        })
        .collect();
    assert_eq!(windows.len(), 5);
    assert!(
        windows
            .iter()
            .all(|(s, e)| before <= *s && s <= e && *e <= after),
        "{windows:?} not within {before}..{after}"
    );
    let n = events.len();
    assert_eq!(
        events[n - 3..n - 1],
        [
            WorkerEvent::BenchmarkFinished {
                benchmark: "steady[n=8]".into(),
                error: None
            },
            WorkerEvent::SuiteFinished,
        ]
    );
    let WorkerEvent::Outcome { outcome, .. } = &events[n - 1] else {
        panic!("last event is not the outcome: {:?}", events[n - 1]);
    };
    let r = &outcome.results[0];
    assert_eq!((r.status, r.samples.len()), (ResultStatus::Ok, 5));
    assert_eq!(r.sample_meta, vec![SampleMeta::default(); 5]);

    // Without a source in the parent: no windows, no machine state.
    let request = WorkerRequest::new("cpu", &suite, Path::new("/"), None, false).unwrap();
    let events = serve(&request, &Fake { available: true });
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, WorkerEvent::Sample { .. }))
    );
    let Some(WorkerEvent::Outcome { outcome, .. }) = events.last() else {
        panic!("no outcome");
    };
    assert!(outcome.results[0].sample_meta.is_empty());
}

#[test]
fn a_worker_reports_an_unavailable_backend_as_skipped() {
    let suite = SuiteConfig::builtin(SuiteKind::Kernel);
    let request = WorkerRequest::new("cpu", &suite, Path::new("/"), None, false).unwrap();
    let events = serve(&request, &Fake { available: false });
    assert!(
        matches!(&events[1], WorkerEvent::SuiteSkipped { reason } if reason.contains("no device"))
    );
    let Some(WorkerEvent::Outcome { outcome, .. }) = events.last() else {
        panic!("no outcome");
    };
    assert!(outcome.skipped.as_deref().unwrap().contains("no device"));
}

#[test]
fn a_bad_request_is_refused_with_a_hint() {
    let backend = Fake { available: true };
    let mut out = Vec::new();
    let e = serve_worker(&mut b"not json".as_slice(), &mut out, &|_| Ok(&backend)).unwrap_err();
    assert!(matches!(e, WorkerError::Request(_)));
    assert!(e.to_string().contains("hint:"), "{e}");
    let e = serve_worker(&mut br#"{"protocol": 999}"#.as_slice(), &mut out, &|_| {
        Ok(&backend)
    })
    .unwrap_err();
    assert!(matches!(e, WorkerError::Protocol { got: 999 }), "{e}");
    assert!(
        out.is_empty(),
        "nothing is written before the request is understood"
    );
}

/// A benchmark "run by three ranks": rank 2 always takes twice as long as the others.
struct Straggler;

impl Benchmark for Straggler {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new("allreduce_sum_f32", &[("ranks", "3".to_string())])
    }
    fn sampling(&self) -> SamplingHint {
        SamplingHint::PerIteration
    }
    fn metrics(&self) -> Vec<MetricSpec> {
        vec![MetricSpec::time("time")]
    }
    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        Ok(iters as f64 * 400.0)
    }
    fn rank_times_ns(&self) -> Option<Vec<f64>> {
        Some(vec![300.0, 300.0, 600.0])
    }
}

struct StragglerBackend;

impl Backend for StragglerBackend {
    fn name(&self) -> &'static str {
        "straggler"
    }
    fn benchmarks(
        &self,
        _: SuiteKind,
        _: &SuiteOptions,
    ) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
        Ok(vec![Box::new(Straggler)])
    }
}

#[test]
fn every_ranks_time_becomes_its_own_measure() {
    let outcome = run_suite(
        &builtin_suite(),
        &StragglerBackend,
        Path::new("."),
        Selection::default(),
        &super::super::NullObserver,
        None,
        &Isolation::InProcess,
    );
    let measures: Vec<&str> = outcome.results.iter().map(|r| r.measure.as_str()).collect();
    assert_eq!(measures, ["time", "time_rank0", "time_rank1", "time_rank2"]);
    let rank2 = &outcome.results[3];
    assert_eq!(rank2.samples.len(), outcome.results[0].samples.len());
    // One iteration per sample: the rank's time as it is; rank 2 is the straggler.
    assert!(
        rank2.samples.iter().all(|&s| s == 600.0),
        "{:?}",
        rank2.samples
    );
    assert!(outcome.results[1].samples.iter().all(|&s| s == 300.0));
    assert_eq!(rank2.unit.as_str(), "ns");
}

/// A skinny GEMM "faster than HBM": 16 MiB of weights in 2.84 µs (5.9 TB/s) on an H200,
/// read cold with 32 × 16 MiB per timed unit, far beyond the L2.
struct TooFast;

impl Benchmark for TooFast {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new("cuda_gemm_skinny", &[("n", "4096".to_string())])
    }
    fn sampling(&self) -> SamplingHint {
        SamplingHint::PerIteration
    }
    fn metrics(&self) -> Vec<MetricSpec> {
        vec![
            MetricSpec::time("time"),
            MetricSpec::rate("bandwidth", "GB/s", 16.0 * 1048576.0, 1e9),
        ]
    }
    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        Ok(iters as f64 * 16.0 * 1048576.0 / 5.9e12 * 1e9)
    }
    fn plausibility(&self) -> Option<pitwall_schema::Plausibility> {
        Some(pitwall_schema::Plausibility {
            card: "NVIDIA H200".into(),
            compute: None,
            memory: Some(pitwall_schema::MemoryBound {
                bytes_per_iter: 16.0 * 1048576.0,
                cache: CacheMode::Cold,
                read_per_unit_bytes: 512 << 20,
                footprint_bytes: 48 << 20,
                l2_bytes: 50 << 20,
                hbm_gb_per_s: Some(4800.0),
                copy: None,
            }),
        })
    }
}

struct TooFastBackend;

impl Backend for TooFastBackend {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn benchmarks(
        &self,
        _: SuiteKind,
        _: &SuiteOptions,
    ) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
        Ok(vec![Box::new(TooFast), Box::new(Steady)])
    }
}

#[test]
fn a_result_faster_than_the_hardware_is_implausible_with_its_samples() {
    let outcome = run_suite(
        &builtin_suite(),
        &TooFastBackend,
        Path::new("."),
        Selection::default(),
        &super::super::NullObserver,
        None,
        &Isolation::InProcess,
    );
    let why = "cuda_gemm_skinny[n=4096] 5.9 TB/s > H200 HBM peak 4.8 TB/s";
    let skinny: Vec<&BenchmarkResult> = outcome
        .results
        .iter()
        .filter(|r| r.name == "cuda_gemm_skinny")
        .collect();
    assert_eq!(skinny.len(), 2);
    for r in skinny {
        assert_eq!(r.status, ResultStatus::Implausible, "{}", r.measure);
        assert!(!r.samples.is_empty(), "samples kept");
        assert_eq!(r.error.as_deref(), Some(&*format!("implausible: {why}")));
    }
    let steady = outcome.results.iter().find(|r| r.name == "steady").unwrap();
    assert_eq!(steady.status, ResultStatus::Ok);
    assert!(
        outcome
            .notes
            .iter()
            .any(|n| n.ends_with(&format!("implausible: {why}"))),
        "{:?}",
        outcome.notes
    );
    assert_eq!(
        pitwall_schema::RunStatus::from_results(&outcome.results),
        pitwall_schema::RunStatus::Partial
    );
}
