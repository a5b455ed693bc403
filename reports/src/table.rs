//! Plain-text tables with aligned columns, for terminals and logs (no colour, no box drawing,
//! so they survive CI logs and copy-paste).

/// A table: headers, rows, and which columns are right-aligned (numbers).
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// Headers; a header starting with `>` is right-aligned (the `>` is not shown).
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers
                .iter()
                .map(|h| h.trim_start_matches('>').to_string())
                .collect(),
            right: headers.iter().map(|h| h.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row. Cells are untrusted text (benchmark names, tool messages): control
    /// characters are escaped (`\x1b`), so an ANSI sequence cannot restyle or rewrite the
    /// terminal and a newline cannot split the row.
    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.headers.len());
        self.rows
            .push(cells.iter().map(|c| escape_controls(c)).collect());
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Renders with two spaces between columns and no trailing spaces.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.headers).chain(&self.rows) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i].saturating_sub(cell.chars().count());
                if self.right[i] {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

pub use pitwall_analysis::number::escape_controls;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_cannot_reach_the_terminal() {
        let mut t = Table::new(&["NAME", ">VALUE"]);
        t.row(vec![
            "evil\x1b[2J\x1b[31mred\nsecond row\r\u{9b}".into(),
            "1".into(),
        ]);
        let out = t.render();
        assert_eq!(out.lines().count(), 2, "{out}");
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
        assert!(
            out.contains("evil\\x1b[2J\\x1b[31mred\\x0asecond row\\x0d\\x9b"),
            "{out}"
        );
    }

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["NAME", ">VALUE"]);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["longer".into(), "1234".into()]);
        assert_eq!(t.render(), "NAME    VALUE\na           1\nlonger   1234\n");
    }
}
