//! The typed configuration the rest of pitwall uses, with the documented built-in defaults
//! (docs/CONFIG.md). Serialisable so a run can record the hash of what it ran with.

use pitwall_schema::SuiteKind;
use pitwall_schema::backend::{CacheMode, SuiteOptions};
use serde::Serialize;

use super::forge_model::{AlertsConfig, GithubConfig, GitlabConfig};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything a run needs to know.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// The file it came from; `None` for the built-in default.
    #[serde(skip)]
    pub source: Option<PathBuf>,
    pub project: Project,
    /// Store URL from `[store] url`; `--store` and `PITWALL_STORE` take precedence.
    pub store_url: Option<String>,
    pub sampling: Sampling,
    pub thresholds: Thresholds,
    pub pinning: PinningConfig,
    pub github: GithubConfig,
    /// `[gitlab]`: where `pitwall ci` keeps its merge-request note; not part of the hash.
    #[serde(skip)]
    pub gitlab: GitlabConfig,
    /// `[alerts]`: where new alerts are posted; not part of the hash.
    #[serde(skip)]
    pub alerts: AlertsConfig,
    pub ci: CiConfig,
    /// `[report] dir`: where `run` and `ci` write the HTML report (else beside a SQLite store).
    pub report_dir: Option<PathBuf>,
    pub gpu: GpuConfig,
    /// `[testbed] name`, sanitized: the testbed this machine's runs are stored under (derived
    /// from host and GPU when unset). Names series, changes no measurement: not in the hash.
    #[serde(skip)]
    pub testbed: Option<String>,
    /// `[history] branch`: the branch whose `history` runs are the history. Not in the hash.
    #[serde(skip)]
    pub history_branch: String,
    /// `[history] code_paths`: which paths count as code (an alert whose first bad commit
    /// touches none says so). Changes no measurement: not in the hash.
    #[serde(skip)]
    pub code_paths: super::CodePaths,
    /// `[history] contended_*`: when a run is contended (left out of change detection).
    /// Judges runs, changes no measurement: not in the hash.
    #[serde(skip)]
    pub contended: pitwall_schema::ContentionLimits,
    /// `[serve]`: how `pitwall serve` answers. Changes no measurement: not in the hash.
    #[serde(skip)]
    pub serve: ServeConfig,
    /// `[suites] backend`: which backend runs the built-in suites. Left out of the hash when
    /// `auto`, so configurations written before the key existed keep their hash.
    #[serde(skip_serializing_if = "BackendChoice::is_auto")]
    pub backend: BackendChoice,
    pub suites: Vec<SuiteConfig>,
}

/// `[serve]`: the settings of `pitwall serve` (docs/SERVE.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServeConfig {
    /// `public_read`: reads need no token (default false, on every listener: a TLS proxy on
    /// the same host connects over loopback, so loopback is no proof of a local reader).
    pub public_read: bool,
    /// `url`: where people reach the team's `pitwall serve` (`https://pitwall.example`), so
    /// `pitwall ci` can link a pull request's comment to its comparison page there.
    pub url: Option<String>,
    /// `commit_url`: a commit's page on the forge, `{commit}` standing for its full id
    /// (`https://github.com/org/repo/commit/{commit}`): the alert pages link commits to it.
    pub commit_url: Option<String>,
}

impl ServeConfig {
    /// The address of `commit`'s page, when `commit_url` is set and `commit` is a hex id.
    pub fn commit_link(&self, commit: &str) -> Option<String> {
        let hex = !commit.is_empty() && commit.chars().all(|c| c.is_ascii_hexdigit());
        self.commit_url
            .as_ref()
            .filter(|_| hex)
            .map(|u| u.replace("{commit}", commit))
    }
}

/// `[suites] backend`: which backend provides the built-in suites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// CUDA when its probe succeeds, else the CPU backend (saying so in one line).
    Auto,
    /// CUDA or nothing: a machine without it is an infrastructure failure.
    Cuda,
    /// The CPU backend, also on a machine with a GPU.
    Cpu,
}

impl BackendChoice {
    pub const ALL: [BackendChoice; 3] =
        [BackendChoice::Auto, BackendChoice::Cuda, BackendChoice::Cpu];

    pub fn as_str(self) -> &'static str {
        match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Cuda => "cuda",
            BackendChoice::Cpu => "cpu",
        }
    }

    pub fn parse(s: &str) -> Option<BackendChoice> {
        BackendChoice::ALL.into_iter().find(|b| b.as_str() == s)
    }

    pub fn is_auto(&self) -> bool {
        *self == BackendChoice::Auto
    }
}

/// How `pitwall ci` measures a pull request (`[ci]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CiConfig {
    /// Measure until every benchmark is decided (`run --until-decided`), not a fixed number of
    /// rounds.
    pub until_decided: bool,
    /// The most rounds when measuring until decided.
    pub max_rounds: u32,
    /// Whether the pull-request comparison measures the built-in suites (kernel, inference,
    /// collective), whose code is pitwall's and so the same on both sides. Left out of the
    /// hash when it is the default, so configurations written before the key keep their hash.
    #[serde(skip_serializing_if = "is_default_builtin_suites")]
    pub builtin_suites: bool,
    /// Measure benchmarks whose code is identical on both sides anyway (not hashed).
    #[serde(skip)]
    pub measure_identical: bool,
}

fn is_default_builtin_suites(b: &bool) -> bool {
    *b == crate::defaults::CI_BUILTIN_SUITES
}

impl Default for CiConfig {
    fn default() -> Self {
        CiConfig {
            until_decided: true,
            max_rounds: crate::defaults::MAX_ROUNDS,
            builtin_suites: crate::defaults::CI_BUILTIN_SUITES,
            measure_identical: crate::defaults::MEASURE_IDENTICAL,
        }
    }
}

/// Which GPU a run uses and what pitwall does with its clocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuConfig {
    /// The GPU: an NVML index, a PCI bus id or a GPU/MIG UUID; unset, CUDA device 0
    /// (`pitwall_host::gpu::select_gpu`). Unset hashes as the `0` it used to default to, so
    /// configurations that never named a device keep their hash.
    #[serde(serialize_with = "device_for_hash")]
    pub device: Option<pitwall_host::gpu::DeviceSelector>,
    /// `lock` (base clock), `lock:<MHz>`, `observe` (read only, the default) or `off`.
    pub clocks: pitwall_host::gpu::ClockMode,
    /// How often clocks, temperature, power and throttle reasons are read during a run.
    pub monitor_period_ms: u64,
}

/// `[gpu] device` in the configuration's hash: an index as the number it was, anything else
/// as its text, unset as `0` (the old default).
fn device_for_hash<S: serde::Serializer>(
    device: &Option<pitwall_host::gpu::DeviceSelector>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use pitwall_host::gpu::DeviceSelector;
    match device {
        None => s.serialize_u32(0),
        Some(DeviceSelector::Index(i)) => s.serialize_u32(*i),
        Some(other) => s.serialize_str(&other.to_string()),
    }
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            device: None,
            clocks: pitwall_host::gpu::ClockMode::Observe,
            monitor_period_ms: 10,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Project {
    pub name: String,
    /// Shell command run in the checkout before the suites.
    pub build: Option<String>,
    /// Secret-looking variables the build may see (all others are removed, docs/CI.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env_pass: Vec<String>,
}

/// Upper bound on every seconds-valued key (`warmup_s`, `max_time_s`, `timeout_s`): one year.
/// Larger values are mistakes (the largest do not even fit a `Duration`).
pub const MAX_SECONDS: f64 = 31_536_000.0;

/// How the engine samples one benchmark. Deserialisable too: a suite worker receives it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Sampling {
    /// Warm-up time before sampling starts.
    pub warmup_s: f64,
    pub min_samples: u32,
    pub max_samples: u32,
    /// Stop when the 95% interval of the median is within ± this fraction of it.
    pub target_rel_ci: f64,
    /// Stop (after `min_samples`) when this much time was spent sampling.
    pub max_time_s: f64,
    /// Hard wall-clock limit per benchmark; a command still running is killed.
    pub timeout_s: f64,
}

impl Sampling {
    /// Built-in defaults: 0.1 s warm-up, 10–100 000 samples, ±1%, 1 s budget, 120 s timeout.
    pub const DEFAULT: Sampling = Sampling {
        warmup_s: 0.1,
        min_samples: 10,
        max_samples: 100_000,
        target_rel_ci: 0.01,
        max_time_s: 1.0,
        timeout_s: 120.0,
    };

    /// The inference suite needs ≥ 1000 per-pass samples for a p99.9.
    pub const INFERENCE: Sampling = Sampling {
        min_samples: 1000,
        max_time_s: 3.0,
        ..Sampling::DEFAULT
    };

    /// The built-in defaults of a suite kind (`None` for command suites).
    pub fn for_kind(kind: Option<SuiteKind>) -> Sampling {
        match kind {
            Some(SuiteKind::Inference) => Sampling::INFERENCE,
            _ => Sampling::DEFAULT,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    /// Smallest relative change reported as a regression or improvement, in percent.
    pub regression_pct: f64,
    /// `threshold_pct = "auto"` in `[thresholds]`: suites without their own threshold get
    /// the larger of `regression_pct` and what each benchmark can resolve within
    /// `[ci] max_rounds`, from the testbed's noise record. Left out of the hash when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub auto: bool,
}

pub use pitwall_host::machine::PinPolicy;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinningConfig {
    pub policy: PinPolicy,
    pub cpus: Option<Vec<u32>>,
}

impl Default for PinningConfig {
    /// `[pinning]` left out: pin when possible, on the cores pitwall chooses.
    fn default() -> Self {
        PinningConfig {
            policy: PinPolicy::Prefer,
            cpus: None,
        }
    }
}

/// How a `command` suite's results are obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputFormat {
    /// The command's own harness takes the samples; its output is read in this format.
    Parsed(pitwall_formats::InputFormat),
    /// pitwall times the whole command, one execution per sample (hyperfine-style).
    WallTime,
}

impl OutputFormat {
    /// pitwall JSON, the default.
    pub const PITWALL_JSON: OutputFormat =
        OutputFormat::Parsed(pitwall_formats::InputFormat::PitwallJson);

    /// Every accepted name, for hints.
    pub fn names() -> String {
        format!("{}, wall-time", pitwall_formats::InputFormat::names())
    }

    pub fn parse(s: &str) -> Option<OutputFormat> {
        match s {
            "wall-time" => Some(OutputFormat::WallTime),
            other => pitwall_formats::InputFormat::parse_name(other).map(OutputFormat::Parsed),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Parsed(f) => f.name(),
            OutputFormat::WallTime => "wall-time",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandSuite {
    pub command: String,
    pub format: OutputFormat,
    /// Directory to run in, relative to the checkout; the checkout itself by default.
    pub workdir: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
    /// Secret-looking variables this suite's command may see.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env_pass: Vec<String>,
    /// The configured token variables, removed from the command's environment whatever
    /// their names (filled in from `[github]`/`[gitlab] token_env` when loading).
    #[serde(skip)]
    pub token_vars: Vec<String>,
    /// How many times the command runs (parsed formats); samples of all runs are kept.
    pub runs: u32,
    /// Where the command writes its results (a file, or a directory for `criterion`),
    /// relative to the working directory; stdout when unset.
    pub output: Option<PathBuf>,
    /// Build outputs (paths or `*` patterns inside the checkout) hashed after the build: the
    /// same on both sides of a pair means the suite's code is identical.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum SuiteSpec {
    Builtin {
        kind: SuiteKind,
        #[serde(skip)]
        options: SuiteOptions,
        ranks: Option<u32>,
        max_bytes: Option<u64>,
        /// `cache`, when configured (left out of the hash when not, so older configurations
        /// keep theirs).
        #[serde(skip_serializing_if = "Option::is_none")]
        cache: Option<CacheMode>,
        /// A `cuda-kernels` suite's manifest (also in `options`), hashed: a changed launch
        /// shape or size is another measurement.
        #[serde(skip_serializing_if = "Option::is_none")]
        kernels: Option<pitwall_schema::manifest::KernelManifest>,
    },
    Command(CommandSuite),
}

impl SuiteSpec {
    /// Whether the suite measures the project's own code (a command, the repository's CUDA
    /// kernels) rather than pitwall's built-in benchmarks, which are the same on every commit.
    pub fn runs_project_code(&self) -> bool {
        match self {
            SuiteSpec::Command(_) => true,
            SuiteSpec::Builtin { kind, .. } => *kind == SuiteKind::CudaKernels,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteConfig {
    pub name: String,
    pub spec: SuiteSpec,
    pub sampling: Sampling,
    pub threshold_pct: Option<f64>,
    /// `threshold_pct = "auto"` (then `threshold_pct` is `None`). Left out of the hash when off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub threshold_auto: bool,
}

impl SuiteConfig {
    /// A built-in suite with its default sampling.
    pub fn builtin(kind: SuiteKind) -> SuiteConfig {
        SuiteConfig {
            name: kind.as_str().to_string(),
            spec: SuiteSpec::Builtin {
                kind,
                options: SuiteOptions::default(),
                ranks: None,
                max_bytes: None,
                cache: None,
                kernels: None,
            },
            sampling: Sampling::for_kind(Some(kind)),
            threshold_pct: None,
            threshold_auto: false,
        }
    }
}

impl Config {
    /// The documented default: all built-in suites, embedded SQLite store, `prefer` pinning.
    pub fn builtin_default(project_name: &str) -> Config {
        Config {
            source: None,
            project: Project {
                name: project_name.to_string(),
                build: None,
                env_pass: Vec::new(),
            },
            store_url: None,
            sampling: crate::defaults::SAMPLING,
            thresholds: Thresholds {
                regression_pct: crate::defaults::REGRESSION_PCT,
                auto: false,
            },
            pinning: PinningConfig {
                policy: PinPolicy::Prefer,
                cpus: None,
            },
            github: GithubConfig::default(),
            gitlab: GitlabConfig::default(),
            alerts: AlertsConfig::default(),
            ci: CiConfig::default(),
            report_dir: None,
            serve: ServeConfig::default(),
            gpu: GpuConfig::default(),
            testbed: None,
            history_branch: crate::defaults::HISTORY_BRANCH.to_string(),
            code_paths: super::CodePaths::default(),
            contended: crate::defaults::CONTENDED,
            backend: crate::defaults::BACKEND,
            suites: SuiteKind::ALL
                .into_iter()
                .map(SuiteConfig::builtin)
                .collect(),
        }
    }

    /// The variables holding tokens pitwall publishes with: never given to measured code.
    pub fn token_vars(&self) -> Vec<String> {
        vec![
            self.github.token_env.clone(),
            self.gitlab.token_env.clone(),
            self.alerts.webhook_env.clone(),
        ]
    }

    /// SHA-256 over the canonical JSON of this configuration.
    pub fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let json = serde_json::to_vec(self).expect("config always serializes");
        let digest = Sha256::digest(&json);
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}
