//! Validating one `[[suite]]` entry: its kind and name, the keys that apply to that kind, and
//! its sampling on top of `[sampling]` and the kind's defaults.

use super::keys::did_you_mean;
use std::ops::Range;
use std::path::PathBuf;

use pitwall_schema::SuiteKind;
use pitwall_schema::backend::{CacheMode, SuiteOptions};

use super::error::{ConfigError, Ctx};
use super::model::{BackendChoice, CommandSuite, OutputFormat, Sampling, SuiteConfig, SuiteSpec};
use super::raw::{RawSampling, RawSuite, RawSuites, RawThreshold};

impl Ctx<'_> {
    /// `[suites] backend`.
    pub(super) fn backend(&self, s: RawSuites) -> Result<BackendChoice, ConfigError> {
        let Some(b) = s.backend else {
            return Ok(crate::defaults::BACKEND);
        };
        BackendChoice::parse(b.get_ref().trim()).ok_or_else(|| {
            self.at(
                b.span(),
                format!("[suites] backend `{}` is not known", b.get_ref()),
                Some(did_you_mean(
                    b.get_ref().trim(),
                    ["auto", "cuda", "cpu"],
                    "use auto, cuda or cpu",
                )),
            )
        })
    }

    pub(super) fn suite(
        &self,
        s: RawSuite,
        span: Range<usize>,
        file_sampling: &RawSampling,
        sampling_span: Range<usize>,
    ) -> Result<SuiteConfig, ConfigError> {
        let builtin = self.suite_kind(&s, span.clone())?;
        let name = self.suite_name(&s, span.clone(), builtin)?;
        let label = format!("suite `{name}`");
        let base = Sampling::for_kind(builtin);
        // `[sampling]` on top of this kind's defaults: a conflict is `[sampling]`'s to fix.
        let base = self.sampling(base, file_sampling, sampling_span, "[sampling]")?;
        let sampling = self.sampling(base, &s.sampling(), span.clone(), &label)?;
        let (threshold_pct, threshold_auto) = match &s.threshold_pct {
            None => (None, false),
            Some(RawThreshold::Pct(t)) if *t > 0.0 && t.is_finite() => (Some(*t), false),
            Some(RawThreshold::Word(w)) if w == super::sections::AUTO => (None, true),
            Some(_) => {
                return Err(self.at(
                    span,
                    format!("{label}: threshold_pct must be a positive number or \"auto\""),
                    None,
                ));
            }
        };
        if !s.kernel.is_empty() && builtin != Some(SuiteKind::CudaKernels) {
            return Err(self.at(
                s.kernel[0].span(),
                format!("{label}: [[suite.kernel]] applies only to kind = \"cuda-kernels\""),
                None,
            ));
        }
        let spec = match builtin {
            Some(kind) => self.builtin_spec(&s, span, &label, kind)?,
            None => self.command_spec(s, span, &label)?,
        };
        Ok(SuiteConfig {
            name,
            spec,
            sampling,
            threshold_pct,
            threshold_auto,
        })
    }

    /// The built-in kind of a `[[suite]]`, `None` for `kind = "command"`.
    fn suite_kind(
        &self,
        s: &RawSuite,
        span: Range<usize>,
    ) -> Result<Option<SuiteKind>, ConfigError> {
        let kinds = "kernel, inference, collective, cuda-kernels, command";
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
                    Some(did_you_mean(
                        k,
                        kinds.split(", "),
                        &format!("use one of {kinds}"),
                    )),
                )
            })?),
        };
        Ok(builtin)
    }

    /// The suite's `name`, or its kind's name for a built-in suite without one.
    fn suite_name(
        &self,
        s: &RawSuite,
        span: Range<usize>,
        builtin: Option<SuiteKind>,
    ) -> Result<String, ConfigError> {
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
        Ok(name)
    }

    /// A built-in suite's options: no `command` keys, valid `ranks` and `cache`, its kernels.
    fn builtin_spec(
        &self,
        s: &RawSuite,
        span: Range<usize>,
        label: &str,
        kind: SuiteKind,
    ) -> Result<SuiteSpec, ConfigError> {
        for (key, set) in [
            ("command", s.command.is_some()),
            ("format", s.format.is_some()),
            ("workdir", s.workdir.is_some()),
            ("env", !s.env.is_empty()),
            ("runs", s.runs.is_some()),
            ("output", s.output.is_some()),
            ("artifacts", !s.artifacts.is_empty()),
        ] {
            if set {
                return Err(self.at(
                    span,
                    format!("{label}: key `{key}` applies only to kind = \"command\""),
                    None,
                ));
            }
        }
        if s.ranks.is_some() && kind == SuiteKind::CudaKernels {
            return Err(self.at(
                span,
                format!("{label}: ranks does not apply to kind = \"cuda-kernels\""),
                None,
            ));
        }
        if s.ranks == Some(0) || s.ranks == Some(1) && kind == SuiteKind::Collective {
            return Err(self.at(span, format!("{label}: ranks must be at least 2"), None));
        }
        let cache = match &s.cache {
            None => None,
            Some(c) => Some(CacheMode::parse(c.trim()).ok_or_else(|| {
                self.at(
                    span.clone(),
                    format!("{label}: cache `{c}` is not known"),
                    Some("use cold or warm".into()),
                )
            })?),
        };
        let kernels = match kind {
            SuiteKind::CudaKernels => Some(self.kernels(label, span.clone(), &s.kernel)?),
            _ => None,
        };
        let options = SuiteOptions {
            ranks: s.ranks.map(|r| r as usize),
            max_bytes: s.max_bytes,
            cache: cache.unwrap_or_default(),
            gpu_pci_bus_id: None,
            gpu_uuid: None,
            kernels: kernels.clone(),
            checkout: None,
        };
        Ok(SuiteSpec::Builtin {
            kind,
            options,
            ranks: s.ranks,
            max_bytes: s.max_bytes,
            cache,
            kernels,
        })
    }

    /// A `command` suite: its command, output format and the keys that fit that format.
    fn command_spec(
        &self,
        s: RawSuite,
        span: Range<usize>,
        label: &str,
    ) -> Result<SuiteSpec, ConfigError> {
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
                    Some(did_you_mean(
                        f.get_ref(),
                        OutputFormat::names().split(", "),
                        &format!("supported formats: {}", OutputFormat::names()),
                    )),
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
        if s.cache.is_some() {
            return Err(self.at(
                span,
                format!("{label}: cache applies only to built-in suites"),
                None,
            ));
        }
        if format == OutputFormat::Parsed(pitwall_formats::InputFormat::Criterion)
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
        if format == OutputFormat::WallTime && s.runs.is_some() {
            return Err(self.at(
                span,
                format!("{label}: `runs` does not apply to format `wall-time`"),
                Some(
                    "wall-time runs the command once per sample (min_samples to \
                     max_samples times); remove `runs`"
                        .into(),
                ),
            ));
        }
        if s.runs == Some(0) {
            return Err(self.at(span, format!("{label}: runs must be at least 1"), None));
        }
        let artifacts = self.artifacts(&s.artifacts, label)?;
        Ok(SuiteSpec::Command(CommandSuite {
            command,
            format,
            workdir: s.workdir.map(PathBuf::from),
            env: s.env.clone(),
            env_pass: s.env_pass.clone(),
            token_vars: Vec::new(),
            runs: s.runs.unwrap_or(1),
            output: s.output.map(PathBuf::from),
            artifacts,
        }))
    }
}

impl Ctx<'_> {
    /// A command suite's `artifacts`: patterns relative to the checkout, never absolute or
    /// climbing out of it with `..` (what they match is checked again after the build).
    fn artifacts(
        &self,
        raw: &[toml::Spanned<String>],
        label: &str,
    ) -> Result<Vec<String>, ConfigError> {
        raw.iter()
            .map(|p| {
                crate::artifacts::check_pattern(p.get_ref())
                    .map(|()| p.get_ref().clone())
                    .map_err(|why| {
                        self.at(
                            p.span(),
                            format!("{label}: artifact `{}` {why}", p.get_ref()),
                            Some("name build outputs inside the checkout, e.g. artifacts = [\"build/bench\", \"lib/*.so\"]".into()),
                        )
                    })
            })
            .collect()
    }
}
