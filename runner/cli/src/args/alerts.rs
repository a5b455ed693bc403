//! Raw arguments of `pitwall alerts` and `pitwall alert …` (clap derive), kept beside
//! `args.rs` so each file stays one screenful of flags; `args` re-exports them.

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
    Suspected,
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
    /// Show the alert and every recorded change of it: when, by whom, what
    Show(AlertShowArgs),
}

#[derive(Debug, Args)]
pub struct AlertShowArgs {
    /// The alert's id (`pitwall alerts` lists them)
    #[arg(value_name = "ID")]
    pub id: String,
    /// Output: an aligned table for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct AlertBisectArgs {
    /// The alert's id (`pitwall alerts` lists them)
    #[arg(value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub search: super::BisectFlags,
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
