//! The command-line layer: the only code that sees clap. Arguments become typed requests for
//! the `pitwall_runner` library; errors become one line and a documented exit code.

mod analyze_cmd;
mod args;
mod bisect_cmd;
mod commands;
mod exit;
mod progress;
mod publish_cmd;
mod run_cmd;

pub use commands::main;
