//! Raw arguments of `pitwall bisect` and the flags every bisection shares (clap derive),
//! kept beside `args.rs`; `args` re-exports them.

use std::path::PathBuf;

use clap::Args;

use super::Format;

#[derive(Debug, Args)]
pub struct BisectArgs {
    /// A commit without the regression
    #[arg(long, value_name = "REV")]
    pub good: String,
    /// A later commit with it (good must be an ancestor of bad)
    #[arg(long, value_name = "REV")]
    pub bad: String,
    /// Only these suites (repeatable) when looking for the regression
    #[arg(long = "suite", value_name = "NAME")]
    pub suites: Vec<String>,
    /// Only benchmarks whose name[params] contains TEXT; the worst regression among them is followed
    #[arg(long, value_name = "TEXT")]
    pub bench: Option<String>,
    #[command(flatten)]
    pub search: BisectFlags,
}

/// The flags of every bisection (`pitwall bisect`, `pitwall alert bisect`): how long each
/// commit is measured, the build cache, the repository and the output.
#[derive(Debug, Args)]
pub struct BisectFlags {
    /// Interleaved rounds measured before the first look at each commit
    #[arg(long, value_name = "N", default_value_t = pitwall_engine::defaults::ROUNDS, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Most rounds one commit may take; one still undecided then is decided by its estimate
    /// and the bisection is marked uncertain
    #[arg(long, value_name = "N", default_value_t = pitwall_engine::defaults::MAX_ROUNDS, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_rounds: u32,
    /// Rebuild every commit even when its build is cached
    #[arg(long)]
    pub rebuild: bool,
    /// The git repository [default: the one containing the working directory]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Output: an aligned table for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}
