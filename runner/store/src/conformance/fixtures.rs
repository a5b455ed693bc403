//! The runs the conformance checks store: plain ones, and one that uses every corner of the
//! schema (`rich_run`), also used by the backends' own tests.

use std::collections::BTreeMap;

use pitwall_schema::{
    BenchmarkResult, Direction, Fingerprint, GpuInfo, ResultStatus, Run, RunStatus, SampleMeta,
    Unit,
};

pub fn ok_result(name: &str, samples: Vec<f64>) -> BenchmarkResult {
    BenchmarkResult {
        suite: "kernel".into(),
        name: name.into(),
        params: BTreeMap::from([
            ("n".to_string(), "512".to_string()),
            ("dtype".to_string(), "f32".to_string()),
        ]),
        measure: "throughput".into(),
        unit: Unit::new(Unit::GFLOP_PER_S),
        direction: Direction::HigherIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples,
        sample_meta: Vec::new(),
        replicates: Vec::new(),
        summary: None,
    }
}

pub fn run(id: &str, started_at: &str, results: Vec<BenchmarkResult>) -> Run {
    Run {
        exclusion: None,
        contention: None,
        id: id.into(),
        project: "toy".into(),
        commit: "0123456789abcdef0123456789abcdef01234567".into(),
        branch: Some("main".into()),
        testbed: None,
        role: None,
        started_at: started_at.into(),
        finished_at: started_at.replace("T10", "T11"),
        config_hash: "c0ffee".into(),
        fingerprint: Fingerprint::default(),
        status: RunStatus::from_results(&results),
        commit_info: None,
        error: None,
        pair: None,
        results,
    }
}

/// The pair of [`rich_run`]: measured until decided, with alternating round orders.
fn rich_pair() -> pitwall_schema::PairInfo {
    pitwall_schema::PairInfo {
        id: "0190f0c0-0000-7000-8000-0000000000aa".into(),
        role: pitwall_schema::PairRole::Head,
        rounds: 3,
        round_starts: vec![0, 2, 4],
        sequential: Some(pitwall_schema::SequentialPlanRecord {
            first_look: 3,
            max_rounds: 15,
        }),
        round_orders: vec![
            pitwall_schema::RoundOrder::BaseHead,
            pitwall_schema::RoundOrder::HeadBase,
            pitwall_schema::RoundOrder::BaseHead,
        ],
        identical: vec![pitwall_schema::IdenticalCode {
            suite: "kernels".into(),
            kernel: Some("saxpy".into()),
            basis: pitwall_schema::IdenticalBasis::Cubin,
        }],
        measured_ms: Some(240_000),
        saved_ms_estimate: Some(660_000),
    }
}

/// A run using every corner of the schema.
pub fn rich_run() -> Run {
    let mut with_meta = ok_result(
        "gemm_f32",
        vec![
            0.1 + 0.2,
            -0.0,
            5e-324,
            f64::MAX,
            1e18,
            123_456_789.123_456_79,
        ],
    );
    with_meta.sample_meta = vec![
        SampleMeta {
            sm_clock_mhz: Some(1980),
            mem_clock_mhz: Some(2619),
            temperature_c: Some(61.5),
            power_w: Some(412.25),
            throttle_reasons: Some(0x4),
            throttled: true,
            cycles: Some(1980.125),
        },
        SampleMeta::default(),
        SampleMeta {
            sm_clock_mhz: Some(1755),
            ..SampleMeta::default()
        },
        SampleMeta::default(),
        SampleMeta::default(),
        SampleMeta {
            power_w: Some(0.1),
            ..SampleMeta::default()
        },
    ];
    let mut time = ok_result("copy", vec![12.0, 11.5, 13.25]);
    time.params.clear();
    time.measure = "time".into();
    time.unit = Unit::new(Unit::NANOSECONDS);
    time.direction = Direction::LowerIsBetter;
    time.replicates = vec![0, 1, 1];
    let failed = BenchmarkResult::failed(
        "toy",
        "broken",
        BTreeMap::from([("k".to_string(), "v w".to_string())]),
        "exit status 3\nstderr: ünïcode \"quoted\"".into(),
    );
    let mut r = run(
        "0190f0c0-0000-7000-8000-000000000001",
        "2026-12-02T10:00:00Z",
        vec![with_meta, time, failed],
    );
    r.commit_info = Some(pitwall_schema::CommitInfo {
        first_parent_position: None,
        author: "Ada <ada@example.com>".into(),
        date: "2026-12-01T09:30:00+01:00".into(),
        subject: "speed up \"gemm\" | tiles".into(),
    });
    r.error = Some("partial: build warning".into());
    r.testbed = Some("h200-box".into());
    r.role = Some(pitwall_schema::RunRole::PrHead);
    r.pair = Some(rich_pair());
    r.contention = Some(pitwall_schema::Contention::classified(
        37,
        Some(0.75),
        None,
        Some(12.5),
        Some(0.0),
        &pitwall_schema::ContentionLimits {
            runnable_threads: 0.5,
            steal_pct: 2.0,
            psi_some_pct: 10.0,
        },
    ));
    r.fingerprint = Fingerprint {
        hostname: "box".into(),
        os: "linux".into(),
        arch: "x86_64".into(),
        kernel: "6.8.0".into(),
        cpu_model: "epyc".into(),
        logical_cpus: 64,
        memory_bytes: 1 << 40,
        cpu_governor: Some("performance".into()),
        gpus: vec![GpuInfo {
            model: "H200".into(),
            uuid: Some("GPU-1".into()),
            driver: Some("570.1".into()),
            extra: BTreeMap::from([("ecc".to_string(), serde_json::json!(true))]),
        }],
        pitwall_version: "0.1.0 (debug)".into(),
        env: BTreeMap::from([("CUDA_VISIBLE_DEVICES".to_string(), "0".to_string())]),
        extra: BTreeMap::from([
            (
                "numa".to_string(),
                serde_json::json!({"nodes": 2, "ratio": 0.5}),
            ),
            ("tags".to_string(), serde_json::json!(["a", null, -7])),
        ]),
    };
    r
}
