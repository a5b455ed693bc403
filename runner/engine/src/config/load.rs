//! Reading `pitwall.toml`: TOML errors and semantic mistakes both become one line
//! `FILE:LINE:COLUMN: message; hint: …` naming the key at fault.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use pitwall_schema::SuiteKind;
use toml::Spanned;

use super::error::{ConfigError, Ctx};
use super::keys::combine;
use super::model::{Config, MAX_SECONDS, Project, Sampling, SuiteConfig, SuiteSpec, Thresholds};
use super::raw::{RawConfig, RawProject, RawSampling, RawSuite};
use pitwall_store::StoreUrl;
use serde::Deserialize;

/// The file `pitwall run` looks for in the working directory.
pub const DEFAULT_FILE: &str = "pitwall.toml";

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

impl Ctx<'_> {
    /// The typed configuration, or every semantic mistake of the file: each part is checked
    /// even when an earlier one failed (a failed part counts as its default meanwhile).
    fn validate(&self, raw: RawConfig, default_project: &str) -> Result<Config, ConfigError> {
        let mut errors: Vec<ConfigError> = Vec::new();
        let project = self.project(
            raw.project.unwrap_or_default(),
            default_project,
            &mut errors,
        );
        let store_url = raw.store.and_then(|s| s.url);
        if let Some(url) = &store_url {
            self.store_url(url, &mut errors);
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
            auto: false,
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
        let mut history = raw.history.unwrap_or_default();
        let code_paths =
            keep(&mut errors, self.code_paths(history.code_paths.take())).unwrap_or_default();
        let contended =
            keep(&mut errors, self.contended(Some(&history))).unwrap_or(crate::defaults::CONTENDED);
        let history_branch = keep(&mut errors, self.history_branch(Some(history)))
            .unwrap_or_else(|| crate::defaults::HISTORY_BRANCH.to_string());
        let ci = keep(&mut errors, self.ci(raw.ci.unwrap_or_default())).unwrap_or_default();
        let backend = keep(&mut errors, self.backend(raw.suites.unwrap_or_default()))
            .unwrap_or(crate::defaults::BACKEND);
        let raw_serve = raw.serve.unwrap_or_default();
        let serve_url = keep(&mut errors, self.serve_url(raw_serve.url)).flatten();
        let commit_url = keep(&mut errors, self.commit_url(raw_serve.commit_url)).flatten();
        let mut suites = self.suites(raw.suite, &file_sampling, sampling_span, &mut errors);
        if !errors.is_empty() {
            return Err(combine(errors));
        }
        // Every command suite keeps the tokens and the webhook out of its environment.
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
            project,
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
            code_paths,
            contended,
            serve: super::model::ServeConfig {
                public_read: raw_serve
                    .public_read
                    .unwrap_or(crate::defaults::SERVE_PUBLIC_READ),
                url: serve_url,
                commit_url,
            },
            backend,
            suites,
        })
    }

    /// `[serve] url`: an http(s) address with a host and nothing a link should not carry (a
    /// user, a query, a fragment, spaces); kept without its trailing `/`.
    fn serve_url(&self, url: Option<Spanned<String>>) -> Result<Option<String>, ConfigError> {
        let Some(url) = url else { return Ok(None) };
        let text = url.get_ref().trim();
        let bad = address_problem(text).or_else(|| {
            (text.contains(['?', '#']) || text.chars().any(char::is_whitespace))
                .then_some("carries a query, a fragment or a space")
        });
        match bad {
            Some(why) => Err(self.at(
                url.span(),
                format!("[serve] url `{text}` {why}"),
                Some("the address people open, e.g. https://pitwall.example".into()),
            )),
            None => Ok(Some(text.trim_end_matches('/').to_string())),
        }
    }

    /// `[serve] commit_url`: an http(s) address holding `{commit}`, with no user and no space.
    fn commit_url(&self, url: Option<Spanned<String>>) -> Result<Option<String>, ConfigError> {
        let Some(url) = url else { return Ok(None) };
        let text = url.get_ref().trim();
        let bad = address_problem(text).or_else(|| {
            if text.chars().any(char::is_whitespace) {
                Some("carries a space")
            } else if !text.contains("{commit}") {
                Some("has no `{commit}`")
            } else {
                None
            }
        });
        match bad {
            Some(why) => Err(self.at(
                url.span(),
                format!("[serve] commit_url `{text}` {why}"),
                Some("e.g. https://github.com/org/repo/commit/{commit}".into()),
            )),
            None => Ok(Some(text.to_string())),
        }
    }

    /// `[project]`: its name (the directory's when not given) and build command, neither
    /// written empty.
    fn project(
        &self,
        project: RawProject,
        default_project: &str,
        errors: &mut Vec<ConfigError>,
    ) -> Project {
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
                    errors,
                    Err::<(), _>(self.at(
                        v.span(),
                        format!("[project] {key} is empty"),
                        Some(hint.into()),
                    )),
                );
            }
        }
        Project {
            name: project
                .name
                .map_or_else(|| default_project.to_string(), Spanned::into_inner),
            build: project.build.map(Spanned::into_inner),
            env_pass: project.env_pass,
        }
    }

    /// `[store] url`: a store URL, with no password in it.
    fn store_url(&self, url: &str, errors: &mut Vec<ConfigError>) {
        keep(
            errors,
            StoreUrl::parse(url)
                .map_err(|e| self.at(self.find_key("url"), format!("[store] url: {e}"), None)),
        );
        // The file is in the repository: a password there is readable by everyone who
        // can read the repository, and by every pull request's code.
        if StoreUrl::password(url).is_some() {
            keep(errors, Err::<(), _>(self.at(
                self.find_key("url"),
                format!("[store] url `{}` holds a password", StoreUrl::redact(url)),
                Some("remove it from pitwall.toml; give it in PITWALL_STORE or --store, or with PostgreSQL's own PGPASSWORD or ~/.pgpass".into()),
            )));
        }
    }

    /// The `[[suite]]` entries, each with a unique name; the built-in suites when there is
    /// none, with `[sampling]` on top of their defaults.
    fn suites(
        &self,
        raw: Vec<Spanned<RawSuite>>,
        file_sampling: &RawSampling,
        sampling_span: Range<usize>,
        errors: &mut Vec<ConfigError>,
    ) -> Vec<SuiteConfig> {
        let mut suites = Vec::new();
        if raw.is_empty() {
            for kind in SuiteKind::ALL {
                let mut suite = SuiteConfig::builtin(kind);
                if let Some(s) = keep(
                    errors,
                    self.sampling(
                        suite.sampling,
                        file_sampling,
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
            for s in raw {
                let span = s.span();
                let Some(suite) = keep(
                    errors,
                    self.suite(
                        s.into_inner(),
                        span.clone(),
                        file_sampling,
                        sampling_span.clone(),
                    ),
                ) else {
                    continue;
                };
                if !seen.insert(suite.name.clone()) {
                    keep(
                        errors,
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
        suites
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
}

/// What is wrong with `text` as an http(s) address with a host and no user, if anything.
fn address_problem(text: &str) -> Option<&'static str> {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    match rest.map(|r| r.split('/').next().unwrap_or("")) {
        None => Some("is not an http(s) address"),
        Some("") => Some("has no host"),
        Some(h) if h.contains('@') => Some("carries a user"),
        Some(_) => None,
    }
}
