//! The configuration exactly as written: every table rejects unknown keys, and values that
//! need checking keep their position in the file so errors can point at them.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub project: Option<RawProject>,
    pub store: Option<RawStore>,
    pub sampling: Option<Spanned<RawSampling>>,
    pub thresholds: Option<RawThresholds>,
    pub pinning: Option<RawPinning>,
    pub github: Option<RawGithub>,
    pub gitlab: Option<RawGitlab>,
    pub alerts: Option<RawAlerts>,
    pub ci: Option<RawCi>,
    pub report: Option<RawReport>,
    pub gpu: Option<RawGpu>,
    pub testbed: Option<RawTestbed>,
    pub history: Option<RawHistory>,
    pub serve: Option<RawServe>,
    pub suites: Option<RawSuites>,
    #[serde(default)]
    pub suite: Vec<Spanned<RawSuite>>,
}

/// `[gpu] device`: an NVML index as a number, or text (an index, a PCI bus id, a UUID).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawDevice {
    Index(u32),
    Text(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGpu {
    pub device: Option<Spanned<RawDevice>>,
    pub clocks: Option<Spanned<String>>,
    pub monitor_period_ms: Option<Spanned<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProject {
    pub name: Option<Spanned<String>>,
    pub build: Option<Spanned<String>>,
    /// Secret-looking variables the build command may see.
    #[serde(default)]
    pub env_pass: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStore {
    pub url: Option<String>,
}

/// Measurement settings; the same keys are accepted in `[sampling]` and in each `[[suite]]`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSampling {
    pub warmup_s: Option<f64>,
    pub min_samples: Option<u32>,
    pub max_samples: Option<u32>,
    pub target_ci_pct: Option<f64>,
    pub max_time_s: Option<f64>,
    pub timeout_s: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawThresholds {
    pub regression_pct: Option<Spanned<f64>>,
    /// `"auto"`: every suite without its own `threshold_pct` gets the automatic threshold.
    pub threshold_pct: Option<Spanned<RawThreshold>>,
}

/// A `threshold_pct` as written: a number of percent, or a word (only `"auto"` is valid).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum RawThreshold {
    Pct(f64),
    Word(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPinning {
    pub policy: Option<Spanned<String>>,
    pub cpus: Option<Spanned<Vec<u32>>>,
}

/// `[serve]`: the settings of `pitwall serve`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServe {
    pub public_read: Option<bool>,
    pub url: Option<Spanned<String>>,
    pub commit_url: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReport {
    pub dir: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCi {
    pub until_decided: Option<bool>,
    pub builtin_suites: Option<bool>,
    pub measure_identical: Option<bool>,
    pub max_rounds: Option<Spanned<u32>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGithub {
    pub repo: Option<Spanned<String>>,
    pub api_url: Option<String>,
    pub token_env: Option<Spanned<String>>,
    pub report_url: Option<String>,
    pub publish: Option<Spanned<Vec<String>>>,
}

/// `[testbed]`: the name of this machine's series.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTestbed {
    pub name: Option<Spanned<String>>,
}

/// `[history]`: which branch is the history, which paths are code, and when a run is
/// contended.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHistory {
    pub branch: Option<Spanned<String>>,
    pub code_paths: Option<Spanned<Vec<String>>>,
    pub contended_runnable_threads: Option<Spanned<f64>>,
    pub contended_steal_pct: Option<Spanned<f64>>,
    pub contended_psi_some_pct: Option<Spanned<f64>>,
}

/// `[suites]`: settings of every built-in suite.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSuites {
    pub backend: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGitlab {
    pub api_url: Option<String>,
    pub project: Option<String>,
    pub token_env: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlerts {
    pub webhook_env: Option<Spanned<String>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSuite {
    pub name: Option<String>,
    pub kind: Option<Spanned<String>>,
    pub command: Option<String>,
    pub format: Option<Spanned<String>>,
    pub workdir: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub env_pass: Vec<String>,
    pub runs: Option<u32>,
    pub output: Option<String>,
    #[serde(default)]
    pub artifacts: Vec<Spanned<String>>,
    pub ranks: Option<u32>,
    pub max_bytes: Option<u64>,
    pub cache: Option<String>,
    pub threshold_pct: Option<RawThreshold>,
    /// `kind = "cuda-kernels"`: the `[[suite.kernel]]` entries.
    #[serde(default)]
    pub kernel: Vec<Spanned<RawKernel>>,
    // Sampling keys, as in `[sampling]`.
    pub warmup_s: Option<f64>,
    pub min_samples: Option<u32>,
    pub max_samples: Option<u32>,
    pub target_ci_pct: Option<f64>,
    pub max_time_s: Option<f64>,
    pub timeout_s: Option<f64>,
}

impl RawSuite {
    pub fn sampling(&self) -> RawSampling {
        RawSampling {
            warmup_s: self.warmup_s,
            min_samples: self.min_samples,
            max_samples: self.max_samples,
            target_ci_pct: self.target_ci_pct,
            max_time_s: self.max_time_s,
            timeout_s: self.timeout_s,
        }
    }
}

/// Valid keys per table, for `hint:` lines.
pub fn valid_keys(section: &str) -> &'static str {
    match section {
        "" => {
            "project, store, sampling, thresholds, pinning, github, gitlab, alerts, ci, report, gpu, testbed, history, serve, suites, suite"
        }
        "alerts" => "webhook_env",
        "report" => "dir",
        "serve" => "commit_url, public_read, url",
        "gpu" => "device, clocks, monitor_period_ms",
        "project" => "name, build, env_pass",
        "store" => "url",
        "testbed" => "name",
        "history" => {
            "branch, code_paths, contended_runnable_threads, contended_steal_pct, \
             contended_psi_some_pct"
        }
        "suites" => "backend",
        "sampling" => "warmup_s, min_samples, max_samples, target_ci_pct, max_time_s, timeout_s",
        "thresholds" => "regression_pct, threshold_pct",
        "ci" => "until_decided, max_rounds, builtin_suites, measure_identical",
        "pinning" => "policy, cpus",
        "github" => "repo, api_url, token_env, report_url, publish",
        "gitlab" => "api_url, project, token_env",
        "suite" => {
            "name, kind, command, format, output, artifacts, workdir, env, env_pass, runs, ranks, max_bytes, cache, threshold_pct, \
             kernel, warmup_s, min_samples, max_samples, target_ci_pct, max_time_s, timeout_s"
        }
        "suite.kernel" => KERNEL_KEYS,
        _ => "",
    }
}

/// One `[[suite.kernel]]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKernel {
    pub name: Option<Spanned<String>>,
    pub source: Option<Spanned<String>>,
    pub entry: Option<Spanned<String>>,
    pub sizes: Option<Spanned<Vec<u64>>>,
    pub grid: Option<Spanned<RawDims>>,
    pub block: Option<Spanned<RawDims>>,
    pub shared_mem_bytes: Option<Spanned<RawExpr>>,
    #[serde(default)]
    pub args: Vec<Spanned<RawArg>>,
    pub reference: Option<Spanned<RawReference>>,
    pub bytes: Option<Spanned<RawExpr>>,
    pub flops: Option<Spanned<RawExpr>>,
}

/// An expression of `n`, or a plain integer; any other value is kept as `Other`, so the error
/// names the key and what is accepted instead of serde's "did not match any variant".
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawExpr {
    Int(u64),
    Text(String),
    Other(toml::Value),
}

/// `grid = "cdiv(n, 256)"` (x only) or `grid = ["n / 32", 4]` (x, y, z; missing ones are 1).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawDims {
    // A list first: `RawExpr::Other` takes any value, an array included.
    Many(Vec<RawExpr>),
    One(RawExpr),
}

/// One entry of `args`: `{ name, buffer = "f32", count, init, access }` or
/// `{ name, scalar = "f32", value }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArg {
    pub name: Option<String>,
    pub buffer: Option<String>,
    pub scalar: Option<String>,
    pub count: Option<RawExpr>,
    pub init: Option<RawValue>,
    pub access: Option<String>,
    pub value: Option<RawValue>,
}

/// A number or a word (`init = "random"`, `init = 1.5`, `value = "n"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawValue {
    Int(i64),
    Float(f64),
    Text(String),
    /// Anything else (`true`, an array): refused by the key's own rule, which says what fits.
    Other(serde::de::IgnoredAny),
}

/// `reference = { kernel = "saxpy_ref" }` or `reference = { host = "axpy", a = "a", x = "x",
/// y = "y", out = "y" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReference {
    pub kernel: Option<String>,
    pub source: Option<String>,
    pub terms: Option<RawExpr>,
    pub host: Option<String>,
    pub a: Option<String>,
    pub x: Option<String>,
    pub y: Option<String>,
    pub out: Option<String>,
}

/// Valid keys of the kernel tables, for hints.
pub const KERNEL_KEYS: &str =
    "name, source, entry, sizes, grid, block, shared_mem_bytes, args, reference, bytes, flops";
