//! A mistake in `pitwall.toml` and where it is: `ConfigError` (one line naming file, line and
//! column, with a hint), and `Ctx`, the file being validated, which turns byte offsets, TOML
//! errors and key names into those lines.

use std::ops::Range;

use super::raw::valid_keys;

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{line}:{column}: {message}{}", hint.as_ref().map(|h| format!("; hint: {h}")).unwrap_or_default())]
    Invalid {
        file: String,
        line: usize,
        column: usize,
        message: String,
        hint: Option<String>,
    },
    /// Several mistakes of one file, in file order, one line each.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Many(Vec<ConfigError>),
}

impl ConfigError {
    /// Where in the file the (first) mistake is, for ordering: (line, column).
    pub fn position(&self) -> (usize, usize) {
        match self {
            ConfigError::Read { .. } => (0, 0),
            ConfigError::Invalid { line, column, .. } => (*line, *column),
            ConfigError::Many(all) => all.first().map_or((0, 0), ConfigError::position),
        }
    }

    /// Each mistake on its own.
    pub fn into_list(self) -> Vec<ConfigError> {
        match self {
            ConfigError::Many(all) => all.into_iter().flat_map(ConfigError::into_list).collect(),
            one => vec![one],
        }
    }
}
/// The file being validated: its text (for positions) and its name (for messages).
pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
}
impl Ctx<'_> {
    pub(super) fn at(
        &self,
        span: Range<usize>,
        message: String,
        hint: Option<String>,
    ) -> ConfigError {
        let offset = span.start.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ConfigError::Invalid {
            file: self.file.to_string(),
            line,
            column,
            message,
            hint,
        }
    }

    /// The `[table]` or `[[array]]` header in force at `offset` (`""` at top level).
    fn section_at(&self, offset: usize) -> String {
        let before = &self.text[..offset.min(self.text.len())];
        before
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| l.starts_with('['))
            .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
            .unwrap_or_default()
    }

    pub(super) fn section_label(section: &str) -> String {
        match section {
            "" => "the top level".to_string(),
            "suite" => "[[suite]]".to_string(),
            "suite.kernel" => "[[suite.kernel]]".to_string(),
            s => format!("[{s}]"),
        }
    }

    /// The key written on the line at `offset` (`key = value`).
    fn key_at(&self, offset: usize) -> Option<String> {
        let start = self.text[..offset.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line = self.text[start..].lines().next()?;
        let (key, _) = line.split_once('=')?;
        let key = key.trim().trim_matches('"');
        (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
    }

    /// The table header written on the line at `offset`: its name, and whether it is an
    /// array-of-tables header (`[[name]]`).
    fn header_at(&self, offset: usize) -> Option<(String, bool)> {
        let start = self.text[..offset.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line = self.text[start..].lines().next()?.trim();
        let line = line.split('#').next().unwrap_or(line).trim();
        if let Some(inner) = line.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")) {
            return Some((inner.trim().to_string(), true));
        }
        let inner = line.strip_prefix('[')?.strip_suffix(']')?;
        Some((inner.trim().to_string(), false))
    }

    pub(super) fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let span = e.span().unwrap_or(0..0);
        let message = e.message().trim().replace('\n', "; ");
        let section = self.section_at(span.start);
        let label = Self::section_label(&section);
        if let Some(rest) = message.strip_prefix("unknown field ") {
            let key = rest.split(',').next().unwrap_or(rest).trim();
            let mut hint = format!("valid keys in {label} are {}", valid_keys(&section));
            // `[suites]` (the backend) written for a `[[suite]]` entry.
            let bare = key.trim_matches('`');
            if section == "suites" && valid_keys("suite").split(", ").any(|k| k.trim() == bare) {
                hint.push_str("; a suite is a [[suite]] entry (two brackets, singular)");
            }
            return self.at(span, format!("unknown key {key} in {label}"), Some(hint));
        }
        if let Some((name, double)) = self.header_at(span.start) {
            // `[suite]` for `[[suite]]` (or the reverse): name the table and the right brackets.
            if !double && message.contains("expected a sequence") {
                return self.at(
                    span,
                    format!(
                        "key `{name}`: [{name}] is one table, but `{name}` is a list of tables"
                    ),
                    Some(format!("write [[{name}]] (two brackets) before each entry")),
                );
            }
            if double && name != "suite" && message.starts_with("invalid type") {
                return self.at(
                    span,
                    format!(
                        "key `{name}`: [[{name}]] is a list of tables, but `{name}` is one table"
                    ),
                    Some(format!("write [{name}] (one bracket)")),
                );
            }
        }
        if message.starts_with("invalid type") || message.starts_with("invalid value") {
            if let Some(key) = self.key_at(span.start) {
                return self.at(span, format!("key `{key}` in {label}: {message}"), None);
            }
        }
        self.at(span, message, None)
    }

    pub(super) fn find_key(&self, key: &str) -> Range<usize> {
        let mut offset = 0;
        for line in self.text.split_inclusive('\n') {
            if line.trim_start().starts_with(key) {
                let start = offset + (line.len() - line.trim_start().len());
                return start..start + key.len();
            }
            offset += line.len();
        }
        0..0
    }

    /// Where `key = …` is written in the table starting at `span` (up to the next table
    /// header); the table itself when the key is not there (its value was inherited).
    pub(super) fn key_in(&self, span: Range<usize>, key: &str) -> Range<usize> {
        let start = span.start.min(self.text.len());
        let mut offset = start;
        for (i, line) in self.text[start..].split_inclusive('\n').enumerate() {
            let trimmed = line.trim_start();
            if i > 0 && trimmed.starts_with('[') {
                break;
            }
            let written = trimmed
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='));
            if written {
                let at = offset + (line.len() - trimmed.len());
                return at..at + key.len();
            }
            offset += line.len();
        }
        span
    }
}
