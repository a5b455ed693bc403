//! Raw arguments of `pitwall calibrate` (clap derive), the A/A pair that feeds the testbed's
//! noise record, kept beside `args.rs`; `args` re-exports them.

use std::path::PathBuf;

use clap::Args;

use super::{Format, LabelArgs, non_empty};

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The commit measured against itself [default: HEAD]
    #[arg(long, value_name = "REV", value_parser = non_empty)]
    pub commit: Option<String>,
    /// Interleaved rounds of the A/A pair [default: 6]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub rounds: Option<u32>,
    /// Run only this suite (repeatable)
    #[arg(long = "suite", value_name = "NAME", value_parser = non_empty)]
    pub suites: Vec<String>,
    /// Run only benchmarks whose name[params] contains TEXT
    #[arg(long, value_name = "TEXT")]
    pub bench: Option<String>,
    /// Rebuild the commit even when its build is cached
    #[arg(long)]
    pub rebuild: bool,
    /// The git repository holding the commit [default: the one containing the working directory]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    #[command(flatten)]
    pub labels: LabelArgs,
}
