//! The analysis model: what stored results mean, as values. An A/B comparison of two sides
//! (`compare`, `comparison`), benchmark histories with their change points (`history`), and what
//! a bisection found (`bisect`). Built here (or, for bisect, by the pipeline from measurements)
//! and only rendered by `pitwall-reports`, so `detect`, the HTML report, the PR comment and
//! `ci` show the same verdicts and change points. Depends on the schema and the statistics only.

pub mod alerts;
pub mod bisect;
pub mod calibration;
pub mod compare;
pub mod comparison;
pub mod history;
pub mod identical;
pub mod noise;
pub mod number;
pub mod order;
pub mod precision;
pub mod sequential;
pub mod summary;
pub mod writeup;

pub use alerts::{AlertRules, DetectedStep, detect_alerts, reconcile, sort_open_first};
pub use bisect::{BisectReport, BisectStep, CommitRef};
pub use compare::{CompareOptions, FILE_SUITE, Side, compare};
pub use comparison::{ComparedBenchmark, ComparisonReport, VerdictCounts};
pub use history::{
    DetectedChange, HistoryFilter, HistoryNoise, Series, SeriesDetection, SeriesSource,
    detect_history, series,
};
pub use noise::{NoiseBook, ThresholdRule};
