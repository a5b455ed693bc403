//! Scores of a change-point detector against human annotations: the F1 score with a margin and
//! the covering metric, exactly as the Turing Change Point Dataset defines them, so that
//! pitwall's detector can be compared with published results.
//!
//! Source: G.J.J. van den Burg & C.K.I. Williams, "An Evaluation of Change Point Detection
//! Algorithms", arXiv:2003.06222 (2020), §4 "Metrics" (F1 after Killick et al. with the
//! precision over the union of annotations and the recall averaged over annotators; covering
//! after Arbelaez et al. 2011). Both the annotation sets and the prediction include index 0,
//! as in TCPD's `metrics.py`; callers pass them without it.

/// True positives of `predicted` against `truth`, TCPD's `true_positives`: for each τ in
/// `truth` (ascending), the nearest still-unmatched prediction within `margin` (ties: the
/// smaller index) is matched and removed. Both sets must be sorted and deduplicated.
fn true_positives(truth: &[usize], predicted: &[usize], margin: usize) -> usize {
    let mut free: Vec<usize> = predicted.to_vec();
    let mut count = 0;
    for &tau in truth {
        let best = free
            .iter()
            .enumerate()
            .filter(|(_, x)| tau.abs_diff(**x) <= margin)
            .min_by_key(|(_, x)| (tau.abs_diff(**x), **x));
        if let Some((pos, _)) = best {
            free.remove(pos);
            count += 1;
        }
    }
    count
}

/// A sorted, deduplicated set with index 0 added, as TCPD does for every set.
fn with_zero(points: &[usize]) -> Vec<usize> {
    let mut v: Vec<usize> = points.to_vec();
    v.push(0);
    v.sort_unstable();
    v.dedup();
    v
}

/// TCPD's F1 score (α = ½) of `predicted` against the annotators' sets, with a `margin`
/// (TCPD uses 5). Precision is over the union of all annotations, recall is the mean over
/// annotators. Index 0 is added to every set. With no annotators the score is 1 when nothing
/// (besides 0) is predicted and the precision otherwise.
pub fn f1_score(annotations: &[Vec<usize>], predicted: &[usize], margin: usize) -> f64 {
    let x = with_zero(predicted);
    let sets: Vec<Vec<usize>> = annotations.iter().map(|t| with_zero(t)).collect();
    let mut union: Vec<usize> = sets.iter().flatten().copied().collect();
    union.push(0);
    union.sort_unstable();
    union.dedup();
    let precision = true_positives(&union, &x, margin) as f64 / x.len() as f64;
    let recall = if sets.is_empty() {
        1.0
    } else {
        sets.iter()
            .map(|t| true_positives(t, &x, margin) as f64 / t.len() as f64)
            .sum::<f64>()
            / sets.len() as f64
    };
    if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    }
}

/// Segments [start, end) of [0, n) split at `points` (points outside (0, n) are ignored).
fn partition(points: &[usize], n: usize) -> Vec<(usize, usize)> {
    let cuts = with_zero(points);
    let mut bounds: Vec<usize> = cuts.into_iter().filter(|&p| p < n).collect();
    bounds.push(n);
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Jaccard index of two intervals.
fn overlap(a: (usize, usize), b: (usize, usize)) -> f64 {
    let inter = a.1.min(b.1).saturating_sub(a.0.max(b.0));
    let union = (a.1 - a.0) + (b.1 - b.0) - inter;
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

/// TCPD's covering metric of the partition induced by `predicted` on [0, n) against each
/// annotator's partition, averaged over annotators: Σ over annotated segments A of
/// |A| · max over predicted segments A' of |A∩A'| / |A∪A'|, divided by n. 1.0 when `n` is 0
/// or there are no annotators.
pub fn covering(annotations: &[Vec<usize>], predicted: &[usize], n: usize) -> f64 {
    if n == 0 || annotations.is_empty() {
        return 1.0;
    }
    let pred = partition(predicted, n);
    let per_annotator = annotations.iter().map(|t| {
        partition(t, n)
            .into_iter()
            .map(|a| {
                let best = pred.iter().map(|&b| overlap(a, b)).fold(0.0, f64::max);
                (a.1 - a.0) as f64 * best
            })
            .sum::<f64>()
            / n as f64
    });
    per_annotator.sum::<f64>() / annotations.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn f1_check_values_from_tcpd() {
        let ann = vec![vec![10, 20], vec![11, 20], vec![10], vec![0, 5]];
        assert!(close(f1_score(&ann, &[10, 20], 5), 1.0));
        let ann = vec![vec![], vec![10], vec![50]];
        assert!(close(f1_score(&ann, &[10], 5), 10.0 / 11.0));
        assert!(close(f1_score(&ann, &[], 5), 0.8));
    }

    #[test]
    fn covering_check_values_from_tcpd() {
        let ann = vec![vec![10, 20], vec![10], vec![0, 5]];
        assert!(close(
            covering(&ann, &[10, 20], 45),
            0.796_296_296_296_296_3
        ));
        let ann = vec![vec![], vec![10], vec![40]];
        assert!(close(covering(&ann, &[10], 45), 0.795_414_462_081_128_6));
        assert!(close(covering(&ann, &[], 45), 0.818_930_041_152_263_4));
    }

    #[test]
    fn a_prediction_matches_at_most_one_annotation() {
        // Two annotated points 2 apart, one prediction: recall 1/2 of the non-zero points.
        let ann = vec![vec![10, 12]];
        let f = f1_score(&ann, &[11], 5);
        // P = 2/2 (0 and 11 both matched), R = 2/3.
        assert!(close(f, 2.0 * (2.0 / 3.0) / (1.0 + 2.0 / 3.0)));
    }

    #[test]
    fn metrics_ignore_points_past_the_end_in_covering() {
        let ann = vec![vec![5]];
        assert!(close(covering(&ann, &[5, 100], 10), 1.0));
        assert!(close(covering(&[], &[3], 10), 1.0));
        assert!(close(covering(&ann, &[], 0), 1.0));
    }
}
