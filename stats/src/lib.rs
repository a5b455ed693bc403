//! Pure statistics over `&[f64]` (no I/O): summaries and intervals, A/B verdicts, and
//! change-point detection built on them.

pub mod ab;
pub mod changepoint;
pub mod summary;

pub use ab::{AbConfig, AbError, Comparison, PairInput, Verdict, compare_all};
pub use summary::{
    Summary, mad, median, median_ci, median_ci_rel_half_width, quantile, quantile_sorted,
    replicate_mean_ci,
};
