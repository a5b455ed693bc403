//! Change-point detection over benchmark histories and its evaluation metrics.

mod config;
mod detect;
mod edivisive;
mod known;
pub mod metrics;
mod refine;
mod scan;
mod steptest;
#[cfg(test)]
mod tests;
mod tip;
mod verdict;

pub use config::{ChangePoint, DetectConfig};
pub use detect::detect;
pub use known::{KNOWN_NOISE_MIN_P, KnownNoise};
pub use tip::{MIN_TIP_POINTS, SuspectedChange, suspect_tip};
