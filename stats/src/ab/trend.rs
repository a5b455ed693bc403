//! A variance prior that follows each benchmark's noise inside one process: benchmarks that
//! are noisier within a process are noisier between processes too, so the typical variance a
//! benchmark borrows towards should be *its* typical variance, not the average of all.
//!
//! # Method
//! The moderated t of [`super::moderated`] (Smyth 2004) with a prior scale that depends on a
//! covariate, as limma's `eBayes(trend = TRUE)` does with average expression (Law, Chen, Shi &
//! Smyth 2014, *Genome Biology* 15:R29, "voom"; Smyth 2004 §6.2 for the moment estimators).
//! The covariate here is `x = ln w`, where `w` is the within-process variance of a
//! replicate's summary (the variance of its kept log samples over their count, averaged over
//! its replicates). With `e = ln s² − ψ(d/2) + ln(d/2)` as in Smyth (2004), the trend is the
//! least-squares line `e ≈ a + b·x`; the prior degrees of freedom `d₀` come from the spread
//! of the residuals about it (`ψ′(d₀/2) = var(resid) − mean ψ′(d/2)`, the residual variance
//! on `n − 2` degrees of freedom), and the prior scale of a benchmark with covariate `x` is
//! `exp(a + b·x + ψ(d₀/2) − ln(d₀/2))`.
//!
//! When the relation is absent the slope is near 0 and this is the plain prior; when noise
//! between processes does not follow noise within them, the residuals are wide, `d₀` is
//! small and each benchmark keeps essentially its own variance. The slope is kept in
//! `[0, 1]`: a replicate's summary variance is the noise between processes plus `w` itself,
//! which cannot fall as `w` grows nor, on a log scale, grow faster than proportionally
//! unless the offsets do; a fitted slope outside that range is sampling noise of few
//! benchmarks. Benchmarks without a covariate (one sample per process) get the plain prior.

use statrs::function::gamma::digamma;

use super::moderated::{VariancePrior, fit_prior, trigamma, trigamma_inverse};

/// Fewest benchmarks with a covariate for which a trend is fitted (a line through fewer is
/// mostly noise); below it every benchmark gets the plain prior.
pub const MIN_BENCHMARKS_FOR_TREND: usize = 8;

/// Bounds on the fitted slope of `ln s²` against `ln w` (see the module docs).
const SLOPE_RANGE: (f64, f64) = (0.0, 1.0);

/// One benchmark's variance at a look: `s²` on `d` degrees of freedom, and its within-process
/// covariate `w` when known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VarianceObs {
    pub s2: f64,
    pub d: f64,
    pub within: Option<f64>,
}

/// The fitted prior: a line in `ln w` where it could be fitted, the plain prior otherwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrendedPrior {
    pub plain: VariancePrior,
    trend: Option<Trend>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Trend {
    intercept: f64,
    slope: f64,
    df: f64,
}

impl TrendedPrior {
    /// No borrowing at all.
    pub const NONE: TrendedPrior = TrendedPrior {
        plain: VariancePrior::NONE,
        trend: None,
    };

    /// The prior for a benchmark with within-process variance `within`.
    pub fn at(&self, within: Option<f64>) -> VariancePrior {
        match (self.trend, within) {
            (Some(t), Some(w)) if w.is_finite() && w > 0.0 => {
                let e = t.intercept + t.slope * w.ln();
                let scale = if t.df.is_infinite() {
                    e.exp()
                } else {
                    (e + digamma(t.df / 2.0) - (t.df / 2.0).ln()).exp()
                };
                VariancePrior {
                    df: t.df,
                    scale,
                    never_below_own: false,
                }
            }
            _ => self.plain,
        }
    }

    /// The fitted slope, if a trend was fitted (for tests and diagnostics).
    pub fn slope(&self) -> Option<f64> {
        self.trend.map(|t| t.slope)
    }
}

fn usable(o: &VarianceObs) -> bool {
    o.s2.is_finite() && o.s2 > 0.0 && o.d > 0.0
}

/// Fits the prior of the module docs to the benchmarks of one look.
pub fn fit_trended_prior(obs: &[VarianceObs]) -> TrendedPrior {
    let plain = fit_prior(
        &obs.iter()
            .filter(|o| usable(o))
            .map(|o| (o.s2, o.d))
            .collect::<Vec<_>>(),
    );
    let pts: Vec<(f64, f64, f64)> = obs
        .iter()
        .filter(|o| usable(o))
        .filter_map(|o| {
            let w = o.within.filter(|w| w.is_finite() && *w > 0.0)?;
            let e = o.s2.ln() - digamma(o.d / 2.0) + (o.d / 2.0).ln();
            Some((w.ln(), e, o.d))
        })
        .collect();
    let n = pts.len();
    if n < MIN_BENCHMARKS_FOR_TREND {
        return TrendedPrior { plain, trend: None };
    }
    let nf = n as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / nf;
    let me = pts.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxe: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - me)).sum();
    let slope = if sxx > 0.0 { sxe / sxx } else { 0.0 }.clamp(SLOPE_RANGE.0, SLOPE_RANGE.1);
    let intercept = me - slope * mx;
    let resid = pts
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum::<f64>()
        / (nf - 2.0);
    let spread = resid - pts.iter().map(|p| trigamma(p.2 / 2.0)).sum::<f64>() / nf;
    let df = if spread <= 0.0 {
        f64::INFINITY
    } else {
        2.0 * trigamma_inverse(spread)
    };
    TrendedPrior {
        plain,
        trend: Some(Trend {
            intercept,
            slope,
            df,
        }),
    }
}

#[cfg(test)]
mod tests;
