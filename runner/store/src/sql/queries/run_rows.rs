//! The statements that store a run's rows and load its samples back, for each backend: the
//! part of [`super::Queries`] where the backends differ most. SQLite binds a row at a time;
//! PostgreSQL sends a run's rows as arrays in one statement, and keeps a result's samples as
//! one row of arrays in `sample_sets` (schema step 18) beside the rows stored before in
//! `samples`, so its reads and deletes take both tables.

use crate::sql::Dialect;

/// [`super::Queries::samples_to_load`].
pub(super) fn samples_to_load(d: Dialect) -> String {
    match d {
        Dialect::Sqlite => {
            "SELECT idx, value, meta_json, replicate FROM samples WHERE result_id = ?1
         ORDER BY idx"
                .into()
        }
        Dialect::Postgres => pg_samples("", "r.run_id = $1"),
    }
}

/// PostgreSQL's samples of the results `filter` selects (over `results r`, and the tables of
/// `joins`), from both tables: the rows stored before schema step 18 and the sets since, as
/// result_id, idx, value, meta_json, replicate, by result then index.
pub(crate) fn pg_samples(joins: &str, filter: &str) -> String {
    let joins = if joins.is_empty() {
        String::new()
    } else {
        format!(" {joins}")
    };
    format!(
        "SELECT s.result_id, s.idx, s.value, s.meta_json, s.replicate
         FROM samples s JOIN results r ON r.id = s.result_id{joins}
         WHERE {filter}
         UNION ALL
         SELECT t.result_id, (v.i - 1)::int, v.value, v.meta_json, v.replicate
         FROM sample_sets t JOIN results r ON r.id = t.result_id{joins},
              unnest(t.vals, t.metas, t.replicates) WITH ORDINALITY
                AS v(value, meta_json, replicate, i)
         WHERE {filter}
         ORDER BY 1, 2"
    )
}

/// [`super::Queries::insert_results`].
pub(super) fn insert_results(d: Dialect) -> String {
    let rows = match d {
        Dialect::Sqlite => "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        Dialect::Postgres => {
            "SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[],
                                      $6::text[], $7::text[], $8::text[], $9::text[],
                                      $10::text[], $11::text[], $12::text[], $13::text[])
             RETURNING ord, id"
        }
    };
    format!(
        "INSERT INTO results (run_id, ord, suite, name, params_json, measure, unit,
                              direction, status, error, summary_json, bench_key,
                              point_json)
         {rows}"
    )
}

/// [`super::Queries::insert_keys`].
pub(super) fn insert_keys(d: Dialect) -> String {
    match d {
        Dialect::Sqlite => d.insert_unless_present("series_keys (bench_key)", "?1"),
        Dialect::Postgres => "INSERT INTO series_keys (bench_key)
         SELECT k FROM unnest($1::text[]) AS k ORDER BY k COLLATE \"C\"
         ON CONFLICT DO NOTHING"
            .into(),
    }
}

/// [`super::Queries::insert_samples`].
pub(super) fn insert_samples(d: Dialect) -> String {
    match d {
        Dialect::Sqlite => "INSERT INTO samples (result_id, idx, value, meta_json, replicate)
         VALUES (?1, ?2, ?3, ?4, ?5)"
            .into(),
        // A row per result (schema step 18), cut from flat arrays: $4 every value, $5 and $6
        // every metadata text and replicate (empty when no result has them), each result's
        // [$2, $3] (from 1) in them, and whether it has metadata ($7) and replicates ($8).
        Dialect::Postgres => "INSERT INTO sample_sets (result_id, vals, metas, replicates)
         SELECT s.id, ($4::float8[])[s.lo:s.hi],
                CASE WHEN s.has_meta THEN ($5::text[])[s.lo:s.hi] END,
                CASE WHEN s.has_replicate THEN ($6::bigint[])[s.lo:s.hi] END
         FROM unnest($1::bigint[], $2::int[], $3::int[], $7::bool[], $8::bool[])
           AS s(id, lo, hi, has_meta, has_replicate)"
            .into(),
    }
}

/// [`super::Queries::delete_samples`] (`?1`: a result id) and [`super::Queries::delete_samples_of_run`]
/// (`?1`: a run id). PostgreSQL keeps samples in two tables (schema step 18), and its statement
/// returns how many samples it deleted from both (SQLite's count is the statement's).
pub(super) fn delete_samples(d: Dialect, of_run: bool) -> String {
    let which = if of_run {
        "IN (SELECT id FROM results WHERE run_id = ?1)"
    } else {
        "= ?1"
    };
    d.placeholders(&match d {
        Dialect::Sqlite => format!("DELETE FROM samples WHERE result_id {which}"),
        Dialect::Postgres => format!(
            "WITH sets AS (DELETE FROM sample_sets WHERE result_id {which}
                          RETURNING cardinality(vals) AS n),
              each AS (DELETE FROM samples WHERE result_id {which} RETURNING 1)
         SELECT (SELECT coalesce(sum(n), 0) FROM sets) + (SELECT count(*) FROM each)"
        ),
    })
}
