//! Deterministic synthetic histories for tests, examples and the report budget: many
//! benchmark measures over many runs, with steps, noise and throttled samples. Not for real
//! data: the values only look plausible.

use std::collections::BTreeMap;

use pitwall_analysis::compare::{CompareOptions, Side, compare};
use pitwall_schema::{
    BenchmarkResult, CommitInfo, Direction, Fingerprint, GpuInfo, ResultStatus, Run, RunStatus,
    SampleMeta, Unit,
};
use pitwall_stats::AbConfig;

use crate::compare::ComparisonReport;

/// Small xorshift generator: the same seed gives the same numbers everywhere.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A 40-hex pseudo commit sha for run `i`.
fn sha(i: usize) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut s = String::with_capacity(40);
    while s.len() < 40 {
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        s.push_str(&format!("{h:016x}"));
    }
    s.truncate(40);
    s
}

fn fingerprint(gpu: &str) -> Fingerprint {
    Fingerprint {
        hostname: "bench-01".into(),
        os: "linux".into(),
        arch: "x86_64".into(),
        kernel: "6.1.0".into(),
        cpu_model: "Synthetic CPU @ 3.0GHz".into(),
        logical_cpus: 32,
        memory_bytes: 256 << 30,
        cpu_governor: Some("performance".into()),
        gpus: vec![GpuInfo {
            model: gpu.into(),
            uuid: None,
            driver: Some("580.00".into()),
            extra: BTreeMap::new(),
        }],
        pitwall_version: "0.1.0 release".into(),
        env: BTreeMap::from([("CUDA_VISIBLE_DEVICES".into(), "0".into())]),
        extra: BTreeMap::new(),
    }
}

/// `runs` runs (oldest first) of `benchmarks` measures with `samples` samples each.
///
/// Measure `i` belongs to suite `kernel` (time, ns, lower is better) or `collective` (busbw,
/// GB/s, higher is better), is a sweep over `size` in powers of two, and every fifth one steps
/// by 10% (worse) two thirds of the way through. Runs 7, 44, 81… have a throttled first sample;
/// the GPU model changes for the last tenth of the runs.
pub fn runs(benchmarks: usize, runs: usize, samples: usize) -> Vec<Run> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let step_at = runs * 2 / 3;
    (0..runs)
        .map(|r| {
            let results = (0..benchmarks)
                .map(|i| {
                    let kernel = (i / 8) % 2 == 0;
                    let base = 100.0 * (1 + i % 8) as f64;
                    let step = if i % 5 == 0 && r >= step_at { 1.1 } else { 1.0 };
                    let level = if kernel { base * step } else { base / step };
                    let mut meta = Vec::new();
                    let values: Vec<f64> = (0..samples)
                        .map(|s| {
                            let throttled = r % 37 == 7 && s == 0;
                            if !meta.is_empty() || throttled {
                                meta.resize(samples, SampleMeta::default());
                                meta[s].throttled = throttled;
                            }
                            let noise = 1.0 + 0.02 * (rng.next_f64() - 0.5);
                            let slow = if throttled { 1.3 } else { 1.0 };
                            if kernel {
                                level * noise * slow
                            } else {
                                level * noise / slow
                            }
                        })
                        .collect();
                    if !meta.is_empty() {
                        meta.resize(samples, SampleMeta::default());
                    }
                    BenchmarkResult {
                        suite: if kernel { "kernel" } else { "collective" }.into(),
                        name: format!("{}{}", if kernel { "gemm" } else { "allreduce" }, i / 16),
                        params: BTreeMap::from([("size".into(), (64u64 << (i % 8)).to_string())]),
                        measure: if kernel { "time" } else { "busbw" }.into(),
                        unit: Unit::new(if kernel {
                            Unit::NANOSECONDS
                        } else {
                            Unit::GB_PER_S
                        }),
                        direction: if kernel {
                            Direction::LowerIsBetter
                        } else {
                            Direction::HigherIsBetter
                        },
                        status: ResultStatus::Ok,
                        error: None,
                        samples: values,
                        sample_meta: meta,
                        replicates: Vec::new(),
                        summary: None,
                    }
                })
                .collect();
            let (day, hour) = (r / 24, r % 24);
            Run {
                contention: None,
                id: format!("run-{r:06}"),
                project: "demo".into(),
                commit: sha(r),
                branch: Some("main".into()),
                // One named testbed whose GPU is swapped late: an environment change inside one
                // history, not a second testbed.
                testbed: Some("demo-node".into()),
                role: None,
                started_at: format!("2026-01-{:02}T{hour:02}:00:00Z", 1 + day % 28),
                finished_at: format!("2026-01-{:02}T{hour:02}:30:00Z", 1 + day % 28),
                config_hash: sha(runs + 1),
                fingerprint: fingerprint(if r >= runs - runs / 10 {
                    "H200"
                } else {
                    "H100"
                }),
                status: RunStatus::Complete,
                commit_info: Some(CommitInfo {
                    author: "Dev <dev@example.invalid>".into(),
                    date: "2026-01-01T00:00:00Z".into(),
                    subject: format!("change number {r}"),
                    first_parent_position: Some(r as u64 + 1),
                }),
                error: None,
                pair: None,
                exclusion: None,
                results,
            }
        })
        .collect()
}

/// Compares two runs as `pitwall compare --baseline RUN --candidate RUN --allow-env-mismatch`
/// would with the default settings, through the one comparison of `pitwall_analysis::compare`;
/// labels name the runs so that the site finds the samples. The environment difference is the
/// synthetic runs' GPU model change (the host's full fingerprint rules are not available here).
pub fn comparison(base: &Run, cand: &Run) -> ComparisonReport {
    let side = |r: &Run| Side {
        label: format!("run {}", r.id),
        run: Some(r.clone()),
        results: r.results.clone(),
    };
    let ab = AbConfig::default();
    let env_mismatch = if base.fingerprint.gpus == cand.fingerprint.gpus {
        Vec::new()
    } else {
        let model = |r: &Run| r.fingerprint.gpus.first().map(|g| g.model.clone());
        vec![format!(
            "gpu model: {} vs {}",
            model(base).unwrap_or_default(),
            model(cand).unwrap_or_default()
        )]
    };
    compare(
        &side(base),
        &side(cand),
        &|_| pitwall_analysis::ThresholdRule::Fixed(ab.threshold * 100.0),
        env_mismatch,
        &ab,
        CompareOptions {
            allow_env_mismatch: true,
            exclude_throttled: false,
        },
        &pitwall_analysis::NoiseBook::empty(),
    )
}
