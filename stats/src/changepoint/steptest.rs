//! The significance test behind every change point: is there a level step between two adjacent
//! stretches of a series, beyond a local linear trend and robust to one-sided outliers?
//!
//! Hunter/Otava (Fleming et al., ICPE 2023, §4.2) test a candidate with Student's t between the
//! two segments. That test raises false alarms on three kinds of data pitwall sees: throttling
//! spikes (one slow outlier inflates a mean), two clock states (bimodal noise breaks normality
//! less than one fears, but outliers from both modes still leak), and slow drifts (a trend
//! makes any two adjacent segments differ). Here the candidate is tested as the step
//! coefficient d of the regression y_t = a + b·t + d·1[t ≥ τ] + ε (a level shift with a common
//! trend; Chow, "Tests of Equality Between Sets of Coefficients in Two Linear Regressions",
//! Econometrica 28(3), 1960, applied to the intercept only), fitted after winsorising: the
//! responses are clipped to the fit ± c·σ̂ with σ̂ = 1.4826·MAD of the residuals and refitted
//! (Huber, *Robust Statistics*, 1981, §7.8, "metric winsorising"). The p-value is two-sided
//! from Student's t with N − 3 degrees of freedom (N − 2 without the trend term). On short
//! histories the clipped responses' variance is corrected for the clipping (`Noise::Short`,
//! `huber_correction`).

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::known::KnownNoise;
use crate::summary::median;

/// Outcome of the step test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StepTest {
    /// Two-sided p-value of the step coefficient.
    pub p_value: f64,
    /// Estimated step d (right minus left, in the series' units).
    pub step: f64,
    /// Robust residual scale σ̂ (1.4826·MAD of the final residuals).
    pub scale: f64,
}

/// Solve the small symmetric system `a·x = b` by Gaussian elimination with partial pivoting;
/// `None` when singular.
fn solve<const K: usize>(mut a: [[f64; K]; K], mut b: [f64; K]) -> Option<[f64; K]> {
    for col in 0..K {
        let piv = (col..K).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..K {
            let f = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (dst, src) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *dst -= f * src;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; K];
    for row in (0..K).rev() {
        let s: f64 = (row + 1..K).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    Some(x)
}

/// Least squares of y on the rows of `design`: coefficients, and the diagonal entry of
/// (XᵀX)⁻¹ for the last coefficient (the step).
fn fit<const K: usize>(design: &[[f64; K]], y: &[f64]) -> Option<([f64; K], f64)> {
    let mut xtx = [[0.0; K]; K];
    let mut xty = [0.0; K];
    for (row, &yi) in design.iter().zip(y) {
        for i in 0..K {
            xty[i] += row[i] * yi;
            for j in 0..K {
                xtx[i][j] += row[i] * row[j];
            }
        }
    }
    let beta = solve(xtx, xty)?;
    let mut unit = [0.0; K];
    unit[K - 1] = 1.0;
    let inv_last = solve(xtx, unit)?[K - 1];
    Some((beta, inv_last))
}

/// Median of `buf` in O(n), reordering it; 0 for an empty slice.
pub(crate) fn median_in_place(buf: &mut [f64]) -> f64 {
    let n = buf.len();
    if n == 0 {
        return 0.0;
    }
    let (left, m, _) = buf.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *m;
    if n % 2 == 1 {
        upper
    } else {
        (left.iter().copied().fold(f64::NEG_INFINITY, f64::max) + upper) / 2.0
    }
}

/// Theil's line through `y` against its index: the slope is the median of the slopes of the
/// ⌊m/2⌋ disjoint pairs (i, i + ⌈m/2⌉) (the "abbreviated" form of H. Theil, "A rank-invariant
/// method of linear and polynomial regression analysis", Proc. KNAW 53, 1950; the all-pairs
/// median is Sen's, JASA 63, 1968), the intercept the median of y_i − slope·i. Each outlier
/// spoils one pair, so fewer than a quarter of the points cannot move it. Returns
/// (intercept, slope); slope 0 for fewer than two points.
pub(crate) fn theil_line(y: &[f64], buf: &mut Vec<f64>) -> (f64, f64) {
    let m = y.len();
    let h = m - m / 2;
    buf.clear();
    buf.extend((0..m / 2).map(|i| (y[i + h] - y[i]) / h as f64));
    let slope = median_in_place(buf);
    buf.clear();
    buf.extend(y.iter().enumerate().map(|(i, v)| v - slope * i as f64));
    (median_in_place(buf), slope)
}

/// Robust fitted values to start the winsorising from: a separate Theil line on each side of
/// `split`. Both the step model and the kink model are special cases of two free lines, so a
/// real step or kink leaves small residuals against this start, while a spike, which cannot
/// move either line, is clipped before any least-squares fit sees it.
pub(crate) fn robust_start(y: &[f64], split: usize) -> Vec<f64> {
    let mut buf = Vec::with_capacity(y.len());
    let mut out = Vec::with_capacity(y.len());
    for side in [&y[..split], &y[split..]] {
        let (a, b) = theil_line(side, &mut buf);
        out.extend((0..side.len()).map(|i| a + b * i as f64));
    }
    out
}

fn step_test_k<const K: usize>(
    design: &[[f64; K]],
    y: &[f64],
    clip: f64,
    start: Option<&[f64]>,
    noise: Noise,
    level: f64,
) -> Option<StepTest> {
    let (max_rho, known, short) = match noise {
        Noise::Long { max_rho } => (max_rho, None, false),
        Noise::Short { known } => (0.0, known.map(|k| (k, level)), true),
    };
    let n = y.len();
    if n <= K {
        return None;
    }
    let predict =
        |beta: &[f64; K], row: &[f64; K]| -> f64 { (0..K).map(|i| beta[i] * row[i]).sum() };
    let mut work = y.to_vec();
    let mut abs = vec![0.0; n];
    // Robust start: winsorise against the given fitted values (see `robust_start`) before the
    // first least-squares fit, so outliers cannot bend the fit that later rounds clip against.
    if let Some(start) = start {
        for ((a, yi), f) in abs.iter_mut().zip(y).zip(start) {
            *a = (yi - f).abs();
        }
        let s = 1.4826 * median_in_place(&mut abs);
        if s > 0.0 && s.is_finite() {
            for ((w, yi), f) in work.iter_mut().zip(y).zip(start) {
                *w = yi.clamp(f - clip * s, f + clip * s);
            }
        }
    }
    let (mut beta, mut inv_last) = fit(design, &work)?;
    let mut scale = 0.0;
    // Two rounds of winsorising are enough for the outlier fractions seen in practice.
    for _ in 0..2 {
        for ((a, row), yi) in abs.iter_mut().zip(design).zip(y) {
            *a = (yi - predict(&beta, row)).abs();
        }
        scale = 1.4826 * median_in_place(&mut abs);
        if scale <= 0.0 || !scale.is_finite() {
            break;
        }
        for ((w, yi), row) in work.iter_mut().zip(y).zip(design) {
            let f = predict(&beta, row);
            *w = yi.clamp(f - clip * scale, f + clip * scale);
        }
        (beta, inv_last) = fit(design, &work)?;
    }
    let resid: Vec<f64> = design
        .iter()
        .zip(&work)
        .map(|(r, w)| w - predict(&beta, r))
        .collect();
    let rss: f64 = resid.iter().map(|r| r * r).sum();
    // Serial correlation: inflate the variance by (1 + ρ)/(1 − ρ) and shrink the degrees of
    // freedom to the effective sample size, ρ the lag-1 autocorrelation of the residuals.
    let rho = if rss > 0.0 {
        (resid.windows(2).map(|w| w[0] * w[1]).sum::<f64>() / rss).clamp(0.0, max_rho)
    } else {
        0.0
    };
    let inflation = (1.0 + rho) / (1.0 - rho);
    let clipping = if short {
        huber_correction(y, &work, K)
    } else {
        1.0
    };
    let df = ((n as f64 / inflation) - K as f64).max(1.0);
    let var = rss / (n - K) as f64 * inflation * clipping;
    // The testbed's noise record, at the stretch's level, where the data agree with it
    // (`known`); its pooled standard deviation is then the scale of the effect floor too.
    let (var, df, pooled) = match known {
        Some((k, level)) => super::known::pooled(var, df, level, Some(k)),
        None => (var, df, false),
    };
    if pooled {
        scale = var.sqrt();
    }
    let step = beta[K - 1];
    let se = (var * inv_last).sqrt();
    let p_value = if se.is_nan() || se <= 1e-12 * step.abs().max(1e-300) {
        if step.abs() > 0.0 { 0.0 } else { 1.0 }
    } else {
        let t = (step / se).abs();
        let dist = StudentsT::new(0.0, 1.0, df).ok()?;
        (2.0 * dist.sf(t)).clamp(0.0, 1.0)
    };
    Some(StepTest {
        p_value,
        step,
        scale,
    })
}

/// Which history a tested stretch belongs to, and so how its noise is judged
/// (`DetectConfig::short_history`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Noise {
    /// A long history: the residuals' lag-1 autocorrelation, up to `max_rho`, inflates the
    /// variance; its own robust scale is precise enough that clipping touches outliers only.
    Long { max_rho: f64 },
    /// A short history: independent noise, the winsorised variance corrected for the clipping
    /// (`huber_correction`), and the testbed's noise record pooled in where the data agree.
    Short { known: Option<KnownNoise> },
}

/// Huber's covariance correction for a winsorised fit. The
/// residual variance of clipped responses understates the noise of the coefficients: the
/// M-estimate's covariance is κ²·[Σψ²/(n − p)]/m²·(XᵀX)⁻¹, m the share of points left
/// unclipped (the mean of ψ′) and κ = 1 + (p/n)·(1 − m)/m (Huber, *Robust Statistics*, 1981,
/// §7.6). Returns the factor κ²/m² for the variance, 1 when nothing was clipped; the degrees
/// of freedom stay those of the fit (n − p). Without it, a 10-point no-change series raised false
/// alarms at 1.7× the nominal level: the robust scale of ten residuals is often small enough
/// to clip good points (docs/STATISTICS.md, "Short histories: winsorising's variance").
fn huber_correction(y: &[f64], work: &[f64], params: usize) -> f64 {
    let n = y.len();
    let kept = y.iter().zip(work).filter(|(a, b)| a == b).count();
    if kept == n || kept == 0 {
        return 1.0;
    }
    let m = kept as f64 / n as f64;
    let kappa = 1.0 + params as f64 / n as f64 * (1.0 - m) / m;
    kappa * kappa / (m * m)
}

/// Test for a level step between `left` and `right` (adjacent, in time order). With `detrend`
/// a common linear trend is fitted too. `clip` is the winsorising constant c (in σ̂). `noise`:
/// how the residual noise is judged ([`Noise`]); a short history's record is taken at the
/// level of the stretch's median (`known::pooled`). `None` when either side is empty or the
/// fit is degenerate.
pub(crate) fn step_test(
    left: &[f64],
    right: &[f64],
    detrend: bool,
    clip: f64,
    robust: bool,
    noise: Noise,
) -> Option<StepTest> {
    if left.is_empty() || right.is_empty() {
        return None;
    }
    let y: Vec<f64> = left.iter().chain(right).copied().collect();
    // Centre the series and the time axis so the normal equations stay well conditioned.
    let centre = median(&y)?;
    let y: Vec<f64> = y.iter().map(|v| v - centre).collect();
    let n = y.len() as f64;
    let mid = (n - 1.0) / 2.0;
    let is_right = |i: usize| if i >= left.len() { 1.0 } else { 0.0 };
    let start = robust.then(|| robust_start(&y, left.len()));
    if detrend {
        let design: Vec<[f64; 3]> = (0..y.len())
            .map(|i| [1.0, (i as f64 - mid) / n, is_right(i)])
            .collect();
        step_test_k(&design, &y, clip, start.as_deref(), noise, centre.abs())
    } else {
        let design: Vec<[f64; 2]> = (0..y.len()).map(|i| [1.0, is_right(i)]).collect();
        step_test_k(&design, &y, clip, start.as_deref(), noise, centre.abs())
    }
}

/// Design of the kink regression (intercept, centred time, centred hinge at `tau`), on a time
/// axis scaled by the length.
fn kink_design(len: usize, tau: usize) -> Vec<[f64; 3]> {
    let n = len as f64;
    let mid = (n - 1.0) / 2.0;
    let hinge = |i: usize| i.saturating_sub(tau) as f64 / n;
    let hinge_mean = (0..len).map(hinge).sum::<f64>() / n;
    (0..len)
        .map(|i| [1.0, (i as f64 - mid) / n, hinge(i) - hinge_mean])
        .collect()
}

/// The hinge τ ∈ [lo, hi] whose plain least-squares kink fit (intercept, time, (t − τ)₊; no
/// winsorising) leaves the smallest residual sum of squares: a cheap way to place the hinge
/// before it is tested. O(len + hi − lo) with suffix sums. Ties: the smaller τ.
pub(crate) fn best_kink(y: &[f64], lo: usize, hi: usize) -> Option<usize> {
    let len = y.len();
    if len < 4 || lo > hi || hi >= len {
        return None;
    }
    let n = len as f64;
    let centre = median(y)?;
    let y: Vec<f64> = y.iter().map(|v| v - centre).collect();
    // Time on [0, 1); sums for the intercept and time columns.
    let t = |i: usize| i as f64 / n;
    let (mut s_t, mut s_tt, mut s_y, mut s_ty, mut s_yy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (i, &yi) in y.iter().enumerate() {
        s_t += t(i);
        s_tt += t(i) * t(i);
        s_y += yi;
        s_ty += t(i) * yi;
        s_yy += yi * yi;
    }
    // Suffix sums over i ≥ τ of 1, t, t², y, t·y, built from the end.
    let (mut c0, mut c1, mut c2, mut cy, mut cty) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut best: Option<(usize, f64)> = None;
    for tau in (lo..len).rev() {
        let ti = t(tau);
        c0 += 1.0;
        c1 += ti;
        c2 += ti * ti;
        cy += y[tau];
        cty += ti * y[tau];
        if tau > hi {
            continue;
        }
        // Hinge h_i = t_i − t_τ for i ≥ τ.
        let s_h = c1 - ti * c0;
        let s_th = c2 - ti * c1;
        let s_hh = c2 - 2.0 * ti * c1 + ti * ti * c0;
        let s_hy = cty - ti * cy;
        let xtx = [[n, s_t, s_h], [s_t, s_tt, s_th], [s_h, s_th, s_hh]];
        let xty = [s_y, s_ty, s_hy];
        let Some(beta) = solve(xtx, xty) else {
            continue;
        };
        let rss = s_yy - (0..3).map(|k| beta[k] * xty[k]).sum::<f64>();
        if !rss.is_nan() && best.is_none_or(|(_, r)| rss <= r) {
            best = Some((tau, rss));
        }
    }
    best.map(|(tau, _)| tau)
}

/// Test for a change of slope at `tau` in `y` (a "kink"): the coefficient c of
/// y_t = a + b·t + q·t² + c·(t − τ)₊ + ε, fitted, winsorised and autocorrelation-corrected
/// exactly as the step test. The null keeps a quadratic term so that smooth curvature (an
/// exponential decay, a slowly bending trend) is not read as a kink; only a bend sharper than a
/// parabola over the window counts. The returned `step` is c, the change of slope per point.
/// `None` when either side has fewer than two points or the fit is degenerate.
pub(crate) fn kink_test(
    y: &[f64],
    tau: usize,
    clip: f64,
    max_rho: f64,
    robust: bool,
) -> Option<StepTest> {
    if tau < 2 || y.len() < tau + 2 {
        return None;
    }
    let centre = median(y)?;
    let y: Vec<f64> = y.iter().map(|v| v - centre).collect();
    let n = y.len() as f64;
    let mid = (n - 1.0) / 2.0;
    let design: Vec<[f64; 4]> = kink_design(y.len(), tau)
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let u = (i as f64 - mid) / n;
            [r[0], r[1], u * u - 1.0 / 12.0, r[2]]
        })
        .collect();
    let start = robust.then(|| robust_start(&y, tau));
    let long = Noise::Long { max_rho };
    let mut t = step_test_k(&design, &y, clip, start.as_deref(), long, 0.0)?;
    t.step /= n;
    Some(t)
}

#[cfg(test)]
mod tests;
