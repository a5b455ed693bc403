//! Pure statistics over `&[f64]` (no I/O): summaries and intervals now; A/B verdicts and
//! change-point detection build on them.

pub mod changepoint;
pub mod summary;

pub use summary::{
    Summary, mad, median, median_ci, median_ci_rel_half_width, quantile, quantile_sorted,
};
