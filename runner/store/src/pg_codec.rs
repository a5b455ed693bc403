//! Reading one run back from PostgreSQL, whole: for `get_run`, and for the duplicate check
//! before a run is stored (pg_insert.rs). The rows are decoded as the SQLite store's are
//! (rows.rs).

use std::collections::HashMap;

use pitwall_schema::{BenchmarkResult, Run};
use postgres::GenericClient;

use super::StoreError;
use super::pg_conn::backend;
use super::rows::{ResultRow, RunRow, SampleRow};
use super::sql::queries::POSTGRES;

/// Run `id` with all its results and samples; `None` when no such run is stored.
pub(super) fn load_run(
    client: &mut impl GenericClient,
    store: &str,
    id: &str,
) -> Result<Option<Run>, StoreError> {
    let be = backend(store);
    let Some(r) = client.query_opt(&POSTGRES.run_row, &[&id]).map_err(&be)? else {
        return Ok(None);
    };
    let row = RunRow {
        project: r.get(0),
        commit: r.get(1),
        branch: r.get(2),
        started_at: r.get(3),
        finished_at: r.get(4),
        config_hash: r.get(5),
        status: r.get(6),
        fingerprint_json: r.get(7),
        commit_info_json: r.get(8),
        error: r.get(9),
        pair_json: r.get(10),
        testbed: r.get(11),
        role: r.get(12),
        exclusion_json: r.get(13),
        contention_json: r.get(14),
    };
    let result_rows = client
        .query(&POSTGRES.results_of_run, &[&id])
        .map_err(&be)?;
    // Every sample of the run in one query, grouped by result.
    let mut samples: HashMap<i64, Vec<SampleRow>> = HashMap::new();
    for s in client
        .query(&POSTGRES.samples_to_load, &[&id])
        .map_err(&be)?
    {
        samples.entry(s.get(0)).or_default().push(SampleRow {
            idx: i64::from(s.get::<_, i32>(1)),
            value: s.get(2),
            meta_json: s.get(3),
            replicate: s.get(4),
        });
    }
    let mut results: Vec<BenchmarkResult> = Vec::with_capacity(result_rows.len());
    for (expected, r) in result_rows.iter().enumerate() {
        let row = ResultRow {
            id: r.get(0),
            ord: i64::from(r.get::<_, i32>(1)),
            suite: r.get(2),
            name: r.get(3),
            params_json: r.get(4),
            measure: r.get(5),
            unit: r.get(6),
            direction: r.get(7),
            status: r.get(8),
            error: r.get(9),
            summary_json: r.get(10),
        };
        let own = samples.remove(&row.id).unwrap_or_default();
        results.push(row.decode(store, id, expected, own)?);
    }
    row.decode(store, id, results).map(Some)
}
