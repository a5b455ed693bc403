//! The dialect's rewrites on their own.

use super::Dialect;

#[test]
fn placeholders_are_numbered_in_each_dialect() {
    let sql = "SELECT a FROM t WHERE a = ?1 AND b = ?12 AND c IS NOT ?";
    assert_eq!(Dialect::Sqlite.placeholders(sql), sql);
    assert_eq!(
        Dialect::Postgres.placeholders(sql),
        "SELECT a FROM t WHERE a = $1 AND b = $12 AND c IS NOT ?"
    );
}

#[test]
fn inserts_unless_present() {
    assert_eq!(
        Dialect::Sqlite.insert_unless_present("k (x)", "?1"),
        "INSERT OR IGNORE INTO k (x) VALUES (?1)"
    );
    assert_eq!(
        Dialect::Postgres.insert_unless_present("k (x)", "$1"),
        "INSERT INTO k (x) VALUES ($1) ON CONFLICT DO NOTHING"
    );
}
