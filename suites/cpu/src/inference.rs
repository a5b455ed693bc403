//! The CPU `inference` suite: a small MLP forward pass sampled one pass at a time, so latency
//! percentiles (p50 to p99.9) of a real model-shaped workload exist without a GPU.

use std::hint::black_box;
use std::time::Instant;

use super::kernel::{Lcg, sgemm};
use crate::checks;
use pitwall_schema::backend::SuiteOptions;
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::schema::Unit;

/// Widths of the MLP: input, two hidden layers, output.
pub const MLP_WIDTHS: [usize; 4] = [256, 512, 512, 128];

/// Batch sizes measured.
pub const MLP_BATCHES: [usize; 3] = [1, 8, 64];

/// Seed of the weights and inputs, fixed so every run measures the same model.
const MLP_SEED: u64 = 0x5EED_0313;

pub fn suite(_options: &SuiteOptions) -> Vec<Box<dyn Benchmark>> {
    MLP_BATCHES
        .iter()
        .map(|&batch| Box::new(MlpBench::new(batch)) as Box<dyn Benchmark>)
        .collect()
}

/// One dense layer: y = x·W + bias, W stored row-major as inputs × outputs.
struct Dense {
    inputs: usize,
    outputs: usize,
    weights: Vec<f32>,
    bias: Vec<f32>,
}

impl Dense {
    fn new(inputs: usize, outputs: usize, rng: &mut Lcg) -> Dense {
        // Uniform weights scaled by 1/√inputs keep activations of order one through the layers.
        let scale = (inputs as f32).sqrt().recip();
        Dense {
            inputs,
            outputs,
            weights: (0..inputs * outputs)
                .map(|_| rng.next_f32() * scale)
                .collect(),
            bias: (0..outputs).map(|_| rng.next_f32() * 0.1).collect(),
        }
    }
}

/// An MLP with ReLU between layers and its activation buffers for one batch size.
struct Mlp {
    batch: usize,
    layers: Vec<Dense>,
    input: Vec<f32>,
    activations: Vec<Vec<f32>>,
}

impl Mlp {
    fn new(widths: &[usize], batch: usize, seed: u64) -> Mlp {
        let mut rng = Lcg::new(seed);
        let layers: Vec<Dense> = widths
            .windows(2)
            .map(|w| Dense::new(w[0], w[1], &mut rng))
            .collect();
        let input = (0..batch * widths[0]).map(|_| rng.next_f32()).collect();
        let activations = layers
            .iter()
            .map(|l| vec![0.0; batch * l.outputs])
            .collect();
        Mlp {
            batch,
            layers,
            input,
            activations,
        }
    }

    /// Runs one forward pass and returns the output, batch × last width, row-major.
    fn forward(&mut self) -> &[f32] {
        let last = self.layers.len() - 1;
        for (i, layer) in self.layers.iter().enumerate() {
            let (done, rest) = self.activations.split_at_mut(i);
            let x: &[f32] = if i == 0 { &self.input } else { &done[i - 1] };
            let y = &mut rest[0];
            for row in y.chunks_exact_mut(layer.outputs) {
                row.copy_from_slice(&layer.bias);
            }
            sgemm(
                self.batch,
                layer.inputs,
                layer.outputs,
                x,
                &layer.weights,
                1.0,
                y,
            );
            if i < last {
                for v in y.iter_mut() {
                    *v = v.max(0.0);
                }
            }
        }
        &self.activations[last]
    }
}

/// Forward pass of the MLP in [`MLP_WIDTHS`] on `batch` inputs.
pub struct MlpBench {
    batch: usize,
    model: Option<Mlp>,
}

impl MlpBench {
    pub fn new(batch: usize) -> MlpBench {
        MlpBench { batch, model: None }
    }

    fn model(&mut self) -> &mut Mlp {
        let batch = self.batch;
        self.model
            .get_or_insert_with(|| Mlp::new(&MLP_WIDTHS, batch, MLP_SEED))
    }
}

impl Benchmark for MlpBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new("mlp_forward", &[("batch", self.batch.to_string())])
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::PerIteration
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        vec![
            MetricSpec::time("latency"),
            MetricSpec::rate("throughput", Unit::ITEMS_PER_S, self.batch as f64, 1.0),
        ]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        if self.model.is_none() {
            let mut model = Mlp::new(&MLP_WIDTHS, self.batch, MLP_SEED);
            // One untimed pass, checked against the f64 reference, before anything is timed.
            let got = model.forward().to_vec();
            let layers: Vec<checks::LayerRef<'_>> = model
                .layers
                .iter()
                .map(|l| checks::LayerRef {
                    inputs: l.inputs,
                    outputs: l.outputs,
                    weights: &l.weights,
                    bias: &l.bias,
                })
                .collect();
            checks::mlp(
                &layers,
                &model.input,
                self.batch,
                &got,
                &self.id().display(),
            )?;
            self.model = Some(model);
        }
        let model = self.model();
        let start = Instant::now();
        for _ in 0..iters {
            black_box(model.forward());
        }
        Ok(start.elapsed().as_nanos() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::schema::Direction;

    /// The same forward pass with plain loops in f64.
    fn naive_forward(mlp: &Mlp) -> Vec<f64> {
        let mut x: Vec<f64> = mlp.input.iter().map(|&v| f64::from(v)).collect();
        for (i, l) in mlp.layers.iter().enumerate() {
            let mut y = vec![0.0; mlp.batch * l.outputs];
            for b in 0..mlp.batch {
                for o in 0..l.outputs {
                    let mut acc = f64::from(l.bias[o]);
                    for k in 0..l.inputs {
                        acc += x[b * l.inputs + k] * f64::from(l.weights[k * l.outputs + o]);
                    }
                    y[b * l.outputs + o] = if i + 1 < mlp.layers.len() {
                        acc.max(0.0)
                    } else {
                        acc
                    };
                }
            }
            x = y;
        }
        x
    }

    #[test]
    fn forward_matches_naive_loops() {
        let mut mlp = Mlp::new(&[9, 16, 11, 5], 3, 7);
        let want = naive_forward(&mlp);
        let got = mlp.forward().to_vec();
        assert_eq!(got.len(), 3 * 5);
        for (g, w) in got.iter().zip(&want) {
            assert!((f64::from(*g) - w).abs() < 1e-5, "{g} vs {w}");
        }
        assert!(want.iter().any(|&v| v != 0.0));
    }

    #[test]
    fn output_shape_and_determinism() {
        let mut a = Mlp::new(&MLP_WIDTHS, 8, MLP_SEED);
        let mut b = Mlp::new(&MLP_WIDTHS, 8, MLP_SEED);
        let out_a = a.forward().to_vec();
        assert_eq!(out_a.len(), 8 * 128);
        assert!(out_a.iter().all(|v| v.is_finite()));
        assert_eq!(out_a, b.forward());
        // A second pass over the same input gives the same output.
        assert_eq!(out_a, a.forward());
        let mut c = Mlp::new(&MLP_WIDTHS, 8, MLP_SEED + 1);
        assert_ne!(out_a, c.forward());
    }

    #[test]
    fn bench_reports_latency_then_items_per_second() {
        let mut bench = MlpBench::new(8);
        assert_eq!(bench.sampling(), SamplingHint::PerIteration);
        assert_eq!(bench.id().display(), "mlp_forward[batch=8]");
        let m = bench.metrics();
        assert_eq!(m[0].measure, "latency");
        assert_eq!(m[0].unit, Unit::new("ns"));
        assert_eq!(m[0].direction, Direction::LowerIsBetter);
        assert_eq!(m[1].measure, "throughput");
        assert_eq!(m[1].unit, Unit::new("items/s"));
        assert_eq!(m[1].direction, Direction::HigherIsBetter);
        // 8 items in 1 ms is 8000 items/s.
        assert!((m[1].conversion.apply(1e6) - 8000.0).abs() < 1e-9);
        assert!(bench.run(1).unwrap() > 0.0);
        assert_eq!(suite(&SuiteOptions::default()).len(), 3);
    }
}
