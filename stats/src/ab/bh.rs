//! Benjamini–Hochberg adjusted p-values (q-values): one pull request compares dozens of
//! benchmarks at once, and controlling the false discovery rate across them is what keeps a
//! clean change from lighting up a random benchmark or two.
//!
//! Step-up procedure of Benjamini & Hochberg (1995, *JRSS B* 57, §3): with the m p-values
//! sorted ascending, q₍ᵢ₎ = min over j ≥ i of min(1, m·p₍ⱼ₎ / j). Rejecting every hypothesis
//! with q ≤ α controls the FDR at α for independent (and positively dependent) tests.
//! Same numbers as `scipy.stats.false_discovery_control(p, method="bh")` and statsmodels'
//! `multipletests(p, method="fdr_bh")`, checked by `stats/golden/bh.json`.

/// BH-adjusted p-values in the input order. A NaN p-value is treated as 1 (no evidence) and
/// its q-value is 1; values are clamped to [0, 1] first.
pub fn benjamini_hochberg(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let clean: Vec<f64> = p_values
        .iter()
        .map(|&p| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) })
        .collect();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| clean[a].total_cmp(&clean[b]));
    let mut q = vec![0.0; m];
    let mut running = 1.0_f64;
    for (rank0, &i) in order.iter().enumerate().rev() {
        let adjusted = clean[i] * m as f64 / (rank0 + 1) as f64;
        running = running.min(adjusted);
        q[i] = running;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // scipy.stats.false_discovery_control([0.01, 0.04, 0.03, 0.2]) =
        // [0.04, 0.05333333, 0.05333333, 0.2]
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.2]);
        let want = [0.04, 0.16 / 3.0, 0.16 / 3.0, 0.2];
        for (a, b) in q.iter().zip(want) {
            assert!((a - b).abs() < 1e-15, "{q:?}");
        }
    }

    #[test]
    fn edge_cases() {
        assert!(benjamini_hochberg(&[]).is_empty());
        assert_eq!(benjamini_hochberg(&[0.3]), vec![0.3]);
        assert_eq!(benjamini_hochberg(&[f64::NAN, 0.01]), vec![1.0, 0.02]);
        assert_eq!(benjamini_hochberg(&[0.9, 0.95]), vec![0.95, 0.95]);
    }
}
