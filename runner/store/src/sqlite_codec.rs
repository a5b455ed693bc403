//! Reading SQLite rows back into schema `Run`s (the decoding itself, shared with the
//! PostgreSQL store, is in `rows`), so a stored run comes back exactly as it went in and stored
//! garbage is reported as `StoreError::Corrupt` naming what is wrong.

use pitwall_schema::{BenchmarkResult, Run};
use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::rows::{ResultRow, RunRow, SampleRow};

/// Maps a rusqlite error to `StoreError::Backend` for the store `store`.
pub(super) fn backend(store: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError::Backend {
        store: store.to_string(),
        source: Box::new(e),
    }
}

/// Reads run `id` with all its results and samples; `None` when no such run is stored.
///
/// Runs are written in one transaction and never updated, so once the `runs` row is visible
/// all of its results and samples are too.
pub(super) fn load_run(
    conn: &Connection,
    store: &str,
    id: &str,
) -> Result<Option<Run>, StoreError> {
    let be = backend(store);
    let mut stmt = conn
        .prepare_cached(
            "SELECT project, commit_sha, branch, started_at, finished_at, config_hash, status,
                    fingerprint_json, commit_info_json, error, pair_json, testbed, role
             FROM runs WHERE id = ?1",
        )
        .map_err(&be)?;
    let row = stmt
        .query_row([id], |r| {
            Ok(RunRow {
                project: r.get(0)?,
                commit: r.get(1)?,
                branch: r.get(2)?,
                started_at: r.get(3)?,
                finished_at: r.get(4)?,
                config_hash: r.get(5)?,
                status: r.get(6)?,
                fingerprint_json: r.get(7)?,
                commit_info_json: r.get(8)?,
                error: r.get(9)?,
                pair_json: r.get(10)?,
                testbed: r.get(11)?,
                role: r.get(12)?,
            })
        })
        .optional()
        .map_err(&be)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let results = load_results(conn, store, id)?;
    row.decode(store, id, results).map(Some)
}

fn load_results(
    conn: &Connection,
    store: &str,
    run_id: &str,
) -> Result<Vec<BenchmarkResult>, StoreError> {
    let be = backend(store);
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, ord, suite, name, params_json, measure, unit, direction, status, error,
                    summary_json
             FROM results WHERE run_id = ?1 ORDER BY ord",
        )
        .map_err(&be)?;
    let rows = stmt
        .query_map([run_id], |r| {
            Ok(ResultRow {
                id: r.get(0)?,
                ord: r.get(1)?,
                suite: r.get(2)?,
                name: r.get(3)?,
                params_json: r.get(4)?,
                measure: r.get(5)?,
                unit: r.get(6)?,
                direction: r.get(7)?,
                status: r.get(8)?,
                error: r.get(9)?,
                summary_json: r.get(10)?,
            })
        })
        .map_err(&be)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(&be)?;
    let mut results = Vec::with_capacity(rows.len());
    for (expected, row) in rows.into_iter().enumerate() {
        let samples = load_samples(conn, store, row.id)?;
        results.push(row.decode(store, run_id, expected, samples)?);
    }
    Ok(results)
}

fn load_samples(
    conn: &Connection,
    store: &str,
    result_id: i64,
) -> Result<Vec<SampleRow>, StoreError> {
    let be = backend(store);
    let mut stmt = conn
        .prepare_cached(
            "SELECT idx, value, meta_json, replicate FROM samples WHERE result_id = ?1
             ORDER BY idx",
        )
        .map_err(&be)?;
    stmt.query_map(params![result_id], |r| {
        Ok(SampleRow {
            idx: r.get(0)?,
            value: r.get(1)?,
            meta_json: r.get(2)?,
            replicate: r.get(3)?,
        })
    })
    .map_err(&be)?
    .collect::<Result<Vec<SampleRow>, _>>()
    .map_err(&be)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::super::conformance::rich_run;
    use super::super::sqlite_tests::open;
    use super::super::{SqliteStore, Store, StoreError};

    #[test]
    fn stored_garbage_is_reported_as_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("pitwall.db");
        let mut store = open(dir.path());
        let original = rich_run();
        store.insert_run(&original).unwrap();
        let conn = Connection::open(&db).unwrap();
        let corrupt_what = |store: &SqliteStore| match store.get_run("latest").unwrap_err() {
            StoreError::Corrupt { what, .. } => what,
            e => panic!("expected corrupt, got {e:?}"),
        };

        conn.execute("UPDATE results SET status = 'meh' WHERE ord = 2", [])
            .unwrap();
        assert!(corrupt_what(&store).contains("unknown status `meh`"));
        conn.execute("UPDATE results SET status = 'failed' WHERE ord = 2", [])
            .unwrap();

        let params: String = conn
            .query_row("SELECT params_json FROM results WHERE ord = 0", [], |r| {
                r.get(0)
            })
            .unwrap();
        conn.execute("UPDATE results SET params_json = '{oops' WHERE ord = 0", [])
            .unwrap();
        assert!(corrupt_what(&store).contains("result 0: params_json"));
        conn.execute(
            "UPDATE results SET params_json = ?1 WHERE ord = 0",
            [&params],
        )
        .unwrap();

        let fingerprint: String = conn
            .query_row("SELECT fingerprint_json FROM runs", [], |r| r.get(0))
            .unwrap();
        conn.execute("UPDATE runs SET fingerprint_json = '[]'", [])
            .unwrap();
        assert!(corrupt_what(&store).contains("fingerprint_json"));
        conn.execute(
            "UPDATE runs SET fingerprint_json = ?1, status = 'done'",
            [&fingerprint],
        )
        .unwrap();
        assert!(corrupt_what(&store).contains("unknown run status `done`"));
        // A list of runs leaves the unreadable one out (named through `on_skipped`).
        assert!(store.list_runs(None).unwrap().is_empty());
        conn.execute("UPDATE runs SET status = 'partial'", [])
            .unwrap();
        assert_eq!(store.get_run("latest").unwrap(), original);

        conn.execute("UPDATE samples SET meta_json = NULL WHERE idx = 3", [])
            .unwrap();
        let what = corrupt_what(&store);
        assert!(
            what.contains("result 0: 1 of 6 samples lack meta_json"),
            "{what}"
        );
        conn.execute("UPDATE samples SET meta_json = '{}' WHERE idx = 3", [])
            .unwrap();
        assert_eq!(store.get_run("latest").unwrap(), original);

        // Result 1 has replicates [0, 1, 1]: one lost is corrupt, as is one out of range.
        let result_1 = "(SELECT id FROM results WHERE ord = 1)";
        conn.execute(
            &format!(
                "UPDATE samples SET replicate = NULL WHERE idx = 2 AND result_id = {result_1}"
            ),
            [],
        )
        .unwrap();
        let what = corrupt_what(&store);
        assert!(
            what.contains("result 1: 1 of 3 samples lack a replicate"),
            "{what}"
        );
        conn.execute(
            &format!("UPDATE samples SET replicate = -1 WHERE idx = 2 AND result_id = {result_1}"),
            [],
        )
        .unwrap();
        let what = corrupt_what(&store);
        assert!(
            what.contains("result 1 sample 2: replicate -1 is not between 0 and 4294967295"),
            "{what}"
        );
        conn.execute(
            &format!("UPDATE samples SET replicate = 1 WHERE idx = 2 AND result_id = {result_1}"),
            [],
        )
        .unwrap();
        assert_eq!(store.get_run("latest").unwrap(), original);
    }
}
