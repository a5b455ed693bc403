//! The small tables of `pitwall.toml` (`[thresholds]`, `[pinning]`, `[gpu]`, `[testbed]`,
//! `[history]`, `[ci]`), each validated on its own so one mistake does not hide the next.

use pitwall_schema::ContentionLimits;
use toml::Spanned;

use super::error::{ConfigError, Ctx};
use super::model::{CiConfig, PinPolicy, PinningConfig, Thresholds};
use super::raw::{RawCi, RawHistory, RawTestbed, RawThreshold, RawThresholds};

/// The word of `threshold_pct = "auto"`.
pub(super) const AUTO: &str = "auto";

impl Ctx<'_> {
    pub(super) fn thresholds(&self, t: Option<RawThresholds>) -> Result<Thresholds, ConfigError> {
        let (pct, auto) = t.map_or((None, None), |t| (t.regression_pct, t.threshold_pct));
        let auto = match auto {
            None => false,
            Some(a) => match a.get_ref() {
                RawThreshold::Word(w) if w == AUTO => true,
                _ => {
                    return Err(self.at(
                        a.span(),
                        "[thresholds] threshold_pct can only be \"auto\"".into(),
                        Some("give a number of percent as regression_pct".into()),
                    ));
                }
            },
        };
        match pct {
            Some(p) if !(*p.get_ref() > 0.0 && p.get_ref().is_finite()) => Err(self.at(
                p.span(),
                "[thresholds] regression_pct must be a positive number".into(),
                None,
            )),
            Some(p) => Ok(Thresholds {
                regression_pct: *p.get_ref(),
                auto,
            }),
            None => Ok(Thresholds {
                regression_pct: crate::defaults::REGRESSION_PCT,
                auto,
            }),
        }
    }

    pub(super) fn testbed(&self, t: Option<RawTestbed>) -> Result<Option<String>, ConfigError> {
        match t.and_then(|t| t.name) {
            Some(n) if n.get_ref().trim().is_empty() => Err(self.at(
                n.span(),
                "[testbed] name must not be empty".to_string(),
                Some("leave the key out to use the name derived from host and GPU".into()),
            )),
            Some(n) => {
                if let Some(why) = pitwall_schema::consistency::given_testbed_problem(n.get_ref()) {
                    return Err(self.at(
                        n.span(),
                        format!("[testbed] name: {why}"),
                        Some("use letters, digits, `.`, `_` and `-`".into()),
                    ));
                }
                Ok(Some(pitwall_schema::sanitize_testbed(n.get_ref())))
            }
            None => Ok(None),
        }
    }

    pub(super) fn history_branch(&self, h: Option<RawHistory>) -> Result<String, ConfigError> {
        match h.and_then(|h| h.branch) {
            Some(b) if b.get_ref().trim().is_empty() => Err(self.at(
                b.span(),
                "[history] branch must not be empty".to_string(),
                None,
            )),
            Some(b) => Ok(b.into_inner().trim().to_string()),
            None => Ok(crate::defaults::HISTORY_BRANCH.to_string()),
        }
    }

    /// `[history] contended_*`: when a run is contended; each a number ≥ 0, the default
    /// (`defaults::CONTENDED`) where not given.
    pub(super) fn contended(
        &self,
        h: Option<&RawHistory>,
    ) -> Result<ContentionLimits, ConfigError> {
        let mut limits = crate::defaults::CONTENDED;
        let Some(h) = h else {
            return Ok(limits);
        };
        for (key, given, into) in [
            (
                "contended_runnable_threads",
                &h.contended_runnable_threads,
                &mut limits.runnable_threads,
            ),
            (
                "contended_steal_pct",
                &h.contended_steal_pct,
                &mut limits.steal_pct,
            ),
            (
                "contended_psi_some_pct",
                &h.contended_psi_some_pct,
                &mut limits.psi_some_pct,
            ),
        ] {
            if let Some(v) = given {
                if !(v.get_ref().is_finite() && *v.get_ref() >= 0.0) {
                    return Err(self.at(
                        v.span(),
                        format!("[history] {key} must be a number ≥ 0"),
                        None,
                    ));
                }
                *into = *v.get_ref();
            }
        }
        Ok(limits)
    }

    pub(super) fn ci(&self, raw: RawCi) -> Result<CiConfig, ConfigError> {
        let mut ci = CiConfig::default();
        if let Some(u) = raw.until_decided {
            ci.until_decided = u;
        }
        if let Some(b) = raw.builtin_suites {
            ci.builtin_suites = b;
        }
        if let Some(m) = raw.measure_identical {
            ci.measure_identical = m;
        }
        if let Some(m) = raw.max_rounds {
            if *m.get_ref() == 0 {
                return Err(self.at(
                    m.span(),
                    "[ci] max_rounds must be at least 1".to_string(),
                    None,
                ));
            }
            ci.max_rounds = Spanned::into_inner(m);
        }
        Ok(ci)
    }

    pub(super) fn pinning(&self, p: super::raw::RawPinning) -> Result<PinningConfig, ConfigError> {
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
                        Some(super::keys::did_you_mean(
                            other,
                            ["require", "prefer", "off"],
                            "use require, prefer or off",
                        )),
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

    pub(super) fn gpu(
        &self,
        g: super::raw::RawGpu,
    ) -> Result<super::model::GpuConfig, ConfigError> {
        let mut out = super::model::GpuConfig::default();
        if let Some(d) = g.device {
            let span = d.span();
            out.device = Some(match d.into_inner() {
                super::raw::RawDevice::Index(i) => pitwall_host::gpu::DeviceSelector::Index(i),
                super::raw::RawDevice::Text(t) => pitwall_host::gpu::DeviceSelector::parse(&t)
                    .map_err(|e| {
                        let (msg, hint) = e
                            .split_once("; hint: ")
                            .map_or((e.clone(), None), |(m, h)| {
                                (m.to_string(), Some(h.to_string()))
                            });
                        self.at(span, format!("[gpu] {msg}"), hint)
                    })?,
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
