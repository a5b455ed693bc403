//! pitwall's use cases: measure commits, measure an interleaved pair, bisect, import, with the
//! configuration, the measurement engine and git they need. Each takes a request (and a store
//! where it keeps results) and returns values; the `pitwall` binary parses, renders and maps
//! them to exit codes, and is the only crate that sees clap.

pub mod alerts;
pub mod bisect;
pub mod ci_suites;
pub mod compare;
pub mod config;
pub mod defaults;
pub mod detect;
pub mod engine;
pub mod git;
pub mod import;
pub mod labels;
pub mod measure;
pub mod pair;
pub mod prune;
pub mod publish;
pub mod rounds;
pub mod run;
pub mod setup;
pub mod source;
pub mod writeup;

// Paths inside this crate name the host and store crates as modules (`crate::gpu`, …).
use pitwall_host::{fingerprint, gpu, machine};
use pitwall_store as store;
