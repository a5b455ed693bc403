//! The testbed's noise record offered to history detection (issue 27: "use between-process
//! information only: a point's replicates … and the testbed's noise record where there is
//! one"). Each testbed's record (`NoiseBook`, made of its earlier A/A pairs: `pitwall
//! calibrate`, pull requests) holds, per benchmark key, the variance of one replicate's log
//! value between processes; a history point is the geometric mean of its replicates, so its
//! log variance is the record's divided by its replicates. The detector pools it with the
//! data's own variance on short histories where the two agree
//! (`pitwall_stats::changepoint::KnownNoise`).

use std::collections::BTreeMap;

use pitwall_stats::changepoint::KnownNoise;
use serde::Serialize;

use super::Series;
use crate::NoiseBook;

/// Each testbed's noise book, for the histories of a store.
#[derive(Debug, Clone, Default)]
pub struct HistoryNoise {
    books: BTreeMap<String, NoiseBook>,
}

/// What a series was offered from its testbed's record, as `detect` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RecordOffered {
    /// Earlier pairs behind the record.
    pub pairs: usize,
    /// Its degrees of freedom.
    pub dof: f64,
    /// Between-process coefficient of variation of one point, in percent (the record's
    /// per-replicate figure over √replicates of the series' smallest point).
    pub point_cv_pct: f64,
}

impl HistoryNoise {
    /// No record for any testbed: detection from the points alone.
    pub fn none() -> HistoryNoise {
        HistoryNoise::default()
    }

    /// Adds `testbed`'s book (an empty book adds nothing).
    pub fn insert(&mut self, testbed: &str, book: NoiseBook) {
        if !book.is_empty() {
            self.books.insert(testbed.to_string(), book);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.books.is_empty()
    }

    /// The record for `series`, as the detector takes it, with what `detect` reports of it;
    /// `None` when its testbed has no record of its key. Points pooling more replicates are
    /// less noisy than the record says of the fewest; the variance of the series' smallest
    /// point is taken for all (conservative for the others).
    pub fn known(&self, series: &Series) -> Option<(KnownNoise, RecordOffered)> {
        let record = self.books.get(&series.testbed)?.get(&series.key)?;
        let reps = series
            .points
            .iter()
            .map(|p| p.replicates.max(1))
            .min()
            .unwrap_or(1) as f64;
        let log_var = record.var / reps;
        (log_var > 0.0 && log_var.is_finite() && record.dof >= 1.0).then(|| {
            (
                KnownNoise {
                    log_var,
                    dof: record.dof,
                },
                RecordOffered {
                    pairs: record.pairs,
                    dof: record.dof,
                    point_cv_pct: 100.0 * log_var.sqrt(),
                },
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use pitwall_stats::ab::NoiseObs;
    use pitwall_stats::changepoint::DetectConfig;

    use super::super::tests::{main, result, run};
    use super::super::{series, series_with};
    use super::*;

    /// Five runs either side of a 3% step with run-to-run noise of about 1% (a step of 3σ):
    /// one sample per run, so one replicate per point.
    fn short_step() -> Vec<pitwall_schema::Run> {
        let noise = [0.9, -1.2, 0.3, 1.1, -1.0, -0.8, 1.2, -0.3, 0.9, -1.1];
        (0..10)
            .map(|i| {
                let level = if i < 5 { 100.0 } else { 103.0 };
                run(i, vec![result("gemm", vec![level + noise[i]])])
            })
            .collect()
    }

    fn book(var: f64, dof: f64, pairs: usize) -> NoiseBook {
        let obs = NoiseObs { var, dof };
        let each: Vec<crate::noise::PairNoise> = (0..pairs)
            .map(|_| vec![("kernel/gemm/time".to_string(), obs)])
            .collect();
        NoiseBook::from_observations(&each)
    }

    #[test]
    fn a_record_that_agrees_finds_a_three_sigma_step_on_five_runs_either_side() {
        let runs = short_step();
        let config = DetectConfig::default();
        let alone = series(&runs, &main(), &config);
        assert!(alone[0].changes.is_empty(), "{:?}", alone[0].changes);
        assert_eq!(alone[0].record, None);
        // The testbed's record: 1% between processes (log variance 1e-4), from 6 pairs.
        let mut noise = HistoryNoise::none();
        noise.insert("unknown", book(1e-4, 4.0, 6));
        let testbed = alone[0].testbed.clone();
        let mut noise_here = HistoryNoise::none();
        noise_here.insert(&testbed, book(1e-4, 4.0, 6));
        let other = series_with(&runs, &main(), &config, &noise);
        if testbed != "unknown" {
            assert!(
                other[0].changes.is_empty(),
                "another testbed's record is not used"
            );
        }
        let with = series_with(&runs, &main(), &config, &noise_here);
        let offered = with[0].record.expect("the record is offered");
        assert_eq!(offered.pairs, 6);
        assert!((offered.point_cv_pct - 1.0).abs() < 1e-9, "{offered:?}");
        assert_eq!(
            with[0].changes.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![5]
        );
    }

    #[test]
    fn a_record_far_quieter_than_the_points_is_set_aside() {
        let runs = short_step();
        let testbed = series(&runs, &main(), &DetectConfig::default())[0]
            .testbed
            .clone();
        // 0.1% between processes: the points vary 10× more, so the record is not pooled.
        let mut noise = HistoryNoise::none();
        noise.insert(&testbed, book(1e-6, 4.0, 6));
        let s = series_with(&runs, &main(), &DetectConfig::default(), &noise);
        assert!(s[0].record.is_some());
        assert!(s[0].changes.is_empty(), "{:?}", s[0].changes);
    }
}
