//! A series while its runs are gathered: the points of clean runs and of contended runs, each
//! pooled per commit, valued from their replicates when done.

use std::collections::BTreeMap;

use pitwall_schema::{BenchmarkResult, Run, SampleSummary};

use super::{ContendedPoint, Point, Series, contended};

/// A series while its points are gathered: the points of clean runs and those of contended
/// runs, each pooled per commit.
pub(super) struct Building {
    pub(super) series: Series,
    pub(super) clean: Track,
    pub(super) contended: Track,
    /// Points of runs a person excluded (`Run::exclusion`).
    pub(super) excluded: Track,
    /// The run that gave the series its latest point or replicates.
    pub(super) last_run: Option<usize>,
}

impl Building {
    /// The empty series of result `r`'s measure on `testbed` and `branch`, known as `key`.
    pub(super) fn new(r: &BenchmarkResult, key: String, testbed: &str, branch: &str) -> Building {
        Building {
            series: Series {
                key,
                testbed: testbed.to_string(),
                branch: branch.to_string(),
                suite: r.suite.clone(),
                name: r.name.clone(),
                params: r.params.clone(),
                measure: r.measure.clone(),
                unit: r.unit.to_string(),
                direction: r.direction,
                points: Vec::new(),
                changes: Vec::new(),
                suspected: None,
                contended: Vec::new(),
                excluded: Vec::new(),
                record: None,
            },
            clean: Track::default(),
            contended: Track::default(),
            excluded: Track::default(),
            last_run: None,
        }
    }

    /// The series with its points' values made (`None` when it has no clean point).
    pub(super) fn finish(mut self, runs: &[Run]) -> Option<Series> {
        let after = std::mem::take(&mut self.contended.after);
        self.series.points = self.clean.finish();
        self.series.contended = self
            .contended
            .finish()
            .into_iter()
            .zip(after)
            .map(|(point, after)| ContendedPoint {
                reasons: contended::reasons(&runs[point.run]),
                point,
                after,
            })
            .collect();
        self.series.excluded = set_apart(self.excluded, |p| {
            runs[p.run]
                .exclusion
                .as_ref()
                .map(|e| vec![format!("excluded from history: {}", e.note)])
                .unwrap_or_default()
        });
        (!self.series.points.is_empty()).then_some(self.series)
    }
}

/// The points of `track`, each with the clean points before it and its `reasons`.
fn set_apart(mut track: Track, reasons: impl Fn(&Point) -> Vec<String>) -> Vec<ContendedPoint> {
    let after = std::mem::take(&mut track.after);
    track
        .finish()
        .into_iter()
        .zip(after)
        .map(|(point, after)| ContendedPoint {
            reasons: reasons(&point),
            point,
            after,
        })
        .collect()
}

/// Points pooled per commit, with each point's replicate values.
#[derive(Default)]
pub(super) struct Track {
    pub(super) points: Vec<Point>,
    values: Vec<Vec<f64>>,
    by_commit: BTreeMap<String, usize>,
    /// Per point, a number kept with it (for contended points: the clean points before it).
    after: Vec<usize>,
}

impl Track {
    /// Run `ri`'s result (its summary and replicate values) joins its commit's point, or makes
    /// a new one (a working-tree run always does).
    pub(super) fn add(
        &mut self,
        ri: usize,
        run: &Run,
        summary: &SampleSummary,
        reps: Vec<f64>,
        after: usize,
    ) {
        let pooled = (!run.commit.is_empty() && run.commit != pitwall_schema::WORKING_TREE)
            .then(|| self.by_commit.get(&run.commit).copied())
            .flatten();
        match pooled {
            Some(i) => {
                let p = &mut self.points[i];
                p.runs.push(ri);
                p.min = p.min.min(summary.min);
                p.max = p.max.max(summary.max);
                p.n += summary.n;
                p.throttled += summary.throttled;
                self.values[i].extend(reps);
            }
            None => {
                self.by_commit.insert(run.commit.clone(), self.points.len());
                self.points.push(Point {
                    run: ri,
                    runs: vec![ri],
                    median: summary.median,
                    ci: summary.median_ci.map(|[lo, hi]| (lo, hi)),
                    min: summary.min,
                    max: summary.max,
                    n: summary.n,
                    replicates: 0,
                    throttled: summary.throttled,
                });
                self.values.push(reps);
                self.after.push(after);
            }
        }
    }

    /// The points, each valued as the geometric mean of its replicates.
    fn finish(mut self) -> Vec<Point> {
        for (p, values) in self.points.iter_mut().zip(&self.values) {
            p.replicates = values.len();
            if let Some((value, ci)) = pitwall_stats::replicate_mean_ci(values) {
                p.median = value;
                if values.len() >= 2 {
                    p.ci = ci;
                }
            }
        }
        self.points
    }
}
