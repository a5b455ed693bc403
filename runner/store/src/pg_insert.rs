//! Storing runs in PostgreSQL: one transaction for a run, or for a batch of runs (the server's
//! group commit), so a batch is stored whole or not at all, under the locks of
//! `pg_conn::insert_transaction` (batches of different runs are stored at once); each run's
//! results go in one statement (arrays unnested server-side), and its samples in another, a
//! row of arrays per result (schema step 18).

use pitwall_schema::{BenchmarkResult, Run};
use postgres::{Client, Transaction};

use super::pg_codec::load_run;
use super::pg_conn::{backend, insert_transaction};
use super::rows::{RunRow, already_stored, meta_json, replicate, to_json};
use super::shared::fault_pause_in_txn;
use super::sql::queries::POSTGRES;
use super::{InsertOutcome, StoreError};

/// Stores `runs` in one transaction: every run is checked first, then each is inserted or
/// found already stored; any error rolls every one of them back.
pub(super) fn insert_runs(
    client: &mut Client,
    store: &str,
    runs: &[Run],
) -> Result<Vec<InsertOutcome>, StoreError> {
    super::rows::validate_all(store, runs)?;
    let be = backend(store);
    let ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    let mut tx = insert_transaction(client, &ids).map_err(&be)?;
    // The batch's keys are recorded last, in one statement and one order: two transactions
    // adding the same new keys then never wait for each other's, and wait only briefly.
    let mut keys: Vec<String> = runs
        .iter()
        .flat_map(|r| r.results.iter().map(BenchmarkResult::key))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut outcomes = Vec::with_capacity(runs.len());
    for run in runs {
        outcomes.push(insert_one(&mut tx, store, run)?);
    }
    if outcomes.contains(&InsertOutcome::Inserted) {
        tx.execute(&POSTGRES.insert_keys, &[&keys]).map_err(&be)?;
        fault_pause_in_txn();
        tx.commit().map_err(&be)?;
    }
    // Else dropping `tx` rolls back.
    Ok(outcomes)
}

/// One run inside `tx`: `AlreadyStored` when an identical run has its id, a conflict when a
/// different one has.
fn insert_one(
    tx: &mut Transaction<'_>,
    store: &str,
    run: &Run,
) -> Result<InsertOutcome, StoreError> {
    let be = backend(store);
    if let Some(stored) = load_run(tx, store, &run.id)? {
        return already_stored(store, &stored, run);
    }
    let row = RunRow::of(run);
    tx.execute(
        &POSTGRES.insert_run,
        &[
            &run.id,
            &row.project,
            &row.commit,
            &row.branch,
            &row.started_at,
            &row.finished_at,
            &row.config_hash,
            &row.status,
            &row.fingerprint_json,
            &row.commit_info_json,
            &row.error,
            &row.pair_json,
            &run.pair.as_ref().map(|p| p.id.clone()),
            &row.testbed,
            &row.role,
            &row.exclusion_json,
            &row.contention_json,
        ],
    )
    .map_err(&be)?;
    // All results in one statement, all samples in another (arrays unnested server-side).
    let r = &run.results;
    let ords: Vec<i32> = (0..r.len() as i32).collect();
    let col = |f: fn(&BenchmarkResult) -> String| r.iter().map(f).collect::<Vec<String>>();
    let ids = tx
        .query(
            &POSTGRES.insert_results,
            &[
                &run.id,
                &ords,
                &col(|x| x.suite.clone()),
                &col(|x| x.name.clone()),
                &col(|x| to_json(&x.params)),
                &col(|x| x.measure.clone()),
                &col(|x| x.unit.as_str().to_string()),
                &col(|x| x.direction.as_str().to_string()),
                &col(|x| x.status.as_str().to_string()),
                &r.iter().map(|x| x.error.clone()).collect::<Vec<_>>(),
                &r.iter()
                    .map(|x| x.summary.as_ref().map(to_json))
                    .collect::<Vec<_>>(),
                &col(BenchmarkResult::key),
                &r.iter()
                    .map(|x| super::rows::point_of(x).as_ref().map(to_json))
                    .collect::<Vec<_>>(),
            ],
        )
        .map_err(&be)?;
    let mut id_of = vec![0i64; r.len()];
    for row in &ids {
        id_of[row.get::<_, i32>(0) as usize] = row.get(1);
    }
    let sets = SampleSets::of(r, &id_of);
    if !sets.ids.is_empty() {
        tx.execute(
            &POSTGRES.insert_samples,
            &[
                &sets.ids,
                &sets.lo,
                &sets.hi,
                &sets.values,
                &sets.metas,
                &sets.replicates,
                &sets.has_meta,
                &sets.has_replicate,
            ],
        )
        .map_err(&be)?;
    }
    Ok(InsertOutcome::Inserted)
}

/// A run's samples as the parameters of `insert_samples`: one `sample_sets` row per result
/// with samples, cut by `[lo, hi]` (from 1) from flat arrays. The metadata texts and the
/// replicates are sent only when some result has them (else empty arrays).
struct SampleSets {
    ids: Vec<i64>,
    lo: Vec<i32>,
    hi: Vec<i32>,
    values: Vec<f64>,
    metas: Vec<String>,
    replicates: Vec<i64>,
    has_meta: Vec<bool>,
    has_replicate: Vec<bool>,
}

impl SampleSets {
    fn of(results: &[BenchmarkResult], id_of: &[i64]) -> SampleSets {
        let any_meta = results.iter().any(|r| !r.sample_meta.is_empty());
        let any_replicate = results.iter().any(|r| !r.replicates.is_empty());
        let n: usize = results.iter().map(|r| r.samples.len()).sum();
        let mut sets = SampleSets {
            ids: Vec::new(),
            lo: Vec::new(),
            hi: Vec::new(),
            values: Vec::with_capacity(n),
            metas: Vec::with_capacity(if any_meta { n } else { 0 }),
            replicates: Vec::with_capacity(if any_replicate { n } else { 0 }),
            has_meta: Vec::new(),
            has_replicate: Vec::new(),
        };
        for (result, &id) in results.iter().zip(id_of) {
            if result.samples.is_empty() {
                continue;
            }
            sets.ids.push(id);
            sets.lo.push(sets.values.len() as i32 + 1);
            sets.values.extend_from_slice(&result.samples);
            sets.hi.push(sets.values.len() as i32);
            sets.has_meta.push(!result.sample_meta.is_empty());
            sets.has_replicate.push(!result.replicates.is_empty());
            let each = 0..result.samples.len();
            if any_meta {
                let texts = each
                    .clone()
                    .map(|i| meta_json(result, i).unwrap_or_default());
                sets.metas.extend(texts);
            }
            if any_replicate {
                let numbers = each.map(|i| replicate(result, i).unwrap_or_default());
                sets.replicates.extend(numbers);
            }
        }
        sets
    }
}
