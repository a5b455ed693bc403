//! How pitwall measures and keeps results: configuration, the measurement engine, command
//! suites, the result store and the `run` orchestration. The `pitwall` binary is a thin CLI
//! over this library; only `src/cli*` sees clap.

pub mod bisect;
pub mod compare;
pub mod config;
pub mod detect;
pub mod engine;
pub mod fingerprint;
pub mod git;
pub mod gpu;
pub mod machine;
pub mod pair;
pub mod rounds;
pub mod run;
pub mod setup;
pub mod source;
pub mod store;
