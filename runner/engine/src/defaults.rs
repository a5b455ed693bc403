//! Every default that more than one place relies on, named once: the CLI's flags, the
//! configuration file and the use cases all read them from here.

/// Interleaved rounds of `--base/--head` (and the first batch of `--until-decided`, of
/// `pitwall ci` and of `pitwall bisect`) when `--rounds` is not given.
pub const ROUNDS: u32 = 3;
/// The most rounds `--until-decided` measures when `--max-rounds` is not given.
pub const MAX_ROUNDS: u32 = 15;
/// Rounds of `pitwall calibrate`'s A/A pair when `--rounds` is not given: six rounds give
/// the cross-over analysis four degrees of freedom per benchmark for the noise record.
pub const CALIBRATION_ROUNDS: u32 = 6;
/// Smallest relative change reported as a regression or improvement, in percent, when neither
/// the suite (`threshold_pct`), `[thresholds] regression_pct` nor `--threshold` says.
pub const REGRESSION_PCT: f64 = 2.0;
/// How each benchmark is sampled when `[sampling]` does not say (0.1 s warm-up, 10–100 000
/// samples, ±1%, 1 s budget, 120 s timeout); the inference suite has its own
/// (`Sampling::INFERENCE`).
pub const SAMPLING: crate::config::Sampling = crate::config::Sampling::DEFAULT;
/// Whether `pitwall ci` (a pull request's comparison) measures the built-in suites when
/// `[ci] builtin_suites` does not say: no, their code is pitwall's, the same on base and head;
/// history runs (`run`, `ci --push`) measure them.
pub const CI_BUILTIN_SUITES: bool = false;
/// Whether a pair measures benchmarks whose code is identical on both sides (a `cuda-kernels`
/// kernel whose cubin and manifest entry match, a command suite whose `artifacts` hash the
/// same) when `[ci] measure_identical` does not say: no, they get the verdict `identical`.
pub const MEASURE_IDENTICAL: bool = false;
/// The architecture a `cuda-kernels` suite's sources are compiled for to tell identical
/// kernels apart (no GPU needed): one architecture's cubins differ when the code does.
pub const IDENTITY_SM: u32 = 90;
/// How many of the newest runs on a testbed are searched for the last pair that measured the
/// code a pair found identical, to estimate the time it saved.
pub const SAVED_ESTIMATE_LOOKBACK: usize = 200;
/// Which backend runs the built-in suites when `[suites] backend` does not say: CUDA when it
/// can run here, else the CPU.
pub const BACKEND: crate::config::BackendChoice = crate::config::BackendChoice::Auto;
/// The variable holding the GitHub token when `[github] token_env` does not say.
pub const GITHUB_TOKEN_ENV: &str = "GITHUB_TOKEN";
/// The variable holding the GitLab token when `[gitlab] token_env` does not say.
pub const GITLAB_TOKEN_ENV: &str = "GITLAB_TOKEN";
/// The only variables `[github] token_env` may name: the repository's configuration chooses
/// which token is read, so it must not be able to name any other secret of the job
/// (`AWS_SECRET_ACCESS_KEY`) and have it sent (docs/CI.md, "Where a token goes").
pub const GITHUB_TOKEN_VARS: [&str; 3] = ["GITHUB_TOKEN", "GH_TOKEN", "PITWALL_GITHUB_TOKEN"];
/// The only variables `[gitlab] token_env` may name.
pub const GITLAB_TOKEN_VARS: [&str; 3] = ["GITLAB_TOKEN", "CI_JOB_TOKEN", "PITWALL_GITLAB_TOKEN"];
/// What `comment` and `ci` publish to GitHub when `[github] publish` does not say: the check
/// run and the sticky comment (the commit status only when asked for).
pub const PUBLISH: [crate::config::Publish; 2] = [
    crate::config::Publish::Check,
    crate::config::Publish::Comment,
];

/// Largest `pitwall.toml` read (16 MiB): a config is a few kilobytes, and an endless file
/// (`--config /dev/zero`) must end in an error, not in all the memory there is.
pub const CONFIG_MAX_BYTES: u64 = 16 << 20;

/// Largest results or export file read (2 GiB): far above 10⁶ results or a large history's
/// export, and a bound on the memory an endless input can take.
pub const RESULTS_FILE_MAX_BYTES: u64 = 2 << 30;

/// The branch whose `history` runs make the history (`detect --benchmark`, the report) when
/// `[history] branch` does not say.
pub const HISTORY_BRANCH: &str = "main";

/// `[serve] public_read`: reads of `pitwall serve` need a token unless the file says so.
pub const SERVE_PUBLIC_READ: bool = false;

/// Largest request body `pitwall serve` reads (64 MiB; 413 above): a run of 10⁵ results with
/// their samples fits.
pub const SERVE_MAX_BODY_BYTES: usize = 64 << 20;

/// Uploads one token may make a minute (429 above).
pub const SERVE_UPLOADS_PER_MINUTE: usize = 60;

/// Store connections of `pitwall serve` that serve reads beside its one writer (SQLite in WAL
/// mode and PostgreSQL both read concurrently with a writer), per cpu the server may use,
/// within [`SERVE_READERS_MIN`] and [`SERVE_READERS_MAX`] ([`serve_readers`]). A series read
/// is mostly cpu (decoding 10,000 runs, the analysis) and holds its runs while it works: more
/// readers than cores add memory, not answers.
pub const SERVE_READERS_PER_CPU: usize = 1;

/// Fewest readers of `pitwall serve`: a slow read never stops every other.
pub const SERVE_READERS_MIN: usize = 2;

/// Most readers of `pitwall serve`, however many cpus.
pub const SERVE_READERS_MAX: usize = 8;

/// How many readers `pitwall serve` starts on this machine ([`SERVE_READERS_PER_CPU`]).
pub fn serve_readers() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cpus * SERVE_READERS_PER_CPU).clamp(SERVE_READERS_MIN, SERVE_READERS_MAX)
}

/// Runs `pitwall import` stores per transaction (per request to a `pitwall serve`: a batch
/// upload, one of the server's rate limit).
pub const IMPORT_BATCH_RUNS: usize = 100;

/// The nice value of `pitwall serve`'s reader threads (Linux): the writer and the request
/// threads keep the process's, so on a machine busy with readers an upload still gets the cpu
/// (docs/PERFORMANCE.md, "`pitwall serve` at scale").
pub const SERVE_READER_NICE: i32 = 19;

/// Most results `pitwall serve` stores in one transaction when uploads queue up (group
/// commit): uploads waiting for the writer are stored together up to this many results, which
/// bounds how long the first of them waits for the others (docs/PERFORMANCE.md).
pub const SERVE_GROUP_COMMIT_MAX_RESULTS: usize = 20_000;

/// Most results `pitwall serve` stores in one transaction on PostgreSQL, where a transaction
/// costs little more than its rows: smaller batches spread a burst of uploads over the writers
/// evenly, so the last upload does not wait for one long batch (docs/PERFORMANCE.md).
pub const SERVE_POSTGRES_GROUP_COMMIT_MAX_RESULTS: usize = 5_000;

/// Writers `pitwall serve` stores uploads with on PostgreSQL, each with its own connection and
/// backend: one backend storing a 1,000-result run is cpu-bound, so one writer leaves the other
/// cores idle (docs/PERFORMANCE.md, "`pitwall serve` at scale"). SQLite has one writer.
pub const SERVE_POSTGRES_WRITERS: usize = 2;

/// The longest a reader thread of `pitwall serve` waits before a read while uploads are being
/// stored: uploads (a CI job waiting for its check) go first, and a read is never held longer
/// than this (docs/PERFORMANCE.md, "`pitwall serve` at scale").
pub const SERVE_READ_YIELD_MAX_MS: u64 = 2_000;

/// Longest a request of `pitwall serve` may take, reading its body included (408 after).
pub const SERVE_REQUEST_TIMEOUT_S: u64 = 60;

/// How long a browser session of `pitwall serve` lasts after signing in (issue 30: 12 h).
pub const SERVE_SESSION_HOURS: i64 = 12;

/// When a run is contended, where `[history] contended_runnable_threads`,
/// `contended_steal_pct` and `contended_psi_some_pct` do not say: other processes' runnable
/// threads on the benchmark CPUs average at least 0.5, steal is at least 2% of their time, or
/// CPU pressure `some` (not pitwall's own) is at least 10% of the run.
pub const CONTENDED: pitwall_schema::ContentionLimits = pitwall_schema::ContentionLimits {
    runnable_threads: 0.5,
    steal_pct: 2.0,
    psi_some_pct: 10.0,
};

/// Bootstrap resamples of an alert's interval (the ratio of the medians of the segments on
/// either side of the step).
pub const ALERT_RESAMPLES: usize = 2000;
/// Confidence level of an alert's interval.
pub const ALERT_CI_LEVEL: f64 = 0.95;
/// Seed of an alert's bootstrap: the same history always gives the same interval.
pub const ALERT_SEED: u64 = 0x7069_7477_616c_6c21;
/// How many of a history's newest runs the alert refresh after a stored run reads: detection
/// looks at most `DetectConfig::test_window` (100) points either side of a step and its windows
/// are anchored at the first point, so appending runs does not move steps far back, which
/// earlier refreshes already turned into alerts. Keeps the refresh after one run fast however
/// long the history (docs/PERFORMANCE.md, "History at scale").
pub const ALERT_WINDOW_RUNS: usize = 500;
/// Points of a series' newest history its summary keeps for the trend line of
/// `pitwall serve`'s index (`pitwall_analysis::summary`).
pub const SUMMARY_RECENT_POINTS: usize = 60;
/// In a history read only in part (`ALERT_WINDOW_RUNS`), steps within this many points of its
/// first point are left alone: they lack the points before them that their test and interval
/// use, and were judged with those points when they were near the end.
pub const ALERT_WINDOW_EDGE: usize = 100;
/// How many points a re-detected step may move and still be the same alert (its status and
/// note kept).
pub const ALERT_MATCH_WINDOW: usize = 3;
/// The variable holding the URL new alerts are posted to (a Slack-compatible webhook); no
/// notification when it is unset or blank. A secret: scrubbed from build and benchmark
/// commands like the forge tokens.
/// The longest note a person may keep on an alert, in characters (`alert … --note`).
pub const ALERT_NOTE_MAX_CHARS: usize = 1000;
pub const ALERT_WEBHOOK_ENV: &str = "PITWALL_ALERT_WEBHOOK";
/// How long posting to the alert webhook may take.
pub const ALERT_WEBHOOK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Most branches whose histories the HTML report shows: the history branch and the branches
/// with history runs measured most recently (feature branches, release branches).
pub const REPORT_MAX_BRANCHES: usize = 6;
/// `[history] code_paths` when not given: every path counts as code (the include part, which a
/// user's list replaces) …
pub const CODE_PATHS_INCLUDE: &[&str] = &["**"];
/// … except these, always: documentation, licences and the changelog. A first bad commit that
/// touches only such paths labels its alert "no code changed".
pub const CODE_PATHS_EXCLUDE: &[&str] = &[
    "**/*.md",
    "**/*.rst",
    "docs/**",
    "LICENSE*",
    "COPYING*",
    "CHANGELOG*",
    "AUTHORS*",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// One reader per cpu the process may use, never fewer than two or more than eight.
    #[test]
    fn serve_readers_follow_the_cpus_within_bounds() {
        let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let n = serve_readers();
        assert!((SERVE_READERS_MIN..=SERVE_READERS_MAX).contains(&n), "{n}");
        assert_eq!(n, cpus.clamp(SERVE_READERS_MIN, SERVE_READERS_MAX));
    }
}
