//! Reading `pitwall.toml`: TOML errors and semantic mistakes both become one line
//! `FILE:LINE:COLUMN: message; hint: …` naming the key at fault.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use pitwall_suites::SuiteKind;
use pitwall_suites::backend::SuiteOptions;

use super::model::{
    CommandSuite, Config, GithubConfig, OutputFormat, PinPolicy, PinningConfig, Project, Sampling,
    SuiteConfig, SuiteSpec, Thresholds,
};
use super::raw::{RawConfig, RawSampling, RawSuite, valid_keys};
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
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
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

struct Ctx<'a> {
    text: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    fn at(&self, span: Range<usize>, message: String, hint: Option<String>) -> ConfigError {
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

    fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let span = e.span().unwrap_or(0..0);
        let message = e.message().trim().replace('\n', "; ");
        let section = self.section_at(span.start);
        let label = Self::section_label(&section);
        if let Some(rest) = message.strip_prefix("unknown field ") {
            let key = rest.split(',').next().unwrap_or(rest).trim();
            let hint = format!("valid keys in {label} are {}", valid_keys(&section));
            return self.at(span, format!("unknown key {key} in {label}"), Some(hint));
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
        let name = project.name.unwrap_or_else(|| default_project.to_string());
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
            Sampling::DEFAULT,
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
                regression_pct: 2.0,
            },
        };

        let pinning = self.pinning(raw.pinning.unwrap_or_default())?;
        let github = self.github(raw.github.unwrap_or_default())?;
        let gpu = self.gpu(raw.gpu.unwrap_or_default())?;

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
                let suite = self.suite(s.into_inner(), span.clone(), &file_sampling)?;
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
        Ok(Config {
            source: None,
            project: Project {
                name,
                build: project.build,
            },
            store_url,
            sampling,
            thresholds,
            pinning,
            github,
            gpu,
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

    fn sampling(
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
        let bad = |m: &str| Err(self.at(span.clone(), format!("{label}: {m}"), None));
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if !nonneg(s.warmup_s) {
            return bad("warmup_s must be a number ≥ 0");
        }
        if s.min_samples < 1 {
            return bad("min_samples must be at least 1");
        }
        if s.max_samples < s.min_samples {
            return bad(&format!(
                "max_samples ({}) is below min_samples ({})",
                s.max_samples, s.min_samples
            ));
        }
        if !pos(s.target_rel_ci) {
            return bad("target_ci_pct must be a positive number");
        }
        if !pos(s.max_time_s) {
            return bad("max_time_s must be a positive number");
        }
        if !pos(s.timeout_s) {
            return bad("timeout_s must be a positive number");
        }
        Ok(s)
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
            out.device = d;
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

    fn github(&self, g: super::raw::RawGithub) -> Result<GithubConfig, ConfigError> {
        let mut out = GithubConfig::default();
        if let Some(repo) = g.repo {
            let ok = matches!(repo.get_ref().split_once('/'), Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/'));
            if !ok {
                return Err(self.at(
                    repo.span(),
                    format!("[github] repo `{}` is not OWNER/NAME", repo.get_ref()),
                    None,
                ));
            }
            out.repo = Some(repo.into_inner());
        }
        if let Some(u) = g.api_url {
            out.api_url = u;
        }
        if let Some(t) = g.token_env {
            out.token_env = t;
        }
        out.report_url = g.report_url;
        Ok(out)
    }

    fn suite(
        &self,
        s: RawSuite,
        span: Range<usize>,
        file_sampling: &RawSampling,
    ) -> Result<SuiteConfig, ConfigError> {
        let kinds = "kernel, inference, collective, command";
        let Some(kind) = s.kind.clone() else {
            return Err(self.at(
                span,
                "[[suite]] has no `kind`".into(),
                Some(format!("set kind to one of {kinds}")),
            ));
        };
        let kind_name = kind.get_ref().as_str();
        let builtin = match kind_name {
            "command" => None,
            k => Some(SuiteKind::parse(k).ok_or_else(|| {
                self.at(
                    kind.span(),
                    format!("unknown suite kind `{k}`"),
                    Some(format!("use one of {kinds}")),
                )
            })?),
        };
        let name = match (&s.name, builtin) {
            (Some(n), _) if !n.trim().is_empty() => n.clone(),
            (Some(_), _) => return Err(self.at(span, "[[suite]] name is empty".into(), None)),
            (None, Some(k)) => k.as_str().to_string(),
            (None, None) => {
                return Err(self.at(
                    span,
                    "command [[suite]] has no `name`".into(),
                    Some("add name = \"…\"".into()),
                ));
            }
        };
        let label = format!("suite `{name}`");
        let base = Sampling::for_kind(builtin);
        let base = self.sampling(base, file_sampling, span.clone(), "[sampling]")?;
        let sampling = self.sampling(base, &s.sampling(), span.clone(), &label)?;
        if let Some(t) = s.threshold_pct {
            if !(t > 0.0 && t.is_finite()) {
                return Err(self.at(
                    span,
                    format!("{label}: threshold_pct must be a positive number"),
                    None,
                ));
            }
        }
        let spec = match builtin {
            Some(kind) => {
                for (key, set) in [
                    ("command", s.command.is_some()),
                    ("format", s.format.is_some()),
                    ("workdir", s.workdir.is_some()),
                    ("env", !s.env.is_empty()),
                    ("runs", s.runs.is_some()),
                    ("output", s.output.is_some()),
                ] {
                    if set {
                        return Err(self.at(
                            span,
                            format!("{label}: key `{key}` applies only to kind = \"command\""),
                            None,
                        ));
                    }
                }
                if s.ranks == Some(0) || s.ranks == Some(1) && kind == SuiteKind::Collective {
                    return Err(self.at(span, format!("{label}: ranks must be at least 2"), None));
                }
                let options = SuiteOptions {
                    ranks: s.ranks.map(|r| r as usize),
                    max_bytes: s.max_bytes,
                };
                SuiteSpec::Builtin {
                    kind,
                    options,
                    ranks: s.ranks,
                    max_bytes: s.max_bytes,
                }
            }
            None => {
                let Some(command) = s.command.clone().filter(|c| !c.trim().is_empty()) else {
                    return Err(self.at(
                        span,
                        format!("{label}: kind = \"command\" needs `command`"),
                        Some("add command = \"./bench --json\"".into()),
                    ));
                };
                let format = match &s.format {
                    None => OutputFormat::PITWALL_JSON,
                    Some(f) => OutputFormat::parse(f.get_ref()).ok_or_else(|| {
                        self.at(
                            f.span(),
                            format!("{label}: format `{}` is not supported", f.get_ref()),
                            Some(format!("supported formats: {}", OutputFormat::names())),
                        )
                    })?,
                };
                if s.ranks.is_some() || s.max_bytes.is_some() {
                    return Err(self.at(
                        span,
                        format!("{label}: ranks and max_bytes apply only to built-in suites"),
                        None,
                    ));
                }
                if format == OutputFormat::Parsed(pitwall_suites::formats::InputFormat::Criterion)
                    && s.output.is_none()
                {
                    return Err(self.at(
                        span,
                        format!("{label}: format `criterion` reads a directory"),
                        Some("add output = \"target/criterion\"".into()),
                    ));
                }
                if format == OutputFormat::WallTime && s.output.is_some() {
                    return Err(self.at(
                        span,
                        format!("{label}: `output` does not apply to format `wall-time`"),
                        None,
                    ));
                }
                if s.runs == Some(0) {
                    return Err(self.at(span, format!("{label}: runs must be at least 1"), None));
                }
                SuiteSpec::Command(CommandSuite {
                    command,
                    format,
                    workdir: s.workdir.map(PathBuf::from),
                    env: s.env.clone(),
                    runs: s.runs.unwrap_or(1),
                    output: s.output.map(PathBuf::from),
                })
            }
        };
        Ok(SuiteConfig {
            name,
            spec,
            sampling,
            threshold_pct: s.threshold_pct,
        })
    }
}
