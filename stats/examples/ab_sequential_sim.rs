//! A fast, library-level copy of `tests/eval/ab/synthetic.py`: the same synthetic pull
//! requests (per-process offsets, outliers, a third of the benchmarks shifted 3–8%), judged by
//! [`compare_replicated`] after every round exactly as `run --until-decided` stops, thousands
//! of pair-trials a minute. It is for exploring the rules' constants; the figures quoted in
//! docs/STATISTICS.md come from the real binary through `synthetic.py`, never from here.
//!
//! ```text
//! cargo run --release -p pitwall-stats --example ab_sequential_sim -- [--pairs N] [--seed S] [--max-rounds R] [--alpha A] [--rho R] [--no-offset] [--why] [--record K] [--record-scale F]
//! ```
//!
//! `--record K`: each pair-trial first measures K calibration A/A pairs of 6 rounds of the same
//! benchmarks and hands their noise record (`ab::noise`) to the comparison; `--record-scale F`
//! makes the calibrations' noise F × the pair's (a record wrong by F in standard deviation).
//!
//! Model per pair (as synthetic.py): 30 benchmarks, each reported twice (the `time` and
//! `cpu_time` measures of the same samples, as Google Benchmark JSON gives them), level
//! irrelevant (ratios), within-process cv uniform 2–4%, 5 repetitions per process, 4% of
//! samples slow by +10–50%, each process an offset per benchmark, lognormal with sd 0.7 × cv;
//! 10 benchmarks shifted by 3–8% with a random sign. One process per side per round.

use pitwall_stats::ab::noise::{NoiseObs, observe, pool};
use pitwall_stats::ab::{
    AbConfig, NoiseRecord, Replicate, ReplicatedPair, RoundOrder, SequentialPlan, Spending,
    Verdict, Xoshiro256, compare_replicated,
};

const BENCHMARKS: usize = 30;
const SHIFTED: usize = 10;
const REPS: usize = 5;
const FIRST_LOOK: u32 = 3;

/// `--why`: print, to stderr, what ended each pair and the reason of every miss and false call.
fn why() -> bool {
    std::env::args().any(|a| a == "--why")
}

fn normal(rng: &mut Xoshiro256) -> f64 {
    let u1 = rng.next_f64().max(1e-300);
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

struct Truth {
    cv: f64,
    shift: f64,
}

fn process(rng: &mut Xoshiro256, t: &Truth, shift: f64, offset_factor: f64) -> Vec<f64> {
    let offset = (normal(rng) * offset_factor * t.cv).exp();
    (0..REPS)
        .map(|_| {
            let mut v = 1000.0 * shift * offset * (normal(rng) * t.cv).exp();
            if rng.next_f64() < 0.04 {
                v *= 1.0 + 0.10 + 0.40 * rng.next_f64();
            }
            v
        })
        .collect()
}

#[derive(Default)]
struct Score {
    unshifted: usize,
    false_calls: usize,
    shifted: usize,
    detected: usize,
    wrong_way: usize,
    rounds: Vec<u32>,
}

/// Rounds of each calibration pair.
const CALIBRATION_ROUNDS: u32 = 6;

/// The noise record of each benchmark from `k` calibration A/A pairs, noise scaled by `scale`.
fn records(
    rng: &mut Xoshiro256,
    truth: &[Truth],
    offset_factor: f64,
    (k, scale): (usize, f64),
) -> Vec<Option<NoiseRecord>> {
    truth
        .iter()
        .map(|t| {
            let t = Truth {
                cv: t.cv * scale,
                shift: 1.0,
            };
            let obs: Vec<NoiseObs> = (0..k)
                .filter_map(|_| {
                    let mut p = empty_pair();
                    for round in 1..=CALIBRATION_ROUNDS {
                        p.base.push(Replicate {
                            round,
                            samples: process(rng, &t, 1.0, offset_factor),
                        });
                        p.cand.push(Replicate {
                            round,
                            samples: process(rng, &t, 1.0, offset_factor),
                        });
                        p.round_orders.push(if round % 2 == 0 {
                            RoundOrder::HeadBase
                        } else {
                            RoundOrder::BaseHead
                        });
                    }
                    observe(&p, CALIBRATION_ROUNDS)
                })
                .collect();
            pool(&obs)
        })
        .collect()
}

/// `--auto`: `threshold_pct = "auto"` over a 2% floor, from the record (as
/// `pitwall_analysis::noise::resolve`).
fn auto_threshold(plan: &SequentialPlan, record: Option<NoiseRecord>) -> Option<f64> {
    let rec = record.filter(|_| std::env::args().any(|a| a == "--auto"))?;
    let need = pitwall_stats::ab::noise::detectable_log(&rec, plan, plan.max_looks).exp() - 1.0;
    Some((need / (1.0 - pitwall_stats::ab::replicated::REPLICATE_MARGIN)).max(0.02))
}

fn empty_pair() -> ReplicatedPair {
    ReplicatedPair {
        base: vec![],
        cand: vec![],
        higher_is_better: false,
        threshold: None,
        round_orders: Vec::new(),
        record: None,
    }
}

fn trial(
    rng: &mut Xoshiro256,
    plan: &SequentialPlan,
    offset_factor: f64,
    record: (usize, f64),
    score: &mut Score,
) {
    let max_rounds = plan.max_looks;
    let truth: Vec<Truth> = (0..BENCHMARKS)
        .map(|i| Truth {
            cv: 0.02 + 0.02 * rng.next_f64(),
            shift: if i < SHIFTED {
                let m = 0.03 + 0.05 * rng.next_f64();
                if rng.next_f64() < 0.5 {
                    1.0 + m
                } else {
                    1.0 / (1.0 + m)
                }
            } else {
                1.0
            },
        })
        .collect();
    let recs = if record.0 > 0 {
        records(rng, &truth, offset_factor, record)
    } else {
        vec![None; BENCHMARKS]
    };
    let mut pairs: Vec<ReplicatedPair> = (0..BENCHMARKS * 2)
        .map(|i| ReplicatedPair {
            record: recs[i / 2],
            threshold: auto_threshold(plan, recs[i / 2]),
            ..empty_pair()
        })
        .collect();
    let config = AbConfig::default();
    let mut round = 0;
    let verdicts = loop {
        round += 1;
        for (i, t) in truth.iter().enumerate() {
            let b = process(rng, t, 1.0, offset_factor);
            let c = process(rng, t, t.shift, offset_factor);
            for m in 0..2 {
                pairs[2 * i + m].base.push(Replicate {
                    round,
                    samples: b.clone(),
                });
                pairs[2 * i + m].cand.push(Replicate {
                    round,
                    samples: c.clone(),
                });
            }
        }
        if round < FIRST_LOOK {
            continue;
        }
        let out = compare_replicated(&pairs, plan, round, &config);
        let open = out
            .iter()
            .any(|c| c.verdict == Verdict::Inconclusive && c.more_rounds.is_some());
        if !open || round >= max_rounds {
            break out;
        }
    };
    score.rounds.push(round);
    if why() {
        // What ended the pair: the benchmarks decided or given up at its last round.
        for (i, c) in verdicts.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
            let at_end = c.decided_at_round == Some(round)
                || (c.reason.starts_with(&format!("given up at round {round}:")));
            if at_end {
                let t = &truth[i / 2];
                eprintln!(
                    "LAST round {round} {:?} shift {:+.1}% cv {:.1}%",
                    c.verdict,
                    100.0 * (t.shift - 1.0),
                    100.0 * t.cv
                );
            }
        }
    }
    // Score the `time` measure (the even entries), as synthetic.py does.
    for (i, t) in truth.iter().enumerate() {
        let v = verdicts[2 * i].verdict;
        let called = matches!(v, Verdict::Regression | Verdict::Improvement);
        if t.shift == 1.0 {
            score.unshifted += 1;
            score.false_calls += usize::from(called);
            if called && why() {
                eprintln!("FP cv {:.1}%: {}", 100.0 * t.cv, verdicts[2 * i].reason);
            }
        } else {
            score.shifted += 1;
            let right = if t.shift > 1.0 {
                Verdict::Regression
            } else {
                Verdict::Improvement
            };
            score.detected += usize::from(v == right);
            if v != right && why() {
                eprintln!(
                    "missed {:+.1}% cv {:.1}%: {}",
                    100.0 * (t.shift - 1.0),
                    100.0 * t.cv,
                    verdicts[2 * i].reason
                );
            }
            score.wrong_way += usize::from(called && v != right);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |flag: &str, default: f64| -> f64 {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse().expect("a number"))
            .unwrap_or(default)
    };
    let pairs = get("--pairs", 400.0) as usize;
    let seed = get("--seed", 1.0) as u64;
    let mut plan = SequentialPlan::until_decided(
        FIRST_LOOK,
        get("--max-rounds", 15.0) as u32,
        get("--alpha", AbConfig::default().replicate_alpha),
    );
    if args.iter().any(|a| a == "--rho") {
        plan.spending = Spending::Power(get("--rho", 2.0));
    }
    let offset = if args.iter().any(|a| a == "--no-offset") {
        0.0
    } else {
        0.7
    };
    let mut rng = Xoshiro256::seed_from(seed);
    let mut s = Score::default();
    for _ in 0..pairs {
        trial(
            &mut rng,
            &plan,
            offset,
            (get("--record", 0.0) as usize, get("--record-scale", 1.0)),
            &mut s,
        );
    }
    let mean_rounds = s.rounds.iter().map(|&r| f64::from(r)).sum::<f64>() / s.rounds.len() as f64;
    let sd = (s
        .rounds
        .iter()
        .map(|&r| (f64::from(r) - mean_rounds).powi(2))
        .sum::<f64>()
        / (s.rounds.len() as f64 - 1.0).max(1.0))
    .sqrt();
    let mut hist = [0usize; 32];
    for &r in &s.rounds {
        hist[(r as usize).min(31)] += 1;
    }
    let hist: Vec<String> = hist
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(r, n)| format!("{r}:{n}"))
        .collect();
    println!("rounds histogram {}", hist.join(" "));
    println!(
        "pair-trials {pairs}: false positives {}/{} = {:.2}%, detection {}/{} = {:.1}%, wrong way {}, rounds {:.2} ± {:.2} (se)",
        s.false_calls,
        s.unshifted,
        100.0 * s.false_calls as f64 / s.unshifted as f64,
        s.detected,
        s.shifted,
        100.0 * s.detected as f64 / s.shifted as f64,
        s.wrong_way,
        mean_rounds,
        sd / (s.rounds.len() as f64).sqrt(),
    );
}
