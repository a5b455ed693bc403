//! The testbed's noise book read from the store: the earlier pairs measured on one testbed
//! (pull requests' and `pitwall calibrate`'s), newest first, turned into one noise record per
//! benchmark by `pitwall_analysis::noise`. A pair's comparison reads only pairs that started
//! before it, so reading it again later gives the same verdicts.

use std::collections::BTreeMap;

use pitwall_analysis::HistoryNoise;
pub use pitwall_analysis::NoiseBook;
use pitwall_analysis::compare::pair_noise;
use pitwall_analysis::noise::PairNoise;
use pitwall_schema::{PairRole, RunRole};
use pitwall_store::{RunSummary, Store, StoreError};

use crate::source::Side;

/// Earlier pairs read into a noise book: at a half-life of 10 pairs, the 40th weighs 1/16.
pub const NOISE_RECORD_MAX_PAIRS: usize = 40;

/// One earlier pair: its id, role (of its base run), when it started, and its two sides.
#[derive(Debug, Clone)]
pub struct StoredPair {
    pub id: String,
    pub role: Option<RunRole>,
    pub started_at: String,
    pub base: Side,
    pub head: Side,
    /// What it tells the noise book, computed once when it is read.
    pub noise: PairNoise,
}

/// The pairs stored on `testbed` that started before `before` (all when `None`), leaving out
/// the pair `exclude`, newest first, at most `limit`.
pub fn stored_pairs(
    store: &dyn Store,
    testbed: &str,
    before: Option<&str>,
    exclude: Option<&str>,
    limit: usize,
) -> Result<Vec<StoredPair>, StoreError> {
    let mut by_pair: BTreeMap<String, Vec<RunSummary>> = BTreeMap::new();
    for s in store.list_pair_runs(testbed)? {
        let Some(pair) = s.pair_id.clone() else {
            continue;
        };
        if exclude != Some(pair.as_str()) {
            by_pair.entry(pair).or_default().push(s);
        }
    }
    let mut pairs: Vec<(String, String, Vec<RunSummary>)> = by_pair
        .into_iter()
        .filter(|(_, runs)| runs.len() == 2)
        .map(|(id, runs)| {
            let last = runs.iter().map(|r| r.started_at.clone()).max();
            (id, last.unwrap_or_default(), runs)
        })
        .filter(|(_, last, _)| before.is_none_or(|b| last.as_str() < b))
        .collect();
    pairs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    pairs.truncate(limit);
    let mut out = Vec::with_capacity(pairs.len());
    for (id, started_at, runs) in pairs {
        let mut base = None;
        let mut head = None;
        let mut role = None;
        for summary in &runs {
            let run = store.get_run(&summary.id)?;
            let side_role = run.pair.as_ref().map(|p| p.role);
            let side = Side {
                label: format!("run {}", run.id),
                results: run.results.clone(),
                run: Some(run),
            };
            if side_role == Some(PairRole::Base) {
                role = side.run.as_ref().and_then(|r| r.role);
                base = Some(side);
            } else {
                head = Some(side);
            }
        }
        if let (Some(base), Some(head)) = (base, head) {
            out.push(StoredPair {
                id,
                role,
                started_at,
                noise: pair_noise(&base, &head),
                base,
                head,
            });
        }
    }
    Ok(out)
}

/// The noise book of `testbed` for a pair that started at `before` (`None`: one about to be
/// measured), without the pair `exclude` itself.
pub fn book(
    store: &dyn Store,
    testbed: &str,
    before: Option<&str>,
    exclude: Option<&str>,
) -> Result<NoiseBook, StoreError> {
    let pairs = stored_pairs(store, testbed, before, exclude, NOISE_RECORD_MAX_PAIRS)?;
    Ok(book_of(&pairs))
}

/// The book of pairs already read, newest first.
pub fn book_of(pairs: &[StoredPair]) -> NoiseBook {
    let each: Vec<PairNoise> = pairs.iter().map(|p| p.noise.clone()).collect();
    NoiseBook::from_observations(&each)
}

/// The book for comparing two stored sides: the pair's testbed and the pairs before it when
/// both sides are one interleaved pair, else none (separately measured runs and files are
/// compared without a record).
pub fn book_for_sides(
    store: &dyn Store,
    base: &Side,
    head: &Side,
) -> Result<NoiseBook, StoreError> {
    let (Some(b), Some(h)) = (&base.run, &head.run) else {
        return Ok(NoiseBook::empty());
    };
    match (&b.pair, &h.pair) {
        (Some(pb), Some(ph)) if pb.id == ph.id => {
            let first = b.started_at.as_str().min(h.started_at.as_str());
            book(store, &b.testbed_or_derived(), Some(first), Some(&pb.id))
        }
        _ => Ok(NoiseBook::empty()),
    }
}

/// Each testbed's noise book today, for the histories among `runs` (their `history` runs'
/// testbeds): what history detection is offered on short histories
/// (`pitwall_analysis::HistoryNoise`). Unlike a pair's book it reads every pair stored so far,
/// so a calibration measured later can make a step on a short history detectable.
pub fn history_noise(
    store: &dyn Store,
    runs: &[pitwall_schema::Run],
) -> Result<HistoryNoise, StoreError> {
    let testbeds: std::collections::BTreeSet<String> = runs
        .iter()
        .filter(|r| r.role_or_implied() == RunRole::History)
        .map(|r| r.testbed_or_derived())
        .collect();
    let mut noise = HistoryNoise::none();
    for testbed in testbeds {
        noise.insert(&testbed, book(store, &testbed, None, None)?);
    }
    Ok(noise)
}
