//! Per-sample overhead of the measurement engine itself.
//!
//! `sample_benchmark` is driven with a benchmark whose `run` does no work and returns a fixed
//! or pseudo-random elapsed time, so what is timed is the engine's bookkeeping per sample:
//! the `Vec` push, the sorted insert (`partition_point` + `Vec::insert`, O(n) per sample) and
//! `StopRule::decide` (which computes the median's CI once `min_samples` is reached).
//!
//! Two shapes, each at N = 100, 1 000 and 10 000 samples (throughput = N elements, so
//! criterion reports time per sample):
//! - `constant`: every sample is 1000 ns and `min_samples = max_samples = N`; `decide` stops
//!   on `max_samples` and never reaches the CI computation. The sampler inserts at
//!   `partition_point(|x| *x <= v)`, so an equal value goes *after* its equals: every insert
//!   here is an append (this case once was the worst case, with the insert at index 0).
//! - `varying`: samples are pseudo-random in [1000, 1100) ns, `min_samples = 6` and a target
//!   no interval can meet, so every sample from the 6th on computes the CI, and inserts land
//!   at random positions (average memmove of n/2 elements).
//!
//! Both also include one `Instant::elapsed` per sample and the zero-length warm-up call.
//!
//! A second group times `median_ci_rel_half_width` alone on sorted vectors of the same sizes.
//!
//! Run: `cargo bench -p pitwall-engine --bench engine_overhead`

use std::hint::black_box;

use criterion::{BenchmarkId as CId, Criterion, Throughput, criterion_group, criterion_main};
use pitwall_engine::{StopReason, StopRule, sample_benchmark};
use pitwall_schema::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_stats::summary::median_ci_rel_half_width;

const SIZES: [usize; 3] = [100, 1_000, 10_000];

/// A benchmark that does nothing and reports a made-up elapsed time.
struct Null {
    /// xorshift64 state; 0 means "always report 1000 ns".
    state: u64,
}

impl Null {
    fn constant() -> Null {
        Null { state: 0 }
    }

    fn varying() -> Null {
        Null {
            state: 0x9E37_79B9_7F4A_7C15,
        }
    }
}

impl Benchmark for Null {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new("null", &[])
    }

    fn sampling(&self) -> SamplingHint {
        // One iteration per sample: the batch size does not matter to a benchmark that does
        // no work, and this skips the batch-size arithmetic.
        SamplingHint::PerIteration
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        vec![MetricSpec::time("time")]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        if self.state == 0 {
            return Ok(1000.0 * iters as f64);
        }
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        Ok((1000.0 + (x % 100) as f64) * iters as f64)
    }
}

fn rule(min_samples: usize, max_samples: usize) -> StopRule {
    StopRule {
        min_samples,
        max_samples,
        // Positive (as validation requires) but below any interval of distinct samples.
        target_rel_ci: f64::MIN_POSITIVE,
        max_time_s: 1e9,
        timeout_s: 1e9,
    }
}

fn engine(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine_per_sample");
    for n in SIZES {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(CId::new("constant", n), &n, |b, &n| {
            let r = rule(n, n);
            b.iter(|| {
                let s = sample_benchmark(&mut Null::constant(), &r, 0.0, None).unwrap();
                debug_assert_eq!(s.stop, StopReason::MaxSamples);
                black_box(s)
            });
        });
        g.bench_with_input(CId::new("varying", n), &n, |b, &n| {
            let r = rule(6, n);
            b.iter(|| {
                let s = sample_benchmark(&mut Null::varying(), &r, 0.0, None).unwrap();
                debug_assert_eq!(s.stop, StopReason::MaxSamples);
                black_box(s)
            });
        });
    }
    g.finish();
}

fn median_ci(c: &mut Criterion) {
    let mut g = c.benchmark_group("median_ci_rel_half_width");
    for n in SIZES {
        let mut b = Null::varying();
        let mut v: Vec<f64> = (0..n).map(|_| b.run(1).unwrap()).collect();
        v.sort_by(f64::total_cmp);
        g.bench_with_input(CId::from_parameter(n), &v, |bench, v| {
            bench.iter(|| median_ci_rel_half_width(black_box(v)));
        });
    }
    g.finish();
}

criterion_group!(benches, engine, median_ci);
criterion_main!(benches);
