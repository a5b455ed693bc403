//! Raw arguments of `pitwall writeup` (clap derive), kept beside `args.rs` so each file stays
//! one screenful of flags; `args` re-exports them.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::non_empty;

#[derive(Debug, Args)]
pub struct WriteupArgs {
    /// First day of the period, YYYY-MM-DD (UTC)
    #[arg(long, value_name = "DATE")]
    pub from: String,
    /// Last day of the period, YYYY-MM-DD (UTC), included
    #[arg(long, value_name = "DATE")]
    pub to: String,
    /// Only this testbed [default: each testbed on its own]
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub testbed: Option<String>,
    /// The history branch [default: [history] branch, else main]
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub branch: Option<String>,
    /// Only these suites (repeatable)
    #[arg(long = "suite", value_name = "NAME", value_parser = non_empty)]
    pub suites: Vec<String>,
    /// Write writeup.md or writeup.html into DIR [default: Markdown on stdout]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Output: paste-ready GitHub Markdown, or one self-contained HTML page
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: WriteupFormat,
    /// The git repository that names commits and pull requests [default: the one containing
    /// the working directory, when there is one]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WriteupFormat {
    Markdown,
    Html,
}
