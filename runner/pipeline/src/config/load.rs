//! Reading `pitwall.toml`: TOML errors and semantic mistakes both become one line
//! `FILE:LINE:COLUMN: message; hint: …` naming the key at fault.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use pitwall_schema::SuiteKind;
use toml::Spanned;

use super::model::{
    CiConfig, Config, MAX_SECONDS, PinPolicy, PinningConfig, Project, Sampling, SuiteConfig,
    SuiteSpec, Thresholds,
};
use super::raw::{RawConfig, RawSampling, valid_keys};
use crate::store::StoreUrl;

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
}

/// `pitwall.toml` in `dir`, when there is one.
pub fn find_default(dir: &Path) -> Option<PathBuf> {
    let p = dir.join(DEFAULT_FILE);
    p.is_file().then_some(p)
}

/// Reads and validates a config file.
pub fn load_file(path: &Path, default_project: &str) -> Result<Config, ConfigError> {
    let text =
        crate::source::read_capped(path, crate::defaults::CONFIG_MAX_BYTES).map_err(|source| {
            ConfigError::Read {
                path: path.display().to_string(),
                source,
            }
        })?;
    let mut config = parse_str(&text, &path.display().to_string(), default_project)?;
    config.source = Some(path.to_path_buf());
    Ok(config)
}

/// Parses config text; `file` is only used in messages.
pub fn parse_str(text: &str, file: &str, default_project: &str) -> Result<Config, ConfigError> {
    let ctx = Ctx { text, file };
    let raw: RawConfig = toml::from_str(text).map_err(|e| ctx.toml_error(&e))?;
    ctx.validate(raw, default_project)
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

    fn section_label(section: &str) -> String {
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

    fn validate(&self, raw: RawConfig, default_project: &str) -> Result<Config, ConfigError> {
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
                return Err(self.at(
                    v.span(),
                    format!("[project] {key} is empty"),
                    Some(hint.into()),
                ));
            }
        }
        let name = project
            .name
            .map_or_else(|| default_project.to_string(), Spanned::into_inner);
        let store_url = raw.store.and_then(|s| s.url);
        if let Some(url) = &store_url {
            StoreUrl::parse(url)
                .map_err(|e| self.at(self.find_key("url"), format!("[store] url: {e}"), None))?;
        }
        let (file_sampling, sampling_span) = match raw.sampling {
            Some(s) => (s.get_ref().clone(), s.span()),
            None => (RawSampling::default(), 0..0),
        };
        let sampling = self.sampling(
            crate::defaults::SAMPLING,
            &file_sampling,
            sampling_span.clone(),
            "[sampling]",
        )?;

        let thresholds = match raw.thresholds.and_then(|t| t.regression_pct) {
            Some(p) if !(*p.get_ref() > 0.0 && p.get_ref().is_finite()) => {
                return Err(self.at(
                    p.span(),
                    "[thresholds] regression_pct must be a positive number".into(),
                    None,
                ));
            }
            Some(p) => Thresholds {
                regression_pct: *p.get_ref(),
            },
            None => Thresholds {
                regression_pct: crate::defaults::REGRESSION_PCT,
            },
        };

        let pinning = self.pinning(raw.pinning.unwrap_or_default())?;
        let github = self.github(raw.github.unwrap_or_default())?;
        let gitlab = self.gitlab(raw.gitlab.unwrap_or_default());
        let alerts = self.alerts(raw.alerts.unwrap_or_default())?;
        let gpu = self.gpu(raw.gpu.unwrap_or_default())?;
        let testbed = match raw.testbed.and_then(|t| t.name) {
            Some(n) if n.get_ref().trim().is_empty() => {
                return Err(self.at(
                    n.span(),
                    "[testbed] name must not be empty".to_string(),
                    Some("leave the key out to use the name derived from host and GPU".into()),
                ));
            }
            Some(n) => Some(pitwall_schema::sanitize_testbed(n.get_ref())),
            None => None,
        };
        let history_branch = match raw.history.and_then(|h| h.branch) {
            Some(b) if b.get_ref().trim().is_empty() => {
                return Err(self.at(
                    b.span(),
                    "[history] branch must not be empty".to_string(),
                    None,
                ));
            }
            Some(b) => b.into_inner().trim().to_string(),
            None => crate::defaults::HISTORY_BRANCH.to_string(),
        };
        let raw_ci = raw.ci.unwrap_or_default();
        let mut ci = CiConfig::default();
        if let Some(u) = raw_ci.until_decided {
            ci.until_decided = u;
        }
        if let Some(b) = raw_ci.builtin_suites {
            ci.builtin_suites = b;
        }
        if let Some(m) = raw_ci.max_rounds {
            if *m.get_ref() == 0 {
                return Err(self.at(
                    m.span(),
                    "[ci] max_rounds must be at least 1".to_string(),
                    None,
                ));
            }
            ci.max_rounds = m.into_inner();
        }

        let suites = if raw.suite.is_empty() {
            let mut suites = Vec::new();
            for kind in SuiteKind::ALL {
                let mut suite = SuiteConfig::builtin(kind);
                suite.sampling = self.sampling(
                    suite.sampling,
                    &file_sampling,
                    sampling_span.clone(),
                    "[sampling]",
                )?;
                suites.push(suite);
            }
            suites
        } else {
            let mut seen = BTreeSet::new();
            let mut out = Vec::new();
            for s in raw.suite {
                let span = s.span();
                let suite = self.suite(
                    s.into_inner(),
                    span.clone(),
                    &file_sampling,
                    sampling_span.clone(),
                )?;
                if !seen.insert(suite.name.clone()) {
                    return Err(self.at(
                        span,
                        format!("duplicate suite name `{}`", suite.name),
                        Some("give each [[suite]] a unique `name`".into()),
                    ));
                }
                out.push(suite);
            }
            out
        };
        let token_vars = [
            github.token_env.clone(),
            gitlab.token_env.clone(),
            alerts.webhook_env.clone(),
        ];
        let suites = suites
            .into_iter()
            .map(|mut s| {
                if let SuiteSpec::Command(c) = &mut s.spec {
                    c.token_vars = token_vars.to_vec();
                }
                s
            })
            .collect();
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
            backend: self.backend(raw.suites.unwrap_or_default())?,
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

    fn pinning(&self, p: super::raw::RawPinning) -> Result<PinningConfig, ConfigError> {
        let policy = match p.policy {
            None => PinPolicy::Prefer,
            Some(s) => match s.get_ref().as_str() {
                "require" => PinPolicy::Require,
                "prefer" => PinPolicy::Prefer,
                "off" => PinPolicy::Off,
                other => {
                    return Err(self.at(
                        s.span(),
                        format!("[pinning] policy `{other}` is not valid"),
                        Some("use require, prefer or off".into()),
                    ));
                }
            },
        };
        let cpus = match p.cpus {
            Some(c) if c.get_ref().is_empty() => {
                return Err(self.at(
                    c.span(),
                    "[pinning] cpus is empty".into(),
                    Some("list core ids, e.g. cpus = [2, 3]".into()),
                ));
            }
            Some(c) => Some(c.into_inner()),
            None => None,
        };
        Ok(PinningConfig { policy, cpus })
    }

    fn gpu(&self, g: super::raw::RawGpu) -> Result<super::model::GpuConfig, ConfigError> {
        let mut out = super::model::GpuConfig::default();
        if let Some(d) = g.device {
            let span = d.span();
            out.device = Some(match d.into_inner() {
                super::raw::RawDevice::Index(i) => crate::gpu::DeviceSelector::Index(i),
                super::raw::RawDevice::Text(t) => {
                    crate::gpu::DeviceSelector::parse(&t).map_err(|e| {
                        let (msg, hint) = e
                            .split_once("; hint: ")
                            .map_or((e.clone(), None), |(m, h)| {
                                (m.to_string(), Some(h.to_string()))
                            });
                        self.at(span, format!("[gpu] {msg}"), hint)
                    })?
                }
            });
        }
        if let Some(c) = g.clocks {
            out.clocks = c.get_ref().parse().map_err(|e: String| {
                let (msg, hint) = e
                    .split_once("; hint: ")
                    .map_or((e.clone(), None), |(m, h)| {
                        (m.to_string(), Some(h.to_string()))
                    });
                self.at(c.span(), format!("[gpu] {msg}"), hint)
            })?;
        }
        if let Some(p) = g.monitor_period_ms {
            if *p.get_ref() == 0 {
                return Err(self.at(
                    p.span(),
                    "[gpu] monitor_period_ms must be at least 1".into(),
                    None,
                ));
            }
            out.monitor_period_ms = *p.get_ref();
        }
        Ok(out)
    }
}
