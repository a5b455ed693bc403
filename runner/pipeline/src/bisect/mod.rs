//! Bisection of a performance regression between a good and a bad commit (`pitwall bisect`):
//! the noise-aware search (`search`) and the driver that builds and measures commits (`drive`).

mod drive;
mod endpoints;
mod request;
mod search;

pub use drive::bisect;
pub use pitwall_analysis::bisect::BisectReport;
pub use request::{BisectError, BisectRequest};
pub use search::{Class, Range, Verdict, classify, classify_by_estimate, max_steps};
