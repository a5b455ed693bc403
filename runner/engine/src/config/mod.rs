//! `pitwall.toml`: raw TOML (`raw`) is validated into a typed configuration (`model`);
//! `load` reads files and turns every mistake into one line naming file, line and key.

mod code_paths;
mod error;
mod forge;
mod forge_model;
mod kernels;
mod keys;
mod load;
mod model;
mod raw;
mod sections;
mod suite;

pub use code_paths::{CodePaths, glob_match};
pub use error::ConfigError;
pub use forge_model::{AlertsConfig, GithubConfig, GitlabConfig, Publish};
pub use load::{DEFAULT_FILE, find_default, load_file, parse_str};
pub use model::{
    BackendChoice, CiConfig, CommandSuite, Config, GpuConfig, MAX_SECONDS, OutputFormat, PinPolicy,
    PinningConfig, Project, Sampling, ServeConfig, SuiteConfig, SuiteSpec, Thresholds,
};

#[cfg(test)]
pub(crate) mod kernels_tests;
#[cfg(test)]
mod tests;
