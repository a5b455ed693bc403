//! Benchmark histories: stored runs turned into one series per benchmark measure (one point
//! per run) with the change points found in it. `pitwall detect --benchmark`, the HTML report
//! and anything else that shows a history call [`series`], so they cannot disagree about which
//! points a series has or where it changed.

use std::collections::BTreeMap;

use pitwall_schema::{BenchmarkResult, Direction, ResultStatus, Run, SampleSummary};
use pitwall_stats::changepoint::{ChangePoint, DetectConfig, SuspectedChange, detect, suspect_tip};
use pitwall_stats::{median_ci, quantile_sorted};
use serde::Serialize;

mod building;
mod contended;
mod record;
use building::Building;
pub use contended::ContendedPoint;
pub use record::{HistoryNoise, RecordOffered};

/// One commit's view of one benchmark measure: every admitted run of that commit pooled.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Index of the point's first run in the input (stored order; points themselves are in
    /// commit order, each at its commit's first appearance).
    pub run: usize,
    /// Every run the point pools, in commit order (the first is `run`). Runs of one commit
    /// are one point (issue 27); a working-tree run is always a point of its own.
    pub runs: Vec<usize>,
    /// The point's value, the one change detection sees: the geometric mean of its
    /// replicates' values, a replicate being one benchmark process (a run's `replicates`
    /// index; a whole run when none is recorded) and its value the median of its finite
    /// samples. For one run of one process this is the median of its samples, as before.
    pub median: f64,
    /// 95% interval of the value: from the spread between replicates when there are at
    /// least two (`pitwall_stats::replicate_mean_ci`); for a single replicate, the
    /// within-process interval of its median (`None` with fewer than 6 samples), shown but
    /// never used by detection.
    pub ci: Option<(f64, f64)>,
    pub min: f64,
    pub max: f64,
    /// Finite samples behind the point.
    pub n: usize,
    /// Replicates (benchmark processes) behind the point.
    pub replicates: usize,
    /// Samples flagged as taken while the device was throttled.
    pub throttled: usize,
}

/// Which stored runs make a history: runs with role `history` on one branch, on one testbed
/// or (without `testbed`) each testbed in its own series. Runs that record no branch (stored
/// before branches were known, measured outside git, imported without `--branch`) count as the
/// history branch's. Pull-request runs (`pr-base`, `pr-head`), the working tree's (`local`),
/// calibrations and runs a person excluded (`pitwall runs exclude`) never enter a history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryFilter {
    /// The history branch (`[history] branch`, `detect --branch`).
    pub branch: String,
    /// Only this testbed; every testbed (each its own series) when `None`.
    pub testbed: Option<String>,
}

impl HistoryFilter {
    /// The history of `branch` on every testbed.
    pub fn branch(branch: &str) -> HistoryFilter {
        HistoryFilter {
            branch: branch.to_string(),
            testbed: None,
        }
    }

    /// Whether `run` belongs to this history (an excluded run never does).
    pub fn admits(&self, run: &Run) -> bool {
        run.exclusion.is_none() && self.holds(run)
    }

    /// Whether `run` is this history's, or would be but for a person's exclusion: a `history`
    /// run on this branch and testbed (the report draws the excluded ones greyed).
    pub fn holds(&self, run: &Run) -> bool {
        run.role_or_implied() == pitwall_schema::RunRole::History
            && run.branch.as_deref().is_none_or(|b| b == self.branch)
            && self
                .testbed
                .as_deref()
                .is_none_or(|t| t == run.testbed_or_derived())
    }
}

/// The history of one benchmark measure (`suite/name[params]/measure`) on one testbed.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub key: String,
    /// The testbed all its points were measured on.
    pub testbed: String,
    /// The branch whose history it is (`HistoryFilter::branch`).
    pub branch: String,
    pub suite: String,
    pub name: String,
    pub params: BTreeMap<String, String>,
    pub measure: String,
    pub unit: String,
    pub direction: Direction,
    /// One point per commit, in commit order (`order::commit_order`).
    pub points: Vec<Point>,
    /// Change points over the points' values (indices into `points`).
    pub changes: Vec<ChangePoint>,
    /// A step at the tip with too few points after it to be a change point
    /// (`changepoint::suspect_tip`): not in `changes`, not an alert.
    pub suspected: Option<SuspectedChange>,
    /// The points of contended runs (`Run::contention`), pooled per commit like `points` but
    /// kept apart: shown, never fed to change detection, alerts or write-ups.
    pub contended: Vec<ContendedPoint>,
    /// The points of runs a person excluded (`pitwall runs exclude`), pooled per commit the
    /// same way, drawn greyed with the note and never fed to detection; `reasons` holds the
    /// note.
    pub excluded: Vec<ContendedPoint>,
    /// The testbed's noise record that detection was offered for this series
    /// (`HistoryNoise`), pooled with the points' own variance where the history is short and
    /// the two agree.
    pub record: Option<RecordOffered>,
}

impl Series {
    /// `name[k=v,…]`: what a row shows next to the suite.
    pub fn label(&self) -> String {
        pitwall_schema::schema::display_name(&self.name, &self.params)
    }

    /// What identifies it, for `order::bench_cmp`.
    pub fn bench_ref(&self) -> crate::order::BenchRef<'_> {
        crate::order::BenchRef {
            suite: &self.suite,
            name: &self.name,
            params: &self.params,
            measure: &self.measure,
        }
    }

    /// Whether a relative change of the median makes this measure worse.
    pub fn is_worse(&self, rel_change: f64) -> bool {
        match self.direction {
            Direction::LowerIsBetter => rel_change > 0.0,
            Direction::HigherIsBetter => rel_change < 0.0,
        }
    }

    /// The change points with the commits and run around each; `runs` are the runs the series
    /// was built from.
    pub fn detection(&self, runs: &[Run]) -> SeriesDetection {
        let run_of = |i: usize| self.points.get(i).map(|p| &runs[p.run]);
        let changes = self
            .changes
            .iter()
            .map(|c| DetectedChange {
                change: c.clone(),
                commit_before: c
                    .index
                    .checked_sub(1)
                    .and_then(run_of)
                    .map(|r| r.commit.clone()),
                commit_after: run_of(c.index).map(|r| r.commit.clone()),
                run_after: run_of(c.index).map(|r| r.id.clone()),
            })
            .collect();
        SeriesDetection {
            source: SeriesSource::Benchmark {
                key: self.key.clone(),
                unit: self.unit.clone(),
                testbed: self.testbed.clone(),
            },
            points: self.points.len(),
            contended: self.contended.len(),
            record: self.record,
            changes,
            suspected: self.suspected.as_ref().map(|c| DetectedSuspect {
                change: c.clone(),
                commit_before: c
                    .index
                    .checked_sub(1)
                    .and_then(run_of)
                    .map(|r| r.commit.clone()),
                commit_after: run_of(c.index).map(|r| r.commit.clone()),
            }),
        }
    }
}

/// Builds one series per benchmark measure and testbed from the runs `filter` admits (`runs` in
/// stored order), in the order benchmarks are listed (`order::bench_cmp`: numbers as numbers;
/// testbeds by name), and finds each one's change points over its per-run medians with
/// `config`.
///
/// The rules, in one place:
/// - **a series is (project, testbed, branch, benchmark key, measure)**: only runs with role
///   `history` on the filter's branch (or no recorded branch) count, and each testbed is its
///   own series, so a pull request's runs, another branch or a faster machine never put a
///   step into a history;
/// - **points are in commit order** (`order::commit_order`: the commit's date, else the run's
///   start), not stored order, so the base run of a `--base/--head` pair, stored after newer
///   commits, sits at its commit and not at the end;
/// - **one point per commit**: every admitted run of a commit joins the point made where that
///   commit first appears, so re-measuring a commit refines its point instead of adding one
///   (a working-tree run is always its own point). A point's value is the geometric mean of
///   its replicates' values (see [`Point::median`]), with an interval from the spread between
///   them when there are at least two; a run's within-process interval never enters detection;
/// - a result counts when its status is ok and it has at least one finite sample; a replicate's
///   value is the median of its finite samples, or for a result pruned by `pitwall prune
///   --keep-summaries`, the median of the summary kept in their place (one replicate);
/// - **duplicate keys**: when a run holds the same key more than once, the first ok result with
///   finite samples counts and the others are left out (as a comparison pairs the first result
///   of a key first);
/// - **contended runs are kept apart** (`Run::contention` says `contended`): their points,
///   pooled per commit the same way, are in `Series::contended`, shown greyed and never fed
///   to detection, so a loaded machine cannot put a step into a history;
/// - a measure without any (clean) point has no series;
/// - **between-process noise only**: detection sees the points' values, and on a short
///   history the testbed's noise record where [`series_with`] is given one; a run's
///   within-process interval never enters it.
pub fn series(runs: &[Run], filter: &HistoryFilter, config: &DetectConfig) -> Vec<Series> {
    series_with(runs, filter, config, &HistoryNoise::none())
}

/// [`series`], with each testbed's noise record offered to detection (`HistoryNoise`): what
/// every command that reads a store uses (`pitwall detect`, alerts, the report, write-ups).
pub fn series_with(
    runs: &[Run],
    filter: &HistoryFilter,
    config: &DetectConfig,
    noise: &HistoryNoise,
) -> Vec<Series> {
    let mut by_key: BTreeMap<(String, String), Building> = BTreeMap::new();
    let mut sorted: Vec<f64> = Vec::new();
    for ri in crate::order::commit_order(runs) {
        let run = &runs[ri];
        if !filter.holds(run) {
            continue;
        }
        let excluded = run.exclusion.is_some();
        let testbed = run.testbed_or_derived();
        for r in &run.results {
            if r.status != ResultStatus::Ok || (r.samples.is_empty() && r.summary.is_none()) {
                continue;
            }
            let key = r.key();
            let entry = (key.clone(), testbed.clone());
            let b = by_key
                .entry(entry)
                .or_insert_with(|| Building::new(r, key, &testbed, &filter.branch));
            // Duplicate keys within a run: the first usable result counts.
            if b.last_run == Some(ri) {
                continue;
            }
            let Some(summary) = summarize_with(r, &mut sorted) else {
                continue;
            };
            b.last_run = Some(ri);
            let reps = replicate_values(r, &mut sorted, summary.median);
            if excluded {
                let after = b.clean.points.len();
                b.excluded.add(ri, run, &summary, reps, after);
            } else if contended::is_contended(run) {
                let after = b.clean.points.len();
                b.contended.add(ri, run, &summary, reps, after);
            } else {
                b.clean.add(ri, run, &summary, reps, 0);
            }
        }
    }
    let mut out: Vec<Series> = by_key
        .into_values()
        .filter_map(|b| b.finish(runs))
        .collect();
    out.sort_by(|a, b| {
        crate::order::bench_cmp(a.bench_ref(), b.bench_ref())
            .then_with(|| a.testbed.cmp(&b.testbed))
    });
    for s in &mut out {
        let values: Vec<f64> = s.points.iter().map(|p| p.median).collect();
        let known = noise.known(s);
        s.record = known.map(|(_, offered)| offered);
        let config = DetectConfig {
            known_noise: known.map(|(k, _)| k),
            ..config.clone()
        };
        s.changes = detect(&values, &config);
        s.suspected = suspect_tip(&values, &s.changes, &config);
    }
    out
}

/// The value of each replicate (benchmark process) of `r`: the median of its finite samples.
/// Without recorded replicates (or for a pruned result, `median` from its summary) the whole
/// result is one replicate.
fn replicate_values(r: &BenchmarkResult, buf: &mut Vec<f64>, median: f64) -> Vec<f64> {
    if r.samples.is_empty() || r.replicates.len() != r.samples.len() {
        return vec![median];
    }
    let mut ids: Vec<u32> = r.replicates.clone();
    ids.sort_unstable();
    ids.dedup();
    ids.iter()
        .filter_map(|&id| {
            buf.clear();
            buf.extend(
                r.samples
                    .iter()
                    .zip(&r.replicates)
                    .filter(|(v, rep)| **rep == id && v.is_finite())
                    .map(|(v, _)| *v),
            );
            buf.sort_by(f64::total_cmp);
            quantile_sorted(buf, 0.5).filter(|m| m.is_finite())
        })
        .collect()
}

/// [`series`] built one benchmark key at a time, for stores too large to read whole: `load`
/// gives, for one key, every run `series` would be given (the same runs in the same order for
/// every key, so point indices agree) holding only that key's results. The series and their
/// order are those `series` gives over all runs at once.
pub fn series_by_key<E>(
    keys: &[String],
    mut load: impl FnMut(&str) -> Result<Vec<Run>, E>,
    filter: &HistoryFilter,
    config: &DetectConfig,
    noise: &HistoryNoise,
) -> Result<Vec<Series>, E> {
    let mut out = Vec::new();
    for key in keys {
        let runs = load(key)?;
        out.extend(series_with(&runs, filter, config, noise));
    }
    out.sort_by(|a, b| {
        crate::order::bench_cmp(a.bench_ref(), b.bench_ref())
            .then_with(|| a.testbed.cmp(&b.testbed))
    });
    Ok(out)
}

/// What a history point shows of a result: the median of its finite samples with its 95%
/// interval, the range, the count and the throttled samples; for a pruned result, the summary
/// kept in place of its samples. `None` for a result without a finite sample or a finite
/// median (samples wider apart than a 64-bit float holds). `pitwall prune
/// --keep-summaries` stores exactly this, so a pruned run keeps its place in every history.
pub fn summarize(r: &BenchmarkResult) -> Option<SampleSummary> {
    summarize_with(r, &mut Vec::new())
}

/// [`summarize`] with a caller's buffer for the sorted samples.
fn summarize_with(r: &BenchmarkResult, sorted: &mut Vec<f64>) -> Option<SampleSummary> {
    if r.samples.is_empty() {
        return r.summary.clone();
    }
    sorted.clear();
    sorted.extend(r.samples.iter().copied().filter(|v| v.is_finite()));
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = quantile_sorted(sorted, 0.5).unwrap_or(f64::NAN);
    if !median.is_finite() {
        return None;
    }
    Some(SampleSummary {
        n,
        median,
        median_ci: median_ci(sorted).map(|(lo, hi)| [lo, hi]),
        min: sorted[0],
        max: sorted[n - 1],
        throttled: r.sample_meta.iter().filter(|m| m.throttled).count(),
    })
}

/// The change points of the stored series whose key contains `pattern` (every series when it
/// is empty) in the history `filter` selects, as `pitwall detect --benchmark` shows them;
/// built by [`series`].
pub fn detect_history(
    runs: &[Run],
    pattern: &str,
    filter: &HistoryFilter,
    config: &DetectConfig,
    noise: &HistoryNoise,
) -> Vec<SeriesDetection> {
    series_with(runs, filter, config, noise)
        .iter()
        .filter(|s| s.key.contains(pattern))
        .map(|s| s.detection(runs))
        .collect()
}

/// The change points of a series of plain values read from `file`.
pub fn detect_values(file: &str, values: &[f64], config: &DetectConfig) -> SeriesDetection {
    let changes = detect(values, config);
    let suspected = suspect_tip(values, &changes, config).map(|change| DetectedSuspect {
        change,
        commit_before: None,
        commit_after: None,
    });
    SeriesDetection {
        source: SeriesSource::File(file.to_string()),
        points: values.len(),
        contended: 0,
        record: None,
        suspected,
        changes: changes
            .into_iter()
            .map(|change| DetectedChange {
                change,
                commit_before: None,
                commit_after: None,
                run_after: None,
            })
            .collect(),
    }
}

/// Where a series came from.
#[derive(Debug, Clone, PartialEq)]
pub enum SeriesSource {
    /// A series file given with `--series`.
    File(String),
    /// A stored benchmark measure (its key) with its unit, on one testbed.
    Benchmark {
        key: String,
        unit: String,
        testbed: String,
    },
}

/// A change point with, for stored history, the commits around it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DetectedChange {
    #[serde(flatten)]
    pub change: ChangePoint,
    /// Last commit of the old regime (stored history only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_before: Option<String>,
    /// First commit of the new regime (stored history only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_after: Option<String>,
}

/// A suspected step at the tip with, for stored history, the commits around it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DetectedSuspect {
    #[serde(flatten)]
    pub change: SuspectedChange,
    /// Last commit of the old level (stored history only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_before: Option<String>,
    /// First commit of the suspected new level (stored history only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_after: Option<String>,
}

/// The change points of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesDetection {
    pub source: SeriesSource,
    pub points: usize,
    pub changes: Vec<DetectedChange>,
    /// A step at the tip with too few points after it to confirm (`pitwall detect` prints it
    /// apart, with the points that would confirm or clear it); never an alert.
    pub suspected: Option<DetectedSuspect>,
    /// Points of contended runs left out of detection (`Series::contended`).
    pub contended: usize,
    /// The testbed's noise record offered to detection (`Series::record`).
    pub record: Option<RecordOffered>,
}

#[cfg(test)]
mod tests;
