//! The store's one SQL layer: the schema's migrations (`schema`) and every statement the
//! stores run (`queries`, and `selection` for `Store::query_runs`), written once for both
//! backends. SQLite and PostgreSQL differ in what [`Dialect`] says: placeholders (`?1` /
//! `$1`), column types (`INTEGER` / `BIGINT`, `REAL` / `DOUBLE PRECISION`), keys (rowid /
//! identity), byte-ordered text, "insert unless present"; where a backend runs a statement
//! its own way (PostgreSQL inserts a run's rows as arrays, finds an id prefix with
//! `starts_with`), both forms stand side by side there. A new table or query goes here, once,
//! so the two stores cannot drift apart.
//!
//! A schema change: append a step to `schema::STEPS` (it becomes the next migration of both
//! stores; a `Ty` or a `Dialect` method covers a type the two spell differently), then add or
//! change the statements in `queries`, whose tests hold each statement's text per dialect.

pub(super) mod queries;
pub(super) mod schema;
pub(super) mod selection;

/// Which SQL a store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// Statement `sql`, written with SQLite's numbered placeholders (`?1`, `?2`, …), in this
    /// dialect: PostgreSQL numbers them `$1`, `$2`, …. A `?` not followed by a digit is kept.
    pub(super) fn placeholders(self, sql: &str) -> String {
        match self {
            Dialect::Sqlite => sql.to_string(),
            Dialect::Postgres => {
                let mut out = String::with_capacity(sql.len());
                let mut chars = sql.chars().peekable();
                while let Some(c) = chars.next() {
                    let numbered = c == '?' && chars.peek().is_some_and(char::is_ascii_digit);
                    out.push(if numbered { '$' } else { c });
                }
                out
            }
        }
    }

    /// `INSERT INTO {into} VALUES ({values})` that does nothing when the row's key is
    /// already stored.
    pub(super) fn insert_unless_present(self, into: &str, values: &str) -> String {
        match self {
            Dialect::Sqlite => format!("INSERT OR IGNORE INTO {into} VALUES ({values})"),
            Dialect::Postgres => {
                format!("INSERT INTO {into} VALUES ({values}) ON CONFLICT DO NOTHING")
            }
        }
    }

    /// How an upsert names the row it was given (`DO UPDATE SET x = excluded.x`).
    pub(super) fn excluded(self) -> &'static str {
        match self {
            Dialect::Sqlite => "excluded",
            Dialect::Postgres => "EXCLUDED",
        }
    }
}

#[cfg(test)]
mod tests;
