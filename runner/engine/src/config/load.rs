//! Reading `pitwall.toml`: TOML errors and semantic mistakes both become one line
//! `FILE:LINE:COLUMN: message; hint: …` naming the key at fault.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use pitwall_schema::SuiteKind;
use toml::Spanned;

use super::keys::combine;
use super::model::{Config, MAX_SECONDS, Project, Sampling, SuiteConfig, SuiteSpec, Thresholds};
use super::raw::{RawConfig, RawSampling, valid_keys};
use pitwall_store::StoreUrl;
use serde::Deserialize;

/// The file `pitwall run` looks for in the working directory.
pub const DEFAULT_FILE: &str = "pitwall.toml";

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

/// `pitwall.toml` in `dir`, when there is one.
pub fn find_default(dir: &Path) -> Option<PathBuf> {
    let p = dir.join(DEFAULT_FILE);
    p.is_file().then_some(p)
}

/// Reads and validates a config file.
pub fn load_file(path: &Path, default_project: &str) -> Result<Config, ConfigError> {
    let text =
        crate::files::read_capped(path, crate::defaults::CONFIG_MAX_BYTES).map_err(|source| {
            ConfigError::Read {
                path: path.display().to_string(),
                source,
            }
        })?;
    let mut config = parse_str(&text, &path.display().to_string(), default_project)?;
    config.source = Some(path.to_path_buf());
    Ok(config)
}

/// Parses config text; `file` is only used in messages. A syntax error stops at the first;
/// a file that parses gets every mistake reported at once (unknown keys, then the first type
/// error, else every semantic error).
pub fn parse_str(text: &str, file: &str, default_project: &str) -> Result<Config, ConfigError> {
    let ctx = Ctx { text, file };
    let mut table = toml::de::DeTable::parse(text).map_err(|e| ctx.toml_error(&e))?;
    let mut errors = Vec::new();
    ctx.strip_unknown_keys(table.get_mut(), "", &mut errors);
    let raw = match RawConfig::deserialize(toml::de::Deserializer::from(table)) {
        Ok(raw) => raw,
        Err(e) => {
            errors.push(ctx.toml_error(&e));
            return Err(combine(errors));
        }
    };
    match ctx.validate(raw, default_project) {
        Ok(config) if errors.is_empty() => Ok(config),
        Ok(_) => Err(combine(errors)),
        Err(e) => {
            errors.extend(e.into_list());
            Err(combine(errors))
        }
    }
}

/// `r`'s value, or `None` with its error kept in `errors`.
fn keep<T>(errors: &mut Vec<ConfigError>, r: Result<T, ConfigError>) -> Option<T> {
    r.map_err(|e| errors.push(e)).ok()
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

    fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
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

    /// The typed configuration, or every semantic mistake of the file: each part is checked
    /// even when an earlier one failed (a failed part counts as its default meanwhile).
    fn validate(&self, raw: RawConfig, default_project: &str) -> Result<Config, ConfigError> {
        let mut errors: Vec<ConfigError> = Vec::new();
        let project = raw.project.unwrap_or_default();
        for (key, value, hint) in [
            (
                "name",
                &project.name,
                "remove it to use the directory's name",
            ),
            (
                "build",
                &project.build,
                "remove it when there is nothing to build",
            ),
        ] {
            if let Some(v) = value.as_ref().filter(|v| v.get_ref().trim().is_empty()) {
                keep(
                    &mut errors,
                    Err::<(), _>(self.at(
                        v.span(),
                        format!("[project] {key} is empty"),
                        Some(hint.into()),
                    )),
                );
            }
        }
        let name = project
            .name
            .map_or_else(|| default_project.to_string(), Spanned::into_inner);
        let store_url = raw.store.and_then(|s| s.url);
        if let Some(url) = &store_url {
            keep(
                &mut errors,
                StoreUrl::parse(url)
                    .map_err(|e| self.at(self.find_key("url"), format!("[store] url: {e}"), None)),
            );
            // The file is in the repository: a password there is readable by everyone who
            // can read the repository, and by every pull request's code.
            if StoreUrl::password(url).is_some() {
                keep(&mut errors, Err::<(), _>(self.at(
                    self.find_key("url"),
                    format!("[store] url `{}` holds a password", StoreUrl::redact(url)),
                    Some("remove it from pitwall.toml; give it in PITWALL_STORE or --store, or with PostgreSQL's own PGPASSWORD or ~/.pgpass".into()),
                )));
            }
        }
        let (file_sampling, sampling_span) = match raw.sampling {
            Some(s) => (s.get_ref().clone(), s.span()),
            None => (RawSampling::default(), 0..0),
        };
        let sampling = keep(
            &mut errors,
            self.sampling(
                crate::defaults::SAMPLING,
                &file_sampling,
                sampling_span.clone(),
                "[sampling]",
            ),
        )
        .unwrap_or(crate::defaults::SAMPLING);
        let thresholds = keep(&mut errors, self.thresholds(raw.thresholds)).unwrap_or(Thresholds {
            regression_pct: crate::defaults::REGRESSION_PCT,
        });
        let pinning =
            keep(&mut errors, self.pinning(raw.pinning.unwrap_or_default())).unwrap_or_default();
        let github =
            keep(&mut errors, self.github(raw.github.unwrap_or_default())).unwrap_or_default();
        let gitlab =
            keep(&mut errors, self.gitlab(raw.gitlab.unwrap_or_default())).unwrap_or_default();
        let alerts =
            keep(&mut errors, self.alerts(raw.alerts.unwrap_or_default())).unwrap_or_default();
        let gpu = keep(&mut errors, self.gpu(raw.gpu.unwrap_or_default())).unwrap_or_default();
        let testbed = keep(&mut errors, self.testbed(raw.testbed)).flatten();
        let history_branch = keep(&mut errors, self.history_branch(raw.history))
            .unwrap_or_else(|| crate::defaults::HISTORY_BRANCH.to_string());
        let ci = keep(&mut errors, self.ci(raw.ci.unwrap_or_default())).unwrap_or_default();
        let backend = keep(&mut errors, self.backend(raw.suites.unwrap_or_default()))
            .unwrap_or(crate::defaults::BACKEND);

        let mut suites = Vec::new();
        if raw.suite.is_empty() {
            for kind in SuiteKind::ALL {
                let mut suite = SuiteConfig::builtin(kind);
                if let Some(s) = keep(
                    &mut errors,
                    self.sampling(
                        suite.sampling,
                        &file_sampling,
                        sampling_span.clone(),
                        "[sampling]",
                    ),
                ) {
                    suite.sampling = s;
                }
                suites.push(suite);
            }
        } else {
            let mut seen = BTreeSet::new();
            for s in raw.suite {
                let span = s.span();
                let Some(suite) = keep(
                    &mut errors,
                    self.suite(
                        s.into_inner(),
                        span.clone(),
                        &file_sampling,
                        sampling_span.clone(),
                    ),
                ) else {
                    continue;
                };
                if !seen.insert(suite.name.clone()) {
                    keep(
                        &mut errors,
                        Err::<(), _>(self.at(
                            span,
                            format!("duplicate suite name `{}`", suite.name),
                            Some("give each [[suite]] a unique `name`".into()),
                        )),
                    );
                }
                suites.push(suite);
            }
        }
        if !errors.is_empty() {
            return Err(combine(errors));
        }
        let token_vars = [
            github.token_env.clone(),
            gitlab.token_env.clone(),
            alerts.webhook_env.clone(),
        ];
        for s in &mut suites {
            if let SuiteSpec::Command(c) = &mut s.spec {
                c.token_vars = token_vars.to_vec();
            }
        }
        Ok(Config {
            source: None,
            project: Project {
                name,
                build: project.build.map(Spanned::into_inner),
                env_pass: project.env_pass,
            },
            store_url,
            sampling,
            thresholds,
            pinning,
            github,
            gitlab,
            alerts,
            ci,
            report_dir: raw
                .report
                .and_then(|r| r.dir)
                .filter(|d| !d.trim().is_empty())
                .map(PathBuf::from),
            gpu,
            testbed,
            history_branch,
            backend,
            suites,
        })
    }

    fn find_key(&self, key: &str) -> Range<usize> {
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

    pub(super) fn sampling(
        &self,
        base: Sampling,
        over: &RawSampling,
        span: Range<usize>,
        label: &str,
    ) -> Result<Sampling, ConfigError> {
        let s = Sampling {
            warmup_s: over.warmup_s.unwrap_or(base.warmup_s),
            min_samples: over.min_samples.unwrap_or(base.min_samples),
            max_samples: over.max_samples.unwrap_or(base.max_samples),
            target_rel_ci: over.target_ci_pct.map_or(base.target_rel_ci, |p| p / 100.0),
            max_time_s: over.max_time_s.unwrap_or(base.max_time_s),
            timeout_s: over.timeout_s.unwrap_or(base.timeout_s),
        };
        // A mistake in one key points at that key when it is written in this table.
        let bad = |key: &str, m: &str, hint: Option<&str>| {
            Err(self.at(
                self.key_in(span.clone(), key),
                format!("{label}: {m}"),
                hint.map(str::to_string),
            ))
        };
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if !nonneg(s.warmup_s) {
            return bad("warmup_s", "warmup_s must be a number ≥ 0", None);
        }
        if s.min_samples < 1 {
            return bad("min_samples", "min_samples must be at least 1", None);
        }
        if s.max_samples < s.min_samples {
            return bad(
                "max_samples",
                &format!(
                    "max_samples ({}) is below min_samples ({})",
                    s.max_samples, s.min_samples
                ),
                None,
            );
        }
        if !pos(s.target_rel_ci) {
            return bad(
                "target_ci_pct",
                "target_ci_pct must be a positive number",
                None,
            );
        }
        if !pos(s.max_time_s) {
            return bad("max_time_s", "max_time_s must be a positive number", None);
        }
        if !pos(s.timeout_s) {
            return bad("timeout_s", "timeout_s must be a positive number", None);
        }
        for (key, value) in [
            ("warmup_s", s.warmup_s),
            ("max_time_s", s.max_time_s),
            ("timeout_s", s.timeout_s),
        ] {
            if value > MAX_SECONDS {
                return bad(
                    key,
                    &format!("{key} must be at most {MAX_SECONDS} seconds (one year)"),
                    Some("the value is in seconds, e.g. 600 for ten minutes"),
                );
            }
        }
        if s.warmup_s > s.timeout_s {
            return bad(
                "warmup_s",
                &format!(
                    "warmup_s ({} s) is longer than timeout_s ({} s)",
                    s.warmup_s, s.timeout_s
                ),
                Some(
                    "the warm-up runs inside the benchmark's time limit: lower warmup_s or raise timeout_s",
                ),
            );
        }
        Ok(s)
    }

    /// Where `key = …` is written in the table starting at `span` (up to the next table
    /// header); the table itself when the key is not there (its value was inherited).
    fn key_in(&self, span: Range<usize>, key: &str) -> Range<usize> {
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
