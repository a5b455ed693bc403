//! Progress events of a measurement, so the CLI can draw progress (bars on a terminal, plain
//! lines otherwise) while the library stays free of any terminal code: the engine's suite and
//! benchmark events, and the [`Step`]s of the use cases around it (checkouts, builds, rounds,
//! looks, bisect probes).

use std::time::Duration;

/// Receives progress of a run. All methods default to doing nothing.
pub trait RunObserver {
    /// A suite starts with `benchmarks` benchmarks (0 when unknown, e.g. a command suite).
    fn suite_started(&self, _suite: &str, _benchmarks: usize) {}
    /// One benchmark (or one command execution) starts.
    fn benchmark_started(&self, _suite: &str, _benchmark: &str) {}
    /// One benchmark finished; `error` is set when it failed.
    fn benchmark_finished(&self, _suite: &str, _benchmark: &str, _error: Option<&str>) {}
    /// A suite was skipped (e.g. no GPU), with the reason as one line.
    fn suite_skipped(&self, _suite: &str, _reason: &str) {}
    /// Something about a suite's results the user should know (e.g. stale results that were
    /// ignored), as one line; it is recorded with the run's format notes too.
    fn warning(&self, _suite: &str, _line: &str) {}
    fn suite_finished(&self, _suite: &str) {}
    /// A built-in suite's round runs in a fresh worker process with this id.
    fn worker_started(&self, _suite: &str, _pid: u32) {}
    /// A step of the use case around the engine: a checkout, a build, a round, a look, a
    /// bisect probe.
    fn step(&self, _step: &Step<'_>) {}
}

/// A step of a measuring use case, in the order they happen. Text in it (subjects, commands,
/// benchmark names) is the repository's and the user's: escape it before it reaches a
/// terminal.
#[derive(Debug, Clone, PartialEq)]
pub enum Step<'a> {
    /// A commit is checked out in its cached worktree. `label` says which: `commit 2/3`,
    /// `base`, `head`, `good`, `bad`.
    Checkout {
        label: &'a str,
        sha: &'a str,
        subject: &'a str,
    },
    /// The build command starts in `target` (`commit 0123456789ab`, `the working tree`).
    BuildStarted { target: &'a str, command: &'a str },
    /// The build command ended after `elapsed`, successfully or not.
    BuildFinished {
        target: &'a str,
        elapsed: Duration,
        ok: bool,
    },
    /// The build of `target` was skipped: the same command built this commit before.
    BuildCached { target: &'a str },
    /// Round `round` of at most `rounds` starts measuring `target` (round 1 of 1 when a target
    /// is measured once); `side` names it when the round measures more than one (`base`,
    /// `head`, `good`, `probe`).
    Round {
        round: u32,
        rounds: u32,
        side: Option<&'a str>,
        target: &'a str,
    },
    /// A command suite runs its command (shown shortened and escaped): execution `k` of `n`
    /// for a tool's output, `None` for a wall-time suite (timed as often as sampling needs).
    Command {
        suite: &'a str,
        command: &'a str,
        execution: Option<(u32, u32)>,
    },
    /// Before a pair measured until decided starts: its budget, and what the testbed's noise
    /// record says it will take.
    Budget(BudgetNote),
    /// One look of a pair measured until decided.
    Look(LookProgress),
    /// A bisection probes a commit: probe `probe` of about `bound` (the most a binary search
    /// over the range needs).
    Probe {
        probe: usize,
        bound: usize,
        sha: &'a str,
        subject: &'a str,
    },
    /// A probe was classified (`good`, `bad`, `untestable`), with the ratio it measured.
    ProbeFinished {
        probe: usize,
        class: &'a str,
        ratio: Option<f64>,
        rounds: u32,
    },
}

/// What `--until-decided` says before it starts (`pitwall_analysis::noise::budget`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetNote {
    pub max_rounds: u32,
    /// Earlier pairs in the testbed's noise record (0: none yet).
    pub record_pairs: usize,
    /// Benchmarks of the selection the record knows.
    pub benchmarks: usize,
    /// Of those, how many resolve their threshold within `max_rounds` (with 80% power).
    pub resolvable: usize,
    /// The rounds by which all of those do.
    pub rounds: Option<u32>,
    /// The smallest and largest threshold of the benchmarks, in percent.
    pub threshold_pct: (f64, f64),
}

/// Progress after one look of `--until-decided`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookProgress {
    pub round: u32,
    pub max_rounds: u32,
    pub decided: usize,
    pub given_up: usize,
    pub undecided: usize,
    /// Budget left, with `--max-time`.
    pub time_left: Option<Duration>,
}

/// Ignores every event.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullObserver;

impl RunObserver for NullObserver {}

/// The first 12 characters of a sha, as progress and messages show commits.
pub fn short_sha(sha: &str) -> &str {
    sha.char_indices().nth(12).map_or(sha, |(at, _)| &sha[..at])
}
