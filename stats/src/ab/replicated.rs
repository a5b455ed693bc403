//! A/B verdicts from replicates: the process is the unit of replication. Samples taken within
//! one benchmark process share its code layout, heap placement and frequency state
//! (Mytkowicz et al., ASPLOS 2009; Curtsinger & Berger, ASPLOS 2013), so three processes per
//! side are three observations, not three hundred. Pooling their samples as independent
//! (what [`super::compare_all`] does) calls noise between processes a change.
//!
//! # Method
//! 1. **Replicate summaries.** Each replicate's samples are reduced to one number, the mean of
//!    their logarithms after slow outliers are set aside (more than 3 robust standard
//!    deviations, 3 × 1.4826 × MAD, beyond the replicate's median on the slow side). The
//!    within-process precision enters only through this summary; the variance used below is
//!    that of the summaries, which contains the noise between processes (Kalibera & Jones,
//!    "Rigorous Benchmarking in Reasonable Time", ISMM 2013, §4: the highest level of
//!    replication gives the honest interval). When every replicate is a single sample (a
//!    wall-time suite times one execution per process) and there are ≥ 5 a side, replicates
//!    more than 5 robust standard deviations slow are set aside, as the within-process verdict
//!    does with samples; the offsets of multi-sample processes are never screened, since they
//!    are the noise between processes that the interval has to contain.
//! 2. **Cross-over analysis of the rounds** ([`super::crossover`], Jones & Kenward): each
//!    round is a block in which base and head ran one after the other, in alternating order;
//!    per benchmark, `log value = round + period + side`, the side effect being the estimate on
//!    `rounds − 2` degrees of freedom (replicates within a side of a round averaged first). A
//!    drift shared by both sides cancels within each round. Two separately measured runs (one
//!    round) use the two-sample t on the summaries instead, pooled variance on `n_b + n_c − 2`
//!    degrees of freedom. Either variance is moderated across the benchmarks of the comparison
//!    by empirical Bayes ([`super::moderated`], Smyth 2004), with a prior scale that follows
//!    each benchmark's noise within a process ([`super::trend`], limma-trend).
//! 3. **Looks and error control.** The comparison is looked at after rounds given by a
//!    [`SequentialPlan`]: once for a fixed number of rounds, after every round for
//!    `--until-decided`. At a look with boundary `c`, the interval `estimate ± t_df(Φ(c))·se`
//!    is a repeated confidence interval (valid at every look together), and each benchmark's
//!    minimum-effect p-value (below) is compared with the look's nominal level `2(1 − Φ(c))`
//!    after Benjamini–Hochberg across the benchmarks still undecided at that look. BH never
//!    rejects a p-value above its level, so each unchanged benchmark's chance of ever being
//!    called stays within the plan's α, whatever the number of looks; within a look BH also
//!    bounds the share of false calls among calls. **The interval shown is the one the
//!    verdict uses**: for a call, and while undecided, the repeated interval at the BH-adjusted
//!    level `2(1 − Φ(c))·p/q`, never narrower than the repeated interval, which excludes the
//!    margin exactly when BH rejects; for `unchanged`, the repeated interval itself (an
//!    equivalence test needs no adjustment across benchmarks).
//! 4. **Rules** at each look, for each benchmark not yet decided:
//!    - *regression / improvement* when that interval excludes changes of at most
//!      [`REPLICATE_MARGIN`] × threshold (a minimum-effect test, Murphy & Myors 1999) and
//!      the estimate is beyond the threshold; direction from the metric;
//!    - *unchanged* when the repeated interval lies inside [1 − thr, 1 + thr]: an
//!      equivalence decision (TOST; Schuirmann 1987), not "no difference found";
//!    - *given up* (inconclusive), from the third look on, when projected to the last round
//!      with today's estimate and variance (conditional power, Lan, Simon & Halperin 1982)
//!      the probability of a call and that of `unchanged` are both below
//!      [`FUTILITY_PROBABILITY`];
//!    - otherwise undecided: measure another round, or report "not resolved" with an
//!      estimate of the rounds that would settle it.
//!
//!    A decided benchmark keeps the verdict of the look that decided it. Every benchmark
//!    carries its resolution, the largest change its final interval still allows.
//!
//! Benchmarks with fewer than two replicates a side, or with values that are not positive,
//! fall back to the within-process verdict, marked [`Method::WithinProcess`].
//!
//! Evaluation: `tests/eval/ab/` drives the real binary on temporary git repositories with
//! per-process offsets, outliers and real timed work; figures in docs/STATISTICS.md.

use statrs::distribution::{ContinuousCDF, Normal};

use super::bh::benjamini_hochberg;
use super::crossover::{Look, look};
use super::futility::{FUTILITY_PROBABILITY, Stat, projected};
use super::moderated::VariancePrior;
use super::replicate_summary::summaries;
pub use super::replicate_summary::{Replicate, ReplicatedPair};
use super::sequential::{SequentialPlan, nominal_level};
use super::trend::{VarianceObs, fit_trended_prior};
use super::verdict::{
    AbConfig, Comparison, Method, PairInput, Verdict, compare_all, fmt_q, resolution_pct,
};
use super::welch::{t_quantile, t_sf};

/// Fraction of the threshold a change must be shown to exceed (see the module docs). Chosen
/// with the synthetic evaluation: 0.5 cost a tenth of detection for no measurable gain in
/// false positives, 0 let false positives reach 1%; with the trended variance prior, 0.25 gave
/// 0.55% false positives over 400 pair-trials of the real binary and 0.3 gave 0.49%, at 80.9%
/// and 81.1% detection (docs/STATISTICS.md).
pub const REPLICATE_MARGIN: f64 = 0.3;

/// Looks after the first before any benchmark may be given up: at the first looks the
/// estimate itself is too rough to project from (giving up from round 3 cost a tenth of the
/// detection of 3–5% shifts in the synthetic evaluation).
const FUTILITY_AFTER_LOOKS: u32 = 2;

/// Verdicts for every pair after `rounds` rounds measured under `plan`; one [`Comparison`]
/// per pair, in order.
pub fn compare_replicated(
    pairs: &[ReplicatedPair],
    plan: &SequentialPlan,
    rounds: u32,
    config: &AbConfig,
) -> Vec<Comparison> {
    let mut out: Vec<Option<Comparison>> = vec![None; pairs.len()];
    // Pairs the replicate method cannot judge: the within-process verdict, marked as such.
    let fallback: Vec<usize> = (0..pairs.len())
        .filter(|&i| !pairs[i].replicable())
        .collect();
    for (&i, c) in fallback
        .iter()
        .zip(pooled_verdicts(pairs, &fallback, rounds, config))
    {
        out[i] = Some(c);
    }
    let boundaries = plan.boundaries();
    let looks: Vec<u32> = if rounds < plan.first_look {
        vec![rounds.max(1)]
    } else {
        (plan.first_look..=rounds.min(plan.max_looks)).collect()
    };
    let mut last: Vec<Option<Comparison>> = vec![None; pairs.len()];
    for &round in &looks {
        let numbers: Vec<Option<Look>> = pairs
            .iter()
            .enumerate()
            .map(|(i, p)| (!fallback.contains(&i)).then(|| look(p, round)).flatten())
            .collect();
        let prior = fit_trended_prior(
            &numbers
                .iter()
                .flatten()
                .map(|l| VarianceObs {
                    s2: l.pooled_var,
                    d: l.dof,
                    within: l.within,
                })
                .collect::<Vec<_>>(),
        );
        let joint = super::noise::joint_disagreement(
            pairs
                .iter()
                .zip(&numbers)
                .filter_map(|(p, l)| Some((p.record.as_ref()?, l.as_ref()?))),
        );
        let c = plan.boundary_at(&boundaries, round);
        let nominal = nominal_level(c);
        let open: Vec<usize> = (0..pairs.len())
            .filter(|&i| out[i].is_none() && numbers[i].is_some())
            .collect();
        let (mut judged, stats): (Vec<Comparison>, Vec<Stat>) = open
            .iter()
            .map(|&i| {
                let l = numbers[i].expect("filtered");
                judge(&pairs[i], l, (prior.at(l.within), joint), c, round, config)
            })
            .unzip();
        let q = benjamini_hochberg(&judged.iter().map(|j| j.p_value).collect::<Vec<_>>());
        for (((&i, j), q), st) in open.iter().zip(judged.iter_mut()).zip(q).zip(&stats) {
            j.q_value = q;
            let repeated = j.ci;
            j.ci = adjusted_interval(st, nominal, j.p_value, q);
            let decided = settle(
                j,
                &pairs[i],
                (st, repeated),
                (round, config.futility),
                plan,
                &boundaries,
            );
            if decided {
                out[i] = Some(j.clone());
            } else {
                last[i] = Some(j.clone());
            }
        }
    }
    out.into_iter()
        .zip(last)
        .enumerate()
        .map(|(i, (done, last))| {
            done.or(last).unwrap_or_else(|| {
                // Never looked at with two replicates a side (a look before round 2).
                pooled_verdicts(pairs, &[i], rounds, config).remove(0)
            })
        })
        .map(|mut c| {
            c.resolution_pct = resolution_pct(c.ci);
            if let Some(note) = c.noise_record.and_then(|u| u.note()) {
                c.reason = format!("{}; {note}", c.reason);
            }
            c
        })
        .collect()
}

/// The within-process verdicts of pairs `which` (compared together, as `compare_all` does),
/// over all samples of their first `rounds` rounds, with their replicate counts: for pairs the
/// replicate method cannot judge.
fn pooled_verdicts(
    pairs: &[ReplicatedPair],
    which: &[usize],
    rounds: u32,
    config: &AbConfig,
) -> Vec<Comparison> {
    let pooled: Vec<(Vec<f64>, Vec<f64>)> = which
        .iter()
        .map(|&i| {
            (
                ReplicatedPair::all_samples(&pairs[i].base, rounds),
                ReplicatedPair::all_samples(&pairs[i].cand, rounds),
            )
        })
        .collect();
    let inputs: Vec<PairInput<'_>> = which
        .iter()
        .zip(&pooled)
        .map(|(&i, (b, c))| PairInput {
            base: b,
            cand: c,
            higher_is_better: pairs[i].higher_is_better,
            threshold: pairs[i].threshold,
        })
        .collect();
    which
        .iter()
        .zip(compare_all(&inputs, config))
        .map(|(&i, mut c)| {
            c.base_replicates = count(&pairs[i].base, rounds);
            c.cand_replicates = count(&pairs[i].cand, rounds);
            c
        })
        .collect()
}

/// The repeated interval at the BH-adjusted level `nominal · p / q` (never narrower than at
/// `nominal`): it excludes the margin exactly when BH rejects at `nominal`, so the interval
/// shown is the one the call was made with.
fn adjusted_interval(st: &Stat, nominal: f64, p: f64, q: f64) -> (f64, f64) {
    let shrink = if p > 0.0 && q > 0.0 && p.is_finite() && q.is_finite() {
        (p / q).min(1.0)
    } else {
        1.0
    };
    let tq = t_quantile(1.0 - nominal * shrink / 2.0, st.dof);
    ((st.diff - tq * st.se).exp(), (st.diff + tq * st.se).exp())
}

/// The ratio and its repeated confidence interval for one benchmark at the look after
/// `round` of `plan`, without any verdict rule (bisection classifies against its own
/// midpoint). No variance is borrowed (one benchmark). `None` without two replicates a side
/// with positive samples.
pub fn interval_at(
    pair: &ReplicatedPair,
    plan: &SequentialPlan,
    round: u32,
    config: &AbConfig,
) -> Option<Comparison> {
    if !pair.replicable() {
        return None;
    }
    let l = look(pair, round)?;
    let boundaries = plan.boundaries();
    let c = plan.boundary_at(&boundaries, round);
    let mut out = judge(pair, l, (VariancePrior::NONE, None), c, round, config).0;
    out.resolution_pct = resolution_pct(out.ci);
    Some(out)
}

fn count(reps: &[Replicate], up_to: u32) -> usize {
    reps.iter()
        .filter(|r| r.round <= up_to && !r.samples.is_empty())
        .count()
}

/// The numbers of one benchmark at a look (verdict still inconclusive; see [`settle`]).
fn judge(
    pair: &ReplicatedPair,
    l: Look,
    (prior, joint): (VariancePrior, Option<(f64, f64)>),
    c: f64,
    round: u32,
    config: &AbConfig,
) -> (Comparison, Stat) {
    let thr = pair.threshold.unwrap_or(config.threshold);
    let (var, dof, record_use) = super::noise::apply(
        pair.record.as_ref(),
        &l,
        prior.moderate(l.pooled_var, l.dof),
        joint,
    );
    let se = (var * l.factor).sqrt();
    let level = Normal::new(0.0, 1.0).expect("unit normal").cdf(c);
    let tq = t_quantile(level, dof);
    let margin = (REPLICATE_MARGIN * thr).ln_1p();
    let (p_min, welch_p) = if se > 0.0 {
        let beyond = l.diff.abs() - margin;
        (
            if beyond > 0.0 {
                (2.0 * t_sf(beyond / se, dof)).min(1.0)
            } else {
                1.0
            },
            (2.0 * t_sf(l.diff.abs() / se, dof)).min(1.0),
        )
    } else if l.diff.abs() > margin {
        (0.0, 0.0)
    } else {
        (1.0, if l.diff == 0.0 { 1.0 } else { 0.0 })
    };
    let base = ReplicatedPair::all_samples(&pair.base, round);
    let cand = ReplicatedPair::all_samples(&pair.cand, round);
    let center = |reps: &[Replicate]| {
        let s = summaries(reps, round, pair.higher_is_better);
        (s.iter().sum::<f64>() / s.len() as f64).exp()
    };
    let comparison = Comparison {
        verdict: Verdict::Inconclusive,
        ratio: l.diff.exp(),
        ci: ((l.diff - tq * se).exp(), (l.diff + tq * se).exp()),
        p_value: p_min,
        q_value: f64::NAN,
        welch_p,
        hodges_lehmann: super::hodges_lehmann(&base, &cand).unwrap_or(f64::NAN),
        base_median: center(&pair.base),
        cand_median: center(&pair.cand),
        base_n: base.len(),
        cand_n: cand.len(),
        threshold: thr,
        more_samples: None,
        reason: String::new(),
        method: Method::Replicates,
        base_replicates: l.nb,
        cand_replicates: l.nc,
        decided_at_round: None,
        more_rounds: None,
        resolution_pct: None,
        noise_record: record_use,
    };
    (
        comparison,
        Stat {
            diff: l.diff,
            se,
            dof,
            paired_rounds: l.paired_rounds,
        },
    )
}

/// Applies the rules of the module docs to `c` (whose interval is already the adjusted one)
/// at the look after `round`, giving up only when `futility`; true when the benchmark is
/// decided (or given up) at this look.
fn settle(
    c: &mut Comparison,
    pair: &ReplicatedPair,
    (st, repeated): (&Stat, (f64, f64)),
    (round, futility): (u32, bool),
    plan: &SequentialPlan,
    boundaries: &[f64],
) -> bool {
    let reps = match st.paired_rounds {
        0 => format!("{}+{} replicates", c.base_replicates, c.cand_replicates),
        n => format!(
            "{n} paired rounds ({}+{} replicates)",
            c.base_replicates, c.cand_replicates
        ),
    };
    if called(c, pair, round, &reps) || unchanged(c, repeated, round, &reps) {
        return true;
    }
    let thr = c.threshold;
    let margin = (REPLICATE_MARGIN * thr).ln_1p();
    if futility && round < plan.max_looks && round >= plan.first_look + FUTILITY_AFTER_LOOKS {
        let (p_call, p_unchanged) = projected(st, round, plan, boundaries, (thr, margin));
        if p_call < FUTILITY_PROBABILITY && p_unchanged < FUTILITY_PROBABILITY {
            c.reason = format!(
                "given up at round {round}: {:+.1}% with interval {} over {reps}; projected to {} rounds, a call has probability {:.0}% and `unchanged` {:.0}%",
                100.0 * (c.ratio - 1.0),
                interval_text(c.ci),
                plan.max_looks,
                100.0 * p_call,
                100.0 * p_unchanged,
            );
            return true;
        }
    }
    undecided(c, st.diff, round, &reps);
    false
}

/// Whether the (adjusted) interval excludes every change of at most the margin.
fn beyond_margin(c: &Comparison) -> bool {
    let m = REPLICATE_MARGIN * c.threshold;
    c.ci.0 > 1.0 + m || c.ci.1 < 1.0 / (1.0 + m)
}

fn interval_text(ci: (f64, f64)) -> String {
    format!("[{:+.1}%, {:+.1}%]", pct(ci.0), pct(ci.1))
}

/// The call rule: a regression or improvement when the interval excludes the margin and the
/// estimate is beyond the threshold.
fn called(c: &mut Comparison, pair: &ReplicatedPair, round: u32, reps: &str) -> bool {
    let change = c.ratio - 1.0;
    if !(beyond_margin(c) && change.abs() >= c.threshold) {
        return false;
    }
    let worse = (change > 0.0) != pair.higher_is_better;
    c.verdict = if worse {
        Verdict::Regression
    } else {
        Verdict::Improvement
    };
    c.decided_at_round = Some(round);
    c.reason = format!(
        "{} {:.1}% over {reps} (q = {}), interval {} beyond a {:.1}% change; decided at round {round}",
        if change > 0.0 { "up" } else { "down" },
        100.0 * change.abs(),
        fmt_q(c.q_value),
        interval_text(c.ci),
        100.0 * REPLICATE_MARGIN * c.threshold,
    );
    true
}

/// The equivalence rule. Equivalence needs no adjustment across benchmarks (each TOST stands
/// alone): the repeated interval itself, which is then the one shown.
fn unchanged(c: &mut Comparison, repeated: (f64, f64), round: u32, reps: &str) -> bool {
    let thr = c.threshold;
    if !(repeated.0 >= 1.0 - thr && repeated.1 <= 1.0 + thr) {
        return false;
    }
    c.ci = repeated;
    c.verdict = Verdict::Unchanged;
    c.decided_at_round = Some(round);
    c.reason = format!(
        "{:+.1}% with interval {} inside ±{:.1}% over {reps}; decided at round {round}",
        100.0 * (c.ratio - 1.0),
        interval_text(c.ci),
        100.0 * thr
    );
    true
}

/// Still undecided: the rounds that would settle it, and why the interval decides nothing.
fn undecided(c: &mut Comparison, diff: f64, round: u32, reps: &str) {
    let thr = c.threshold;
    let margin = (REPLICATE_MARGIN * thr).ln_1p();
    let half = ((c.ci.1 / c.ci.0).ln() / 2.0).max(0.0);
    let target = if diff.abs() < thr.ln_1p() {
        thr.ln_1p() - diff.abs()
    } else {
        diff.abs() - margin
    }
    .max(thr / 4.0);
    let need = f64::from(round) * (half / target).powi(2);
    c.more_rounds = Some((need.ceil() as u32).clamp(round + 1, 10_000));
    let change = 100.0 * (c.ratio - 1.0);
    let interval = interval_text(c.ci);
    c.reason = if beyond_margin(c) {
        // The interval excludes the margin but the estimate is within the threshold: a change
        // smaller than the threshold is not called.
        format!(
            "{change:+.1}% with interval {interval} over {reps}: a change, but the estimate is within the ±{:.1}% threshold and the interval reaches inside it",
            100.0 * thr
        )
    } else {
        format!(
            "{change:+.1}% with interval {interval} over {reps}: neither beyond a {:.1}% change nor inside ±{:.1}%",
            100.0 * REPLICATE_MARGIN * thr,
            100.0 * thr
        )
    };
}

fn pct(ratio: f64) -> f64 {
    100.0 * (ratio - 1.0)
}

#[cfg(test)]
mod tests;
