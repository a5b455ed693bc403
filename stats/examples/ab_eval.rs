//! Evaluation of the A/B verdict on synthetic Google-Benchmark-style comparisons, so verdict
//! rules are calibrated on many seeded pull requests rather than on one example.
//!
//! Each trial is one pull request with 40 benchmarks. Per benchmark: 5–20 repetitions (the same
//! on both sides, as with `--benchmark_repetitions`), a base time log-uniform in 1 µs–10 ms,
//! multiplicative log-normal noise with σ uniform in 1–3%, and one-sided slow outliers: each
//! sample independently, with probability 5%, is multiplied by 1 + U(0.10, 0.60). Exactly 13 of
//! the 40 benchmarks (a third) get a true shift of U(3%, 10%) with a random sign; a fifth of
//! the benchmarks report a throughput (1/time, higher is better) instead of a time.
//!
//! Reports pitwall's false-positive rate (regression or improvement on an unshifted benchmark)
//! and detection rate (the right direction on a shifted one), per data seed and pooled, and
//! writes the data set with pitwall's verdicts to JSON so `stats/eval/ab_reference.py` can
//! score the reference method (MWU + BH at 0.05 + 2% floor) on identical data:
//!
//! ```text
//! cargo run --release -p pitwall-stats --example ab_eval -- [--trials N] [--seeds a,b,c] [--out FILE]
//! /tmp/pw-scipy-venv/bin/python stats/eval/ab_reference.py FILE
//! ```

use std::fmt::Write as _;

use pitwall_stats::ab::Xoshiro256;
use pitwall_stats::{AbConfig, PairInput, Verdict, compare_all};

const BENCHMARKS: usize = 40;
const SHIFTED: usize = 13;

struct Bench {
    base: Vec<f64>,
    cand: Vec<f64>,
    higher_is_better: bool,
    /// True multiplicative change of the time: 0 for unshifted, ±0.03–0.10 otherwise.
    shift: f64,
}

fn normal(rng: &mut Xoshiro256) -> f64 {
    let u1 = rng.next_f64().max(1e-300);
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn uniform(rng: &mut Xoshiro256, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.next_f64()
}

fn samples(rng: &mut Xoshiro256, n: usize, scale: f64, sigma: f64, hib: bool) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let mut t = scale * (sigma * normal(rng)).exp();
            if rng.next_f64() < 0.05 {
                t *= 1.0 + uniform(rng, 0.10, 0.60);
            }
            if hib { 1e9 / t } else { t }
        })
        .collect()
}

fn trial(rng: &mut Xoshiro256) -> Vec<Bench> {
    // Choose which 13 benchmarks are shifted (partial Fisher–Yates).
    let mut idx: Vec<usize> = (0..BENCHMARKS).collect();
    for i in 0..SHIFTED {
        let j = i + rng.below(BENCHMARKS - i);
        idx.swap(i, j);
    }
    let mut shifted = [false; BENCHMARKS];
    for &i in &idx[..SHIFTED] {
        shifted[i] = true;
    }
    (0..BENCHMARKS)
        .map(|i| {
            let n = 5 + rng.below(16);
            let scale = 10f64.powf(uniform(rng, 3.0, 7.0));
            let sigma = uniform(rng, 0.01, 0.03);
            let hib = rng.next_f64() < 0.2;
            let shift = if shifted[i] {
                let s = uniform(rng, 0.03, 0.10);
                if rng.next_f64() < 0.5 { s } else { -s }
            } else {
                0.0
            };
            Bench {
                base: samples(rng, n, scale, sigma, hib),
                cand: samples(rng, n, scale * (1.0 + shift), sigma, hib),
                higher_is_better: hib,
                shift,
            }
        })
        .collect()
}

#[derive(Default, Clone, Copy)]
struct Tally {
    nulls: usize,
    false_pos: usize,
    unchanged_null: usize,
    shifted: usize,
    detected: usize,
    wrong_dir: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.nulls += o.nulls;
        self.false_pos += o.false_pos;
        self.unchanged_null += o.unchanged_null;
        self.shifted += o.shifted;
        self.detected += o.detected;
        self.wrong_dir += o.wrong_dir;
    }

    fn line(&self, label: &str) -> String {
        format!(
            "{label:<14} FPR {:.4} ({}/{})  detection {:.4} ({}/{})  wrong-direction {}  unchanged-on-null {:.3}",
            self.false_pos as f64 / self.nulls as f64,
            self.false_pos,
            self.nulls,
            self.detected as f64 / self.shifted as f64,
            self.detected,
            self.shifted,
            self.wrong_dir,
            self.unchanged_null as f64 / self.nulls as f64,
        )
    }
}

fn main() {
    let mut trials = 500usize;
    let mut seeds: Vec<u64> = vec![1, 2, 3];
    let mut out = String::from("target/ab_eval.json");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--trials" => trials = v.parse().expect("--trials N"),
            "--seeds" => {
                seeds = v
                    .split(',')
                    .map(|s| s.parse().expect("--seeds a,b"))
                    .collect()
            }
            "--out" => out = v,
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    let config = AbConfig::default();
    let mut pooled = Tally::default();
    let mut json = String::from("{\"benchmarks_per_trial\":40,\"trials\":[");
    let mut first_trial = true;
    let started = std::time::Instant::now();
    for &seed in &seeds {
        let mut rng = Xoshiro256::seed_from(seed);
        let mut tally = Tally::default();
        for _ in 0..trials {
            let benches = trial(&mut rng);
            let pairs: Vec<PairInput<'_>> = benches
                .iter()
                .map(|b| PairInput {
                    base: &b.base,
                    cand: &b.cand,
                    higher_is_better: b.higher_is_better,
                    threshold: None,
                })
                .collect();
            let results = compare_all(&pairs, &config);
            if !first_trial {
                json.push(',');
            }
            first_trial = false;
            write!(json, "{{\"seed\":{seed},\"benchmarks\":[").unwrap();
            for (k, (b, c)) in benches.iter().zip(&results).enumerate() {
                let called = matches!(c.verdict, Verdict::Regression | Verdict::Improvement);
                if b.shift == 0.0 {
                    tally.nulls += 1;
                    tally.false_pos += usize::from(called);
                    tally.unchanged_null += usize::from(c.verdict == Verdict::Unchanged);
                } else {
                    tally.shifted += 1;
                    // A slower time is a regression whether it is reported as time or throughput.
                    let right = if b.shift > 0.0 {
                        Verdict::Regression
                    } else {
                        Verdict::Improvement
                    };
                    tally.detected += usize::from(c.verdict == right);
                    tally.wrong_dir += usize::from(called && c.verdict != right);
                }
                if k > 0 {
                    json.push(',');
                }
                write!(
                    json,
                    "{{\"base\":{},\"cand\":{},\"higher_is_better\":{},\"shift\":{},\"pitwall\":\"{}\"}}",
                    serde_json::to_string(&b.base).unwrap(),
                    serde_json::to_string(&b.cand).unwrap(),
                    b.higher_is_better,
                    b.shift,
                    c.verdict.as_str()
                )
                .unwrap();
            }
            json.push_str("]}");
        }
        println!("{}", tally.line(&format!("seed {seed}")));
        pooled.add(&tally);
    }
    json.push_str("]}\n");
    println!("{}", pooled.line("pooled"));
    println!(
        "{} trials x 40 benchmarks in {:.1}s; data and verdicts written to {out}",
        trials * seeds.len(),
        started.elapsed().as_secs_f64()
    );
    std::fs::write(&out, json).expect("write data set");
}
