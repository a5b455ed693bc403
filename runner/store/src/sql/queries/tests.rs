//! Each statement as each store ran it before the statements were written once (the old texts,
//! kept here): equal up to white space, which neither database reads, so the stores run what
//! they always ran.

use super::{POSTGRES, Queries, SQLITE};
use crate::alert_rows::{COLUMNS, ORDER};

/// Runs of white space as one space, none at either end.
fn squeezed(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A statement's name, where `Queries` keeps it, and its old SQLite and PostgreSQL texts.
type Old = (&'static str, fn(&Queries) -> &String, String, String);

/// Each statement with its SQLite and its PostgreSQL text as they were written by hand.
fn old() -> Vec<Old> {
    let s = |x: &str| x.to_string();
    vec![
        (
            "run_row",
            |q| &q.run_row,
            s(
                "SELECT project, commit_sha, branch, started_at, finished_at, config_hash, status,
                    fingerprint_json, commit_info_json, error, pair_json, testbed, role,
                    exclusion_json, contention_json
             FROM runs WHERE id = ?1",
            ),
            s(
                "SELECT project, commit_sha, branch, started_at, finished_at, config_hash, status,
                    fingerprint_json, commit_info_json, error, pair_json, testbed, role,
                    exclusion_json, contention_json
             FROM runs WHERE id = $1",
            ),
        ),
        (
            "results_of_run",
            |q| &q.results_of_run,
            s(
                "SELECT id, ord, suite, name, params_json, measure, unit, direction, status, error,
                    summary_json
             FROM results WHERE run_id = ?1 ORDER BY ord",
            ),
            s(
                "SELECT id, ord, suite, name, params_json, measure, unit, direction, status, error,
                    summary_json
             FROM results WHERE run_id = $1 ORDER BY ord",
            ),
        ),
        (
            "samples_to_load",
            |q| &q.samples_to_load,
            s(
                "SELECT idx, value, meta_json, replicate FROM samples WHERE result_id = ?1
             ORDER BY idx",
            ),
            s(
                // Step 18: the sets of samples too.
                "SELECT s.result_id, s.idx, s.value, s.meta_json, s.replicate
             FROM samples s JOIN results r ON r.id = s.result_id WHERE r.run_id = $1
             UNION ALL
             SELECT t.result_id, (v.i - 1)::int, v.value, v.meta_json, v.replicate
             FROM sample_sets t JOIN results r ON r.id = t.result_id,
                  unnest(t.vals, t.metas, t.replicates) WITH ORDINALITY
                    AS v(value, meta_json, replicate, i)
             WHERE r.run_id = $1 ORDER BY 1, 2",
            ),
        ),
        (
            // SQLite's id lookup was `SELECT count(*) FROM runs WHERE id = ?1`; its prune
            // ran this one.
            "run_exists",
            |q| &q.run_exists,
            s("SELECT 1 FROM runs WHERE id = ?1"),
            s("SELECT 1 FROM runs WHERE id = $1"),
        ),
        (
            "newest_run",
            |q| &q.newest_run,
            s("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1"),
            s("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1"),
        ),
        (
            "runs_with_prefix",
            |q| &q.runs_with_prefix,
            s("SELECT id FROM runs WHERE id >= ?1 AND id < ?2
                   AND substr(id, 1, length(?1)) = ?1
                 ORDER BY id LIMIT ?3"),
            s("SELECT id FROM runs WHERE starts_with(id, $1) ORDER BY id LIMIT $2"),
        ),
        (
            "run_ids_oldest_first",
            |q| &q.run_ids_oldest_first,
            s("SELECT id FROM runs ORDER BY started_at, id"),
            s("SELECT id FROM runs ORDER BY started_at, id"),
        ),
        (
            "insert_run",
            |q| &q.insert_run,
            s(
                "INSERT INTO runs (id, project, commit_sha, branch, started_at, finished_at,
                               config_hash, status, fingerprint_json, commit_info_json, error,
                               pair_json, pair_id, testbed, role, exclusion_json,
                                   contention_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
            ),
            s(
                "INSERT INTO runs (id, project, commit_sha, branch, started_at, finished_at,
                               config_hash, status, fingerprint_json, commit_info_json, error,
                               pair_json, pair_id, testbed, role, exclusion_json,
                                   contention_json)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
            ),
        ),
        (
            "insert_results",
            |q| &q.insert_results,
            s(
                "INSERT INTO results (run_id, ord, suite, name, params_json, measure, unit,
                                          direction, status, error, summary_json, bench_key,
                                          point_json)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            ),
            s(
                "INSERT INTO results (run_id, ord, suite, name, params_json, measure, unit,
                                      direction, status, error, summary_json, bench_key,
                                      point_json)
                 SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[],
                                          $6::text[], $7::text[], $8::text[], $9::text[],
                                          $10::text[], $11::text[], $12::text[], $13::text[])
                 RETURNING ord, id",
            ),
        ),
        (
            "insert_keys",
            |q| &q.insert_keys,
            s("INSERT OR IGNORE INTO series_keys (bench_key) VALUES (?1)"),
            s(
                "INSERT INTO series_keys (bench_key)
             SELECT k FROM unnest($1::text[]) AS k ORDER BY k COLLATE \"C\"
             ON CONFLICT DO NOTHING",
            ),
        ),
        (
            "insert_samples",
            |q| &q.insert_samples,
            s(
                "INSERT INTO samples (result_id, idx, value, meta_json, replicate)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
            ),
            s(
                // Step 18: a row of arrays per result.
                "INSERT INTO sample_sets (result_id, vals, metas, replicates)
             SELECT s.id, ($4::float8[])[s.lo:s.hi],
                    CASE WHEN s.has_meta THEN ($5::text[])[s.lo:s.hi] END,
                    CASE WHEN s.has_replicate THEN ($6::bigint[])[s.lo:s.hi] END
             FROM unnest($1::bigint[], $2::int[], $3::int[], $7::bool[], $8::bool[])
               AS s(id, lo, hi, has_meta, has_replicate)",
            ),
        ),
        (
            "list_runs",
            |q| &q.list_runs,
            s(
                "SELECT r.id, r.project, r.commit_sha, r.branch, r.started_at, r.status,
                        (SELECT count(*) FROM results x WHERE x.run_id = r.id),
                        (SELECT count(*) FROM results x
                          WHERE x.run_id = r.id AND x.status = 'failed'),
                        r.pair_id, r.testbed, r.role, r.exclusion_json IS NOT NULL
                 FROM runs r ORDER BY r.started_at DESC, r.id DESC LIMIT ?1",
            ),
            s(
                "SELECT r.id, r.project, r.commit_sha, r.branch, r.started_at, r.status,
                        (SELECT count(*) FROM results x WHERE x.run_id = r.id),
                        (SELECT count(*) FROM results x
                          WHERE x.run_id = r.id AND x.status = 'failed'),
                        r.pair_id, r.testbed, r.role, r.exclusion_json IS NOT NULL
                 FROM runs r ORDER BY r.started_at DESC, r.id DESC LIMIT $1",
            ),
        ),
        (
            "result_ids_of_run",
            |q| &q.result_ids_of_run,
            s("SELECT id FROM results WHERE run_id = ?1 ORDER BY ord"),
            s("SELECT id FROM results WHERE run_id = $1 ORDER BY ord"),
        ),
        (
            "delete_samples",
            |q| &q.delete_samples,
            s("DELETE FROM samples WHERE result_id = ?1"),
            s("WITH sets AS (DELETE FROM sample_sets WHERE result_id = $1
                              RETURNING cardinality(vals) AS n),
                    each AS (DELETE FROM samples WHERE result_id = $1 RETURNING 1)
               SELECT (SELECT coalesce(sum(n), 0) FROM sets) + (SELECT count(*) FROM each)"),
        ),
        (
            "delete_samples_of_run",
            |q| &q.delete_samples_of_run,
            s("DELETE FROM samples WHERE result_id IN (SELECT id FROM results WHERE run_id = ?1)"),
            s("WITH sets AS (DELETE FROM sample_sets
                              WHERE result_id IN (SELECT id FROM results WHERE run_id = $1)
                              RETURNING cardinality(vals) AS n),
                    each AS (DELETE FROM samples
                             WHERE result_id IN (SELECT id FROM results WHERE run_id = $1)
                             RETURNING 1)
               SELECT (SELECT coalesce(sum(n), 0) FROM sets) + (SELECT count(*) FROM each)"),
        ),
        (
            "set_summary",
            |q| &q.set_summary,
            s("UPDATE results SET summary_json = ?2 WHERE id = ?1"),
            s("UPDATE results SET summary_json = $2 WHERE id = $1"),
        ),
        (
            "delete_run",
            |q| &q.delete_run,
            s("DELETE FROM runs WHERE id = ?1"),
            s("DELETE FROM runs WHERE id = $1"),
        ),
        (
            "series_keys",
            |q| &q.series_keys,
            s("SELECT bench_key FROM series_keys ORDER BY bench_key"),
            s("SELECT bench_key FROM series_keys ORDER BY bench_key"),
        ),
        (
            "labels_to_fill",
            |q| &q.labels_to_fill,
            s(
                "SELECT id, fingerprint_json, pair_json FROM runs WHERE testbed IS NULL OR role IS NULL",
            ),
            s(
                "SELECT id, fingerprint_json, pair_json FROM runs WHERE testbed IS NULL OR role IS NULL",
            ),
        ),
        (
            "pairs_to_fill",
            |q| &q.pairs_to_fill,
            s("SELECT id, pair_json FROM runs WHERE pair_json IS NOT NULL"),
            s("SELECT id, pair_json FROM runs WHERE pair_json IS NOT NULL"),
        ),
        (
            "set_pair",
            |q| &q.set_pair,
            s("UPDATE runs SET pair_json = ?2 WHERE id = ?1"),
            s("UPDATE runs SET pair_json = $2 WHERE id = $1"),
        ),
        (
            "relabel_local",
            |q| &q.relabel_local,
            s("UPDATE runs SET role = 'local'
               WHERE role = 'history' AND commit_sha = 'working tree' AND pair_json IS NULL
                 AND fingerprint_json NOT LIKE '%\"imported_from\"%'"),
            s("UPDATE runs SET role = 'local'
               WHERE role = 'history' AND commit_sha = 'working tree' AND pair_json IS NULL
                 AND fingerprint_json NOT LIKE '%\"imported_from\"%'"),
        ),
        (
            "local_to_relabel",
            |q| &q.local_to_relabel,
            s("SELECT id, started_at FROM runs
               WHERE role = 'history' AND commit_sha = 'working tree' AND pair_json IS NULL
                 AND fingerprint_json NOT LIKE '%\"imported_from\"%' ORDER BY started_at, id"),
            s("SELECT id, started_at FROM runs
               WHERE role = 'history' AND commit_sha = 'working tree' AND pair_json IS NULL
                 AND fingerprint_json NOT LIKE '%\"imported_from\"%' ORDER BY started_at, id"),
        ),
        (
            "list_pair_runs",
            |q| &q.list_pair_runs,
            s(
                "SELECT r.id, r.project, r.commit_sha, r.branch, r.started_at, r.status,
                    (SELECT count(*) FROM results x WHERE x.run_id = r.id),
                    (SELECT count(*) FROM results x
                      WHERE x.run_id = r.id AND x.status = 'failed'),
                    r.pair_id, r.testbed, r.role, r.exclusion_json IS NOT NULL
               FROM runs r WHERE r.pair_id IS NOT NULL AND r.testbed = ?1
               ORDER BY r.started_at DESC, r.id DESC",
            ),
            s(
                "SELECT r.id, r.project, r.commit_sha, r.branch, r.started_at, r.status,
                    (SELECT count(*) FROM results x WHERE x.run_id = r.id),
                    (SELECT count(*) FROM results x
                      WHERE x.run_id = r.id AND x.status = 'failed'),
                    r.pair_id, r.testbed, r.role, r.exclusion_json IS NOT NULL
               FROM runs r WHERE r.pair_id IS NOT NULL AND r.testbed = $1
               ORDER BY r.started_at DESC, r.id DESC",
            ),
        ),
        (
            "set_exclusion",
            |q| &q.set_exclusion,
            s("UPDATE runs SET exclusion_json = ?2 WHERE id = ?1"),
            s("UPDATE runs SET exclusion_json = $2 WHERE id = $1"),
        ),
        (
            "set_labels",
            |q| &q.set_labels,
            s("UPDATE runs SET testbed = ?2, role = ?3 WHERE id = ?1"),
            s("UPDATE runs SET testbed = $2, role = $3 WHERE id = $1"),
        ),
        (
            "keys_to_fill",
            |q| &q.keys_to_fill,
            s(
                "SELECT id, suite, name, params_json, measure, summary_json FROM results
             WHERE bench_key IS NULL",
            ),
            s(
                "SELECT id, suite, name, params_json, measure, summary_json FROM results
         WHERE bench_key IS NULL",
            ),
        ),
        (
            "samples_of_result",
            |q| &q.samples_of_result,
            s("SELECT value, meta_json FROM samples WHERE result_id = ?1"),
            s("SELECT value, meta_json FROM samples WHERE result_id = $1"),
        ),
        (
            "set_key",
            |q| &q.set_key,
            s("UPDATE results SET bench_key = ?2, point_json = ?3 WHERE id = ?1"),
            s("UPDATE results SET bench_key = $2, point_json = $3 WHERE id = $1"),
        ),
        (
            "record_key",
            |q| &q.record_key,
            s("INSERT OR IGNORE INTO series_keys (bench_key) VALUES (?1)"),
            s("INSERT INTO series_keys (bench_key) VALUES ($1) ON CONFLICT DO NOTHING"),
        ),
        (
            "list_alerts",
            |q| &q.list_alerts,
            format!("SELECT {COLUMNS} FROM alerts {ORDER}"),
            format!("SELECT {COLUMNS} FROM alerts {ORDER}"),
        ),
        (
            // Only SQLite runs it (PostgreSQL's update returns the row).
            "alert_by_id",
            |q| &q.alert_by_id,
            format!("SELECT {COLUMNS} FROM alerts WHERE id = ?1"),
            format!("SELECT {COLUMNS} FROM alerts WHERE id = $1"),
        ),
        (
            "upsert_alert",
            |q| &q.upsert_alert,
            format!(
                "INSERT INTO alerts ({COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                         ?17, ?18, ?19, ?20, ?21, ?22)
                 ON CONFLICT (id) DO UPDATE SET
                     last_good = excluded.last_good, first_bad = excluded.first_bad,
                     first_bad_run = excluded.first_bad_run,
                     before_value = excluded.before_value, after_value = excluded.after_value,
                     rel_change = excluded.rel_change, ci_low = excluded.ci_low,
                     ci_high = excluded.ci_high, more_points = excluded.more_points,
                     label = excluded.label, updated_at = excluded.updated_at
                 WHERE last_good IS NOT excluded.last_good
                    OR first_bad IS NOT excluded.first_bad
                    OR first_bad_run IS NOT excluded.first_bad_run
                    OR before_value IS NOT excluded.before_value
                    OR after_value IS NOT excluded.after_value
                    OR rel_change IS NOT excluded.rel_change
                    OR ci_low IS NOT excluded.ci_low
                    OR ci_high IS NOT excluded.ci_high
                    OR more_points IS NOT excluded.more_points
                    OR label IS NOT excluded.label"
            ),
            format!(
                "INSERT INTO alerts ({COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                     $17, $18, $19, $20, $21, $22)
             ON CONFLICT (id) DO UPDATE SET
                 last_good = EXCLUDED.last_good, first_bad = EXCLUDED.first_bad,
                 first_bad_run = EXCLUDED.first_bad_run,
                 before_value = EXCLUDED.before_value, after_value = EXCLUDED.after_value,
                 rel_change = EXCLUDED.rel_change, ci_low = EXCLUDED.ci_low,
                 ci_high = EXCLUDED.ci_high, more_points = EXCLUDED.more_points,
                 label = EXCLUDED.label, updated_at = EXCLUDED.updated_at
             WHERE (alerts.last_good, alerts.first_bad, alerts.first_bad_run,
                    alerts.before_value, alerts.after_value, alerts.rel_change,
                    alerts.ci_low, alerts.ci_high, alerts.more_points, alerts.label)
                   IS DISTINCT FROM
                   (EXCLUDED.last_good, EXCLUDED.first_bad, EXCLUDED.first_bad_run,
                    EXCLUDED.before_value, EXCLUDED.after_value, EXCLUDED.rel_change,
                    EXCLUDED.ci_low, EXCLUDED.ci_high, EXCLUDED.more_points, EXCLUDED.label)"
            ),
        ),
        (
            "update_alert",
            |q| &q.update_alert,
            s(
                "UPDATE alerts SET status = coalesce(?2, status), note = coalesce(?3, note),
                               culprit = coalesce(?4, culprit), updated_at = ?5
             WHERE id = ?1",
            ),
            format!(
                "UPDATE alerts SET status = coalesce($2, status), note = coalesce($3, note),
                                   culprit = coalesce($4, culprit), updated_at = $5
                 WHERE id = $1 RETURNING {COLUMNS}"
            ),
        ),
        (
            "transition_alert",
            |q| &q.transition_alert,
            s(
                "UPDATE alerts SET status = ?3, note = coalesce(?4, note), updated_at = ?5
               WHERE id = ?1 AND status = ?2",
            ),
            s(
                "UPDATE alerts SET status = $3, note = coalesce($4, note), updated_at = $5
               WHERE id = $1 AND status = $2",
            ),
        ),
        (
            "delete_alert_in_status",
            |q| &q.delete_alert_in_status,
            s("DELETE FROM alerts WHERE id = ?1 AND status = ?2"),
            s("DELETE FROM alerts WHERE id = $1 AND status = $2"),
        ),
        (
            "forge_comment",
            |q| &q.forge_comment,
            s("SELECT comment_id FROM forge_comments WHERE target = ?1"),
            s("SELECT comment_id FROM forge_comments WHERE target = $1"),
        ),
        (
            "set_forge_comment",
            |q| &q.set_forge_comment,
            s(
                "INSERT INTO forge_comments (target, comment_id) VALUES (?1, ?2)
         ON CONFLICT (target) DO UPDATE SET comment_id = excluded.comment_id",
            ),
            s(
                "INSERT INTO forge_comments (target, comment_id) VALUES ($1, $2)
             ON CONFLICT (target) DO UPDATE SET comment_id = EXCLUDED.comment_id",
            ),
        ),
        (
            "insert_token",
            |q| &q.insert_token,
            s(
                "INSERT INTO tokens (name, role, secret_sha256, created_at, expires_at, revoked_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL)
                 ON CONFLICT (name) DO UPDATE SET role = excluded.role,
                     secret_sha256 = excluded.secret_sha256,
                     created_at = excluded.created_at, expires_at = excluded.expires_at,
                     revoked_at = NULL
                 WHERE tokens.revoked_at IS NOT NULL",
            ),
            s(
                "INSERT INTO tokens (name, role, secret_sha256, created_at, expires_at, revoked_at)
                 VALUES ($1, $2, $3, $4, $5, NULL)
                 ON CONFLICT (name) DO UPDATE SET role = EXCLUDED.role,
                     secret_sha256 = EXCLUDED.secret_sha256,
                     created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
                     revoked_at = NULL
                 WHERE tokens.revoked_at IS NOT NULL",
            ),
        ),
        (
            "list_tokens",
            |q| &q.list_tokens,
            s(
                "SELECT name, role, secret_sha256, created_at, expires_at, revoked_at FROM tokens
               ORDER BY name",
            ),
            s(
                "SELECT name, role, secret_sha256, created_at, expires_at, revoked_at FROM tokens
               ORDER BY name",
            ),
        ),
        (
            "revoke_token",
            |q| &q.revoke_token,
            s("UPDATE tokens SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL"),
            s("UPDATE tokens SET revoked_at = $2 WHERE name = $1 AND revoked_at IS NULL"),
        ),
        (
            "insert_session",
            |q| &q.insert_session,
            s("INSERT INTO sessions (id_sha256, token_sha256, token_name, created_at, expires_at)
               VALUES (?1, ?2, ?3, ?4, ?5)"),
            s("INSERT INTO sessions (id_sha256, token_sha256, token_name, created_at, expires_at)
               VALUES ($1, $2, $3, $4, $5)"),
        ),
        (
            "session",
            |q| &q.session,
            s("SELECT token_sha256, token_name, created_at, expires_at FROM sessions
               WHERE id_sha256 = ?1"),
            s("SELECT token_sha256, token_name, created_at, expires_at FROM sessions
               WHERE id_sha256 = $1"),
        ),
        (
            "delete_session",
            |q| &q.delete_session,
            s("DELETE FROM sessions WHERE id_sha256 = ?1"),
            s("DELETE FROM sessions WHERE id_sha256 = $1"),
        ),
        (
            "delete_ended_sessions",
            |q| &q.delete_ended_sessions,
            s("DELETE FROM sessions WHERE expires_at <= ?1"),
            s("DELETE FROM sessions WHERE expires_at <= $1"),
        ),
        (
            "upsert_summary",
            |q| &q.upsert_summary,
            s("INSERT INTO series_summaries
                   (project, testbed, branch, bench_key, summary_json, updated_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6)
               ON CONFLICT (project, testbed, branch, bench_key) DO UPDATE
                   SET summary_json = excluded.summary_json, updated_at = excluded.updated_at"),
            s("INSERT INTO series_summaries
                   (project, testbed, branch, bench_key, summary_json, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6)
               ON CONFLICT (project, testbed, branch, bench_key) DO UPDATE
                   SET summary_json = EXCLUDED.summary_json, updated_at = EXCLUDED.updated_at"),
        ),
        (
            "list_summaries",
            |q| &q.list_summaries,
            s("SELECT project, testbed, branch, bench_key, summary_json, updated_at
               FROM series_summaries WHERE project = ?1 ORDER BY testbed, branch, bench_key"),
            s("SELECT project, testbed, branch, bench_key, summary_json, updated_at
               FROM series_summaries WHERE project = $1 ORDER BY testbed, branch, bench_key"),
        ),
        (
            "alert_status",
            |q| &q.alert_status,
            s("SELECT status FROM alerts WHERE id = ?1"),
            s("SELECT status FROM alerts WHERE id = $1"),
        ),
        (
            "insert_alert_change",
            |q| &q.insert_alert_change,
            s("INSERT INTO alert_changes (alert_id, at, by_name, from_status, to_status, note, culprit)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
            s("INSERT INTO alert_changes (alert_id, at, by_name, from_status, to_status, note, culprit)
               VALUES ($1, $2, $3, $4, $5, $6, $7)"),
        ),
        (
            "alert_changes",
            |q| &q.alert_changes,
            s("SELECT at, by_name, from_status, to_status, note, culprit FROM alert_changes
               WHERE alert_id = ?1 ORDER BY id"),
            s("SELECT at, by_name, from_status, to_status, note, culprit FROM alert_changes
               WHERE alert_id = $1 ORDER BY id"),
        ),
    ]
}

#[test]
fn every_statement_is_the_hand_written_one_in_each_dialect() {
    for (what, field, sqlite, postgres) in old() {
        assert_eq!(squeezed(field(&SQLITE)), squeezed(&sqlite), "SQLite {what}");
        assert_eq!(
            squeezed(field(&POSTGRES)),
            squeezed(&postgres),
            "PostgreSQL {what}"
        );
    }
}

#[test]
fn the_list_above_covers_every_statement() {
    // `Queries` holds only `String`s; one more field than the list means a statement untested.
    assert_eq!(
        std::mem::size_of::<Queries>(),
        old().len() * std::mem::size_of::<String>()
    );
}
