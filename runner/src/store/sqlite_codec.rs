//! Turning SQLite rows back into schema-v1 `Run`s (and the few values that go the other way as
//! JSON text), so a stored run comes back exactly as it went in and stored garbage is reported
//! as `StoreError::Corrupt` naming what is wrong rather than as a panic or a wrong answer.

use std::collections::BTreeMap;

use pitwall_suites::{
    BenchmarkResult, Direction, Fingerprint, ResultStatus, Run, RunStatus, SampleMeta, Unit,
};
use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;

/// Maps a rusqlite error to `StoreError::Backend` for the store `store`.
pub(super) fn backend(store: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError::Backend {
        store: store.to_string(),
        source: Box::new(e),
    }
}

fn corrupt(store: &str, what: String) -> StoreError {
    StoreError::Corrupt {
        store: store.to_string(),
        what,
    }
}

/// JSON text of a value of the schema types; these always serialize.
pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("schema types always serialize")
}

/// `sample_meta` as stored: one JSON text per sample, or NULL for every sample of a result
/// that has no metadata. (An empty `SampleMeta` is stored as `{}`, not NULL, so a result whose
/// metadata entries are all empty still comes back with them.)
pub(super) fn meta_json(result: &BenchmarkResult, idx: usize) -> Option<String> {
    result.sample_meta.get(idx).map(to_json)
}

fn parse_json<T: serde::de::DeserializeOwned>(
    store: &str,
    what: impl FnOnce() -> String,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(store, format!("{}: {e}", what())))
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
                    fingerprint_json, commit_info_json, error, pair_json
             FROM runs WHERE id = ?1",
        )
        .map_err(&be)?;
    let row = stmt
        .query_row([id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, Option<String>>(8)?,
                r.get::<_, Option<String>>(9)?,
                r.get::<_, Option<String>>(10)?,
            ))
        })
        .optional()
        .map_err(&be)?;
    let Some((
        project,
        commit,
        branch,
        started_at,
        finished_at,
        config_hash,
        status,
        fp,
        ci,
        error,
        pair,
    )) = row
    else {
        return Ok(None);
    };
    let commit_info = ci
        .map(|text| parse_json(store, || format!("run {id}: commit_info_json"), &text))
        .transpose()?;
    let pair = pair
        .map(|text| parse_json(store, || format!("run {id}: pair_json"), &text))
        .transpose()?;
    let status = RunStatus::parse(&status)
        .ok_or_else(|| corrupt(store, format!("run {id}: unknown run status `{status}`")))?;
    let fingerprint: Fingerprint =
        parse_json(store, || format!("run {id}: fingerprint_json"), &fp)?;
    Ok(Some(Run {
        id: id.to_string(),
        project,
        commit,
        branch,
        started_at,
        finished_at,
        config_hash,
        fingerprint,
        status,
        commit_info,
        error,
        pair,
        results: load_results(conn, store, id)?,
    }))
}

/// One `results` row before its samples are attached.
struct ResultRow {
    id: i64,
    ord: i64,
    suite: String,
    name: String,
    params_json: String,
    measure: String,
    unit: String,
    direction: String,
    status: String,
    error: Option<String>,
}

fn load_results(
    conn: &Connection,
    store: &str,
    run_id: &str,
) -> Result<Vec<BenchmarkResult>, StoreError> {
    let be = backend(store);
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, ord, suite, name, params_json, measure, unit, direction, status, error
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
            })
        })
        .map_err(&be)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(&be)?;

    let mut results = Vec::with_capacity(rows.len());
    for (expected, row) in rows.into_iter().enumerate() {
        let at = format!("run {run_id} result {}", row.ord);
        if row.ord != expected as i64 {
            return Err(corrupt(
                store,
                format!("{at}: expected position {expected}"),
            ));
        }
        let params: BTreeMap<String, String> =
            parse_json(store, || format!("{at}: params_json"), &row.params_json)?;
        let direction = Direction::parse(&row.direction).ok_or_else(|| {
            corrupt(
                store,
                format!("{at}: unknown direction `{}`", row.direction),
            )
        })?;
        let status = ResultStatus::parse(&row.status)
            .ok_or_else(|| corrupt(store, format!("{at}: unknown status `{}`", row.status)))?;
        let (samples, sample_meta) = load_samples(conn, store, &at, row.id)?;
        results.push(BenchmarkResult {
            suite: row.suite,
            name: row.name,
            params,
            measure: row.measure,
            unit: Unit::new(row.unit),
            direction,
            status,
            error: row.error,
            samples,
            sample_meta,
        });
    }
    Ok(results)
}

fn load_samples(
    conn: &Connection,
    store: &str,
    at: &str,
    result_id: i64,
) -> Result<(Vec<f64>, Vec<SampleMeta>), StoreError> {
    let be = backend(store);
    let mut stmt = conn
        .prepare_cached(
            "SELECT idx, value, meta_json FROM samples WHERE result_id = ?1 ORDER BY idx",
        )
        .map_err(&be)?;
    let mut rows = stmt.query(params![result_id]).map_err(&be)?;
    let mut samples = Vec::new();
    let mut metas = Vec::new();
    let mut nulls = 0usize;
    while let Some(r) = rows.next().map_err(&be)? {
        let idx: i64 = r.get(0).map_err(&be)?;
        if idx != samples.len() as i64 {
            return Err(corrupt(
                store,
                format!(
                    "{at}: sample index {idx} where {} was expected",
                    samples.len()
                ),
            ));
        }
        let value: f64 = r.get(1).map_err(&be)?;
        samples.push(value);
        match r.get::<_, Option<String>>(2).map_err(&be)? {
            Some(text) => metas.push(parse_json(
                store,
                || format!("{at} sample {idx}: meta_json"),
                &text,
            )?),
            None => nulls += 1,
        }
    }
    if nulls > 0 && !metas.is_empty() {
        return Err(corrupt(
            store,
            format!("{at}: {nulls} of {} samples lack meta_json", samples.len()),
        ));
    }
    Ok((samples, metas))
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::super::sqlite_tests::{open, rich_run};
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
        assert!(matches!(
            store.list_runs(None),
            Err(StoreError::Corrupt { .. })
        ));
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
    }
}
