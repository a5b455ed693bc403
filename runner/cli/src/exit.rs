//! The one mapping from outcomes and errors to the documented exit codes: every command
//! returns an `ExitClass` or a `Failure`, and only `report`/`ExitClass::code` turn them into
//! a process exit code. A cancellation (SIGINT/SIGTERM) gets none: `Failure::of_measure` waits
//! there for the process to end by the signal.

use std::fmt::Display;
use std::process::ExitCode;

use pitwall_engine::artifacts::ArtifactError;
use pitwall_engine::config::ConfigError;
use pitwall_engine::{WorkerError, escape_controls};
use pitwall_forge::github::GithubError;
use pitwall_forge::gitlab::GitlabError;
use pitwall_host::gpu::GpuError;
use pitwall_pipeline::bisect::BisectError;
use pitwall_pipeline::detect::SeriesError;
use pitwall_pipeline::git::GitError;
use pitwall_pipeline::import::ImportError;
use pitwall_pipeline::measure::MeasureError;
use pitwall_pipeline::run::RunError;
use pitwall_pipeline::setup::SetupError;
use pitwall_pipeline::source::SourceError;
use pitwall_reports::compare::ComparisonReport;
use pitwall_reports::html::HtmlError;
use pitwall_schema::RunStatus;
use pitwall_schema::backend::BackendError;
use pitwall_store::StoreError;

/// The documented exit codes, ordered by severity (so the worst of several is their `max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitClass {
    /// Everything went as asked.
    Ok = 0,
    /// A regression was found (comparisons).
    Regression = 1,
    /// Bad usage or configuration: flags, config file, input files, unknown run.
    Usage = 2,
    /// Infrastructure failure: a benchmark failed or hung, the build or the store failed.
    Infra = 3,
}

impl ExitClass {
    pub fn code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }

    /// A comparison's verdict: a regression, or fine.
    pub fn of_comparison(report: &ComparisonReport) -> ExitClass {
        if report.has_regression() {
            ExitClass::Regression
        } else {
            ExitClass::Ok
        }
    }

    /// A stored run: complete is fine, anything less is infrastructure.
    pub fn of_run(status: RunStatus) -> ExitClass {
        match status {
            RunStatus::Complete => ExitClass::Ok,
            RunStatus::Partial | RunStatus::Failed => ExitClass::Infra,
        }
    }

    /// Classifies an error by its chain: configuration and lookup mistakes are usage errors,
    /// everything else is infrastructure.
    pub fn of_error(error: &anyhow::Error) -> ExitClass {
        let usage = error.chain().any(|e| {
            e.downcast_ref::<ConfigError>().is_some()
                || matches!(
                    e.downcast_ref::<RunError>(),
                    Some(RunError::UnknownSuite { .. })
                )
                || matches!(
                    e.downcast_ref::<StoreError>(),
                    Some(
                        StoreError::BadUrl { .. }
                            | StoreError::Missing { .. }
                            | StoreError::Foreign { .. }
                            | StoreError::NotFound { .. }
                            | StoreError::NoAlert { .. }
                            | StoreError::Ambiguous { .. }
                            | StoreError::Invalid { .. }
                            | StoreError::Conflict { .. }
                            | StoreError::TokenExists { .. }
                            | StoreError::NotOverHttp { .. }
                    )
                )
        });
        // A server that refused the request as given (a bad token, a wrong role, a bad run) is
        // the user's to fix; one that is overloaded or failing is infrastructure.
        let refused = error.chain().any(|e| {
            matches!(
                e.downcast_ref::<StoreError>(),
                Some(StoreError::Refused { status, .. }) if (400..500).contains(status) && *status != 408 && *status != 429
            )
        });
        if usage || refused {
            ExitClass::Usage
        } else {
            ExitClass::Infra
        }
    }
}

/// A context line over an error (`--store`, `cannot write FILE`), as anyhow's `context` takes.
pub trait What: Display + Send + Sync + 'static {}
impl<T: Display + Send + Sync + 'static> What for T {}

/// An error with the exit class it maps to. Commands build one only through the `of_*`
/// functions below (and `rejected`), which name what failed; the class is chosen here.
#[derive(Debug)]
pub struct Failure {
    pub class: ExitClass,
    pub error: anyhow::Error,
    /// Context printed after the one-line error, indented (e.g. a failed build's log tail).
    pub details: Vec<String>,
}

impl Failure {
    fn usage(error: anyhow::Error) -> Failure {
        Failure {
            class: ExitClass::Usage,
            error,
            details: Vec::new(),
        }
    }

    fn infra(error: anyhow::Error) -> Failure {
        Failure {
            class: ExitClass::Infra,
            error,
            details: Vec::new(),
        }
    }

    pub fn with_details(mut self, details: Vec<String>) -> Failure {
        self.details = details;
        self
    }

    /// A request the command refuses as given (a flag's value, runs with nothing to compare,
    /// a pattern that matched nothing): usage.
    pub fn rejected(message: String) -> Failure {
        Failure::usage(anyhow::Error::msg(message))
    }

    /// The error as the one line `report` prints after `error: ` (causes joined by `: `, a
    /// cause another part already quotes left out).
    pub fn one_line(&self) -> String {
        let parts: Vec<String> = self.error.chain().map(|e| e.to_string()).collect();
        let mut kept: Vec<&str> = Vec::new();
        for p in &parts {
            if !kept.iter().any(|k| k.contains(p.as_str())) {
                kept.push(p);
            }
        }
        kept.join(": ")
    }

    /// The same failure, same exit class, said as `message` (which quotes it).
    pub fn restated(self, message: String) -> Failure {
        Failure {
            class: self.class,
            error: anyhow::Error::msg(message),
            details: self.details,
        }
    }

    /// A store that could not be opened or read: classified by the error (a bad url, a
    /// missing store, an unknown or ambiguous run are usage; the database failing is
    /// infrastructure), as `ExitClass::of_error` does.
    pub fn of_store(e: StoreError) -> Failure {
        Failure::from(anyhow::Error::new(e))
    }

    /// A prune that failed: an impossible `--older-than` is usage; the store's errors are
    /// classified as `of_store` does; a stored run with an unreadable start time is
    /// infrastructure (the store is damaged).
    pub fn of_prune(e: pitwall_pipeline::prune::PruneError) -> Failure {
        use pitwall_pipeline::prune::PruneError;
        match e {
            PruneError::Cutoff { .. } => Failure::usage(e.into()),
            PruneError::Store(e) => Failure::of_store(e),
            PruneError::BadTime { .. } => Failure::infra(e.into()),
        }
    }

    /// `runs exclude`/`include` that failed: a run that is not history is usage; reading the
    /// run is classified as `of_store` does (an unknown id is usage); writing or re-detecting
    /// is infrastructure.
    pub fn of_exclusion(e: pitwall_pipeline::exclusion::ExclusionError) -> Failure {
        use pitwall_pipeline::exclusion::ExclusionError;
        match e {
            ExclusionError::NotHistory { .. } => Failure::usage(e.into()),
            ExclusionError::Read { source, .. } => Failure::of_store(source),
            ExclusionError::Write { .. } | ExclusionError::Alerts { .. } => {
                Failure::infra(e.into())
            }
        }
    }

    /// `pitwall token` that failed: a bad name or expiry, or no such token, is usage; the
    /// store's errors are classified as `of_store` does; no random source is infrastructure.
    pub fn of_token(e: pitwall_pipeline::tokens::TokenError) -> Failure {
        use pitwall_pipeline::tokens::TokenError;
        match e {
            TokenError::Store(e) => Failure::of_store(e),
            TokenError::Random(_) => Failure::infra(e.into()),
            TokenError::BadName(_) | TokenError::BadExpiry(_) | TokenError::NotFound(_) => {
                Failure::usage(e.into())
            }
        }
    }

    /// `pitwall serve` that could not serve (`message`: the error, redacted): a port it
    /// cannot listen on or a store it cannot open is usage; anything else infrastructure.
    pub fn of_serve(message: String, e: pitwall_server::ServeError) -> Failure {
        let error = anyhow::Error::msg(message);
        match e {
            pitwall_server::ServeError::Listen { .. } | pitwall_server::ServeError::Store(_) => {
                Failure::usage(error)
            }
            pitwall_server::ServeError::Io(_) => Failure::infra(error),
        }
    }

    /// A store url that does not parse, under `what` said where it came from: usage.
    pub fn of_store_url(what: impl What, e: StoreError) -> Failure {
        Failure::usage(anyhow::Error::new(e).context(what))
    }

    /// A configuration file that cannot be read or is invalid: usage.
    pub fn of_config(e: ConfigError) -> Failure {
        Failure::usage(e.into())
    }

    /// A stored pair (`--pair`, `latest`) that could not be resolved, under `what`: usage,
    /// whatever the cause (unlike `of_source`, a failing store is not told apart here).
    pub fn of_pair(what: impl What, e: SourceError) -> Failure {
        Failure::usage(anyhow::Error::new(e).context(what))
    }

    /// A series file (`detect --series`) that cannot be read or parsed: usage.
    pub fn of_series(e: SeriesError) -> Failure {
        Failure::usage(e.into())
    }

    /// The machine could not be set up for measuring (pinning, GPU, clocks): infrastructure.
    pub fn of_setup(e: SetupError) -> Failure {
        Failure::infra(e.into())
    }

    /// The launcher's variables (torchrun's, Slurm's) do not describe a rank layout: usage.
    pub fn of_layout(e: pitwall_rendezvous::LayoutError) -> Failure {
        Failure::usage(e.into())
    }

    /// A rank of a multi-process collective lost rank 0 or the data plane: infrastructure.
    pub fn of_collective(e: pitwall_cpu::multi::CollectiveError) -> Failure {
        Failure::infra(e.into())
    }

    /// A rank of a multi-process NCCL collective lost rank 0, or its GPU or NCCL failed:
    /// infrastructure.
    pub fn of_nccl(e: pitwall_cuda::nccl_group::CollectiveError) -> Failure {
        Failure::infra(e.into())
    }

    /// The host's GPU layer failed (the signal handlers that restore clocks): infrastructure.
    pub fn of_gpu(e: GpuError) -> Failure {
        Failure::infra(e.into())
    }

    /// The backend `[suites] backend` names cannot run here (`cuda` without a GPU), under
    /// `what`: infrastructure.
    pub fn of_backend(what: impl What, e: BackendError) -> Failure {
        Failure::infra(anyhow::Error::new(e).context(what))
    }

    /// A repository or revision that cannot be used: a directory that is not a repository or a
    /// revision that names no commit is the user's; a failed checkout is infrastructure.
    pub fn of_git(e: GitError) -> Failure {
        match e {
            GitError::NotARepo { .. } | GitError::BadRev { .. } | GitError::NotACommit { .. } => {
                Failure::usage(e.into())
            }
            _ => Failure::infra(e.into()),
        }
    }

    /// A suite worker (`pitwall __worker`) that failed: infrastructure.
    pub fn of_worker(e: WorkerError) -> Failure {
        Failure::infra(e.into())
    }

    /// A local file or directory that could not be read or written (the working directory,
    /// pitwall's executable, an output file), under `what`: infrastructure.
    pub fn of_io(what: impl What, e: std::io::Error) -> Failure {
        Failure::infra(anyhow::Error::new(e).context(what))
    }

    /// The HTML report could not be written, under `what`: infrastructure.
    pub fn of_site(what: impl What, e: HtmlError) -> Failure {
        Failure::infra(anyhow::Error::new(e).context(what))
    }

    /// GitHub publishing could not be set up (no token, bad api url or repository): usage.
    pub fn of_github_setup(e: GithubError) -> Failure {
        Failure::usage(e.into())
    }

    /// GitLab publishing could not start (no token, a bad url): usage.
    pub fn of_gitlab_setup(e: GitlabError) -> Failure {
        Failure::usage(e.into())
    }

    /// GitLab refused or failed the merge-request note, under `what`: infrastructure.
    pub fn of_gitlab(what: impl What, e: GitlabError) -> Failure {
        Failure::infra(anyhow::Error::new(e).context(what))
    }

    /// GitHub refused or failed a publication (comment, status), under `what`:
    /// infrastructure, whatever GitHub answered.
    pub fn of_github(what: impl What, e: GithubError) -> Failure {
        Failure::infra(anyhow::Error::new(e).context(what))
    }

    /// A comparison side that could not be read: a store that fails is infrastructure (as
    /// its error says), anything else the user's input. `flag` names the side.
    pub fn of_source(flag: &str, e: SourceError) -> Failure {
        match e {
            SourceError::Store(inner) => {
                Failure::from(anyhow::Error::new(inner).context(flag.to_string()))
            }
            other => Failure::usage(anyhow::Error::new(other).context(flag.to_string())),
        }
    }

    /// A bisection that failed: bad revisions or nothing to follow are the user's; a commit
    /// that cannot be built or measured is infrastructure.
    pub fn of_bisect(e: BisectError) -> Failure {
        match e {
            BisectError::Git(_)
            | BisectError::NothingMeasured { .. }
            | BisectError::NoRegression { .. } => Failure::usage(e.into()),
            BisectError::Run(_)
            | BisectError::GoodUnusable { .. }
            | BisectError::BadUnusable { .. } => Failure::infra(e.into()),
        }
    }

    /// A measuring use case that failed: a bad selection, repository, revision or a selection
    /// that matched nothing is the user's; the machine, a build, a checkout, measuring or
    /// storing is infrastructure. A cancellation (SIGINT/SIGTERM) has no exit class: the
    /// process waits here for the host's restore thread to end it by the signal.
    pub fn of_measure(e: MeasureError) -> Failure {
        match e {
            MeasureError::Cancelled(c) => pitwall_host::gpu::await_termination(c.signal),
            MeasureError::Selection(_)
            | MeasureError::Repo(_)
            | MeasureError::NotARepository(_)
            | MeasureError::NothingRan { .. }
            | MeasureError::Measure(RunError::UnknownSuite { .. }) => Failure::usage(e.into()),
            MeasureError::Artifacts(ArtifactError::Read { .. }) => Failure::infra(e.into()),
            MeasureError::Artifacts(_) => Failure::usage(e.into()),
            MeasureError::Bisect(e) => Failure::of_bisect(e),
            MeasureError::Build(RunError::Build { ref log_tail, .. }) => {
                let tail = log_tail.clone();
                Failure::infra(e.into()).with_details(tail)
            }
            MeasureError::Measure(_)
            | MeasureError::Checkout(_)
            | MeasureError::Build(_)
            | MeasureError::Environment(_)
            | MeasureError::Store { .. }
            | MeasureError::NoiseRecord(_)
            | MeasureError::Alerts { .. } => Failure::infra(e.into()),
        }
    }

    /// An import that failed: unreadable, invalid or conflicting input is the user's; a store
    /// that fails is classified by its error.
    pub fn of_import(e: ImportError) -> Failure {
        match e {
            ImportError::Store { .. } => Failure::from(anyhow::Error::new(e)),
            _ => Failure::usage(e.into()),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure {
            class: ExitClass::of_error(&error),
            error,
            details: Vec::new(),
        }
    }
}

/// Longest word (a run without spaces: a key, a value, a path, a number) an error line prints
/// whole; a 1 MB value in a config file must not become a 1 MB error line.
const LONGEST_WORD_CHARS: usize = 120;

/// `line` with every word longer than `max` characters cut in its middle, saying how much
/// was left out; the words around it (context, hints) stay.
fn cut_long_words(line: &str, max: usize) -> String {
    line.split(' ')
        .map(|w| {
            let n = w.chars().count();
            if n <= max {
                return w.to_string();
            }
            let head: String = w.chars().take(max / 2).collect();
            let tail: String = w.chars().skip(n - max / 4).collect();
            format!("{head}…({} characters cut)…{tail}", n - max / 2 - max / 4)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints context lines under an error: indented, control characters escaped (they come from
/// commands' output).
pub fn print_details(lines: &[String]) {
    for line in lines {
        eprintln!("  | {}", escape_controls(line));
    }
}

/// Prints the error as one line (`error: outer: inner: root`), then its details, and returns
/// its code.
pub fn report(f: Failure) -> ExitCode {
    // anyhow chains repeat the source's text when a variant embeds it; keep distinct parts.
    let line = format!("error: {}", f.one_line());
    // Known secrets never reach the terminal, whatever an error quotes.
    let redactor = pitwall_engine::process_redactor(&[]);
    // Several mistakes (a config file's, one per line) are one `error:` line each.
    for (i, one) in line.split('\n').enumerate() {
        let one = if i == 0 {
            one.to_string()
        } else {
            format!("error: {one}")
        };
        let one = escape_controls(&redactor.redact(&one));
        eprintln!("{}", cut_long_words(&one, LONGEST_WORD_CHARS));
    }
    let details: Vec<String> = f.details.iter().map(|d| redactor.redact(d)).collect();
    print_details(&details);
    f.class.code()
}

#[cfg(test)]
mod cut_tests {
    use super::cut_long_words;

    #[test]
    fn long_words_are_cut_and_hints_kept() {
        let key = "k".repeat(1_000_000);
        let line =
            format!("error: pitwall.toml:1:1: unknown key `{key}`; hint: valid keys are a, b");
        let out = cut_long_words(&line, 120);
        assert!(out.len() < 300, "{}", out.len());
        assert!(out.ends_with("hint: valid keys are a, b"), "{out}");
        assert!(out.contains("characters cut"), "{out}");
        // A 301-digit number is one word too.
        let n = format!("{:.0}", -1e300_f64);
        assert!(cut_long_words(&n, 120).chars().count() < 160);
        assert_eq!(cut_long_words("short words stay", 120), "short words stay");
    }
}
