//! Change-point detection over benchmark histories and its evaluation metrics.

mod detect;
mod edivisive;
pub mod metrics;
mod refine;
mod steptest;
#[cfg(test)]
mod tests;
mod verdict;

pub use detect::{ChangePoint, DetectConfig, detect};
