//! Seeded synthetic benchmark histories for the change-point evaluation: multiplicative noise,
//! one-sided throttling spikes, two clock states, level shifts, and series with no change.

use serde::Serialize;

/// One synthetic history with its true change points.
#[derive(Debug, Clone, Serialize)]
pub struct SynthSeries {
    pub name: String,
    /// "shift" (has level shifts) or "nochange".
    pub kind: String,
    pub series: Vec<f64>,
    pub truth: Vec<usize>,
}

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): tiny, seeded, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unif(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unif()
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = self.unif().max(1e-300);
        let v = self.unif();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// Noise model of one history: CV, spike rate and size, clock-state mix.
struct Noise {
    cv: f64,
    spike_rate: f64,
    slow_state_rate: f64,
    slow_state_gap: f64,
}

impl Noise {
    fn draw(rng: &mut Rng) -> Noise {
        let cv = (rng.range(0.003f64.ln(), 0.04f64.ln())).exp();
        let spike_rate = if rng.unif() < 0.6 {
            rng.range(0.01, 0.05)
        } else {
            0.0
        };
        let (slow_state_rate, slow_state_gap) = if rng.unif() < 0.5 {
            (rng.range(0.1, 0.5), rng.range(0.02, 0.08))
        } else {
            (0.0, 0.0)
        };
        Noise {
            cv,
            spike_rate,
            slow_state_rate,
            slow_state_gap,
        }
    }

    /// One measured value around `level`.
    fn sample(&self, rng: &mut Rng, level: f64) -> f64 {
        let mut v = level * (1.0 + self.cv * rng.normal());
        if rng.unif() < self.slow_state_rate {
            v *= 1.0 + self.slow_state_gap;
        }
        if rng.unif() < self.spike_rate {
            v *= 1.0 + rng.range(0.1, 1.0);
        }
        v
    }
}

/// The evaluation set: `n_shift` histories with 1–4 level shifts of 1.5–35% (log-uniform,
/// random sign, at least 30 points apart) and `n_flat` histories of `flat_len` points with no
/// change, all from `seed`.
pub fn generate(seed: u64, n_shift: usize, n_flat: usize, flat_len: usize) -> Vec<SynthSeries> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for k in 0..n_shift {
        let noise = Noise::draw(&mut rng);
        let n = 200 + (rng.unif() * 400.0) as usize;
        let shifts = 1 + (rng.unif() * 4.0) as usize;
        let mut truth: Vec<usize> = Vec::new();
        let mut tries = 0;
        while truth.len() < shifts && tries < 100 {
            tries += 1;
            let t = 30 + (rng.unif() * (n - 60) as f64) as usize;
            if truth.iter().all(|&u| u.abs_diff(t) >= 30) {
                truth.push(t);
            }
        }
        truth.sort_unstable();
        let mut level = 100.0;
        let mut series = Vec::with_capacity(n);
        for i in 0..n {
            if truth.contains(&i) {
                let size = rng.range(0.015f64.ln(), 0.35f64.ln()).exp();
                level *= if rng.unif() < 0.5 {
                    1.0 + size
                } else {
                    1.0 / (1.0 + size)
                };
            }
            series.push(noise.sample(&mut rng, level));
        }
        out.push(SynthSeries {
            name: format!("shift_{k:02}"),
            kind: "shift".into(),
            series,
            truth,
        });
    }
    for k in 0..n_flat {
        let noise = Noise::draw(&mut rng);
        let series = (0..flat_len)
            .map(|_| noise.sample(&mut rng, 100.0))
            .collect();
        out.push(SynthSeries {
            name: format!("nochange_{k:02}"),
            kind: "nochange".into(),
            series,
            truth: Vec::new(),
        });
    }
    out
}
