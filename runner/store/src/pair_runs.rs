//! The runs of interleaved pairs on one testbed, listed without the rest of the store: what
//! the testbed's noise book is read from (`pitwall_pipeline::noise`). Listing every run to
//! find them cost 0.67 s on a 10,000-run store, and history detection reads the noise book
//! for every series it shows; this reads only pair runs, by the `runs_by_pair` index.

use postgres::Client;
use rusqlite::Connection;

use super::rows::SummaryRow;
use super::shared::Skips;
use super::sql::queries::{POSTGRES, SQLITE};
use super::{RunSummary, StoreError};

pub(super) fn sqlite(
    conn: &Connection,
    store: &str,
    skips: &Skips,
    testbed: &str,
) -> Result<Vec<RunSummary>, StoreError> {
    let be = super::sqlite_codec::backend(store);
    let mut stmt = conn.prepare_cached(&SQLITE.list_pair_runs).map_err(&be)?;
    let rows = stmt
        .query_map([testbed], |r| {
            Ok(SummaryRow {
                id: r.get(0)?,
                project: r.get(1)?,
                commit: r.get(2)?,
                branch: r.get(3)?,
                started_at: r.get(4)?,
                status: r.get(5)?,
                results: r.get(6)?,
                failed_results: r.get(7)?,
                pair_id: r.get(8)?,
                testbed: r.get(9)?,
                role: r.get(10)?,
                excluded: r.get(11)?,
            })
        })
        .map_err(&be)?;
    let mut runs = Vec::new();
    for row in rows {
        runs.extend(skips.skip(row.map_err(&be)?.decode(store))?);
    }
    Ok(runs)
}

pub(super) fn pg(
    client: &mut Client,
    store: &str,
    skips: &Skips,
    testbed: &str,
) -> Result<Vec<RunSummary>, StoreError> {
    let be = super::pg_conn::backend(store);
    let rows = client
        .query(&POSTGRES.list_pair_runs, &[&testbed])
        .map_err(&be)?;
    rows.iter()
        .map(|r| {
            SummaryRow {
                id: r.get(0),
                project: r.get(1),
                commit: r.get(2),
                branch: r.get(3),
                started_at: r.get(4),
                status: r.get(5),
                results: r.get(6),
                failed_results: r.get(7),
                pair_id: r.get(8),
                testbed: r.get(9),
                role: r.get(10),
                excluded: r.get(11),
            }
            .decode(store)
        })
        .filter_map(|summary| skips.skip(summary).transpose())
        .collect()
}
