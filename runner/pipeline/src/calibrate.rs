//! `pitwall calibrate`: an interleaved A/A pair of one commit against itself, in new processes,
//! stored with role `calibration`, and what the testbed now knows of each benchmark's noise:
//! the record every later pair on this testbed borrows from (`crate::noise`).

use std::path::PathBuf;

use pitwall_analysis::calibration::{Calibration, FalseCalls, benchmark_noise};
use pitwall_analysis::noise::budget_plan;
use pitwall_schema::RunRole;
use pitwall_stats::ab::AbConfig;
use pitwall_store::{Store, StoreError};

use crate::compare::{CompareOptions, compare};
use crate::measure::{MeasureError, MeasuredPair, Measurer, PairRequest, PairResult, measure_pair};
use crate::noise::{NOISE_RECORD_MAX_PAIRS, book_of, stored_pairs};
use crate::pair::PairRounds;
use crate::request::RunRequest;

/// Calibration pairs read for the false-call rate (with the pairs before each for its record).
pub const CALIBRATION_HISTORY_PAIRS: usize = 400;

/// What `pitwall calibrate` measures.
#[derive(Debug, Clone)]
pub struct CalibrateRequest {
    pub select: RunRequest,
    pub repo: PathBuf,
    /// The commit measured against itself.
    pub commit: String,
    pub rounds: u32,
    pub rebuild: bool,
}

/// A calibration measured and stored, and its report.
#[derive(Debug, Clone)]
pub struct Calibrated {
    pub pair: Box<MeasuredPair>,
    pub report: Calibration,
}

/// Measures the A/A pair (stored with role `calibration`) and reports each benchmark's noise
/// and the false calls of every calibration pair on the testbed so far; `None` when the
/// commit could not be built (stored as a failed run).
pub fn calibrate(
    m: &Measurer,
    store: &mut dyn Store,
    req: &CalibrateRequest,
) -> Result<Option<Calibrated>, MeasureError> {
    // Both sides are one commit, so all its code is identical: measured anyway, that is the
    // point of an A/A pair.
    let mut config = m.config.clone();
    config.ci.measure_identical = true;
    let calibrating = Measurer {
        config: &config,
        backend: m.backend,
        hooks: m.hooks,
        kernels: m.kernels,
        labels: m.labels.clone().with_role(RunRole::Calibration),
    };
    let pair = PairRequest {
        select: req.select.clone(),
        repo: req.repo.clone(),
        base: req.commit.clone(),
        head: req.commit.clone(),
        rounds: PairRounds {
            rounds: req.rounds.max(2),
            until_decided: None,
        },
        rebuild: req.rebuild,
    };
    let PairResult::Measured(pair) = measure_pair(&calibrating, store, &pair)? else {
        return Ok(None);
    };
    let run = pair.outcome.head.run.clone();
    let testbed = run.testbed_or_derived();
    let pairs = stored_pairs(store, &testbed, None, None, CALIBRATION_HISTORY_PAIRS)
        .map_err(MeasureError::NoiseRecord)?;
    let ab = AbConfig::default();
    let plan = budget_plan(
        pitwall_engine::defaults::ROUNDS,
        m.config.ci.max_rounds,
        ab.replicate_alpha,
    );
    let now = book_of(&pairs[..pairs.len().min(NOISE_RECORD_MAX_PAIRS)]);
    let mut false_calls = FalseCalls::default();
    for (i, p) in pairs.iter().enumerate() {
        if p.role != Some(RunRole::Calibration) {
            continue;
        }
        let earlier = &pairs[i + 1..pairs.len().min(i + 1 + NOISE_RECORD_MAX_PAIRS)];
        let report = compare(
            &p.base,
            &p.head,
            m.config,
            None,
            &ab,
            CompareOptions::default(),
            &book_of(earlier),
        );
        false_calls.add(&report);
    }
    // The record is new: the testbed's histories are re-detected with it, where a short
    // history's step may now be found (or a suspected one cleared).
    redetect_testbed(store, &testbed, &crate::alerts::AlertSettings::of(m.config)).map_err(
        |source| MeasureError::Alerts {
            id: run.id.clone(),
            source,
        },
    )?;
    let report = Calibration {
        testbed,
        commit: run.commit.clone(),
        pair_id: run.pair.as_ref().map(|p| p.id.clone()).unwrap_or_default(),
        rounds: pair.outcome.rounds,
        first_look: plan.first_look,
        max_rounds: plan.max_looks,
        benchmarks: benchmark_noise((&pair.base, &pair.head), &now, &plan),
        false_calls,
    };
    Ok(Some(Calibrated { pair, report }))
}

/// Re-detects each history on `testbed` (per project and branch) from its newest run, as
/// storing that run did (`crate::alerts::refresh`), now that the testbed's noise record has
/// grown. Alerts it raises are stored and listed by `pitwall alerts`; a calibration notifies
/// nobody.
fn redetect_testbed(
    store: &mut dyn Store,
    testbed: &str,
    settings: &crate::alerts::AlertSettings,
) -> Result<(), StoreError> {
    let mut newest: std::collections::BTreeMap<
        (String, Option<String>),
        pitwall_store::RunSummary,
    > = std::collections::BTreeMap::new();
    for s in store.list_runs(None)? {
        let history = s.role.as_deref().is_none_or(|r| r == "history");
        if s.testbed.as_deref() != Some(testbed) || s.pair_id.is_some() || s.excluded || !history {
            continue;
        }
        let key = (s.project.clone(), s.branch.clone());
        if newest.get(&key).is_none_or(|n| n.started_at < s.started_at) {
            newest.insert(key, s);
        }
    }
    let mut touched = Vec::new();
    for s in newest.values() {
        let run = store.get_run(&s.id)?;
        if run.role_or_implied() == RunRole::History {
            touched.push(run);
        }
    }
    crate::alerts::refresh(
        store,
        &touched,
        settings,
        &pitwall_schema::time::now_rfc3339(),
    )?;
    Ok(())
}
