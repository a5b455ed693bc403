//! Cost of the statistics on realistic sizes: change-point detection over long histories
//! (10,000 and 100,000 points) and an A/B comparison of 1,000 benchmarks.
//!
//! Run: `cargo bench -p pitwall-pipeline --bench statistics`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pitwall_stats::ab::{AbConfig, PairInput, compare_all};
use pitwall_stats::changepoint::{DetectConfig, detect};

/// SplitMix64: a small deterministic generator, so every run measures the same data.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Roughly normal noise (sum of uniforms), mean 0, sd 1.
    fn noise(&mut self) -> f64 {
        (0..12).map(|_| self.next_f64()).sum::<f64>() - 6.0
    }
}

/// A benchmark-like history: 2% noise, a level shift every 2,000 points, rare slow spikes.
fn history(n: usize) -> Vec<f64> {
    let mut rng = Rng(7);
    (0..n)
        .map(|i| {
            let level = 100.0 * (1.0 + 0.05 * ((i / 2000) % 3) as f64);
            let spike = if rng.next_f64() < 0.01 { 1.4 } else { 1.0 };
            level * (1.0 + 0.02 * rng.noise()) * spike
        })
        .collect()
}

fn bench_detect(c: &mut Criterion) {
    let mut group = c.benchmark_group("detect");
    group.sample_size(10);
    for n in [10_000usize, 100_000] {
        let series = history(n);
        let config = DetectConfig::default();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &series, |b, s| {
            b.iter(|| detect(black_box(s), &config))
        });
    }
    group.finish();
}

fn bench_compare(c: &mut Criterion) {
    let mut rng = Rng(11);
    let sides: Vec<(Vec<f64>, Vec<f64>)> = (0..1000)
        .map(|i| {
            let shift = if i % 3 == 0 { 1.05 } else { 1.0 };
            let base = (0..20)
                .map(|_| 100.0 * (1.0 + 0.02 * rng.noise()))
                .collect();
            let cand = (0..20)
                .map(|_| 100.0 * shift * (1.0 + 0.02 * rng.noise()))
                .collect();
            (base, cand)
        })
        .collect();
    let pairs: Vec<PairInput<'_>> = sides
        .iter()
        .map(|(b, c)| PairInput {
            base: b,
            cand: c,
            higher_is_better: false,
            threshold: None,
        })
        .collect();
    let config = AbConfig::default();
    let mut group = c.benchmark_group("compare");
    group.sample_size(10);
    group.throughput(Throughput::Elements(pairs.len() as u64));
    group.bench_function("1000_benchmarks_20_samples", |b| {
        b.iter(|| compare_all(black_box(&pairs), &config))
    });
    group.finish();
}

criterion_group!(benches, bench_detect, bench_compare);
criterion_main!(benches);
