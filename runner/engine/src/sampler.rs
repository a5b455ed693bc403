//! Adaptive sampling of one in-process benchmark: warm up, size batches so a sample is long
//! enough to time precisely, then sample until the stopping rule says so. Every sample is kept.

use std::time::Instant;

use pitwall_schema::{BenchError, Benchmark, SampleMeta, SamplingHint};

use crate::meta::SampleMetaSource;

use crate::stop::{StopReason, StopRule};

/// Shortest sample a batched benchmark is sized to (timer resolution is tens of ns).
const TARGET_SAMPLE_NS: f64 = 2_000_000.0;
/// Largest batch, so a mis-estimate cannot run away.
const MAX_BATCH: u64 = 1 << 30;

/// The raw samples of one benchmark: nanoseconds per iteration, in the order taken.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleSet {
    pub ns_per_iter: Vec<f64>,
    /// Machine state per sample, parallel to `ns_per_iter`; empty without a source.
    pub meta: Vec<SampleMeta>,
    /// A benchmark run by several ranks: each sample's time per iteration on every rank
    /// (`Benchmark::rank_times_ns`), parallel to `ns_per_iter`; empty otherwise.
    pub rank_ns_per_iter: Vec<Vec<f64>>,
    pub iters_per_sample: u64,
    pub stop: StopReason,
}

/// Samples `bench` under `rule` after `warmup_s` seconds of warm-up.
pub fn sample_benchmark(
    bench: &mut dyn Benchmark,
    rule: &StopRule,
    warmup_s: f64,
    meta_source: Option<&dyn SampleMetaSource>,
) -> Result<SampleSet, BenchError> {
    let est_ns = warm_up(bench, warmup_s)?;
    let iters = match bench.sampling() {
        SamplingHint::PerIteration => 1,
        SamplingHint::Batched => {
            ((TARGET_SAMPLE_NS / est_ns.max(1.0)).ceil() as u64).clamp(1, MAX_BATCH)
        }
    };
    let start = Instant::now();
    let mut samples = Vec::new();
    let mut meta = Vec::new();
    let mut rank_ns_per_iter = Vec::new();
    let mut sorted: Vec<f64> = Vec::new();
    loop {
        let t0 = Instant::now();
        let ns = bench.run(iters)?;
        let v = ns / iters as f64;
        if let Some(source) = meta_source {
            meta.push(source.sample_meta(t0, Instant::now(), v));
        }
        if let Some(ranks) = bench.rank_times_ns() {
            rank_ns_per_iter.push(ranks.iter().map(|t| t / iters as f64).collect());
        }
        samples.push(v);
        let pos = sorted.partition_point(|x| *x <= v);
        sorted.insert(pos, v);
        if let Some(stop) = rule.decide(&sorted, start.elapsed().as_secs_f64()) {
            return Ok(SampleSet {
                ns_per_iter: samples,
                meta,
                rank_ns_per_iter,
                iters_per_sample: iters,
                stop,
            });
        }
    }
}

/// Runs growing batches for `warmup_s` (at least one iteration); returns ns per iteration
/// of the last batch.
fn warm_up(bench: &mut dyn Benchmark, warmup_s: f64) -> Result<f64, BenchError> {
    let start = Instant::now();
    let mut iters = 1u64;
    loop {
        let ns = bench.run(iters)?;
        let per_iter = ns / iters as f64;
        if start.elapsed().as_secs_f64() >= warmup_s {
            return Ok(per_iter);
        }
        if ns < TARGET_SAMPLE_NS && iters < MAX_BATCH {
            iters *= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::{BenchmarkId, MetricSpec};

    /// Returns scripted times; records the batch sizes it was asked for.
    struct Scripted {
        per_iter_ns: Box<dyn FnMut(u64) -> f64 + Send>,
        hint: SamplingHint,
        calls: Vec<u64>,
    }

    impl Benchmark for Scripted {
        fn id(&self) -> BenchmarkId {
            BenchmarkId::new("scripted", &[])
        }
        fn sampling(&self) -> SamplingHint {
            self.hint
        }
        fn metrics(&self) -> Vec<MetricSpec> {
            vec![MetricSpec::time("time")]
        }
        fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
            self.calls.push(iters);
            Ok((self.per_iter_ns)(self.calls.len() as u64) * iters as f64)
        }
    }

    fn rule(min: usize, max: usize) -> StopRule {
        StopRule {
            min_samples: min,
            max_samples: max,
            target_rel_ci: 0.01,
            max_time_s: 10.0,
            timeout_s: 60.0,
        }
    }

    #[test]
    fn steady_benchmark_converges_at_min_samples_with_batches() {
        let mut b = Scripted {
            per_iter_ns: Box::new(|_| 1000.0),
            hint: SamplingHint::Batched,
            calls: vec![],
        };
        let s = sample_benchmark(&mut b, &rule(10, 1000), 0.0, None).unwrap();
        assert_eq!(s.ns_per_iter.len(), 10);
        assert_eq!(s.stop, StopReason::Converged);
        assert_eq!(s.iters_per_sample, 2000, "2 ms / 1 µs");
        assert!(s.ns_per_iter.iter().all(|v| *v == 1000.0));
    }

    #[test]
    fn noisy_benchmark_runs_to_max_samples_and_keeps_every_sample() {
        let mut b = Scripted {
            per_iter_ns: Box::new(|i| if i % 2 == 0 { 1000.0 } else { 3000.0 }),
            hint: SamplingHint::PerIteration,
            calls: vec![],
        };
        let s = sample_benchmark(&mut b, &rule(10, 40), 0.0, None).unwrap();
        assert_eq!(s.stop, StopReason::MaxSamples);
        assert_eq!(s.ns_per_iter.len(), 40);
        assert_eq!(s.iters_per_sample, 1);
        assert!(b.calls.iter().skip(1).all(|i| *i == 1));
    }

    #[test]
    fn every_sample_gets_the_machine_state_of_its_interval() {
        struct Throttled(std::cell::Cell<u32>);
        impl SampleMetaSource for Throttled {
            fn meta_between(&self, start: Instant, end: Instant) -> SampleMeta {
                assert!(end >= start);
                let n = self.0.get();
                self.0.set(n + 1);
                SampleMeta {
                    sm_clock_mhz: Some(1980 - n),
                    throttled: n == 2,
                    ..Default::default()
                }
            }
        }
        let source = Throttled(std::cell::Cell::new(0));
        let mut b = Scripted {
            per_iter_ns: Box::new(|_| 1000.0),
            hint: SamplingHint::Batched,
            calls: vec![],
        };
        let s = sample_benchmark(&mut b, &rule(10, 1000), 0.0, Some(&source)).unwrap();
        assert_eq!(s.meta.len(), s.ns_per_iter.len());
        assert_eq!(s.meta[0].sm_clock_mhz, Some(1980));
        assert!(s.meta[2].throttled && !s.meta[3].throttled);
    }

    #[test]
    fn errors_propagate() {
        struct Failing;
        impl Benchmark for Failing {
            fn id(&self) -> BenchmarkId {
                BenchmarkId::new("f", &[])
            }
            fn sampling(&self) -> SamplingHint {
                SamplingHint::Batched
            }
            fn metrics(&self) -> Vec<MetricSpec> {
                vec![]
            }
            fn run(&mut self, _: u64) -> Result<f64, BenchError> {
                Err(BenchError::Validation("wrong sum".into()))
            }
        }
        let e = sample_benchmark(&mut Failing, &rule(10, 40), 0.0, None).unwrap_err();
        assert_eq!(e.to_string(), "result check failed: wrong sum");
    }
}
