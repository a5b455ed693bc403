//! Every mistake of a file at once: unknown keys are found by walking the parsed TOML before it
//! is deserialized (serde's `deny_unknown_fields` stops at the first), each with the closest
//! valid key as a "did you mean", and then taken out so the semantic checks still run.
//!
//! Suggestions use the Levenshtein edit distance (Levenshtein, "Binary codes capable of
//! correcting deletions, insertions and reversals", 1966) up to [`MAX_SUGGESTION_DISTANCE`].

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{ConfigError, Ctx};
use super::raw::valid_keys;

/// The largest edit distance a "did you mean" suggestion may be from what was written.
pub const MAX_SUGGESTION_DISTANCE: usize = 2;

/// The number of single-character insertions, deletions and substitutions that turn `a` into
/// `b` (case-insensitive).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `word` within [`MAX_SUGGESTION_DISTANCE`] edits (the first of
/// equals), if any.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= MAX_SUGGESTION_DISTANCE)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `hint` followed by `; did you mean `x`?` when a candidate is close to `word`.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    hint: &str,
) -> String {
    match suggest(word, candidates) {
        Some(s) => format!("{hint}; did you mean `{s}`?"),
        None => hint.to_string(),
    }
}

/// The keys of `valid_keys(section)` as a list.
fn key_list(section: &str) -> Vec<&'static str> {
    valid_keys(section)
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .collect()
}

/// Tables whose keys are walked: the top level, each `[table]`, each `[[suite]]` and each
/// `[[suite.kernel]]`. Inner tables of other keys (`env`, a kernel's `args`) are left to serde.
fn walked(section: &str) -> bool {
    !key_list(section).is_empty()
}

impl Ctx<'_> {
    /// Takes every unknown key out of `table` (the section `section`), adding an error for each.
    pub(super) fn strip_unknown_keys(
        &self,
        table: &mut DeTable<'_>,
        section: &str,
        errors: &mut Vec<ConfigError>,
    ) {
        let valid = key_list(section);
        let label = Ctx::section_label(section);
        let mut unknown: Vec<(String, Range<usize>)> = Vec::new();
        for (key, value) in table.iter_mut() {
            let name = key.get_ref().to_string();
            if !valid.contains(&name.as_str()) {
                unknown.push((name, key.span()));
                continue;
            }
            let child = if section.is_empty() {
                name.clone()
            } else {
                format!("{section}.{name}")
            };
            if walked(&child) {
                self.strip_in_value(value, &child, errors);
            }
        }
        for (name, span) in &unknown {
            let mut hint = format!("valid keys in {label} are {}", valid_keys(section));
            if section == "suites" && key_list("suite").contains(&name.as_str()) {
                hint.push_str("; a suite is a [[suite]] entry (two brackets, singular)");
            }
            errors.push(self.at(
                span.clone(),
                format!("unknown key `{name}` in {label}"),
                Some(did_you_mean(name, valid.iter().copied(), &hint)),
            ));
        }
        if unknown.is_empty() {
            return;
        }
        // An unknown key close to a valid one that is not written is checked as that key (so
        // `entri` does not also give "no `entry`"); any other is dropped.
        let all = std::mem::replace(table, DeTable::new());
        let written: Vec<String> = all.keys().map(|k| k.get_ref().to_string()).collect();
        for (k, v) in all {
            let name = k.get_ref().to_string();
            if !unknown.iter().any(|(n, _)| *n == name) {
                table.insert(k, v);
                continue;
            }
            let Some(meant) = suggest(&name, valid.iter().copied()) else {
                continue;
            };
            if !written.iter().any(|w| w == meant) {
                let key = Spanned::new(k.span(), toml::de::DeString::Owned(meant.to_string()));
                table.insert(key, v);
            }
        }
    }

    fn strip_in_value(
        &self,
        value: &mut Spanned<DeValue<'_>>,
        section: &str,
        errors: &mut Vec<ConfigError>,
    ) {
        match value.get_mut() {
            DeValue::Table(t) => self.strip_unknown_keys(t, section, errors),
            DeValue::Array(items) => {
                for item in items.iter_mut() {
                    if let DeValue::Table(t) = item.get_mut() {
                        self.strip_unknown_keys(t, section, errors);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The errors of one file as one error: the only one, or all of them in file order.
pub fn combine(mut errors: Vec<ConfigError>) -> ConfigError {
    errors.sort_by_key(ConfigError::position);
    errors.dedup_by(|a, b| a.to_string() == b.to_string());
    if errors.len() == 1 {
        errors.remove(0)
    } else {
        ConfigError::Many(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("timout_s", "timeout_s"), 1);
        assert_eq!(edit_distance("pitwal-json", "pitwall-json"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("Policy", "policy"), 0);
    }

    #[test]
    fn suggestions_stay_within_two_edits() {
        let keys = ["warmup_s", "timeout_s", "max_time_s"];
        assert_eq!(suggest("timout_s", keys), Some("timeout_s"));
        assert_eq!(suggest("max_tme_s", keys), Some("max_time_s"));
        assert_eq!(suggest("samples", keys), None);
    }
}
