//! Futility that waits: when a benchmark of a pair measured until decided may be given up.
//! Only when, projected to the last round with its current estimate and variance, neither a
//! call nor `unchanged` has a real chance (issue 25: the rule before gave up on a true +14%
//! regression at round 6 of 15). The rule that uses it is in [`super::replicated`].

use statrs::distribution::{ContinuousCDF, Normal};

use super::sequential::SequentialPlan;
use super::welch::t_quantile;

/// A benchmark is given up only when, projected to the last round with its current estimate
/// and variance, both the probability of a call and that of `unchanged` are below this.
pub const FUTILITY_PROBABILITY: f64 = 0.05;

/// The numbers behind one benchmark's interval at a look.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stat {
    pub diff: f64,
    pub se: f64,
    pub dof: f64,
    /// Rounds paired by the cross-over analysis (0: two separately measured sides).
    pub paired_rounds: usize,
}

/// The probabilities of a call and of `unchanged` at the last look, projected from the
/// current estimate and variance (conditional power under the current trend: the final
/// estimate is normal around today's, with variance `se²·n(N − n)/N²`; Lan, Simon & Halperin
/// 1982). The last interval is today's shrunk as `√(n/N)`, at the last boundary, with one more
/// degree of freedom per round.
pub(super) fn projected(
    st: &Stat,
    round: u32,
    plan: &SequentialPlan,
    boundaries: &[f64],
    (thr, margin): (f64, f64),
) -> (f64, f64) {
    let normal = Normal::new(0.0, 1.0).expect("unit normal");
    let n = f64::from(round);
    let big_n = f64::from(plan.max_looks);
    let c_last = boundaries[boundaries.len() - 1];
    // `st.dof` already holds what the prior lends (`VariancePrior::moderate`); each round to
    // come adds one more degree of freedom of the benchmark's own.
    let dof_last = st.dof + (big_n - n);
    let se_last = st.se * (n / big_n).sqrt();
    let half_last = t_quantile(normal.cdf(c_last), dof_last) * se_last;
    let sd = st.se * (n * (big_n - n)).sqrt() / big_n;
    let up = (margin + half_last).max(thr.ln_1p());
    let down = (margin + half_last).max(-(1.0 - thr).ln());
    let d = st.diff;
    if sd <= 0.0 || !sd.is_finite() {
        let call = d >= up || d <= -down;
        let unch = d.abs() + half_last <= thr.ln_1p().min(-(1.0 - thr).ln());
        return (f64::from(u8::from(call)), f64::from(u8::from(unch)));
    }
    let p_call = normal.sf((up - d) / sd) + normal.cdf((-down - d) / sd);
    let lo = (1.0 - thr).ln() + half_last;
    let hi = thr.ln_1p() - half_last;
    let p_unchanged = if hi > lo {
        normal.cdf((hi - d) / sd) - normal.cdf((lo - d) / sd)
    } else {
        0.0
    };
    (p_call, p_unchanged)
}
