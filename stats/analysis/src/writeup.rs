//! The quarterly write-up (`pitwall writeup`) as values: for a period of commit dates, the
//! change of each suite from the start of the period to its end (each benchmark's level in its
//! first and last segment within the period, a geometric mean over benchmarks with a
//! bootstrap interval), the ledger of every change point and alert in the period grouped by
//! commit, the environment changes between consecutive runs, the trend of each suite and the
//! methodology, so the Markdown and HTML renderings show the same numbers.
//!
//! The interval of the geometric mean is a percentile bootstrap over benchmarks (Efron &
//! Tibshirani, *An Introduction to the Bootstrap*, 1993, §13.3): the benchmarks' log changes
//! resampled with replacement with a fixed seed, so the same history gives the same interval.
//! Segments are those of the change-point detection of `history::series`, so a benchmark that
//! did not step in the period shows no change, whatever its noise.

use std::collections::BTreeMap;

use pitwall_schema::{Alert, Direction, Run};

use crate::alerts::AlertRules;
use crate::history::{HistoryFilter, Series};
use crate::order::rfc3339_seconds;

mod contended;
mod env;
mod ledger;
mod suite;
pub use env::{EnvChange, EnvField, EnvState, Runner, environment_changes, runners};
use ledger::ledger;
pub use ledger::{LedgerAlert, LedgerEntry, LedgerGroup, StepStanding};
pub use suite::geomean_ci;
use suite::summarize_suite;

/// How many of the largest regressions and improvements the summary names.
pub const TOP_N: usize = 5;
/// How many runs of a testbed apart an environment change and a change point may be and still
/// be shown next to each other.
pub const NEAR_RUNS: usize = 3;
const DAY_S: f64 = 86_400.0;

/// The dates a write-up covers: UTC days, `to` included.
#[derive(Debug, Clone, PartialEq)]
pub struct Period {
    /// `YYYY-MM-DD`.
    pub from: String,
    pub to: String,
    /// Seconds since 1970 of `from` 00:00 UTC and of the day after `to`.
    pub start_s: f64,
    pub end_s: f64,
}

/// A period that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeriodError {
    #[error("--from `{0}` is not a date (hint: YYYY-MM-DD, in UTC)")]
    BadFrom(String),
    #[error("--to `{0}` is not a date (hint: YYYY-MM-DD, in UTC)")]
    BadTo(String),
    #[error("--from {from} is after --to {to} (hint: --to is the last day of the period)")]
    Reversed { from: String, to: String },
}

/// Seconds since 1970 of `YYYY-MM-DD` 00:00 UTC; `None` unless it is exactly such a date.
pub fn parse_date(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let t = rfc3339_seconds(&format!("{s}T00:00:00Z"))?;
    // Reject days past the end of their month (2026-02-31 would read as March 3rd).
    let back = rfc3339_seconds(&format!("{}-01T00:00:00Z", &s[..7]))?;
    let next_month = {
        let (y, m): (i64, i64) = (s[..4].parse().ok()?, s[5..7].parse().ok()?);
        let (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
        rfc3339_seconds(&format!("{y:04}-{m:02}-01T00:00:00Z"))?
    };
    (t >= back && t < next_month).then_some(t)
}

impl Period {
    pub fn new(from: &str, to: &str) -> Result<Period, PeriodError> {
        let start_s = parse_date(from).ok_or_else(|| PeriodError::BadFrom(from.to_string()))?;
        let to_s = parse_date(to).ok_or_else(|| PeriodError::BadTo(to.to_string()))?;
        if to_s < start_s {
            return Err(PeriodError::Reversed {
                from: from.to_string(),
                to: to.to_string(),
            });
        }
        Ok(Period {
            from: from.to_string(),
            to: to.to_string(),
            start_s,
            end_s: to_s + DAY_S,
        })
    }

    pub fn contains(&self, t: f64) -> bool {
        t >= self.start_s && t < self.end_s
    }
}

/// A pull request a commit came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: u64,
    pub title: String,
}

/// What is known of a commit: from the run's `commit_info` or the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitMeta {
    pub sha: String,
    pub author: String,
    /// RFC 3339 author date.
    pub date: String,
    pub subject: String,
    pub pr: Option<PullRequest>,
}

/// The pull request of a commit message: GitHub's merge commit (`Merge pull request #12 from
/// org/branch`, the title on the first line of the body) or a squash merge (`Title (#12)`).
pub fn pull_request_of(message: &str) -> Option<PullRequest> {
    let mut lines = message.lines();
    let subject = lines.next()?.trim();
    if let Some(rest) = subject.strip_prefix("Merge pull request #") {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let number = digits.parse().ok()?;
        let title = lines.map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
        return Some(PullRequest {
            number,
            title: title.to_string(),
        });
    }
    let open = subject.strip_suffix(')')?.rfind("(#")?;
    let number = subject[open + 2..subject.len() - 1].parse().ok()?;
    Some(PullRequest {
        number,
        title: subject[..open].trim_end().to_string(),
    })
}

/// When a run's code was written: its commit's date (`commits`, else `commit_info`), else the
/// run's start.
pub fn run_time(run: &Run, commits: &BTreeMap<String, CommitMeta>) -> Option<f64> {
    commits
        .get(&run.commit)
        .and_then(|c| rfc3339_seconds(&c.date))
        .or_else(|| {
            run.commit_info
                .as_ref()
                .and_then(|c| rfc3339_seconds(&c.date))
        })
        .or_else(|| rfc3339_seconds(&run.started_at))
}

/// What the write-up is built from: the history runs (with fingerprints) and the series over
/// them (points index `runs`), the stored alerts of that history, what is known of the commits.
#[derive(Debug, Clone)]
pub struct WriteupInput<'a> {
    pub period: &'a Period,
    /// The history the runs and series are of: only runs it admits count.
    pub filter: &'a HistoryFilter,
    pub runs: &'a [Run],
    pub series: &'a [Series],
    pub alerts: &'a [Alert],
    pub commits: &'a BTreeMap<String, CommitMeta>,
    pub rules: &'a AlertRules,
    /// Settings the methodology lists as they are (sampling, detection), name → value.
    pub settings: Vec<(String, String)>,
}

/// One benchmark from the start of the period to its end.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchChange {
    pub key: String,
    pub label: String,
    pub measure: String,
    pub unit: String,
    /// Whether its value is a time (lower is better) or a throughput (higher is better): which
    /// words its change is said in ("faster"/"slower", "higher"/"lower").
    pub direction: Direction,
    /// Median of the per-run medians of its first and last segment within the period.
    pub first_level: f64,
    pub last_level: f64,
    /// The relative change of the value, last/first − 1, whatever the direction: −0.2 of a
    /// time is "20% faster", of a throughput "20% lower".
    pub rel_change: f64,
    /// The per-run medians within the period, in commit order.
    pub medians: Vec<f64>,
}

impl BenchChange {
    /// The change of its time, last/first − 1, a throughput's as that of its time per unit
    /// (first/last − 1): what a geometric mean over mixed benchmarks combines, negative faster.
    pub fn time_change(&self) -> f64 {
        time_change(self.direction, self.first_level, self.last_level)
    }
}

/// The change of time from `first` to `last` (see [`BenchChange::time_change`]).
pub fn time_change(direction: Direction, first: f64, last: f64) -> f64 {
    match direction {
        Direction::LowerIsBetter => last / first - 1.0,
        Direction::HigherIsBetter => first / last - 1.0,
    }
}

/// A point of a suite's trend: the geometric mean over its benchmarks of the ratio of the
/// run's time (a throughput's time per unit) to the benchmark's first level (1 = the start of
/// the period, below 1 faster).
#[derive(Debug, Clone, PartialEq)]
pub struct TrendPoint {
    pub commit: String,
    pub relative: f64,
}

/// A suite on a testbed over the period.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteSummary {
    pub suite: String,
    pub testbed: String,
    /// Geometric mean over the benchmarks of the ratio of their time at the end of the period
    /// to that at its start, − 1 ([`BenchChange::time_change`]; −0.031 is "3.1% faster"), with
    /// its interval (the same, of the bootstrap's percentiles).
    pub geomean_change: f64,
    pub ci: Option<(f64, f64)>,
    /// Benchmarks beyond the suite's threshold, worse and better.
    pub regressions: usize,
    pub improvements: usize,
    /// The `TOP_N` largest of each, largest first.
    pub worst: Vec<BenchChange>,
    pub best: Vec<BenchChange>,
    /// Every benchmark, in list order.
    pub benchmarks: Vec<BenchChange>,
    pub trend: Vec<TrendPoint>,
    /// Median over benchmarks of the coefficient of variation of the per-run medians within
    /// each segment (run-to-run noise, steps left out); `None` without two runs in a segment.
    pub noise_cv: Option<f64>,
    /// Finite samples behind each point (one benchmark in one run) in the period, from the
    /// stored data: what the runs really took, whatever the configuration says now.
    pub samples_per_point: Option<SampleCounts>,
    pub threshold_pct: f64,
}

/// How many samples the points of a suite had: median, fewest and most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleCounts {
    pub median: usize,
    pub min: usize,
    pub max: usize,
}

impl SampleCounts {
    /// `None` for no counts; the median of an even number is the lower middle one.
    pub fn of(mut counts: Vec<usize>) -> Option<SampleCounts> {
        counts.sort_unstable();
        Some(SampleCounts {
            median: *counts.get((counts.len().checked_sub(1)?) / 2)?,
            min: *counts.first()?,
            max: *counts.last()?,
        })
    }
}

/// How the numbers were made.
#[derive(Debug, Clone, PartialEq)]
pub struct Methodology {
    pub runners: Vec<Runner>,
    pub settings: Vec<(String, String)>,
    pub threshold_pct: f64,
    pub suite_threshold_pct: BTreeMap<String, f64>,
    pub resamples: usize,
    pub level: f64,
    pub seed: u64,
}

/// The write-up of a period.
#[derive(Debug, Clone, PartialEq)]
pub struct Writeup {
    pub period: Period,
    pub branch: String,
    /// History runs whose commit falls in the period and that the series' points pool (not a
    /// contended run, kept apart): the runs the report's pages count.
    pub runs_in_period: usize,
    pub summaries: Vec<SuiteSummary>,
    pub ledger: Vec<LedgerGroup>,
    pub env_changes: Vec<EnvChange>,
    pub methodology: Methodology,
}

/// How many history runs with commits in the period the series' points pool: the runs every
/// page counts (the report's "over N runs"), so a contended run, kept out of the points, is not
/// counted here either.
fn runs_counted(series: &[Series], in_period: &dyn Fn(usize) -> bool) -> usize {
    series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| p.runs.iter().copied()))
        .filter(|&ri| in_period(ri))
        .collect::<std::collections::BTreeSet<usize>>()
        .len()
}

/// Builds the write-up of `input.period` (see the module documentation).
pub fn build(input: &WriteupInput<'_>) -> Writeup {
    // Runs outside the history (a pull request's, another branch's) have no time: they are in
    // no period and no testbed's sequence.
    let times: Vec<Option<f64>> = input
        .runs
        .iter()
        .map(|r| {
            input
                .filter
                .admits(r)
                .then(|| run_time(r, input.commits))
                .flatten()
        })
        .collect();
    let in_period = |ri: usize| times[ri].is_some_and(|t| input.period.contains(t));
    let mut groups: BTreeMap<(String, String), Vec<&Series>> = BTreeMap::new();
    for s in input.series {
        groups
            .entry((s.suite.clone(), s.testbed.clone()))
            .or_default()
            .push(s);
    }
    let mut rank = vec![0; input.runs.len()];
    for (pos, ri) in crate::order::commit_order(input.runs)
        .into_iter()
        .enumerate()
    {
        rank[ri] = pos;
    }
    let summaries = groups
        .into_iter()
        .filter_map(|((suite, testbed), series)| {
            summarize_suite(input, &suite, &testbed, &series, &in_period, &rank)
        })
        .collect();
    let ledger = ledger(input, &in_period, &times);
    let env_changes = environment_changes(input.runs, &times, input.period, &ledger);
    Writeup {
        period: input.period.clone(),
        branch: input.filter.branch.clone(),
        runs_in_period: runs_counted(input.series, &in_period),
        summaries,
        ledger,
        env_changes,
        methodology: Methodology {
            runners: runners(input.runs, &in_period),
            settings: input.settings.clone(),
            threshold_pct: input.rules.threshold_pct,
            suite_threshold_pct: input.rules.suite_threshold_pct.clone(),
            resamples: input.rules.resamples,
            level: input.rules.level,
            seed: input.rules.seed,
        },
    }
}

#[cfg(test)]
mod tests;
