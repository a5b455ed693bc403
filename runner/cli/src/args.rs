//! Raw arguments (clap derive). Kept apart from what the commands do with them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use pitwall_formats::InputFormat;

mod alerts;
pub use alerts::*;
mod bisect;
pub use bisect::*;
mod calibrate;
pub use calibrate::*;
mod compare;
pub use compare::*;
mod kernels;
pub use kernels::*;
mod serve;
pub use serve::*;
mod writeup;
pub use writeup::*;

const EXIT_CODES: &str = "\
Exit codes:
  0  ok
  1  regression found (comparisons)
  2  usage or configuration error (flags, pitwall.toml, input files, unknown run,
     missing store, or a file that is not a pitwall store)
  3  infrastructure failure (a benchmark failed or hung, build or store failure)";

/// `pitwall bisect`'s exit codes, as docs/BISECT.md gives them.
const BISECT_EXIT_CODES: &str = "\
Exit codes:
  0  a first bad commit was found (also when uncertain: the output says so first, and JSON
     has \"uncertain\": true)
  2  usage error: a bad revision, good not an ancestor of bad, an unknown --suite, nothing
     measured, or no regression between good and bad
  3  an endpoint cannot be built or measured";

/// Reproducible benchmarks and regression detection for GPU machine-learning code.
#[derive(Debug, Parser)]
#[command(name = "pitwall", version, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// Result store: sqlite:PATH, a path, or postgres://… [env: PITWALL_STORE; empty means
    /// unset] [default: [store] url, else sqlite:.pitwall/pitwall.db]
    #[arg(long, global = true, value_name = "URL")]
    pub store: Option<String>,
    /// Config file [default: ./pitwall.toml if present, else the built-in default]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// No progress output on stderr
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Run the configured suites in the current directory and store the run
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),
    /// List stored runs, newest first
    #[command(after_help = EXIT_CODES)]
    Runs(RunsArgs),
    /// Show one stored run
    #[command(after_help = EXIT_CODES)]
    Show(ShowArgs),
    /// Write stored runs as versioned JSON (schema pitwall/v3 to pitwall/v8: the oldest that holds them)
    #[command(after_help = EXIT_CODES)]
    Export(ExportArgs),
    /// Delete old runs, or with --keep-summaries drop only their raw samples
    #[command(after_help = EXIT_CODES)]
    Prune(PruneArgs),
    /// Store runs from `pitwall export` files or other tools' results (docs/FORMATS.md)
    #[command(after_help = EXIT_CODES)]
    Import(ImportArgs),
    /// Compare two runs or result files benchmark by benchmark (exit 1 on a regression)
    #[command(after_help = EXIT_CODES)]
    Compare(CompareArgs),
    /// Find change points in series files or in stored history
    #[command(after_help = EXIT_CODES)]
    Detect(DetectArgs),
    /// Print the environment fingerprint and the host and GPU checks (changes nothing)
    #[command(after_help = EXIT_CODES)]
    Env(EnvArgs),
    /// Write the static HTML report of the stored history
    #[command(after_help = EXIT_CODES)]
    Report(ReportArgs),
    /// Post the comparison as the sticky pull-request comment and a commit status
    #[command(after_help = EXIT_CODES)]
    Comment(CommentArgs),
    /// The pull-request job: measure --base and --head interleaved, store, report, comment
    #[command(after_help = EXIT_CODES)]
    Ci(CiArgs),
    /// Measure one commit against itself, interleaved, to record the testbed's noise: each
    /// benchmark's noise between processes, the smallest change it resolves, the false calls
    #[command(after_help = EXIT_CODES)]
    Calibrate(CalibrateArgs),
    /// Find the first commit between --good and --bad that made a benchmark slower
    #[command(after_help = BISECT_EXIT_CODES)]
    Bisect(BisectArgs),
    /// List alerts: steps in the stored history beyond the threshold, open ones first
    #[command(after_help = EXIT_CODES)]
    Alerts(AlertsArgs),
    /// Triage one alert (ack, dismiss, fix, expect) or bisect its commit range
    #[command(after_help = EXIT_CODES)]
    Alert(AlertArgs),
    /// Draft the write-up of a period: what got faster or slower, the ledger of change points
    /// and alerts, environment changes, charts and the methodology
    #[command(after_help = EXIT_CODES)]
    Writeup(WriteupArgs),
    /// Compile the cuda-kernels suites' sources with NVRTC, without a GPU (exit 2 when a
    /// kernel cannot run)
    #[command(after_help = EXIT_CODES)]
    Kernels(KernelsArgs),
    /// Serve the store over HTTP: the versioned JSON API runners upload to and people read
    /// (docs/SERVE.md)
    #[command(after_help = EXIT_CODES)]
    Serve(ServeArgs),
    /// Make, list or revoke the API tokens of `pitwall serve` (run against the server's store)
    #[command(after_help = EXIT_CODES)]
    Token(TokenArgs),
    /// Internal: run one round of a built-in suite for a parent pitwall (request on stdin,
    /// JSON lines on stdout)
    #[command(name = "__worker", hide = true)]
    Worker,
}

#[derive(Debug, Args)]
pub struct GithubArgs {
    /// Pull request (GitHub) or merge request (GitLab, also --mr) number [default: from the CI
    /// job: $CI_MERGE_REQUEST_IID, or GITHUB_REF refs/pull/N/merge]
    #[arg(long, visible_alias = "mr", value_name = "N")]
    pub pr: Option<u64>,
    /// Repository OWNER/NAME [default: [github] repo, else $GITHUB_REPOSITORY]
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// API base URL, where the token is sent; $GITHUB_API_URL or $CI_API_V4_URL wins [default: $PITWALL_GITHUB_API_URL / $PITWALL_GITLAB_API_URL, else https://api.github.com]
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// Link to the full HTML report in the comment [default: [github] report_url]
    #[arg(long, value_name = "URL")]
    pub report_url: Option<String>,
    /// Commit to set the check run and status on [default: the candidate's commit]
    #[arg(long, value_name = "SHA")]
    pub sha: Option<String>,
    /// Print the comment instead of publishing it (still written to $GITHUB_STEP_SUMMARY)
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct CommentArgs {
    #[command(flatten)]
    pub github: GithubArgs,
    /// Baseline SRC (as for compare) [default: the latest --base/--head pair]
    #[arg(long, value_name = "SRC", requires = "candidate")]
    pub baseline: Option<String>,
    /// Candidate SRC
    #[arg(long, value_name = "SRC", requires = "baseline")]
    pub candidate: Option<String>,
}

/// Which series the stored runs belong to (docs/CONFIG.md, "Branches, testbeds and roles").
#[derive(Debug, Clone, Args)]
pub struct LabelArgs {
    /// Branch the runs belong to (of the head, for a pair) [default: the branch git names, else
    /// GITHUB_HEAD_REF, CI_MERGE_REQUEST_SOURCE_BRANCH_NAME, GITHUB_REF_NAME, CI_COMMIT_REF_NAME]
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub branch: Option<String>,
    /// Testbed the runs were measured on [default: [testbed] name, else GPU model and host name,
    /// e.g. h200-node07, or cpu-HOST]
    #[arg(long, value_name = "NAME", value_parser = testbed_name)]
    pub testbed: Option<String>,
    /// Role of the runs: history, pr-base or pr-head [default: pr-base/pr-head for the sides of
    /// a pair (--base/--head, ci), else history]
    #[arg(long, value_name = "ROLE", value_parser = parse_role)]
    pub role: Option<pitwall_schema::RunRole>,
}

impl LabelArgs {
    pub fn request(&self) -> pitwall_pipeline::labels::LabelRequest {
        pitwall_pipeline::labels::LabelRequest {
            branch: self.branch.clone(),
            testbed: self.testbed.clone(),
            role: self.role,
        }
    }
}

fn parse_role(s: &str) -> Result<pitwall_schema::RunRole, String> {
    pitwall_schema::RunRole::parse(s).ok_or_else(|| {
        format!("unknown role `{s}`; one of history, local, pr-base, pr-head, calibration")
    })
}

#[derive(Debug, Args)]
pub struct CiArgs {
    /// A push or scheduled job on a branch: measure the pushed commit (--head, else
    /// $GITHUB_SHA / $CI_COMMIT_SHA, else HEAD) as one history run, store it, refresh the
    /// alerts and write the report; exit 1 when it raised a regression alert
    #[arg(long, conflicts_with_all = ["base", "pr"])]
    pub push: bool,
    #[command(flatten)]
    pub github: GithubArgs,
    #[command(flatten)]
    pub labels: LabelArgs,
    /// Base commit of the pull request (its merge base or target branch) [default in a GitLab
    /// merge-request pipeline: $CI_MERGE_REQUEST_DIFF_BASE_SHA]
    #[arg(long, value_name = "REV", value_parser = non_empty)]
    pub base: Option<String>,
    /// Head commit of the pull request [default in a GitLab merge-request pipeline:
    /// $CI_COMMIT_SHA]
    #[arg(long, value_name = "REV", value_parser = non_empty)]
    pub head: Option<String>,
    /// Interleaved rounds; the first batch when measuring until decided ([ci] until_decided,
    /// on by default)
    #[arg(long, value_name = "N", default_value_t = pitwall_engine::defaults::ROUNDS, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Most rounds when measuring until decided [default: [ci] max_rounds, 15]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_rounds: Option<u32>,
    /// Time budget when measuring until decided: seconds, or 30m, 2h
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub max_time: Option<std::time::Duration>,
    /// Where to write the HTML report [default: [report] dir, else beside a SQLite store:
    /// .pitwall/report for the default one; required for a PostgreSQL store]
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Output directory [default: .pitwall/report]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct EnvArgs {
    /// Output: an aligned table for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run only this suite (repeatable)
    #[arg(long = "suite", value_name = "NAME")]
    pub suites: Vec<String>,
    /// Run only benchmarks whose name[params] contains TEXT
    #[arg(long, value_name = "TEXT")]
    pub bench: Option<String>,
    /// Output: an aligned table for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Do not write the HTML report after the run
    #[arg(long)]
    pub no_report: bool,
    /// Where to write the HTML report [default: [report] dir, else beside a SQLite store:
    /// .pitwall/report for the default one; required for a PostgreSQL store]
    #[arg(long, value_name = "DIR", conflicts_with = "no_report")]
    pub report_dir: Option<PathBuf>,
    /// Measure these commits (sha, branch, tag, HEAD~2…), each in a cached worktree (repeatable)
    #[arg(
        long = "commit",
        value_name = "REV",
        num_args = 1..,
        conflicts_with_all = ["base", "head"],
        value_parser = non_empty
    )]
    pub commits: Vec<String>,
    /// Baseline commit of an interleaved A/B measurement (with --head)
    #[arg(long, value_name = "REV", requires = "head", value_parser = non_empty)]
    pub base: Option<String>,
    /// Candidate commit of an interleaved A/B measurement (with --base)
    #[arg(long, value_name = "REV", requires = "base", value_parser = non_empty)]
    pub head: Option<String>,
    /// Interleaved rounds for --base/--head (base, head, base, head, …); with --until-decided
    /// the first batch [default: 3]
    #[arg(long, value_name = "N", requires = "base", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: Option<u32>,
    /// With --base/--head: after the first batch, measure one more interleaved round at a time
    /// (only the benchmarks still undecided) until every benchmark is decided or given up
    #[arg(long, requires = "base")]
    pub until_decided: bool,
    /// Most rounds with --until-decided [default: 15]
    #[arg(long, value_name = "N", requires = "until_decided", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_rounds: Option<u32>,
    /// Time budget with --until-decided: seconds, or a number with s, m or h (30m, 2h)
    #[arg(long, value_name = "DURATION", requires = "until_decided", value_parser = duration)]
    pub max_time: Option<std::time::Duration>,
    /// Rebuild (and recreate the worktree of) each commit even if a build is cached
    #[arg(long)]
    pub rebuild: bool,
    /// The git repository holding the commits [default: the one containing the working directory]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub labels: LabelArgs,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub action: Option<RunsAction>,
    /// Output: an aligned table for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Show at most N runs (N ≥ 1)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,
}

/// `pitwall runs exclude|include`.
#[derive(Debug, Subcommand)]
pub enum RunsAction {
    /// Keep a run stored but take it out of history, alerts and write-ups (its series are
    /// re-detected at once)
    #[command(after_help = EXIT_CODES)]
    Exclude {
        /// Run id, unique id prefix (≥ 4 characters) or `latest`
        run: String,
        /// Why (shown wherever the run is listed)
        #[arg(long, value_name = "TEXT", required = true)]
        note: String,
    },
    /// Put an excluded run back into history (its series are re-detected at once)
    #[command(after_help = EXIT_CODES)]
    Include {
        /// Run id, unique id prefix (≥ 4 characters) or `latest`
        run: String,
    },
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id, unique id prefix (≥ 4 characters) or `latest`
    pub run: String,
    /// Output: an aligned table for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Prune runs that started more than DAYS days ago
    #[arg(long, value_name = "DAYS")]
    pub older_than: u32,
    /// Keep the old runs in every history: replace their raw samples with the summary a
    /// history point needs (median, its interval, range, count) instead of deleting them
    #[arg(long)]
    pub keep_summaries: bool,
    /// Say what would be pruned and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Output: a line for people, or JSON for programs
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Runs to export (id, prefix or `latest`); all runs when none are given
    pub runs: Vec<String>,
    /// Write to FILE instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// `pitwall export` files, or results of any tool docs/FORMATS.md lists (a directory for
    /// criterion)
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Format of other tools' results [default: detected]
    #[arg(long, value_name = "FORMAT", value_parser = parse_input_format)]
    pub input_format: Option<InputFormat>,
    /// Suite name for imported tool results [default: the format's name]
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub suite: Option<String>,
    /// Full commit sha the imported tool results belong to [default: none, "working tree"]
    #[arg(long, value_name = "SHA", value_parser = full_sha)]
    pub commit: Option<String>,
    #[command(flatten)]
    pub labels: LabelArgs,
}

/// A value that must say something: an empty revision or name is refused.
/// `90`, `90s`, `30m`, `2h`: a positive duration of at most a year.
fn duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, c @ ('s' | 'm' | 'h'))) => (&t[..i], c),
        _ => (t, 's'),
    };
    let value: f64 = number.parse().map_err(|_| {
        format!("`{s}` is not a duration (hint: seconds, or a number with s, m or h: 90, 30m, 2h)")
    })?;
    let secs = value
        * match unit {
            'h' => 3600.0,
            'm' => 60.0,
            _ => 1.0,
        };
    if !(secs.is_finite() && secs > 0.0 && secs <= 366.0 * 86400.0) {
        return Err(format!(
            "`{s}` is out of range (hint: more than 0 and at most a year)"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

fn non_empty(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("must not be empty".into());
    }
    Ok(s.to_string())
}

/// A testbed name that names a machine (`pitwall_schema::consistency::given_testbed_problem`).
fn testbed_name(s: &str) -> Result<String, String> {
    let s = non_empty(s)?;
    match pitwall_schema::consistency::given_testbed_problem(&s) {
        Some(why) => Err(format!(
            "{why} (hint: use letters, digits, `.`, `_` and `-`)"
        )),
        None => Ok(s),
    }
}

/// A full commit sha (40 hex digits, or 64 for SHA-256 repositories), stored lowercase.
fn full_sha(s: &str) -> Result<String, String> {
    let hex = s.chars().all(|c| c.is_ascii_hexdigit());
    if !(hex && (s.len() == 40 || s.len() == 64)) {
        return Err("not a full commit sha (hint: `git rev-parse REV` prints one)".into());
    }
    Ok(s.to_ascii_lowercase())
}

fn parse_input_format(s: &str) -> Result<InputFormat, String> {
    InputFormat::parse_name(s)
        .ok_or_else(|| format!("unknown format `{s}`; one of {}", InputFormat::names()))
}
