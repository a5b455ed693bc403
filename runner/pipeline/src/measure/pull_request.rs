//! The pull-request job's use case (`pitwall ci`): the pair of `--base` and `--head`
//! measured over the suites a pull request compares, with the `[ci]` settings, and returned
//! for printing and publishing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{MeasureError, Measurer, PairRequest, PairResult, measure_pair};
use crate::git::Repo;
use crate::pair::{PairRounds, UntilDecided};
use pitwall_store::Store;

/// A pull-request job: `--base` and `--head` of the repository at `repo`.
#[derive(Debug, Clone)]
pub struct CiRequest {
    repo: PathBuf,
    pub base: String,
    pub head: String,
    pub rounds: u32,
    /// `--max-rounds`, else `[ci] max_rounds` (with `[ci] until_decided`).
    pub max_rounds: Option<u32>,
    pub max_time: Option<Duration>,
}

impl CiRequest {
    /// Checks, before anything is measured or stored, that `dir` is inside a git repository.
    pub fn new(dir: &Path, base: &str, head: &str, rounds: u32) -> Result<Self, MeasureError> {
        Repo::discover(dir).map_err(|_| MeasureError::NotARepository(dir.to_path_buf()))?;
        Ok(CiRequest {
            repo: dir.to_path_buf(),
            base: base.to_string(),
            head: head.to_string(),
            rounds,
            max_rounds: None,
            max_time: None,
        })
    }
}

/// The pull-request job: measures the pair (until decided when `[ci] until_decided`) over
/// the configured suites (the built-in ones only with `[ci] builtin_suites`, or when there are
/// no others: `ci_suites`), stores both runs and returns exactly that pair for publishing.
pub fn ci(
    m: &Measurer,
    store: &mut dyn Store,
    req: &CiRequest,
) -> Result<PairResult, MeasureError> {
    let ci = &m.config.ci;
    let pair = PairRequest {
        select: crate::ci_suites::pull_request_suites(m.config, m.hooks.observer()),
        repo: req.repo.clone(),
        base: req.base.clone(),
        head: req.head.clone(),
        rounds: PairRounds {
            rounds: req.rounds,
            until_decided: ci.until_decided.then(|| UntilDecided {
                max_rounds: req.max_rounds.unwrap_or(ci.max_rounds),
                max_time: req.max_time,
            }),
        },
        rebuild: false,
    };
    measure_pair(m, store, &pair)
}
