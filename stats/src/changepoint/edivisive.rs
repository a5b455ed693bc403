//! Candidate change points: the E-divisive means divergence of Matteson & James, computed on
//! ranks inside fixed windows so that each candidate depends only on nearby data.
//!
//! Source: D.S. Matteson & N.A. James, "A Nonparametric Approach for Multiple Change Point
//! Analysis of Multivariate Data", JASA 109(505), 2014, §2 (the divergence Ê with α = 1 and
//! the scaled statistic Q̂ = mn/(m+n)·Ê, eq. 6–7). Windowing follows Hunter/Otava (Fleming et
//! al., "Hunter: Using Change Point Detection to Hunt for Performance Regressions", ICPE 2023,
//! §4): the series is cut into windows of fixed length with 50% overlap and each window is
//! split recursively. Two departures: the divergence is computed on within-interval ranks (a
//! rank energy statistic, so a throttling spike counts no more than any other high value), and
//! windows are anchored at multiples of the step from index 0 rather than at the series end, so
//! appending data never moves an earlier window. The end point κ of Matteson & James is fixed at
//! the interval end (the window already bounds the interval).

/// Average ranks (1-based; ties share the mean rank) of `x`, as f64.
pub(crate) fn ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut out = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]].total_cmp(&x[order[i]]).is_eq() {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = r;
        }
        i = j + 1;
    }
    out
}

/// The split τ (relative to `x`, first point of the right part) maximising Q̂(τ) over
/// τ ∈ [min_seg, len − min_seg], with its Q̂ value. Computed on the ranks of `x` in O(len²)
/// by moving one point at a time from the right part to the left part. `None` when the
/// interval is too short or the ranks are all equal.
pub(crate) fn best_split(x: &[f64], min_seg: usize) -> Option<(usize, f64)> {
    let len = x.len();
    let min_seg = min_seg.max(1);
    if len < 2 * min_seg {
        return None;
    }
    let r = ranks(x);
    // Pair sums of |r_i − r_k|: within the left part, within the right part, across.
    let mut within_right = 0.0;
    for i in 0..len {
        for k in (i + 1)..len {
            within_right += (r[i] - r[k]).abs();
        }
    }
    let mut within_left = 0.0;
    let mut cross = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for t in 0..len - min_seg {
        // Move point t from the right part to the left part.
        let a: f64 = r[..t].iter().map(|v| (v - r[t]).abs()).sum();
        let b: f64 = r[t + 1..].iter().map(|v| (v - r[t]).abs()).sum();
        cross += b - a;
        within_left += a;
        within_right -= b;
        let tau = t + 1;
        if tau < min_seg {
            continue;
        }
        let m = tau as f64;
        let n = (len - tau) as f64;
        let mean_within = |sum: f64, k: f64| {
            if k < 2.0 {
                0.0
            } else {
                2.0 * sum / (k * (k - 1.0))
            }
        };
        let e = 2.0 * cross / (m * n) - mean_within(within_left, m) - mean_within(within_right, n);
        let q = m * n / (m + n) * e;
        if best.is_none_or(|(_, bq)| q > bq) {
            best = Some((tau, q));
        }
    }
    best.filter(|&(_, q)| q > 0.0)
}

/// Start offsets of the fixed windows of length `len` (step `len / 2`) over `n` points: every
/// multiple of the step from 0 whose window holds at least `2·min_seg` points.
pub(crate) fn window_starts(n: usize, len: usize, min_seg: usize) -> Vec<usize> {
    let step = (len / 2).max(1);
    let mut starts = Vec::new();
    let mut s = 0;
    while s + 2 * min_seg.max(1) <= n {
        starts.push(s);
        if s + len >= n {
            break;
        }
        s += step;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_average_ties() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
        assert!(ranks(&[]).is_empty());
    }

    #[test]
    fn best_split_finds_a_step() {
        let mut x: Vec<f64> = (0..20).map(|i| 1.0 + 0.01 * ((i * 7 % 5) as f64)).collect();
        x.extend((0..30).map(|i| 2.0 + 0.01 * ((i * 3 % 4) as f64)));
        let (tau, q) = best_split(&x, 3).unwrap();
        assert_eq!(tau, 20);
        assert!(q > 0.0);
    }

    #[test]
    fn best_split_respects_min_segment_and_degenerate_input() {
        assert!(best_split(&[1.0, 2.0, 3.0], 2).is_none());
        assert!(best_split(&[5.0; 10], 2).is_none());
        let x: Vec<f64> = (0..10).map(|i| i as f64).collect();
        let (tau, _) = best_split(&x, 4).unwrap();
        assert!((4..=6).contains(&tau));
    }

    /// Q̂ straight from Matteson & James eq. 6–7 on the ranks, for one split.
    fn q_direct(x: &[f64], tau: usize) -> f64 {
        let r = ranks(x);
        let (a, b) = r.split_at(tau);
        let (m, n) = (a.len() as f64, b.len() as f64);
        let cross: f64 = a
            .iter()
            .flat_map(|u| b.iter().map(move |v| (u - v).abs()))
            .sum();
        let within = |s: &[f64]| -> f64 {
            let k = s.len() as f64;
            let sum: f64 = s
                .iter()
                .flat_map(|u| s.iter().map(move |v| (u - v).abs()))
                .sum();
            if k < 2.0 { 0.0 } else { sum / (k * (k - 1.0)) }
        };
        m * n / (m + n) * (2.0 * cross / (m * n) - within(a) - within(b))
    }

    #[test]
    fn incremental_q_matches_the_direct_formula() {
        let x = [
            3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0, 9.0, 7.0,
        ];
        let (tau, q) = best_split(&x, 2).unwrap();
        let best = (2..=x.len() - 2)
            .map(|t| (t, q_direct(&x, t)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        assert_eq!(tau, best.0);
        assert!((q - best.1).abs() < 1e-9, "{q} vs {best:?}");
    }

    #[test]
    fn windows_are_anchored_at_zero() {
        assert_eq!(window_starts(100, 50, 5), vec![0, 25, 50]);
        assert_eq!(window_starts(101, 50, 5), vec![0, 25, 50, 75]);
        assert_eq!(window_starts(9, 50, 5), Vec::<usize>::new());
        assert_eq!(window_starts(10, 50, 5), vec![0]);
    }
}
