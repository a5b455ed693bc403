//! The plan of the CUDA `inference` suite, as data that needs no GPU: which benchmarks it holds
//! (an MLP and a transformer block, bf16, batch 1/8/64, sequence 128/512, eager and CUDA-graph
//! launches), their device buffers and footprint (capped by `max_bytes`), and each forward
//! pass as an ordered list of stages (RMS norm, a cuBLAS GEMM with its NVRTC epilogue, causal
//! attention) that the device code enqueues, captures into a graph and checks stage by stage.

use crate::graph::Mode;
use crate::infer_ref::{DTYPE, MODEL, ModelShape};
use crate::timing::{Start, Timing, Work};
use pitwall_schema::backend::SuiteOptions;
use pitwall_schema::benchmark::BenchmarkId;

/// Sequences per forward pass (the requests served together).
pub const BATCHES: [usize; 3] = [1, 8, 64];

/// Tokens per sequence: a whole prompt processed at once (prefill).
pub const SEQS: [usize; 2] = [128, 512];

/// The cuBLAS workspace each benchmark sets on its handle (NVIDIA's recommendation for
/// Hopper), so a CUDA-graph capture never needs cuBLAS to allocate; counted in the footprint.
pub const CUBLAS_WORKSPACE_BYTES: u64 = 32 << 20;

/// The model a benchmark runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Workload {
    /// The MLP sub-layer: out = x + W₂·gelu(W₁·rmsnorm(x) + b₁) + b₂.
    Mlp,
    /// A pre-norm transformer block: causal multi-head attention, then the MLP, each with
    /// its residual connection.
    Block,
}

impl Workload {
    pub const ALL: [Workload; 2] = [Workload::Mlp, Workload::Block];

    /// The benchmark's name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Mlp => "cuda_mlp_forward",
            Workload::Block => "cuda_transformer_block",
        }
    }

    /// The forward pass, in order.
    pub fn stages(self) -> Vec<Stage> {
        let mlp = [
            Stage::RmsNorm {
                x: Buf::X1,
                gamma: Buf::G2,
                y: Buf::H2,
            },
            Stage::Linear {
                a: Buf::H2,
                w: Buf::W1,
                y: Buf::U,
                epilogue: Epi::BiasGelu { bias: Buf::B1 },
            },
            Stage::Linear {
                a: Buf::U,
                w: Buf::W2,
                y: Buf::Out,
                epilogue: Epi::BiasResidual {
                    bias: Buf::B2,
                    residual: Buf::X1,
                },
            },
        ];
        match self {
            Workload::Mlp => mlp.to_vec(),
            Workload::Block => {
                let mut stages = vec![
                    Stage::RmsNorm {
                        x: Buf::X,
                        gamma: Buf::G1,
                        y: Buf::H1,
                    },
                    Stage::Linear {
                        a: Buf::H1,
                        w: Buf::Wqkv,
                        y: Buf::Qkv,
                        epilogue: Epi::None,
                    },
                    Stage::Attention {
                        qkv: Buf::Qkv,
                        out: Buf::Attn,
                    },
                    Stage::Linear {
                        a: Buf::Attn,
                        w: Buf::Wo,
                        y: Buf::X1,
                        epilogue: Epi::BiasResidual {
                            bias: Buf::Bo,
                            residual: Buf::X,
                        },
                    },
                ];
                stages.extend(mlp);
                stages
            }
        }
    }
}

/// A device buffer of the forward pass (all bf16, row-major).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Buf {
    X,
    G1,
    H1,
    Wqkv,
    Qkv,
    Attn,
    Wo,
    Bo,
    X1,
    G2,
    H2,
    W1,
    B1,
    U,
    W2,
    B2,
    Out,
}

impl Buf {
    pub const ALL: [Buf; 17] = [
        Buf::X,
        Buf::G1,
        Buf::H1,
        Buf::Wqkv,
        Buf::Qkv,
        Buf::Attn,
        Buf::Wo,
        Buf::Bo,
        Buf::X1,
        Buf::G2,
        Buf::H2,
        Buf::W1,
        Buf::B1,
        Buf::U,
        Buf::W2,
        Buf::B2,
        Buf::Out,
    ];

    /// (rows, cols) for `tokens` = batch·seq rows of activations.
    pub fn dims(self, m: ModelShape, tokens: usize) -> (usize, usize) {
        let d = m.d_model;
        match self {
            Buf::X | Buf::H1 | Buf::Attn | Buf::X1 | Buf::H2 | Buf::Out => (tokens, d),
            Buf::Qkv => (tokens, 3 * d),
            Buf::U => (tokens, m.ffn),
            Buf::Wqkv => (d, 3 * d),
            Buf::Wo => (d, d),
            Buf::W1 => (d, m.ffn),
            Buf::W2 => (m.ffn, d),
            Buf::G1 | Buf::G2 | Buf::Bo | Buf::B2 => (1, d),
            Buf::B1 => (1, m.ffn),
        }
    }
}

/// What runs on a GEMM's output, in place, as a second kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Epi {
    None,
    BiasGelu { bias: Buf },
    BiasResidual { bias: Buf, residual: Buf },
}

/// One stage of a forward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// `rmsnorm_bf16`, one block per row.
    RmsNorm { x: Buf, gamma: Buf, y: Buf },
    /// y = α·a·w by cuBLAS (bf16, f32 accumulation, α = 1/√k), then the epilogue kernel.
    Linear {
        a: Buf,
        w: Buf,
        y: Buf,
        epilogue: Epi,
    },
    /// `attention_causal_bf16`, one block per (query, head, sequence).
    Attention { qkv: Buf, out: Buf },
}

impl Stage {
    /// Its name in a failed check's message.
    pub fn name(self) -> &'static str {
        match self {
            Stage::RmsNorm { .. } => "rms norm",
            Stage::Linear {
                epilogue: Epi::None,
                ..
            } => "gemm",
            Stage::Linear {
                epilogue: Epi::BiasGelu { .. },
                ..
            } => "gemm + bias + gelu",
            Stage::Linear {
                epilogue: Epi::BiasResidual { .. },
                ..
            } => "gemm + bias + residual",
            Stage::Attention { .. } => "causal attention",
        }
    }

    /// The buffers it reads.
    pub fn inputs(self) -> Vec<Buf> {
        match self {
            Stage::RmsNorm { x, gamma, .. } => vec![x, gamma],
            Stage::Linear { a, w, epilogue, .. } => match epilogue {
                Epi::None => vec![a, w],
                Epi::BiasGelu { bias } => vec![a, w, bias],
                Epi::BiasResidual { bias, residual } => vec![a, w, bias, residual],
            },
            Stage::Attention { qkv, .. } => vec![qkv],
        }
    }

    /// The buffer it writes.
    pub fn output(self) -> Buf {
        match self {
            Stage::RmsNorm { y, .. } | Stage::Linear { y, .. } => y,
            Stage::Attention { out, .. } => out,
        }
    }

    /// Kernel and library launches it enqueues.
    pub fn launches(self) -> usize {
        match self {
            Stage::Linear {
                epilogue: Epi::None,
                ..
            } => 1,
            Stage::Linear { .. } => 2,
            _ => 1,
        }
    }
}

/// One benchmark of the suite, before a device is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InferPlanned {
    pub workload: Workload,
    pub batch: usize,
    pub seq: usize,
    pub mode: Mode,
}

impl InferPlanned {
    pub fn tokens(self) -> usize {
        self.batch * self.seq
    }

    /// The buffers its stages touch, in `Buf` order.
    pub fn buffers(self) -> Vec<Buf> {
        let stages = self.workload.stages();
        Buf::ALL
            .into_iter()
            .filter(|b| {
                stages
                    .iter()
                    .any(|s| s.output() == *b || s.inputs().contains(b))
            })
            .collect()
    }

    /// The buffers no stage writes: the input and the weights, filled with random values.
    pub fn inputs(self) -> Vec<Buf> {
        let stages = self.workload.stages();
        self.buffers()
            .into_iter()
            .filter(|b| stages.iter().all(|s| s.output() != *b))
            .collect()
    }

    /// Device memory: every buffer once (a pass reads its input and weights and overwrites
    /// its activations, so one set serves every iteration) and the cuBLAS workspace.
    pub fn footprint_bytes(self) -> u64 {
        let elements: usize = self
            .buffers()
            .into_iter()
            .map(|b| {
                let (r, c) = b.dims(MODEL, self.tokens());
                r * c
            })
            .sum();
        elements as u64 * DTYPE.size_bytes() + CUBLAS_WORKSPACE_BYTES
    }

    /// What one timed region holds: one forward pass, launched eagerly or as one replay, on
    /// an idle stream (synchronised after the flush), so the latency includes the host's
    /// launch cost, as a serving path pays it.
    pub fn timing(self) -> Timing {
        let work = match self.mode {
            Mode::Eager => Work::Eager { per_unit: 1 },
            Mode::Graph => Work::Graph { per_graph: 1 },
        };
        Timing {
            work,
            start: Start::Idle,
        }
    }

    pub fn id(self) -> BenchmarkId {
        BenchmarkId::new(
            self.workload.name(),
            &[
                ("dtype", DTYPE.as_str().to_string()),
                ("batch", self.batch.to_string()),
                ("seq", self.seq.to_string()),
                ("mode", self.mode.as_str().to_string()),
            ],
        )
    }
}

/// The `inference` suite: both models at every batch and sequence length, eager and graph,
/// each only when its footprint is within `max_bytes`.
pub fn plan(options: &SuiteOptions) -> Vec<InferPlanned> {
    let mut out = Vec::new();
    for workload in Workload::ALL {
        for batch in BATCHES {
            for seq in SEQS {
                for mode in Mode::ALL {
                    out.push(InferPlanned {
                        workload,
                        batch,
                        seq,
                        mode,
                    });
                }
            }
        }
    }
    out.retain(|p| {
        options
            .max_bytes
            .is_none_or(|cap| p.footprint_bytes() <= cap)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_full_plan_has_both_models_every_size_and_both_modes() {
        let all = plan(&SuiteOptions::default());
        assert_eq!(all.len(), 2 * 3 * 2 * 2);
        let p = InferPlanned {
            workload: Workload::Block,
            batch: 8,
            seq: 512,
            mode: Mode::Graph,
        };
        assert!(all.contains(&p));
        assert_eq!(
            p.id().display(),
            "cuda_transformer_block[batch=8,dtype=bf16,mode=graph,seq=512]"
        );
        assert_eq!(p.tokens(), 4096);
    }

    #[test]
    fn every_stage_reads_what_an_earlier_stage_or_the_input_provides() {
        for workload in Workload::ALL {
            let p = InferPlanned {
                workload,
                batch: 1,
                seq: 128,
                mode: Mode::Eager,
            };
            let mut ready = p.inputs();
            let mut written = Vec::new();
            for s in workload.stages() {
                for b in s.inputs() {
                    assert!(ready.contains(&b), "{workload:?}: {} reads {b:?}", s.name());
                }
                assert!(
                    !written.contains(&s.output()),
                    "{:?} written twice",
                    s.output()
                );
                written.push(s.output());
                ready.push(s.output());
            }
            assert_eq!(written.last(), Some(&Buf::Out));
        }
        let block = InferPlanned {
            workload: Workload::Block,
            batch: 1,
            seq: 128,
            mode: Mode::Eager,
        };
        let weights = [
            Buf::X,
            Buf::G1,
            Buf::Wqkv,
            Buf::Wo,
            Buf::Bo,
            Buf::G2,
            Buf::W1,
            Buf::B1,
            Buf::W2,
            Buf::B2,
        ];
        assert_eq!(block.inputs(), weights);
        assert_eq!(block.buffers().len(), Buf::ALL.len());
        let launches = |w: Workload| w.stages().iter().map(|s| s.launches()).sum::<usize>();
        assert_eq!(launches(Workload::Block), 10);
        assert_eq!(launches(Workload::Mlp), 5);
    }

    #[test]
    fn stage_shapes_agree() {
        let t = 3 * 128;
        let dims = |b: Buf| b.dims(MODEL, t);
        for s in Workload::Block.stages() {
            match s {
                Stage::RmsNorm { x, gamma, y } => {
                    assert_eq!(dims(x), dims(y));
                    assert_eq!(dims(gamma), (1, dims(x).1));
                }
                Stage::Linear { a, w, y, epilogue } => {
                    assert_eq!(dims(a).1, dims(w).0, "{a:?}·{w:?}");
                    assert_eq!(dims(y), (dims(a).0, dims(w).1));
                    match epilogue {
                        Epi::None => {}
                        Epi::BiasGelu { bias } => assert_eq!(dims(bias), (1, dims(y).1)),
                        Epi::BiasResidual { bias, residual } => {
                            assert_eq!(dims(bias), (1, dims(y).1));
                            assert_eq!(dims(residual), dims(y));
                        }
                    }
                }
                Stage::Attention { qkv, out } => {
                    assert_eq!(dims(qkv), (t, 3 * dims(out).1));
                    assert_eq!(dims(out).1, MODEL.heads * MODEL.head_dim);
                }
            }
        }
    }

    #[test]
    fn footprints_count_every_buffer_once_and_max_bytes_caps_them() {
        let mlp = InferPlanned {
            workload: Workload::Mlp,
            batch: 1,
            seq: 128,
            mode: Mode::Eager,
        };
        let (t, d, f) = (128u64, 1024u64, 4096u64);
        let elements = 3 * t * d + t * f + d + d * f + f + f * d + d;
        assert_eq!(mlp.footprint_bytes(), 2 * elements + CUBLAS_WORKSPACE_BYTES);
        let biggest = InferPlanned {
            workload: Workload::Block,
            batch: 64,
            seq: 512,
            mode: Mode::Graph,
        };
        // 32768 tokens × (6·1024 + 3·1024 + 4096) bf16 values, weights and workspace on top.
        assert!(biggest.footprint_bytes() > 800 * MIB);
        let capped = plan(&SuiteOptions {
            max_bytes: Some(64 * MIB),
            ..Default::default()
        });
        assert!(capped.contains(&mlp));
        assert!(!capped.contains(&biggest));
        assert!(capped.iter().all(|p| p.footprint_bytes() <= 64 * MIB));
        // Eager and graph of one shape fit or not together.
        assert_eq!(capped.len() % 2, 0);
    }
}
