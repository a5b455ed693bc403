//! Benchmark histories: stored runs turned into one series per benchmark measure (one point
//! per run) with the change points found in it. `pitwall detect --benchmark`, the HTML report
//! and anything else that shows a history call [`series`], so they cannot disagree about which
//! points a series has or where it changed.

use std::collections::BTreeMap;

use pitwall_schema::{Direction, ResultStatus, Run, RunRole};
use pitwall_stats::changepoint::{ChangePoint, DetectConfig, detect};
use pitwall_stats::{median_ci, quantile_sorted};
use serde::Serialize;

/// One run's view of one benchmark measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Index of the run in the input (stored order; points themselves are in commit order).
    pub run: usize,
    /// Median of the finite samples.
    pub median: f64,
    /// 95% interval of the median (`None` with fewer than 6 samples).
    pub ci: Option<(f64, f64)>,
    pub min: f64,
    pub max: f64,
    /// Finite samples behind the point.
    pub n: usize,
    /// Samples flagged as taken while the device was throttled.
    pub throttled: usize,
}

/// Which stored runs make a history: runs with role `history` on one branch, on one testbed
/// or (without `testbed`) each testbed in its own series. Runs that record no branch (stored
/// before branches were known, measured outside git, imported without `--branch`) count as the
/// history branch's. Pull-request runs (`pr-base`, `pr-head`) never enter a history.
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

    /// Whether `run` belongs to this history.
    pub fn admits(&self, run: &Run) -> bool {
        run.role_or_implied() == RunRole::History
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
    pub suite: String,
    pub name: String,
    pub params: BTreeMap<String, String>,
    pub measure: String,
    pub unit: String,
    pub direction: Direction,
    /// One point per run, in commit order (`order::commit_order`).
    pub points: Vec<Point>,
    /// Change points over the per-run medians (indices into `points`).
    pub changes: Vec<ChangePoint>,
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
            changes,
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
///   commits, sits at its commit and not at the end; runs of the same commit keep their
///   stored order;
/// - a result counts when its status is ok and it has at least one finite sample; its point
///   is the median of its finite samples;
/// - **duplicate keys**: when a run holds the same key more than once, the first ok result with
///   finite samples counts and the others are left out, so every series has at most one point
///   per run (as a comparison pairs the first result of a key first);
/// - a measure without any point has no series.
pub fn series(runs: &[Run], filter: &HistoryFilter, config: &DetectConfig) -> Vec<Series> {
    let mut by_key: BTreeMap<(String, String), Series> = BTreeMap::new();
    let mut sorted: Vec<f64> = Vec::new();
    for ri in crate::order::commit_order(runs) {
        let run = &runs[ri];
        if !filter.admits(run) {
            continue;
        }
        let testbed = run.testbed_or_derived();
        for r in &run.results {
            if r.status != ResultStatus::Ok || r.samples.is_empty() {
                continue;
            }
            let key = r.key();
            let entry = (key.clone(), testbed.clone());
            let series = by_key.entry(entry).or_insert_with(|| Series {
                key,
                testbed: testbed.clone(),
                suite: r.suite.clone(),
                name: r.name.clone(),
                params: r.params.clone(),
                measure: r.measure.clone(),
                unit: r.unit.to_string(),
                direction: r.direction,
                points: Vec::new(),
                changes: Vec::new(),
            });
            if series.points.last().is_some_and(|p| p.run == ri) {
                continue;
            }
            sorted.clear();
            sorted.extend(r.samples.iter().copied().filter(|v| v.is_finite()));
            if sorted.is_empty() {
                continue;
            }
            sorted.sort_by(f64::total_cmp);
            let n = sorted.len();
            series.points.push(Point {
                run: ri,
                median: quantile_sorted(&sorted, 0.5).unwrap_or(f64::NAN),
                ci: median_ci(&sorted),
                min: sorted[0],
                max: sorted[n - 1],
                n,
                throttled: r.sample_meta.iter().filter(|m| m.throttled).count(),
            });
        }
    }
    let mut out: Vec<Series> = by_key
        .into_values()
        .filter(|s| !s.points.is_empty())
        .collect();
    out.sort_by(|a, b| {
        crate::order::bench_cmp(a.bench_ref(), b.bench_ref())
            .then_with(|| a.testbed.cmp(&b.testbed))
    });
    for s in &mut out {
        let medians: Vec<f64> = s.points.iter().map(|p| p.median).collect();
        s.changes = detect(&medians, config);
    }
    out
}

/// The change points of the stored series whose key contains `pattern` (every series when it
/// is empty) in the history `filter` selects, as `pitwall detect --benchmark` shows them;
/// built by [`series`].
pub fn detect_history(
    runs: &[Run],
    pattern: &str,
    filter: &HistoryFilter,
    config: &DetectConfig,
) -> Vec<SeriesDetection> {
    series(runs, filter, config)
        .iter()
        .filter(|s| s.key.contains(pattern))
        .map(|s| s.detection(runs))
        .collect()
}

/// The change points of a series of plain values read from `file`.
pub fn detect_values(file: &str, values: &[f64], config: &DetectConfig) -> SeriesDetection {
    SeriesDetection {
        source: SeriesSource::File(file.to_string()),
        points: values.len(),
        changes: detect(values, config)
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

/// The change points of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesDetection {
    pub source: SeriesSource,
    pub points: usize,
    pub changes: Vec<DetectedChange>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::{BenchmarkResult, Fingerprint, RunStatus, Unit};

    fn result(name: &str, samples: Vec<f64>) -> BenchmarkResult {
        BenchmarkResult {
            suite: "kernel".into(),
            name: name.into(),
            params: BTreeMap::new(),
            measure: "time".into(),
            unit: Unit::new(Unit::NANOSECONDS),
            direction: Direction::LowerIsBetter,
            status: ResultStatus::Ok,
            error: None,
            samples,
            sample_meta: Vec::new(),
            replicates: Vec::new(),
        }
    }

    fn main() -> HistoryFilter {
        HistoryFilter::branch("main")
    }

    fn run(i: usize, results: Vec<BenchmarkResult>) -> Run {
        Run {
            id: format!("run-{i}"),
            project: "p".into(),
            commit: format!("{i:040x}"),
            branch: None,
            testbed: None,
            role: None,
            started_at: format!("2026-01-01T00:00:{i:02}Z"),
            finished_at: String::new(),
            config_hash: String::new(),
            fingerprint: Fingerprint::default(),
            status: RunStatus::Complete,
            commit_info: None,
            error: None,
            pair: None,
            results,
        }
    }

    /// 40 runs stepping from 100 to 130 at run 25; runs 10 to 19 also hold the key a second
    /// time at the stepped level.
    fn stepped_with_duplicates() -> Vec<Run> {
        (0..40)
            .map(|i| {
                let level = if i < 25 { 100.0 } else { 130.0 };
                let wobble = |k: usize| level * (1.0 + 0.001 * ((i * 7 + k * 3) % 5) as f64);
                let mut results = vec![result("gemm", (0..5).map(wobble).collect())];
                if (10..20).contains(&i) {
                    results.push(result("gemm", vec![130.0; 5]));
                }
                run(i, results)
            })
            .collect()
    }

    #[test]
    fn the_first_result_of_a_duplicate_key_counts() {
        let runs = stepped_with_duplicates();
        let s = series(&runs, &main(), &DetectConfig::default());
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].points.len(), 40, "one point per run");
        assert!(s[0].points.iter().enumerate().all(|(i, p)| p.run == i));
        assert!(s[0].points[15].median < 101.0, "{:?}", s[0].points[15]);
        assert_eq!(
            s[0].changes.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![25]
        );
    }

    #[test]
    fn detection_names_the_commits_around_each_change() {
        let runs = stepped_with_duplicates();
        let d = detect_history(&runs, "gemm", &main(), &DetectConfig::default());
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].points, 40);
        let c = &d[0].changes[0];
        assert_eq!(c.commit_before.as_deref(), Some(runs[24].commit.as_str()));
        assert_eq!(c.commit_after.as_deref(), Some(runs[25].commit.as_str()));
        assert_eq!(c.run_after.as_deref(), Some("run-25"));
        assert!(detect_history(&runs, "nothing", &main(), &DetectConfig::default()).is_empty());
    }

    #[test]
    fn failed_empty_and_non_finite_results_add_no_point() {
        let mut failed = result("gemm", vec![1e9; 5]);
        failed.status = ResultStatus::Failed;
        let runs = vec![
            run(0, vec![failed, result("gemm", vec![1.0, f64::NAN, 3.0])]),
            run(
                1,
                vec![result("gemm", vec![]), result("gemm", vec![f64::NAN])],
            ),
            run(2, vec![result("other", vec![f64::INFINITY])]),
        ];
        let s = series(&runs, &main(), &DetectConfig::default());
        assert_eq!(s.len(), 1, "`other` has no finite sample, so no series");
        assert_eq!(s[0].points.len(), 1);
        assert_eq!((s[0].points[0].median, s[0].points[0].n), (2.0, 2));
    }

    fn dated(i: usize, date: &str, results: Vec<BenchmarkResult>) -> Run {
        let mut r = run(i, results);
        r.commit_info = Some(pitwall_schema::CommitInfo {
            author: "a <a@x>".into(),
            date: date.into(),
            subject: format!("change {i}"),
        });
        r
    }

    #[test]
    fn points_follow_commit_order_not_stored_order() {
        // Commits 1..=4 measured in order, then a pair of commit 1 (base, stored after 4) and
        // commit 4 (head); a working-tree run started after all of them; commit dates carry
        // offsets (commit 3 at 10:03+02:00 is 08:03Z, before commit 1 at 09:01Z).
        let at = |i: usize, date: &str| dated(i, date, vec![result("gemm", vec![i as f64; 3])]);
        let mut runs = vec![
            at(1, "2026-01-01T09:01:00Z"),
            at(2, "2026-01-01T09:02:00Z"),
            at(3, "2026-01-01T10:03:00+02:00"),
            at(4, "2026-01-01T09:04:00Z"),
            at(1, "2026-01-01T09:01:00Z"),
            at(4, "2026-01-01T09:04:00Z"),
        ];
        let mut wt = run(9, vec![result("gemm", vec![9.0; 3])]);
        wt.commit = "working tree".into();
        wt.started_at = "2026-01-01T12:00:00.5Z".into();
        runs.push(wt);
        let s = &series(&runs, &main(), &DetectConfig::default())[0];
        let order: Vec<usize> = s.points.iter().map(|p| p.run).collect();
        assert_eq!(order, vec![2, 0, 4, 1, 3, 5, 6]);
        let medians: Vec<f64> = s.points.iter().map(|p| p.median).collect();
        assert_eq!(medians, vec![3.0, 1.0, 1.0, 2.0, 4.0, 4.0, 9.0]);
    }

    #[test]
    fn series_list_numbers_as_numbers() {
        let with = |bytes: &str| {
            let mut r = result("all_reduce", vec![1.0]);
            r.params.insert("bytes".into(), bytes.into());
            r
        };
        let runs = vec![run(
            0,
            vec![
                with("16777216"),
                with("2097152"),
                with("262144"),
                with("1M"),
            ],
        )];
        let s = series(&runs, &main(), &DetectConfig::default());
        let bytes: Vec<&str> = s.iter().map(|s| s.params["bytes"].as_str()).collect();
        assert_eq!(bytes, vec!["262144", "1M", "2097152", "16777216"]);
    }

    #[test]
    fn a_series_is_one_testbed_on_the_history_branch() {
        // Two testbeds at different levels, interleaved; slower runs on a feature branch and
        // a pull request's head: none of them may make a step in main's history.
        let mut runs = Vec::new();
        for i in 0..30 {
            for (bed, level) in [("h200-a", 100.0), ("cpu-b", 300.0)] {
                let mut r = run(runs.len(), vec![result("gemm", vec![level; 3])]);
                r.testbed = Some(bed.into());
                r.branch = Some("main".into());
                runs.push(r);
            }
            if i % 3 == 0 {
                let mut slow = run(runs.len(), vec![result("gemm", vec![150.0; 3])]);
                slow.testbed = Some("h200-a".into());
                slow.branch = Some("feature".into());
                runs.push(slow);
                let mut head = run(runs.len(), vec![result("gemm", vec![170.0; 3])]);
                head.testbed = Some("h200-a".into());
                head.role = Some(RunRole::PrHead);
                runs.push(head);
            }
        }
        let all = series(&runs, &main(), &DetectConfig::default());
        let beds: Vec<(&str, usize)> = all
            .iter()
            .map(|s| (s.testbed.as_str(), s.points.len()))
            .collect();
        assert_eq!(beds, vec![("cpu-b", 30), ("h200-a", 30)]);
        assert!(all.iter().all(|s| s.changes.is_empty()), "{all:?}");
        let one = HistoryFilter {
            branch: "main".into(),
            testbed: Some("h200-a".into()),
        };
        let s = series(&runs, &one, &DetectConfig::default());
        assert!(s.len() == 1 && s[0].points.iter().all(|p| p.median == 100.0));
        let feature = series(
            &runs,
            &HistoryFilter::branch("feature"),
            &DetectConfig::default(),
        );
        assert_eq!((feature.len(), feature[0].points.len()), (1, 10));
        // Without labels, every run is one testbed's history of main: one series of them all.
        let mut mixed = runs.clone();
        mixed.iter_mut().for_each(|r| {
            r.testbed = Some("one".into());
            r.branch = None;
            r.role = None;
        });
        let s = series(&mixed, &main(), &DetectConfig::default());
        assert_eq!((s.len(), s[0].points.len()), (1, runs.len()));
    }
}
