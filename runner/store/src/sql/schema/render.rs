//! Rendering the schema's steps as one backend's migration script, in the layout the scripts
//! were first written in by hand (one column a line, names aligned, a blank line between
//! tables), since SQLite keeps each `CREATE TABLE` text as written.

use super::super::Dialect;
use super::Ty::{ExactReal, Int64, OrderedText, Real, RowId, Same, TextKey};
use super::{Column, Op, Step, Ty};

/// A `CREATE TABLE` being rendered, with the columns and indexes later steps of the same
/// migration add to it.
struct TableBlock {
    name: &'static str,
    columns: Vec<Column>,
    constraints: &'static [&'static str],
    without_rowid: bool,
    indexes: Vec<String>,
}

/// One statement of a script.
enum Statement {
    Table(TableBlock),
    Line(String),
}

/// The script of one migration: its steps' operations in order, except that a table created
/// in this migration is created whole (the columns later steps add to it go into its `CREATE
/// TABLE`, their indexes right after its own).
pub(super) fn script(d: Dialect, steps: &[Step]) -> String {
    let mut statements: Vec<Statement> = Vec::new();
    let created_here = |statements: &mut Vec<Statement>, table: &str| -> Option<usize> {
        statements
            .iter()
            .position(|s| matches!(s, Statement::Table(t) if t.name == table))
    };
    for op in steps.iter().flat_map(|s| s.ops) {
        match *op {
            Op::Table {
                name,
                columns,
                constraints,
                without_rowid,
            } => statements.push(Statement::Table(TableBlock {
                name,
                columns: columns.to_vec(),
                constraints,
                without_rowid,
                indexes: Vec::new(),
            })),
            Op::Index { name, table, on } => {
                let line = format!("CREATE INDEX {name} ON {table} ({on});");
                match created_here(&mut statements, table) {
                    Some(i) => match &mut statements[i] {
                        Statement::Table(t) => t.indexes.push(line),
                        Statement::Line(_) => unreachable!(),
                    },
                    None => statements.push(Statement::Line(line)),
                }
            }
            Op::DropIndex(name) => {
                statements.push(Statement::Line(format!("DROP INDEX IF EXISTS {name};")))
            }
            Op::Postgres(sql) => {
                if d == Dialect::Postgres {
                    statements.push(Statement::Line(sql.to_string()));
                }
            }
            Op::AddColumn { table, column } => match created_here(&mut statements, table) {
                Some(i) => match &mut statements[i] {
                    Statement::Table(t) => t.columns.push(column),
                    Statement::Line(_) => unreachable!(),
                },
                None => statements.push(Statement::Line(format!(
                    "ALTER TABLE {table} ADD COLUMN {};",
                    column_sql(d, column)
                ))),
            },
        }
    }
    let mut out = String::from("\n");
    for (i, statement) in statements.iter().enumerate() {
        match statement {
            Statement::Line(line) => {
                out.push_str(line);
                out.push('\n');
            }
            Statement::Table(t) => {
                let multi_line = t.columns.len() + t.constraints.len() > 1;
                if multi_line && i > 0 {
                    out.push('\n');
                }
                out.push_str(&create_table(d, t));
                for index in &t.indexes {
                    out.push_str(index);
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// `CREATE TABLE …;` and its newline: one line for a one-column table, else a line per column
/// and constraint with the names aligned.
fn create_table(d: Dialect, t: &TableBlock) -> String {
    let options = if t.without_rowid && d == Dialect::Sqlite {
        " WITHOUT ROWID"
    } else {
        ""
    };
    if let ([column], []) = (t.columns.as_slice(), t.constraints) {
        return format!(
            "CREATE TABLE {} ({}){options};\n",
            t.name,
            column_sql(d, *column)
        );
    }
    let width = t.columns.iter().map(|c| c.0.len()).max().unwrap_or(0) + 1;
    let lines: Vec<String> = t
        .columns
        .iter()
        .map(|&Column(name, ty)| format!("    {name:width$}{}", type_sql(d, name, ty)))
        .chain(t.constraints.iter().map(|c| format!("    {c}")))
        .collect();
    format!(
        "CREATE TABLE {} (\n{}\n){options};\n",
        t.name,
        lines.join(",\n")
    )
}

/// A column's name and definition, one space apart.
fn column_sql(d: Dialect, Column(name, ty): Column) -> String {
    format!("{name} {}", type_sql(d, name, ty))
}

/// A column's type and constraints in a dialect.
fn type_sql(d: Dialect, name: &str, ty: Ty) -> String {
    let then = |head: &str, rest: &str| {
        if rest.is_empty() {
            head.to_string()
        } else {
            format!("{head} {rest}")
        }
    };
    let sqlite = d == Dialect::Sqlite;
    match ty {
        Same(s) => s.to_string(),
        TextKey if sqlite => "TEXT PRIMARY KEY NOT NULL".into(),
        TextKey => "TEXT COLLATE \"C\" PRIMARY KEY".into(),
        OrderedText(rest) if sqlite => then("TEXT", rest),
        OrderedText(rest) => then("TEXT COLLATE \"C\"", rest),
        RowId if sqlite => "INTEGER PRIMARY KEY".into(),
        RowId => "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY".into(),
        Int64(rest) => then(if sqlite { "INTEGER" } else { "BIGINT" }, rest),
        Real(rest) => then(if sqlite { "REAL" } else { "DOUBLE PRECISION" }, rest),
        ExactReal if sqlite => format!("NOT NULL CHECK (typeof({name}) = 'real')"),
        ExactReal => "DOUBLE PRECISION NOT NULL".into(),
    }
}
