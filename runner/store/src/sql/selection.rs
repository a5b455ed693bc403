//! The three statements of `Store::query_runs` (runs, their results, the results' samples),
//! which depend on the query asked: whether keys are asked for, whether only the newest runs,
//! which summary column. Written once; the dialects differ in how parameters are typed and
//! numbered and in how keys are passed (a JSON array for SQLite, a text array for
//! PostgreSQL).
//!
//! Parameters. SQLite: ?1 the history branch, ?2 the testbed, ?3 the keys (JSON), ?4 whether
//! to read fingerprints, ?5 the newest N; every statement binds all five. PostgreSQL: $1 the
//! branch, $2 the testbed, $3 the keys, $4 the newest N, and $5 (runs only) fingerprints.

use super::Dialect;
use crate::RunQuery;

/// The SQL condition on `runs` (aliased `u`): a run with no recorded branch, testbed or role
/// passes (the analysis applies the exact rule, `HistoryFilter::admits`, afterwards).
fn run_filter(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => {
            "
    (?1 IS NULL OR ((u.role = 'history' OR u.role IS NULL) AND (u.branch = ?1 OR u.branch IS NULL)))
    AND (?2 IS NULL OR u.testbed = ?2 OR u.testbed IS NULL)
    AND (?5 IS NULL OR u.id IN (
        SELECT v.id FROM runs v
        WHERE (?1 IS NULL OR ((v.role = 'history' OR v.role IS NULL)
                              AND (v.branch = ?1 OR v.branch IS NULL)))
          AND (?2 IS NULL OR v.testbed = ?2 OR v.testbed IS NULL)
        ORDER BY v.started_at DESC, v.id DESC LIMIT ?5))"
        }
        Dialect::Postgres => {
            "
    ($1::text IS NULL OR ((u.role = 'history' OR u.role IS NULL)
                          AND (u.branch = $1::text OR u.branch IS NULL)))
    AND ($2::text IS NULL OR u.testbed = $2::text OR u.testbed IS NULL)
    AND ($4::bigint IS NULL OR u.id IN (
        SELECT v.id FROM runs v
        WHERE ($1::text IS NULL OR ((v.role = 'history' OR v.role IS NULL)
                                    AND (v.branch = $1::text OR v.branch IS NULL)))
          AND ($2::text IS NULL OR v.testbed = $2::text OR v.testbed IS NULL)
        ORDER BY v.started_at DESC, v.id DESC LIMIT $4::bigint))"
        }
    }
}

/// The condition on `results` (aliased `r`) over the keys parameter: the keys asked for, or
/// (NULL) every result. Two forms rather than `keys IS NULL OR …`, which would keep SQLite
/// from the key index (and keeps PostgreSQL's planner from seeing the indexed one plainly).
fn key_filter(d: Dialect, q: &RunQuery) -> &'static str {
    match (d, q.keys.is_some()) {
        (Dialect::Sqlite, true) => "r.bench_key IN (SELECT value FROM json_each(?3))",
        (Dialect::Sqlite, false) => "?3 IS NULL",
        (Dialect::Postgres, true) => "r.bench_key = ANY($3::text[])",
        (Dialect::Postgres, false) => "$3::text[] IS NULL",
    }
}

/// The results joined with their runs. Which table SQLite walks first: the newest runs, then
/// each one's results (a few runs of a long history: the alert refresh), or the results of
/// the keys asked for, then their runs (every run of a series: detect, the report); `CROSS
/// JOIN` makes SQLite keep that order. PostgreSQL's planner chooses.
fn from_results(d: Dialect, q: &RunQuery) -> &'static str {
    if d == Dialect::Sqlite && q.newest.is_some() {
        "runs u CROSS JOIN results r ON r.run_id = u.id"
    } else {
        "results r JOIN runs u ON u.id = r.run_id"
    }
}

/// The column read as each result's `summary`: the stored one (pruned results) with the
/// samples, the history point without them.
fn summary_column(q: &RunQuery) -> &'static str {
    if q.samples {
        "r.summary_json"
    } else {
        "r.point_json"
    }
}

/// The runs a query selects, oldest first: id, project, commit_sha, branch, started_at,
/// finished_at, config_hash, status, the fingerprint (NULL when not asked for and the run
/// records its testbed), commit_info_json, error, pair_json, testbed, role, exclusion_json, contention_json.
pub(crate) fn runs(d: Dialect) -> String {
    let (fingerprints, filter, keys_bound) = match d {
        Dialect::Sqlite => ("?4", run_filter(d), ""),
        // $3 appears so that every statement binds the same first four parameters.
        Dialect::Postgres => ("$5", run_filter(d), " AND ($3::text[] IS NULL OR TRUE)"),
    };
    format!(
        "SELECT u.id, u.project, u.commit_sha, u.branch, u.started_at, u.finished_at,
                u.config_hash, u.status,
                CASE WHEN {fingerprints} OR u.testbed IS NULL THEN u.fingerprint_json ELSE NULL END,
                u.commit_info_json, u.error, u.pair_json, u.testbed, u.role, u.exclusion_json, u.contention_json
         FROM runs u WHERE {filter}{keys_bound}
         ORDER BY u.started_at, u.id"
    )
}

/// The results a query selects, by run then order: run_id, id, ord, suite, name,
/// params_json, measure, unit, direction, status, error, summary (`summary_column`).
pub(crate) fn results(d: Dialect, q: &RunQuery) -> String {
    format!(
        "SELECT r.run_id, r.id, r.ord, r.suite, r.name, r.params_json, r.measure, r.unit,
                r.direction, r.status, r.error, {summary}
         FROM {from}
         WHERE {filter} AND {keys}
         ORDER BY r.run_id, r.ord",
        summary = summary_column(q),
        from = from_results(d, q),
        filter = run_filter(d),
        keys = key_filter(d, q),
    )
}

/// SQLite, when keys are asked for and every run (no newest N): the keys' results alone, over
/// the key index, with no join to their runs and no sort (`?1`: the keys, a JSON array). The
/// runs are read by their own statement; the caller keeps the results of those runs and puts
/// each run's results in order. On the 10,000-run store a series' results read in half the
/// time of the joined, sorted statement (docs/PERFORMANCE.md, "`pitwall serve`'s pages at
/// scale").
pub(crate) fn sqlite_key_results(q: &RunQuery) -> String {
    format!(
        "SELECT r.run_id, r.id, r.ord, r.suite, r.name, r.params_json, r.measure, r.unit,
                r.direction, r.status, r.error, {summary}
         FROM results r
         WHERE r.bench_key IN (SELECT value FROM json_each(?1))",
        summary = summary_column(q),
    )
}

/// The condition that puts a result in PostgreSQL's covering index `results_points` (schema
/// step 17), written as the index's predicate is, so that the planner sees it implied.
const PG_IN_POINTS_INDEX: &str = "r.error IS NULL
      AND octet_length(r.bench_key) + octet_length(r.params_json) + octet_length(coalesce(r.point_json, '')) < 2000";

/// PostgreSQL, when keys are asked for, every run (no newest N) and no samples: the keys'
/// history points (`$1`: the keys), from the covering index `results_points` alone (an
/// index-only scan in key order) and, for the results it leaves out (an error, or texts too
/// long for an index entry), from `results_points_rest`. No join to the runs and no sort, as
/// [`sqlite_key_results`]: the caller keeps the results of the runs read, in order.
pub(crate) fn pg_point_results() -> String {
    let columns = "r.run_id, r.id, r.ord, r.suite, r.name, r.params_json, r.measure, r.unit,
                r.direction, r.status";
    format!(
        "SELECT {columns}, NULL::text, r.point_json
         FROM results r
         WHERE r.bench_key = ANY($1::text[]) AND {PG_IN_POINTS_INDEX}
         UNION ALL
         SELECT {columns}, r.error, r.point_json
         FROM results r
         WHERE r.bench_key = ANY($1::text[]) AND NOT ({PG_IN_POINTS_INDEX})"
    )
}

/// The samples of the results a query selects, by result then index: result_id, idx, value,
/// meta_json, replicate.
pub(crate) fn samples(d: Dialect, q: &RunQuery) -> String {
    let (filter, keys) = (run_filter(d), key_filter(d, q));
    match d {
        Dialect::Sqlite => format!(
            "SELECT s.result_id, s.idx, s.value, s.meta_json, s.replicate
         FROM {} JOIN samples s ON s.result_id = r.id
         WHERE {filter} AND {keys}
         ORDER BY s.result_id, s.idx",
            from_results(d, q)
        ),
        // Samples stored a row each (before schema step 18) and a row per result (since).
        Dialect::Postgres => super::queries::pg_samples(
            "JOIN runs u ON u.id = r.run_id",
            &format!("{filter} AND {keys}"),
        ),
    }
}

#[cfg(test)]
mod tests;
