//! Raw arguments of `pitwall compare` and `pitwall detect` (clap derive), kept beside
//! `args.rs` so each file stays one screenful of flags; `args` re-exports them.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use pitwall_formats::InputFormat;

use super::{Format, non_empty, parse_input_format};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CompareFormat {
    Table,
    Json,
    Markdown,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Baseline: run id, id prefix, `latest`, commit sha prefix, or a results file
    #[arg(
        long,
        value_name = "SRC",
        requires = "candidate",
        conflicts_with = "pair"
    )]
    pub baseline: Option<String>,
    /// Candidate: same forms as --baseline
    #[arg(
        long,
        value_name = "SRC",
        requires = "baseline",
        conflicts_with = "pair"
    )]
    pub candidate: Option<String>,
    /// The two runs of an interleaved `pitwall run --base --head` (pair id or `latest`)
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "latest")]
    pub pair: Option<String>,
    /// Smallest change that counts, in percent [default: per suite, else [thresholds], else 2]
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub threshold: Option<f64>,
    /// Output: an aligned table, JSON for programs, or Markdown for a pull-request comment
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    /// Compare even when the environments differ (GPU model, driver, clock policy, CPU…)
    #[arg(long)]
    pub allow_env_mismatch: bool,
    /// Leave out samples taken while the GPU was throttled
    #[arg(long)]
    pub exclude_throttled: bool,
    /// Format of result files given as SRC [default: detected]
    #[arg(long, value_name = "FORMAT", value_parser = parse_input_format)]
    pub input_format: Option<InputFormat>,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["series", "benchmark"]))]
pub struct DetectArgs {
    /// Series file: CSV with a `value` header and one number per line, or a JSON array
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub series: Vec<PathBuf>,
    /// Stored benchmark measures whose key (suite/name[params]/measure) contains PATTERN
    #[arg(long, value_name = "PATTERN")]
    pub benchmark: Option<String>,
    /// With --benchmark: the history of this branch [default: [history] branch, main]
    #[arg(long, value_name = "NAME", requires = "benchmark", value_parser = non_empty)]
    pub branch: Option<String>,
    /// With --benchmark: only this testbed's series [default: one series per testbed]
    #[arg(long, value_name = "NAME", requires = "benchmark", value_parser = non_empty)]
    pub testbed: Option<String>,
    /// Output: an aligned table for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}
