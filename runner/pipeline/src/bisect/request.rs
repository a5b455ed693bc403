//! What a bisection is asked to do, why it can fail, and the measurement context every step
//! of it shares.

use pitwall_analysis::comparison::ComparisonReport;
use pitwall_engine::RunObserver;
use pitwall_engine::config::Config;
use pitwall_schema::Backend;

use crate::git::GitError;
use crate::pair::UntilDecided;
use crate::request::RunRequest;
use crate::run::RunError;
use crate::setup::RunEnvironment;

/// What to bisect.
#[derive(Debug, Clone)]
pub struct BisectRequest {
    pub good: String,
    pub bad: String,
    /// Suites and benchmark filter for the endpoint measurement (as `run --suite/--bench`).
    pub select: RunRequest,
    /// Rounds per measurement, and the most rounds one probe may take to decide.
    pub rounds: u32,
    pub max_rounds: u32,
    pub rebuild: bool,
}

impl BisectRequest {
    /// Every measurement of a bisection, endpoints and probes alike, runs until decided with a
    /// first batch of `rounds` and at most `max_rounds`.
    pub(super) fn until_decided(&self) -> UntilDecided {
        UntilDecided {
            max_rounds: self.max_rounds,
            max_time: None,
        }
    }
}

/// Why a bisection could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Run(Box<RunError>),
    #[error("good `{good}` ({good_sha}): {source}")]
    GoodUnusable {
        good: String,
        good_sha: String,
        #[source]
        source: Box<RunError>,
    },
    #[error("bad `{bad}` ({bad_sha}): {source}")]
    BadUnusable {
        bad: String,
        bad_sha: String,
        #[source]
        source: Box<RunError>,
    },
    #[error("{what} measured no results (hint: check --suite and --bench)")]
    NothingMeasured { what: String },
    /// `hint` names what stopped the endpoints' measurement; `endpoints` is their comparison,
    /// for the table shown with the error.
    #[error("no regression between good and bad{selection}: {summary} (hint: {hint})")]
    NoRegression {
        selection: String,
        summary: String,
        hint: String,
        endpoints: Box<ComparisonReport>,
    },
}

impl From<RunError> for BisectError {
    fn from(e: RunError) -> BisectError {
        BisectError::Run(Box::new(e))
    }
}

/// The measurement context shared by every step.
pub(super) struct Measure<'a> {
    pub config: &'a Config,
    pub backend: &'a dyn Backend,
    pub env: &'a RunEnvironment,
    pub observer: &'a dyn RunObserver,
}
