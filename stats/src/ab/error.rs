//! Errors of the A/B building blocks, in one place so every test reports bad input the same way
//! (the verdict layer turns them into an "inconclusive" with a reason instead of failing).

use thiserror::Error;

/// Why a statistic could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AbError {
    /// A sample had no values.
    #[error("empty sample")]
    Empty,
    /// A sample contained NaN or an infinity (a failed or timed-out run).
    #[error("sample contains a non-finite value")]
    NonFinite,
    /// A value was zero or negative where a ratio or logarithm needs positive values.
    #[error("sample contains a zero or negative value")]
    NonPositive,
    /// Too few values for the statistic.
    #[error("need at least {needed} values, got {got}")]
    TooFewSamples { needed: usize, got: usize },
    /// The statistic is undefined for this input (e.g. a zero baseline median).
    #[error("statistic undefined for this input")]
    Degenerate,
    /// A parameter was out of range.
    #[error("bad parameter: {0}")]
    BadParameter(&'static str),
}
