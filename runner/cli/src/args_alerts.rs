//! Raw arguments of `pitwall alerts` and `pitwall alert …` (clap derive), kept beside
//! `args.rs` so each file stays one screenful of flags; `args` re-exports them.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::{Format, non_empty};

#[derive(Debug, Args)]
pub struct AlertsArgs {
    /// Only alerts with this status
    #[arg(long, value_enum)]
    pub status: Option<AlertStatusArg>,
    /// Only this testbed's alerts
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub testbed: Option<String>,
    /// Only this branch's alerts
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub branch: Option<String>,
    /// Output: an aligned table for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

/// The statuses of `pitwall_schema::AlertStatus`, as flags spell them.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AlertStatusArg {
    Active,
    Acknowledged,
    Dismissed,
    Fixed,
    Expected,
    Improvement,
}

#[derive(Debug, Args)]
pub struct AlertArgs {
    #[command(subcommand)]
    pub action: AlertAction,
}

#[derive(Debug, Subcommand)]
pub enum AlertAction {
    /// Mark the alert acknowledged: someone is on it
    Ack(TriageArgs),
    /// Mark the alert dismissed: not a real regression (noise, a bad machine)
    Dismiss(TriageArgs),
    /// Mark the alert fixed
    Fix(TriageArgs),
    /// Mark the alert expected: an accepted cost of a wanted change
    Expect(TriageArgs),
    /// Bisect the alert's range (last good..first bad) for its benchmark on this testbed and
    /// keep the culprit on the alert
    Bisect(AlertBisectArgs),
}

#[derive(Debug, Args)]
pub struct AlertBisectArgs {
    /// The alert's id (`pitwall alerts` lists them)
    #[arg(value_name = "ID")]
    pub id: String,
    /// Interleaved rounds measured before the first look at each commit
    #[arg(long, value_name = "N", default_value_t = pitwall_engine::defaults::ROUNDS, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Most rounds one commit may take
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

#[derive(Debug, Args)]
pub struct TriageArgs {
    /// The alert's id (`pitwall alerts` lists them)
    #[arg(value_name = "ID")]
    pub id: String,
    /// What to record with it (replaces an earlier note)
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
}
