//! Retention (`pitwall prune`): the two writes it needs from each store, dropping a run's raw
//! samples for the summaries left in their place, and deleting a run, each in one transaction
//! so an interrupted prune leaves every run either as it was or fully pruned.

use pitwall_schema::{SampleSummary, SchemaError};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::StoreError;
use super::rows::to_json;
use super::sql::queries::{POSTGRES, SQLITE};

/// A summary list that does not line up with the run's results.
fn misaligned(store: &str, id: &str, results: usize, summaries: usize) -> StoreError {
    StoreError::Invalid {
        store: store.to_string(),
        source: SchemaError::Invalid {
            run: format!("run {id}"),
            what: format!("{summaries} summaries for {results} results"),
        },
    }
}

fn not_found(store: &str, id: &str) -> StoreError {
    StoreError::NotFound {
        store: store.to_string(),
        id: id.to_string(),
    }
}

/// SQLite: replaces the samples of the results given a summary; returns the samples dropped.
pub(super) fn sqlite_prune_samples(
    conn: &mut Connection,
    store: &str,
    id: &str,
    summaries: &[Option<SampleSummary>],
) -> Result<usize, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&be)?;
    let exists = tx
        .query_row(&SQLITE.run_exists, [id], |_| Ok(()))
        .optional()
        .map_err(&be)?;
    if exists.is_none() {
        return Err(not_found(store, id));
    }
    let result_ids: Vec<i64> = tx
        .prepare(&SQLITE.result_ids_of_run)
        .map_err(&be)?
        .query_map([id], |r| r.get(0))
        .map_err(&be)?
        .collect::<Result<_, _>>()
        .map_err(&be)?;
    if result_ids.len() != summaries.len() {
        return Err(misaligned(store, id, result_ids.len(), summaries.len()));
    }
    let mut dropped = 0;
    for (result_id, summary) in result_ids.iter().zip(summaries) {
        let Some(summary) = summary else { continue };
        dropped += tx
            .execute(&SQLITE.delete_samples, [result_id])
            .map_err(&be)?;
        tx.execute(&SQLITE.set_summary, params![result_id, to_json(summary)])
            .map_err(&be)?;
    }
    super::shared::fault_pause_in_txn();
    tx.commit().map_err(&be)?;
    Ok(dropped)
}

/// SQLite: deletes a run with its results and samples (the foreign keys cascade).
pub(super) fn sqlite_delete_run(
    conn: &mut Connection,
    store: &str,
    id: &str,
) -> Result<bool, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&be)?;
    let deleted = tx.execute(&SQLITE.delete_run, [id]).map_err(&be)?;
    tx.commit().map_err(&be)?;
    Ok(deleted > 0)
}

/// PostgreSQL: as [`sqlite_prune_samples`], under the store's write lock.
pub(super) fn pg_prune_samples(
    client: &mut postgres::Client,
    store: &str,
    id: &str,
    summaries: &[Option<SampleSummary>],
) -> Result<usize, StoreError> {
    let be = super::pg_conn::backend(store);
    let mut tx = super::pg_conn::locked_transaction(client).map_err(&be)?;
    if tx
        .query_opt(&POSTGRES.run_exists, &[&id])
        .map_err(&be)?
        .is_none()
    {
        return Err(not_found(store, id));
    }
    let result_ids: Vec<i64> = tx
        .query(&POSTGRES.result_ids_of_run, &[&id])
        .map_err(&be)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if result_ids.len() != summaries.len() {
        return Err(misaligned(store, id, result_ids.len(), summaries.len()));
    }
    let mut dropped = 0u64;
    for (result_id, summary) in result_ids.iter().zip(summaries) {
        let Some(summary) = summary else { continue };
        let deleted: i64 = tx
            .query_one(&POSTGRES.delete_samples, &[result_id])
            .map_err(&be)?
            .get(0);
        dropped += deleted as u64;
        tx.execute(&POSTGRES.set_summary, &[result_id, &to_json(summary)])
            .map_err(&be)?;
    }
    super::shared::fault_pause_in_txn();
    tx.commit().map_err(&be)?;
    Ok(dropped as usize)
}

/// PostgreSQL: deletes a run with its results and samples: the samples first (they have no
/// foreign key since schema step 17), then the run (its results cascade).
pub(super) fn pg_delete_run(
    client: &mut postgres::Client,
    store: &str,
    id: &str,
) -> Result<bool, StoreError> {
    let be = super::pg_conn::backend(store);
    let mut tx = super::pg_conn::locked_transaction(client).map_err(&be)?;
    tx.execute(&POSTGRES.delete_samples_of_run, &[&id])
        .map_err(&be)?;
    let deleted = tx.execute(&POSTGRES.delete_run, &[&id]).map_err(&be)?;
    tx.commit().map_err(&be)?;
    Ok(deleted > 0)
}

#[cfg(test)]
mod tests;
