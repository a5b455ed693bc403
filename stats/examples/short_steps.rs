//! Power on short histories (issue 27, "clear steps with five runs either side"): how often
//! `pitwall_stats::changepoint::detect` finds a clean level step of k × the run-to-run noise
//! with n runs on either side, and how many false alarms it raises on short no-change series.
//!
//! `cargo run --release -p pitwall-stats --example short_steps [--trials N] [--seed S]
//!     [--set key=value ...]`
//! Defaults: seed 27, 2,000 trials per cell (a few seconds). The run-to-run noise σ is the
//! standard deviation of the per-run values within a segment (Gaussian, multiplicative, cv
//! 3%); the step is k·σ upwards or downwards (alternating). A step counts as found when a
//! change point lies within 1 point of its first point. False alarms: every change point
//! reported on Gaussian and Student-t(3) no-change series of 10–60 points, per 1000 points.
//! `--set short_history=0` fits trend and autocorrelation on every series (the behaviour
//! before). `--record DOF` gives every series a noise record on DOF degrees of freedom (the
//! true noise's variance times χ²(DOF)/DOF, drawn per series), as the testbed's record
//! supplies it (`DetectConfig::known_noise`). `--spike S` adds one outlier of +S·σ at a random
//! point of every series (a slow run the contention rule did not catch).
//! Figures are recorded in docs/STATISTICS.md, "Short histories".

use pitwall_stats::changepoint::{DetectConfig, KnownNoise, detect};

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014).
struct Rng(u64);

impl Rng {
    fn unif(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = self.unif().max(1e-300);
        let v = self.unif();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
    /// Student-t with 3 degrees of freedom, scaled to unit variance.
    fn student_t3(&mut self) -> f64 {
        let chi2: f64 = (0..3).map(|_| self.normal().powi(2)).sum();
        self.normal() / (chi2 / 3.0).sqrt() / 3f64.sqrt()
    }
}

const LEVEL: f64 = 10.0;
const CV: f64 = 0.03;

fn apply_set(cfg: &mut DetectConfig, kv: &str) {
    let (k, v) = kv.split_once('=').expect("--set key=value");
    cfg.set(k, v).unwrap_or_else(|e| panic!("{e}"));
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut trials = 2000usize;
    let mut seed = 27u64;
    let mut cfg = DetectConfig::default();
    let mut record_dof: Option<f64> = None;
    let mut spike = 0.0f64;
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--trials" => trials = value().parse().expect("--trials N"),
            "--seed" => seed = value().parse().expect("--seed N"),
            "--set" => apply_set(&mut cfg, &value()),
            "--record" => record_dof = Some(value().parse().expect("--record DOF")),
            "--spike" => spike = value().parse().expect("--spike S"),
            other => panic!("unknown argument {other}"),
        }
    }
    let mut rng = Rng(seed);
    let sigma = LEVEL * CV;
    // The testbed's record: a variance estimate on `dof` degrees of freedom of the true
    // per-run noise (a scaled χ² draw per series, as a record made of A/A pairs has).
    let record = |rng: &mut Rng| {
        record_dof.map(|dof: f64| {
            let k = dof.round().max(1.0) as usize;
            let chi2: f64 = (0..k).map(|_| rng.normal().powi(2)).sum();
            KnownNoise {
                log_var: CV * CV * chi2 / k as f64,
                dof: k as f64,
            }
        })
    };
    println!("seed {seed}, {trials} trials per cell, noise cv {CV}");
    if let Some(dof) = record_dof {
        println!("with a noise record on {dof} degrees of freedom");
    }
    if spike != 0.0 {
        println!("with one outlier of +{spike}σ per series");
    }
    // One outlier of +spike·σ at a random point of `x`.
    let add_spike = |x: &mut Vec<f64>, rng: &mut Rng| {
        if spike != 0.0 {
            let at = ((rng.unif() * x.len() as f64) as usize).min(x.len() - 1);
            x[at] += spike * sigma;
        }
    };
    println!("found (within 1 point) of a k·σ step with n runs either side:");
    for n in [5usize, 6, 8, 10, 15] {
        let mut row = format!("  n = {n:>2}:");
        for k in [3.0, 4.0, 5.0, 6.0] {
            let mut found = 0;
            for t in 0..trials {
                let sign = if t % 2 == 0 { 1.0 } else { -1.0 };
                let mut x: Vec<f64> = (0..2 * n)
                    .map(|i| {
                        let level = if i < n {
                            LEVEL
                        } else {
                            LEVEL + sign * k * sigma
                        };
                        level + sigma * rng.normal()
                    })
                    .collect();
                add_spike(&mut x, &mut rng);
                cfg.known_noise = record(&mut rng);
                if detect(&x, &cfg).iter().any(|c| c.index.abs_diff(n) <= 1) {
                    found += 1;
                }
            }
            row.push_str(&format!(
                "  {k}σ {:5.1}%",
                100.0 * found as f64 / trials as f64
            ));
        }
        println!("{row}");
    }
    println!("false alarms on no-change series:");
    for (label, heavy) in [("gaussian", false), ("student-t(3)", true)] {
        let mut row = format!("  {label:>12}:");
        let mut all_alarms = 0;
        let mut all_points = 0;
        for len in [10usize, 12, 15, 20, 30, 60] {
            let mut alarms = 0;
            for _ in 0..trials {
                let mut x: Vec<f64> = (0..len)
                    .map(|_| {
                        let e = if heavy {
                            rng.student_t3()
                        } else {
                            rng.normal()
                        };
                        LEVEL + sigma * e
                    })
                    .collect();
                add_spike(&mut x, &mut rng);
                cfg.known_noise = record(&mut rng);
                alarms += detect(&x, &cfg).len();
            }
            all_alarms += alarms;
            all_points += len * trials;
            row.push_str(&format!(
                "  {len}: {:.2}",
                1000.0 * alarms as f64 / (len * trials) as f64
            ));
        }
        println!(
            "{row}  (per 1000 points; all: {all_alarms} in {all_points} = {:.3})",
            1000.0 * all_alarms as f64 / all_points as f64
        );
    }
}
