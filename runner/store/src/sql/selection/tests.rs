//! `query_runs`'s statements as each store built them before they were written once (the old
//! code, kept here), for every shape of query: equal up to white space.

use super::super::Dialect;
use super::*;

const OLD_SQLITE_RUN_FILTER: &str = "
    (?1 IS NULL OR ((u.role = 'history' OR u.role IS NULL) AND (u.branch = ?1 OR u.branch IS NULL)))
    AND (?2 IS NULL OR u.testbed = ?2 OR u.testbed IS NULL)
    AND (?5 IS NULL OR u.id IN (
        SELECT v.id FROM runs v
        WHERE (?1 IS NULL OR ((v.role = 'history' OR v.role IS NULL)
                              AND (v.branch = ?1 OR v.branch IS NULL)))
          AND (?2 IS NULL OR v.testbed = ?2 OR v.testbed IS NULL)
        ORDER BY v.started_at DESC, v.id DESC LIMIT ?5))";

fn old_sqlite_key_filter(q: &RunQuery) -> &'static str {
    if q.keys.is_some() {
        "r.bench_key IN (SELECT value FROM json_each(?3))"
    } else {
        "?3 IS NULL"
    }
}

fn old_sqlite_from_results(q: &RunQuery) -> &'static str {
    if q.newest.is_some() {
        "runs u CROSS JOIN results r ON r.run_id = u.id"
    } else {
        "results r JOIN runs u ON u.id = r.run_id"
    }
}

fn old_summary_column(q: &RunQuery) -> &'static str {
    if q.samples {
        "r.summary_json"
    } else {
        "r.point_json"
    }
}

fn old_sqlite(q: &RunQuery) -> [String; 3] {
    let runs = format!(
        "SELECT u.id, u.project, u.commit_sha, u.branch, u.started_at, u.finished_at,
                    u.config_hash, u.status,
                    CASE WHEN ?4 OR u.testbed IS NULL THEN u.fingerprint_json ELSE NULL END,
                    u.commit_info_json, u.error, u.pair_json, u.testbed, u.role, u.exclusion_json, u.contention_json
             FROM runs u WHERE {OLD_SQLITE_RUN_FILTER}
             ORDER BY u.started_at, u.id"
    );
    let key_filter = old_sqlite_key_filter(q);
    let results = format!(
        "SELECT r.run_id, r.id, r.ord, r.suite, r.name, r.params_json, r.measure, r.unit,
                    r.direction, r.status, r.error, {summary}
             FROM {from_results}
             WHERE {OLD_SQLITE_RUN_FILTER} AND {key_filter}
             ORDER BY r.run_id, r.ord",
        summary = old_summary_column(q),
        from_results = old_sqlite_from_results(q),
    );
    let samples = format!(
        "SELECT s.result_id, s.idx, s.value, s.meta_json, s.replicate
             FROM {from_results} JOIN samples s ON s.result_id = r.id
             WHERE {OLD_SQLITE_RUN_FILTER} AND {key_filter}
             ORDER BY s.result_id, s.idx",
        from_results = old_sqlite_from_results(q),
    );
    [runs, results, samples]
}

const OLD_PG_RUN_FILTER: &str = "
    ($1::text IS NULL OR ((u.role = 'history' OR u.role IS NULL)
                          AND (u.branch = $1::text OR u.branch IS NULL)))
    AND ($2::text IS NULL OR u.testbed = $2::text OR u.testbed IS NULL)
    AND ($4::bigint IS NULL OR u.id IN (
        SELECT v.id FROM runs v
        WHERE ($1::text IS NULL OR ((v.role = 'history' OR v.role IS NULL)
                                    AND (v.branch = $1::text OR v.branch IS NULL)))
          AND ($2::text IS NULL OR v.testbed = $2::text OR v.testbed IS NULL)
        ORDER BY v.started_at DESC, v.id DESC LIMIT $4::bigint))";

fn old_pg_key_filter(q: &RunQuery) -> &'static str {
    if q.keys.is_some() {
        "r.bench_key = ANY($3::text[])"
    } else {
        "$3::text[] IS NULL"
    }
}

fn old_pg(q: &RunQuery) -> [String; 3] {
    const RUN_FILTER: &str = OLD_PG_RUN_FILTER;
    let runs = format!(
        "SELECT u.id, u.project, u.commit_sha, u.branch, u.started_at, u.finished_at,
                        u.config_hash, u.status,
                        CASE WHEN $5 OR u.testbed IS NULL THEN u.fingerprint_json ELSE NULL END,
                        u.commit_info_json, u.error, u.pair_json, u.testbed, u.role, u.exclusion_json, u.contention_json
                 FROM runs u WHERE {RUN_FILTER} AND ($3::text[] IS NULL OR TRUE)
                 ORDER BY u.started_at, u.id"
    );
    let results = format!(
        "SELECT r.run_id, r.id, r.ord, r.suite, r.name, r.params_json, r.measure,
                            r.unit, r.direction, r.status, r.error, {summary}
                     FROM results r JOIN runs u ON u.id = r.run_id
                     WHERE {RUN_FILTER} AND {keys}
                     ORDER BY r.run_id, r.ord",
        keys = old_pg_key_filter(q),
        summary = old_summary_column(q)
    );
    // Schema step 18: the rows of samples, then the sets of them.
    let samples = format!(
        "SELECT s.result_id, s.idx, s.value, s.meta_json, s.replicate
                     FROM samples s JOIN results r ON r.id = s.result_id
                                    JOIN runs u ON u.id = r.run_id
                     WHERE {RUN_FILTER} AND {keys}
                     UNION ALL
                     SELECT t.result_id, (v.i - 1)::int, v.value, v.meta_json, v.replicate
                     FROM sample_sets t JOIN results r ON r.id = t.result_id
                                        JOIN runs u ON u.id = r.run_id,
                          unnest(t.vals, t.metas, t.replicates) WITH ORDINALITY
                            AS v(value, meta_json, replicate, i)
                     WHERE {RUN_FILTER} AND {keys}
                     ORDER BY 1, 2",
        keys = old_pg_key_filter(q)
    );
    [runs, results, samples]
}

fn squeezed(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_shape_of_query_gives_the_statements_it_gave() {
    for keys in [None, Some(vec![]), Some(vec!["a/b/c".to_string()])] {
        for newest in [None, Some(3)] {
            for samples in [false, true] {
                let q = RunQuery {
                    keys: keys.clone(),
                    newest,
                    samples,
                    ..RunQuery::default()
                };
                for (d, old) in [
                    (Dialect::Sqlite, old_sqlite(&q)),
                    (Dialect::Postgres, old_pg(&q)),
                ] {
                    let new = [runs(d), results(d, &q), super::samples(d, &q)];
                    for (new, old) in new.iter().zip(&old) {
                        assert_eq!(squeezed(new), squeezed(old), "{d:?} {q:?}");
                    }
                }
            }
        }
    }
}
