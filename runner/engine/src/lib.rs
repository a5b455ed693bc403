//! pitwall's measurement engine, below the use cases: adaptive sampling of in-process
//! benchmarks (in pitwall or in a fresh worker process per round), running and timing external
//! commands with a hard timeout, and turning both into stored results; with the configuration
//! (`pitwall.toml`) it is driven by and the named defaults every layer reads.

pub mod artifacts;
pub mod config;
pub mod defaults;
pub mod files;

mod ceiling;
mod child_env;
mod command;
mod command_suite;
mod device_lost;
mod meta;
mod observer;
mod outcome;
mod plausible;
mod protocol;
mod sampler;
mod stop;
mod suite;
mod worker;
mod worker_parent;

pub use child_env::{ChildEnv, process_redactor, redact_run};
pub use command::{
    CommandOutcome, ExitKind, escape_controls, fmt_secs, kill_running_commands, run_command,
    shown_command,
};
pub use meta::SampleMetaSource;
pub use observer::{BudgetNote, LookProgress, NullObserver, RunObserver, Step, short_sha};
pub use outcome::{Selection, SuiteOutcome};
pub use protocol::{Isolation, PROTOCOL, WORKER_SUBCOMMAND};
pub use sampler::{SampleSet, sample_benchmark};
pub use stop::{StopReason, StopRule, duration_from_secs};
pub use suite::run_suite;
pub use worker::{WorkerError, die_with_parent, serve_worker};
