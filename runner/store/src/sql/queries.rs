//! Every statement the stores run, once, rendered for each backend's [`Dialect`]: written
//! with SQLite's `?N` placeholders and turned into `$N` for PostgreSQL. Where the backends
//! run a statement differently (PostgreSQL inserts a run's rows as arrays in one statement,
//! SQLite one row at a time), the difference is spelled out here, side by side.

use std::sync::LazyLock;

use super::Dialect;

/// The statements of one dialect, rendered once per process.
#[derive(Debug)]
pub(crate) struct Queries {
    /// `Backfill::Labels`: the runs without a testbed or role.
    pub labels_to_fill: String,
    /// `Backfill::Labels`: a run's testbed (?2) and role (?3) by id (?1).
    pub set_labels: String,
    /// `Backfill::Keys`: the results without a key.
    pub keys_to_fill: String,
    /// `Backfill::Keys`: a result's samples (id ?1).
    pub samples_of_result: String,
    /// `Backfill::Keys`: a result's key (?2) and point (?3) by id (?1).
    pub set_key: String,
    /// A key (?1) recorded in `series_keys` unless it is already.
    pub record_key: String,
}

impl Queries {
    fn new(d: Dialect) -> Queries {
        let p = |sql: &str| d.placeholders(sql);
        Queries {
            labels_to_fill: p(
                "SELECT id, fingerprint_json, pair_json FROM runs WHERE testbed IS NULL OR role IS NULL",
            ),
            set_labels: p("UPDATE runs SET testbed = ?2, role = ?3 WHERE id = ?1"),
            keys_to_fill: p(
                "SELECT id, suite, name, params_json, measure, summary_json FROM results
                 WHERE bench_key IS NULL",
            ),
            samples_of_result: p("SELECT value, meta_json FROM samples WHERE result_id = ?1"),
            set_key: p("UPDATE results SET bench_key = ?2, point_json = ?3 WHERE id = ?1"),
            record_key: d.insert_unless_present("series_keys (bench_key)", &p("?1")),
        }
    }
}

/// The SQLite store's statements.
pub(crate) static SQLITE: LazyLock<Queries> = LazyLock::new(|| Queries::new(Dialect::Sqlite));
/// The PostgreSQL store's statements.
pub(crate) static POSTGRES: LazyLock<Queries> = LazyLock::new(|| Queries::new(Dialect::Postgres));

#[cfg(test)]
mod tests;
