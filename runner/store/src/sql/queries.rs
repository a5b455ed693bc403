//! Every statement the stores run on their tables, once, rendered for each backend's
//! [`Dialect`]: written with SQLite's `?N` placeholders, which become `$N` for PostgreSQL.
//! Where the backends bind a statement differently (PostgreSQL inserts a run's rows as arrays
//! in one statement, SQLite one row at a time), both forms stand side by side here, so a new
//! column is added to both in one place. `selection` builds the statements of
//! `Store::query_runs`, which depend on the query.
//!
//! Not here: each backend's own bookkeeping (SQLite's pragmas and `sqlite_schema` checks,
//! PostgreSQL's `pitwall_schema` version row and advisory lock).

use std::sync::LazyLock;

use super::Dialect;
use crate::alert_rows::{COLUMNS as ALERT_COLUMNS, ORDER as ALERT_ORDER};
pub(crate) use run_rows::pg_samples;
use run_rows::{delete_samples, insert_keys, insert_results, insert_samples, samples_to_load};

/// The statements of one dialect, rendered once per process. Parameters are named as
/// SQLite's (`?1`); PostgreSQL's are the same numbers.
#[derive(Debug)]
pub(crate) struct Queries {
    /// Run ?1's row: project, commit_sha, branch, started_at, finished_at, config_hash,
    /// status, fingerprint_json, commit_info_json, error, pair_json, testbed, role,
    /// exclusion_json, contention_json.
    pub run_row: String,
    /// Run ?1's results in order: id, ord, suite, name, params_json, measure, unit,
    /// direction, status, error, summary_json.
    pub results_of_run: String,
    /// The samples of a run's results: idx, value, meta_json, replicate. SQLite: one
    /// result's (?1), in index order; PostgreSQL: every sample of run ?1 in one round trip,
    /// led by its result_id, by result then index.
    pub samples_to_load: String,
    /// `1` when run ?1 is stored.
    pub run_exists: String,
    /// The id of the newest run.
    pub newest_run: String,
    /// At most ?N ids that start with ?1, in order. SQLite: ?2 is the bound above every
    /// such id (?1 followed by U+10FFFF), so the key index bounds the scan, and ?3 the
    /// limit; PostgreSQL: ?2 is the limit.
    pub runs_with_prefix: String,
    /// Every run id, oldest first.
    pub run_ids_oldest_first: String,
    /// A run's row: ?1 id, ?2 project, ?3 commit_sha, ?4 branch, ?5 started_at,
    /// ?6 finished_at, ?7 config_hash, ?8 status, ?9 fingerprint_json, ?10 commit_info_json,
    /// ?11 error, ?12 pair_json, ?13 pair_id, ?14 testbed, ?15 role, ?16 exclusion_json, ?17 contention_json.
    pub insert_run: String,
    /// A run's results: ?1 run_id, then ord, suite, name, params_json, measure, unit,
    /// direction, status, error, summary_json, bench_key, point_json. SQLite: one result
    /// (?2 to ?13); PostgreSQL: arrays of them, returning each result's ord and id.
    pub insert_results: String,
    /// The keys of a run's results, each unless recorded already. SQLite: one key (?1);
    /// PostgreSQL: an array of them, recorded in byte order (`pg_insert`).
    pub insert_keys: String,
    /// Samples: result_id, idx, value, meta_json, replicate. SQLite: one sample (?1 to ?5);
    /// PostgreSQL: arrays of them.
    pub insert_samples: String,
    /// At most ?1 runs, newest first, with their result counts and whether each is excluded
    /// (SQLite: all for -1, PostgreSQL: all for NULL).
    pub list_runs: String,
    /// The runs of pairs on testbed ?1, newest first, as `list_runs` lists them.
    pub list_pair_runs: String,
    /// The ids of run ?1's results, in order.
    pub result_ids_of_run: String,
    /// Drops result ?1's samples (PostgreSQL: and answers how many, `delete_samples`).
    pub delete_samples: String,
    /// Every sample of a run's results (PostgreSQL deletes them itself: schema step 17).
    pub delete_samples_of_run: String,
    /// Result ?1's summary (?2) in place of its samples.
    pub set_summary: String,
    /// Deletes run ?1 (its results and samples cascade).
    pub delete_run: String,
    /// Every key ever stored, sorted.
    pub series_keys: String,
    /// `Backfill::Labels`: the runs without a testbed or role.
    pub labels_to_fill: String,
    /// `Backfill::Labels`: a run's testbed (?2) and role (?3) by id (?1).
    pub set_labels: String,
    /// `Backfill::LocalRole`: the working tree's measured runs stored as history become
    /// `local` (runs imported from other tools, which carry `imported_from`, stay).
    pub relabel_local: String,
    /// The ids and start times of the runs `relabel_local` relabels, oldest first, for the
    /// note the migration leaves (`Store::migration_notes`).
    pub local_to_relabel: String,
    /// Run ?1's exclusion (?2, `Exclusion` JSON, NULL to include it again).
    pub set_exclusion: String,
    /// `Backfill::RoundOrders`: the runs of a pair.
    pub pairs_to_fill: String,
    /// `Backfill::RoundOrders`: a run's pair JSON (?2) by id (?1).
    pub set_pair: String,
    /// `Backfill::Keys`: the results without a key.
    pub keys_to_fill: String,
    /// `Backfill::Keys`: a result's samples (id ?1).
    pub samples_of_result: String,
    /// `Backfill::Keys`: a result's key (?2) and point (?3) by id (?1).
    pub set_key: String,
    /// A key (?1) recorded in `series_keys` unless it is already.
    pub record_key: String,
    /// Every alert, oldest first.
    pub list_alerts: String,
    /// Alert ?1.
    pub alert_by_id: String,
    /// An alert (?1 to ?22, in `alert_rows::COLUMNS` order) inserted, or brought up to date
    /// in what detection owns when it differs.
    pub upsert_alert: String,
    /// Detection's status change of alert ?1 from ?2 to ?3 (note ?4, kept when NULL;
    /// updated_at ?5), only while its stored status is still ?2.
    pub transition_alert: String,
    /// Alert ?1 deleted, only while its stored status is still ?2.
    pub delete_alert_in_status: String,
    /// A person's change to alert ?1: status ?2, note ?3, culprit ?4 (each kept when NULL),
    /// updated_at ?5. PostgreSQL returns the alert as stored after it; SQLite reads it back
    /// with `alert_by_id`.
    pub update_alert: String,
    /// The status of alert ?1.
    pub alert_status: String,
    /// A change of alert ?1 recorded: at ?2, by ?3, status ?4 to ?5, note ?6, culprit ?7.
    pub insert_alert_change: String,
    /// The changes of alert ?1, oldest first: at, by, from, to, note, culprit.
    pub alert_changes: String,
    /// The forge comment id kept for target ?1.
    pub forge_comment: String,
    /// Keeps comment id ?2 for target ?1, replacing an earlier one.
    pub set_forge_comment: String,
    /// A new API token: name ?1, role ?2, secret hash ?3, created ?4, expiry ?5 (NULL:
    /// never). Replaces a revoked token of that name; changes no row when an unrevoked one
    /// holds it.
    pub insert_token: String,
    /// Every token, by name.
    pub list_tokens: String,
    /// Token ?1 revoked at ?2, unless it already is.
    pub revoke_token: String,
    /// A new session: id hash ?1, token secret hash ?2, token name ?3, created ?4, ends ?5.
    pub insert_session: String,
    /// The session whose id hash is ?1: token secret hash, token name, created, ends.
    pub session: String,
    /// Session ?1 deleted (signed out).
    pub delete_session: String,
    /// The sessions that ended at or before ?1 deleted.
    pub delete_ended_sessions: String,
    /// A series summary: project ?1, testbed ?2, branch ?3, key ?4, JSON ?5, made ?6,
    /// replacing the series' earlier one.
    pub upsert_summary: String,
    /// The summaries of project ?1: project, testbed, branch, key, JSON, made.
    pub list_summaries: String,
}

impl Queries {
    fn new(d: Dialect) -> Queries {
        let p = |sql: &str| d.placeholders(sql);
        let (insert_alert_change, alert_changes) = alert_change_queries(d);
        let [
            insert_session,
            session,
            delete_session,
            delete_ended_sessions,
        ] = session_queries(d);
        let [list_tokens, revoke_token] = token_queries(d);
        let [upsert_summary, list_summaries] = summary_queries(d);
        let excluded = d.excluded();
        Queries {
            run_row: p(
                "SELECT project, commit_sha, branch, started_at, finished_at, config_hash, status,
                        fingerprint_json, commit_info_json, error, pair_json, testbed, role,
                        exclusion_json, contention_json
                 FROM runs WHERE id = ?1",
            ),
            results_of_run: p(
                "SELECT id, ord, suite, name, params_json, measure, unit, direction, status, error,
                        summary_json
                 FROM results WHERE run_id = ?1 ORDER BY ord",
            ),
            samples_to_load: samples_to_load(d),
            run_exists: p("SELECT 1 FROM runs WHERE id = ?1"),
            newest_run: p("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1"),
            runs_with_prefix: runs_with_prefix(d),
            run_ids_oldest_first: p("SELECT id FROM runs ORDER BY started_at, id"),
            insert_run: p(
                "INSERT INTO runs (id, project, commit_sha, branch, started_at, finished_at,
                                   config_hash, status, fingerprint_json, commit_info_json, error,
                                   pair_json, pair_id, testbed, role, exclusion_json,
                                   contention_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                         ?16, ?17)",
            ),
            insert_results: insert_results(d),
            insert_keys: insert_keys(d),
            insert_samples: insert_samples(d),
            list_runs: list_runs(d),
            list_pair_runs: list_pair_runs(d),
            result_ids_of_run: p("SELECT id FROM results WHERE run_id = ?1 ORDER BY ord"),
            delete_samples: delete_samples(d, false),
            delete_samples_of_run: delete_samples(d, true),
            set_summary: p("UPDATE results SET summary_json = ?2 WHERE id = ?1"),
            delete_run: p("DELETE FROM runs WHERE id = ?1"),
            series_keys: p("SELECT bench_key FROM series_keys ORDER BY bench_key"),
            labels_to_fill: p(
                "SELECT id, fingerprint_json, pair_json FROM runs WHERE testbed IS NULL OR role IS NULL",
            ),
            set_labels: p("UPDATE runs SET testbed = ?2, role = ?3 WHERE id = ?1"),
            relabel_local: format!("UPDATE runs SET role = 'local' WHERE {}", local_runs()),
            local_to_relabel: format!(
                "SELECT id, started_at FROM runs WHERE {} ORDER BY started_at, id",
                local_runs()
            ),
            set_exclusion: p("UPDATE runs SET exclusion_json = ?2 WHERE id = ?1"),
            pairs_to_fill: p("SELECT id, pair_json FROM runs WHERE pair_json IS NOT NULL"),
            set_pair: p("UPDATE runs SET pair_json = ?2 WHERE id = ?1"),
            keys_to_fill: p(
                "SELECT id, suite, name, params_json, measure, summary_json FROM results
                 WHERE bench_key IS NULL",
            ),
            samples_of_result: p("SELECT value, meta_json FROM samples WHERE result_id = ?1"),
            set_key: p("UPDATE results SET bench_key = ?2, point_json = ?3 WHERE id = ?1"),
            record_key: d.insert_unless_present("series_keys (bench_key)", &p("?1")),
            list_alerts: format!("SELECT {ALERT_COLUMNS} FROM alerts {ALERT_ORDER}"),
            alert_by_id: p(&format!("SELECT {ALERT_COLUMNS} FROM alerts WHERE id = ?1")),
            upsert_alert: upsert_alert(d),
            update_alert: update_alert(d),
            transition_alert: p("UPDATE alerts SET status = ?3, note = coalesce(?4, note),
                                        updated_at = ?5
                                 WHERE id = ?1 AND status = ?2"),
            delete_alert_in_status: p("DELETE FROM alerts WHERE id = ?1 AND status = ?2"),
            alert_status: p("SELECT status FROM alerts WHERE id = ?1"),
            insert_alert_change,
            alert_changes,
            forge_comment: p("SELECT comment_id FROM forge_comments WHERE target = ?1"),
            set_forge_comment: p(&format!(
                "INSERT INTO forge_comments (target, comment_id) VALUES (?1, ?2)
                 ON CONFLICT (target) DO UPDATE SET comment_id = {excluded}.comment_id"
            )),
            insert_token: insert_token(d),
            list_tokens,
            revoke_token,
            insert_session,
            session,
            delete_session,
            delete_ended_sessions,
            upsert_summary,
            list_summaries,
        }
    }
}

/// [`Queries::upsert_summary`] and [`Queries::list_summaries`].
fn summary_queries(d: Dialect) -> [String; 2] {
    let excluded = d.excluded();
    [
        format!(
            "INSERT INTO series_summaries
                 (project, testbed, branch, bench_key, summary_json, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (project, testbed, branch, bench_key) DO UPDATE
                 SET summary_json = {excluded}.summary_json, updated_at = {excluded}.updated_at"
        ),
        "SELECT project, testbed, branch, bench_key, summary_json, updated_at
         FROM series_summaries WHERE project = ?1 ORDER BY testbed, branch, bench_key"
            .to_string(),
    ]
    .map(|sql| d.placeholders(&sql))
}

/// [`Queries::list_tokens`] and [`Queries::revoke_token`].
fn token_queries(d: Dialect) -> [String; 2] {
    [
        "SELECT name, role, secret_sha256, created_at, expires_at, revoked_at FROM tokens
         ORDER BY name",
        "UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
    ]
    .map(|sql| d.placeholders(sql))
}

/// [`Queries::insert_session`], [`Queries::session`], [`Queries::delete_session`] and
/// [`Queries::delete_ended_sessions`].
fn session_queries(d: Dialect) -> [String; 4] {
    [
        "INSERT INTO sessions (id_sha256, token_sha256, token_name, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        "SELECT token_sha256, token_name, created_at, expires_at FROM sessions
         WHERE id_sha256 = ?1",
        "DELETE FROM sessions WHERE id_sha256 = ?1",
        "DELETE FROM sessions WHERE expires_at <= ?1",
    ]
    .map(|sql| d.placeholders(sql))
}

/// [`Queries::insert_alert_change`] and [`Queries::alert_changes`].
fn alert_change_queries(d: Dialect) -> (String, String) {
    (
        d.placeholders(
            "INSERT INTO alert_changes (alert_id, at, by_name, from_status, to_status, note, culprit)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        ),
        d.placeholders(
            "SELECT at, by_name, from_status, to_status, note, culprit FROM alert_changes
             WHERE alert_id = ?1 ORDER BY id",
        ),
    )
}

/// The columns of a listed run ([`Queries::list_runs`], [`Queries::list_pair_runs`]): its
/// labels, its result and failed result counts, whether it is excluded.
const RUN_LIST_COLUMNS: &str = "r.id, r.project, r.commit_sha, r.branch, r.started_at, r.status,
        (SELECT count(*) FROM results x WHERE x.run_id = r.id),
        (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'failed'),
        r.pair_id, r.testbed, r.role, r.exclusion_json IS NOT NULL";

/// [`Queries::list_runs`].
fn list_runs(d: Dialect) -> String {
    d.placeholders(&format!(
        "SELECT {RUN_LIST_COLUMNS}
         FROM runs r ORDER BY r.started_at DESC, r.id DESC LIMIT ?1"
    ))
}

/// The runs of pairs on testbed ?1 (`Queries::list_pair_runs`).
fn list_pair_runs(d: Dialect) -> String {
    d.placeholders(&format!(
        "SELECT {RUN_LIST_COLUMNS}
         FROM runs r WHERE r.pair_id IS NOT NULL AND r.testbed = ?1
         ORDER BY r.started_at DESC, r.id DESC"
    ))
}

/// A new API token (`Queries::insert_token`).
fn insert_token(d: Dialect) -> String {
    let excluded = d.excluded();
    d.placeholders(&format!(
        "INSERT INTO tokens (name, role, secret_sha256, created_at, expires_at, revoked_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL)
                 ON CONFLICT (name) DO UPDATE SET role = {excluded}.role,
                     secret_sha256 = {excluded}.secret_sha256,
                     created_at = {excluded}.created_at, expires_at = {excluded}.expires_at,
                     revoked_at = NULL
                 WHERE tokens.revoked_at IS NOT NULL"
    ))
}

/// [`Queries::runs_with_prefix`].
fn runs_with_prefix(d: Dialect) -> String {
    match d {
        Dialect::Sqlite => {
            "SELECT id FROM runs WHERE id >= ?1 AND id < ?2
           AND substr(id, 1, length(?1)) = ?1
         ORDER BY id LIMIT ?3"
        }
        Dialect::Postgres => "SELECT id FROM runs WHERE starts_with(id, $1) ORDER BY id LIMIT $2",
    }
    .into()
}

/// [`Queries::update_alert`].
fn update_alert(d: Dialect) -> String {
    let returning = match d {
        Dialect::Sqlite => String::new(),
        Dialect::Postgres => format!(" RETURNING {ALERT_COLUMNS}"),
    };
    d.placeholders(&format!(
        "UPDATE alerts SET status = coalesce(?2, status), note = coalesce(?3, note),
                           culprit = coalesce(?4, culprit), updated_at = ?5
         WHERE id = ?1{returning}"
    ))
}

/// [`Queries::upsert_alert`]: only what detection owns is set, and only when one of those
/// columns differs (SQLite compares them one by one with `IS NOT`, PostgreSQL as one row with
/// `IS DISTINCT FROM`; both treat NULLs as values).
fn upsert_alert(d: Dialect) -> String {
    let x = d.excluded();
    let changed = match d {
        Dialect::Sqlite => "last_good IS NOT excluded.last_good
                OR first_bad IS NOT excluded.first_bad
                OR first_bad_run IS NOT excluded.first_bad_run
                OR before_value IS NOT excluded.before_value
                OR after_value IS NOT excluded.after_value
                OR rel_change IS NOT excluded.rel_change
                OR ci_low IS NOT excluded.ci_low
                OR ci_high IS NOT excluded.ci_high
                OR more_points IS NOT excluded.more_points
                OR label IS NOT excluded.label"
            .to_string(),
        Dialect::Postgres => "(alerts.last_good, alerts.first_bad, alerts.first_bad_run,
                alerts.before_value, alerts.after_value, alerts.rel_change,
                alerts.ci_low, alerts.ci_high, alerts.more_points, alerts.label)
               IS DISTINCT FROM
               (EXCLUDED.last_good, EXCLUDED.first_bad, EXCLUDED.first_bad_run,
                EXCLUDED.before_value, EXCLUDED.after_value, EXCLUDED.rel_change,
                EXCLUDED.ci_low, EXCLUDED.ci_high, EXCLUDED.more_points, EXCLUDED.label)"
            .to_string(),
    };
    d.placeholders(&format!(
        "INSERT INTO alerts ({ALERT_COLUMNS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                 ?17, ?18, ?19, ?20, ?21, ?22)
         ON CONFLICT (id) DO UPDATE SET
             last_good = {x}.last_good, first_bad = {x}.first_bad,
             first_bad_run = {x}.first_bad_run,
             before_value = {x}.before_value, after_value = {x}.after_value,
             rel_change = {x}.rel_change, ci_low = {x}.ci_low,
             ci_high = {x}.ci_high, more_points = {x}.more_points,
             label = {x}.label, updated_at = {x}.updated_at
         WHERE {changed}"
    ))
}

/// The SQLite store's statements.
pub(crate) static SQLITE: LazyLock<Queries> = LazyLock::new(|| Queries::new(Dialect::Sqlite));
/// The PostgreSQL store's statements.
pub(crate) static POSTGRES: LazyLock<Queries> = LazyLock::new(|| Queries::new(Dialect::Postgres));

/// The runs migration 10 relabels `local`: working-tree runs stored as history, neither one
/// side of a pair nor imported.
fn local_runs() -> String {
    format!(
        "role = 'history' AND commit_sha = '{}' AND pair_json IS NULL
           AND fingerprint_json NOT LIKE '%\"imported_from\"%'",
        pitwall_schema::WORKING_TREE
    )
}

mod run_rows;

#[cfg(test)]
mod tests;
