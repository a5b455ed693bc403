//! Change-point detection over benchmark histories and its evaluation metrics.

mod detect;
mod edivisive;
pub mod metrics;
mod refine;
mod steptest;
#[cfg(test)]
mod tests;
mod tip;
mod verdict;

pub use detect::{ChangePoint, DetectConfig, detect};
pub use tip::{MIN_TIP_POINTS, SuspectedChange, suspect_tip};
