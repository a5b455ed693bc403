//! Localization of `pitwall_stats::changepoint::detect`: does a change point name the FIRST
//! point of the new level (so `pitwall detect` and alerts name the right commit)? Issue 13,
//! "Exact commits". Seeded series of 60–200 points with 1–3 clean level steps of 4–12 σ at
//! known indices, both directions, a quarter with Student-t(3) noise and a quarter with
//! occasional spikes; plus series of the same kinds with no step, for false alarms.
//!
//! `cargo run --release -p pitwall-stats --example cp_localization
//!     [--seed N] [--series N] [--show K] [--set key=value ...]`
//! Defaults: seed 13, 10,000 series with steps and 5,000 without (about 1 s). `--set
//! refine_radius=0` gives the placement before refinement (issue 13's "before" figure); the
//! figures are recorded in docs/STATISTICS.md, "Exact commits".
//!
//! Scoring (as TCPD's F1, van den Burg & Williams, arXiv:2003.06222, margin 5): each true
//! change, in order, is matched to the nearest still-unmatched prediction within 5 points
//! (ties: the smaller index); its error is prediction − truth. "Exact" counts error 0; a true
//! change with no match is a miss; a prediction matched to nothing is a false alarm. A series
//! is exact when every true change in it is found exactly and it has no false alarm.
//! `--show K` prints the first K series with a misplaced, missed or spurious change point.

use pitwall_stats::changepoint::{DetectConfig, detect};

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): tiny, seeded, good enough for test data.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unif(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unif()
    }
    /// Uniform integer in [lo, hi].
    fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.unif() * (hi - lo + 1) as f64) as usize
    }
    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = self.unif().max(1e-300);
        let v = self.unif();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
    /// Student-t with 3 degrees of freedom, scaled to unit variance (its variance is 3).
    fn student_t3(&mut self) -> f64 {
        let chi2: f64 = (0..3).map(|_| self.normal().powi(2)).sum();
        self.normal() / (chi2 / 3.0).sqrt() / 3f64.sqrt()
    }
}

/// The noise families of the set.
#[derive(Clone, Copy, Debug)]
enum Noise {
    /// Gaussian.
    Clean,
    /// Student-t(3), unit variance: heavy tails.
    HeavyTailed,
    /// Gaussian plus spikes of 5–15 σ at 2–5% of the points, 80% of them upward (slow runs).
    Spiky { rate: f64 },
}

impl Noise {
    fn draw(rng: &mut Rng) -> Noise {
        match rng.unif() {
            u if u < 0.5 => Noise::Clean,
            u if u < 0.75 => Noise::HeavyTailed,
            _ => Noise::Spiky {
                rate: rng.range(0.02, 0.05),
            },
        }
    }

    /// Noise in units of σ.
    fn sample(self, rng: &mut Rng) -> f64 {
        match self {
            Noise::Clean => rng.normal(),
            Noise::HeavyTailed => rng.student_t3(),
            Noise::Spiky { rate } => {
                let e = rng.normal();
                if rng.unif() < rate {
                    let size = rng.range(5.0, 15.0);
                    e + if rng.unif() < 0.8 { size } else { -size }
                } else {
                    e
                }
            }
        }
    }
}

/// One generated series with its true change points (first index of each new level).
struct Case {
    series: Vec<f64>,
    truth: Vec<usize>,
    noise: Noise,
    /// Step sizes in σ, signed.
    sizes: Vec<f64>,
}

/// A series of `n` points, level 100, relative noise σ (CV 0.5–3%), with `steps` level steps of
/// 4–12 σ (σ of the level before the step), random sign, at least 20 points apart and 10 from
/// either end.
fn generate(rng: &mut Rng, steps: usize) -> Case {
    let n = rng.int(60, 200);
    let cv = rng.range(0.005f64.ln(), 0.03f64.ln()).exp();
    let noise = Noise::draw(rng);
    let mut truth: Vec<usize> = Vec::new();
    let mut tries = 0;
    while truth.len() < steps && tries < 1000 {
        tries += 1;
        let t = rng.int(10, n - 10);
        if truth.iter().all(|&u| u.abs_diff(t) >= 20) {
            truth.push(t);
        }
    }
    truth.sort_unstable();
    let mut level = 100.0;
    let mut sizes = Vec::new();
    let mut series = Vec::with_capacity(n);
    for i in 0..n {
        if truth.contains(&i) {
            let k = rng.range(4.0, 12.0) * if rng.unif() < 0.5 { 1.0 } else { -1.0 };
            level *= 1.0 + k * cv;
            sizes.push(k);
        }
        series.push(level * (1.0 + cv * noise.sample(rng)));
    }
    Case {
        series,
        truth,
        noise,
        sizes,
    }
}

/// Errors (prediction − truth) of the matched true changes (`None`: missed) and the number of
/// unmatched predictions, with TCPD's matching rule and margin `margin`.
fn score(truth: &[usize], predicted: &[usize], margin: usize) -> (Vec<Option<i64>>, usize) {
    let mut free: Vec<usize> = predicted.to_vec();
    let errors = truth
        .iter()
        .map(|&t| {
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, p)| p.abs_diff(t) <= margin)
                .min_by_key(|(_, p)| (p.abs_diff(t), **p))
                .map(|(i, _)| i)?;
            Some(free.remove(best) as i64 - t as i64)
        })
        .collect();
    (errors, free.len())
}

fn apply_set(cfg: &mut DetectConfig, kv: &str) {
    let (k, v) = kv.split_once('=').expect("--set key=value");
    cfg.set(k, v).unwrap_or_else(|e| panic!("{e}"));
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}

/// Outcomes of the true change points of one group of series.
#[derive(Default, Clone, Copy)]
struct Tally {
    exact: usize,
    off_by_one: usize,
    off_more: usize,
    missed: usize,
}

impl Tally {
    fn add(&mut self, error: Option<i64>) {
        match error {
            Some(0) => self.exact += 1,
            Some(1 | -1) => self.off_by_one += 1,
            Some(_) => self.off_more += 1,
            None => self.missed += 1,
        }
    }
    fn found(&self) -> usize {
        self.exact + self.off_by_one + self.off_more
    }
    fn all(&self) -> usize {
        self.found() + self.missed
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut seed = 13u64;
    let mut n_series = 10_000usize;
    let mut show = 0usize;
    let mut cfg = DetectConfig::default();
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--seed" => seed = value().parse().expect("--seed N"),
            "--series" => n_series = value().parse().expect("--series N"),
            "--show" => show = value().parse().expect("--show K"),
            "--set" => apply_set(&mut cfg, &value()),
            other => panic!("unknown argument {other}"),
        }
    }
    let mut rng = Rng(seed);
    let mut total = Tally::default();
    let mut by_noise = [Tally::default(); 3];
    let (mut false_alarms, mut series_exact, mut shown) = (0, 0, 0);
    for s in 0..n_series {
        let steps = match rng.unif() {
            u if u < 0.5 => 1,
            u if u < 0.8 => 2,
            _ => 3,
        };
        let case = generate(&mut rng, steps);
        let predicted: Vec<usize> = detect(&case.series, &cfg).iter().map(|c| c.index).collect();
        let (errors, spurious) = score(&case.truth, &predicted, 5);
        false_alarms += spurious;
        let family = match case.noise {
            Noise::Clean => 0,
            Noise::HeavyTailed => 1,
            Noise::Spiky { .. } => 2,
        };
        for &e in &errors {
            total.add(e);
            by_noise[family].add(e);
        }
        let ok = spurious == 0 && errors.iter().all(|e| *e == Some(0));
        series_exact += usize::from(ok);
        if !ok && shown < show {
            shown += 1;
            println!(
                "series {s} ({:?}, n {}): truth {:?} sizes {:?} predicted {:?}",
                case.noise,
                case.series.len(),
                case.truth,
                case.sizes
                    .iter()
                    .map(|k| (k * 10.0).round() / 10.0)
                    .collect::<Vec<_>>(),
                predicted
            );
            for &t in &case.truth {
                let from = t.saturating_sub(4);
                let around = &case.series[from..(t + 4).min(case.series.len())];
                let rounded: Vec<f64> = around.iter().map(|v| (v * 10.0).round() / 10.0).collect();
                println!("    {from}..: {rounded:?}");
            }
        }
    }
    // No-change series of the same lengths and noise families.
    let (mut flat_points, mut flat_alarms) = (0usize, 0usize);
    for _ in 0..n_series / 2 {
        let case = generate(&mut rng, 0);
        flat_points += case.series.len();
        flat_alarms += detect(&case.series, &cfg).len();
    }
    let t = total;
    println!(
        "seed {seed}, refine_radius {}: {n_series} series with steps, {} true change points",
        cfg.refine_radius,
        t.all()
    );
    println!(
        "found {} ({:.1}%), missed {} ({:.1}%)",
        t.found(),
        pct(t.found(), t.all()),
        t.missed,
        pct(t.missed, t.all())
    );
    println!(
        "of the found: exact {} ({:.1}%), off by one {} ({:.1}%), off by 2–5 {} ({:.1}%)",
        t.exact,
        pct(t.exact, t.found()),
        t.off_by_one,
        pct(t.off_by_one, t.found()),
        t.off_more,
        pct(t.off_more, t.found())
    );
    println!(
        "exact of all true change points: {:.1}%",
        pct(t.exact, t.all())
    );
    let family = |f: &Tally| format!("{:.1}% ({} found)", pct(f.exact, f.found()), f.found());
    println!(
        "exact of the found by noise: clean {}, Student-t(3) {}, spiky {}",
        family(&by_noise[0]),
        family(&by_noise[1]),
        family(&by_noise[2])
    );
    println!(
        "series with every change exact and no false alarm: {series_exact} ({:.1}%)",
        pct(series_exact, n_series)
    );
    println!("false alarms in the step series (no true change within 5 points): {false_alarms}");
    println!(
        "no-change series ({}): {flat_alarms} false alarms in {flat_points} points ({:.2} per 1000)",
        n_series / 2,
        1000.0 * flat_alarms as f64 / flat_points.max(1) as f64
    );
}
