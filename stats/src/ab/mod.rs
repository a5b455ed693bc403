//! A/B comparison of a candidate against a baseline, benchmark by benchmark: rank and t tests,
//! false-discovery control, a bootstrap interval of the median ratio, and the verdict built on
//! them.

pub mod bh;
pub mod bootstrap;
mod crossover;
pub mod error;
mod futility;
pub mod hodges_lehmann;
pub mod moderated;
pub mod mwu;
pub mod noise;
pub mod record;
pub mod replicate_summary;
pub mod replicated;
pub mod sequential;
pub mod trend;
pub mod verdict;
pub mod welch;

pub use bh::benjamini_hochberg;
pub use bootstrap::{RatioCi, Xoshiro256, ratio_of_medians_ci};
pub use error::AbError;
pub use hodges_lehmann::{hodges_lehmann, hodges_lehmann_ratio};
pub use mwu::{Alternative, MwuMethod, MwuResult, mann_whitney_u};
pub use noise::{NoiseObs, NoiseRecord, RecordUse};
pub use replicate_summary::RoundOrder;
pub use replicated::{Replicate, ReplicatedPair, compare_replicated, interval_at};
pub use sequential::{SequentialPlan, Spending};
pub use verdict::{AbConfig, Comparison, Method, PairInput, Verdict, compare_all};
pub use welch::{WelchResult, welch_t_test};
