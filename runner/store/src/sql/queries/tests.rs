//! Each statement as each store ran it before the statements were written once: equal up to
//! white space (which neither database reads), so the stores run what they always ran.

use super::{POSTGRES, SQLITE};

/// Runs of white space as one space, none at either end.
fn squeezed(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Asserts that each generated statement equals the hand-written one, up to white space.
fn same(pairs: &[(&str, &str, &str)]) {
    for (what, generated, old) in pairs {
        assert_eq!(squeezed(generated), squeezed(old), "{what}");
    }
}

#[test]
fn backfills_are_the_hand_written_ones() {
    let (s, p) = (&*SQLITE, &*POSTGRES);
    same(&[
        (
            "sqlite labels_to_fill",
            &s.labels_to_fill,
            "SELECT id, fingerprint_json, pair_json FROM runs WHERE testbed IS NULL OR role IS NULL",
        ),
        (
            "pg labels_to_fill",
            &p.labels_to_fill,
            "SELECT id, fingerprint_json, pair_json FROM runs WHERE testbed IS NULL OR role IS NULL",
        ),
        (
            "sqlite set_labels",
            &s.set_labels,
            "UPDATE runs SET testbed = ?2, role = ?3 WHERE id = ?1",
        ),
        (
            "pg set_labels",
            &p.set_labels,
            "UPDATE runs SET testbed = $2, role = $3 WHERE id = $1",
        ),
        (
            "sqlite keys_to_fill",
            &s.keys_to_fill,
            "SELECT id, suite, name, params_json, measure, summary_json FROM results
             WHERE bench_key IS NULL",
        ),
        (
            "pg keys_to_fill",
            &p.keys_to_fill,
            "SELECT id, suite, name, params_json, measure, summary_json FROM results
         WHERE bench_key IS NULL",
        ),
        (
            "sqlite samples_of_result",
            &s.samples_of_result,
            "SELECT value, meta_json FROM samples WHERE result_id = ?1",
        ),
        (
            "pg samples_of_result",
            &p.samples_of_result,
            "SELECT value, meta_json FROM samples WHERE result_id = $1",
        ),
        (
            "sqlite set_key",
            &s.set_key,
            "UPDATE results SET bench_key = ?2, point_json = ?3 WHERE id = ?1",
        ),
        (
            "pg set_key",
            &p.set_key,
            "UPDATE results SET bench_key = $2, point_json = $3 WHERE id = $1",
        ),
        (
            "sqlite record_key",
            &s.record_key,
            "INSERT OR IGNORE INTO series_keys (bench_key) VALUES (?1)",
        ),
        (
            "pg record_key",
            &p.record_key,
            "INSERT INTO series_keys (bench_key) VALUES ($1) ON CONFLICT DO NOTHING",
        ),
    ]);
}
