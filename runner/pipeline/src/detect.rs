//! `pitwall detect`: reads series from files (CSV with a `value` header, or a JSON array) or
//! reads the stored history, and finds change points through `pitwall_analysis::history`.

use std::path::Path;

pub use pitwall_analysis::HistoryFilter;
use pitwall_analysis::history::SeriesDetection;
use pitwall_stats::changepoint::DetectConfig;

pub use pitwall_analysis::history::detect_values;

use pitwall_store::{RunQuery, Store, StoreError};

/// A series file that cannot be read; names file and line.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{line}: {message}")]
    Parse {
        file: String,
        line: usize,
        message: String,
    },
}

/// Reads a series: CSV whose first line is the header `value` and then one number per line,
/// or a JSON array of numbers.
pub fn read_series_file(path: &Path) -> Result<Vec<f64>, SeriesError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| SeriesError::Read {
        file: file.clone(),
        source,
    })?;
    parse_series(&text, &file)
}

/// Parses series text; `file` only names it in errors.
pub fn parse_series(text: &str, file: &str) -> Result<Vec<f64>, SeriesError> {
    let err = |line: usize, message: String| SeriesError::Parse {
        file: file.to_string(),
        line,
        message,
    };
    if text.trim_start().starts_with('[') {
        let values: Vec<serde_json::Value> = serde_json::from_str(text)
            .map_err(|e| err(e.line(), format!("invalid JSON array: {e}")))?;
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                    let line = json_element_line(text, i);
                    err(line, format!("element {i} is not a finite number: {v}"))
                })
            })
            .collect();
    }
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    match lines.next() {
        Some((_, header))
            if header
                .trim()
                .trim_matches('"')
                .eq_ignore_ascii_case("value") => {}
        Some((i, header)) => {
            return Err(err(
                i + 1,
                format!(
                    "expected the header `value`, found `{}` (hint: CSV needs a `value` header line, or give a JSON array)",
                    header.trim()
                ),
            ));
        }
        None => {
            return Err(err(
                1,
                "empty file (hint: CSV with a `value` header, or a JSON array of numbers)".into(),
            ));
        }
    }
    lines
        .map(|(i, l)| {
            let cell = l.trim().trim_matches('"');
            cell.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| err(i + 1, format!("`{cell}` is not a finite number")))
        })
        .collect()
}

/// Line of the i-th element of a JSON array (1-based), for messages.
fn json_element_line(text: &str, index: usize) -> usize {
    let mut depth = 0usize;
    let mut seen = 0usize;
    let mut line = 1;
    let mut in_str = false;
    let mut prev = ' ';
    for ch in text.chars() {
        if ch == '\n' {
            line += 1;
        }
        if in_str {
            if ch == '"' && prev != '\\' {
                in_str = false;
            }
        } else {
            match ch {
                '"' => in_str = true,
                '[' | '{' => depth += 1,
                ']' | '}' => depth = depth.saturating_sub(1),
                ',' if depth == 1 => {
                    seen += 1;
                    if seen > index {
                        return line;
                    }
                }
                _ => {}
            }
        }
        prev = ch;
    }
    line
}

/// The change points of the stored series whose key contains `pattern` in the history
/// `filter` selects (`history` runs of one branch, per testbed), with the commits around each:
/// the one analysis of `pitwall_analysis::history`, which the HTML report uses too.
pub fn detect_history(
    store: &dyn Store,
    pattern: &str,
    filter: &HistoryFilter,
    config: &DetectConfig,
) -> Result<Vec<SeriesDetection>, StoreError> {
    let runs = history_runs(store, pattern, filter)?;
    let noise = crate::noise::history_noise(store, &runs)?;
    Ok(pitwall_analysis::history::detect_history(
        &runs, pattern, filter, config, &noise,
    ))
}

/// What the HTML report shows of the store, read one series at a time: every stored run
/// without its results (with its fingerprint: the environments page) and the histories,
/// built key by key (`history::series_by_key`), whose points index those runs: those of
/// `filter`'s branch first, then of each other branch with history runs, the most recently
/// measured first, at most `REPORT_MAX_BRANCHES` branches in all.
pub fn report_history(
    store: &dyn Store,
    filter: &HistoryFilter,
) -> Result<(Vec<pitwall_schema::Run>, Vec<pitwall_analysis::Series>), StoreError> {
    let runs = store.query_runs(&RunQuery {
        keys: Some(Vec::new()),
        fingerprints: true,
        ..RunQuery::default()
    })?;
    let keys = store.series_keys()?;
    let noise = crate::noise::history_noise(store, &runs)?;
    let mut histories = Vec::new();
    for branch in report_branches(&runs, &filter.branch) {
        let filter = HistoryFilter {
            branch,
            testbed: filter.testbed.clone(),
        };
        histories.extend(pitwall_analysis::history::series_by_key(
            &keys,
            |key| {
                let with_key = store.query_runs(&RunQuery {
                    keys: Some(vec![key.to_string()]),
                    ..RunQuery::default()
                })?;
                Ok(aligned_with(&runs, with_key))
            },
            &filter,
            &DetectConfig::default(),
            &noise,
        )?);
    }
    Ok((runs, histories))
}

/// The newest run of the working tree (role `local`) among `listed` (oldest first), read
/// with its results: the report shows it apart, since no history holds it. `None` when there
/// is none, or when it was deleted since `listed` was read.
pub fn latest_local(
    store: &dyn Store,
    listed: &[pitwall_schema::Run],
) -> Result<Option<pitwall_schema::Run>, StoreError> {
    let Some(run) = listed
        .iter()
        .rev()
        .find(|r| r.role == Some(pitwall_schema::RunRole::Local))
    else {
        return Ok(None);
    };
    match store.get_run(&run.id) {
        Ok(run) => Ok(Some(run)),
        Err(StoreError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `fetched` (a later read of the runs, with some results) in the order of `listed` (the runs
/// read first, which the series' points index): one run per listed run, so a run another
/// process stored between the two reads is left out and the indices stay right. A listed run
/// that is gone from the later read (pruned meanwhile) is kept without results. Each fetched
/// run is moved, not copied.
pub(crate) fn aligned_with(
    listed: &[pitwall_schema::Run],
    fetched: Vec<pitwall_schema::Run>,
) -> Vec<pitwall_schema::Run> {
    let mut by_id: std::collections::HashMap<String, pitwall_schema::Run> =
        fetched.into_iter().map(|r| (r.id.clone(), r)).collect();
    listed
        .iter()
        .map(|r| {
            by_id.remove(&r.id).unwrap_or_else(|| pitwall_schema::Run {
                contention: None,
                results: Vec::new(),
                ..r.clone()
            })
        })
        .collect()
}

/// The branches the report shows histories of: `history_branch`, then the other branches of
/// `history` runs, the one measured last first, `REPORT_MAX_BRANCHES` in all.
fn report_branches(runs: &[pitwall_schema::Run], history_branch: &str) -> Vec<String> {
    let mut out = vec![history_branch.to_string()];
    for run in runs.iter().rev() {
        if out.len() >= pitwall_engine::defaults::REPORT_MAX_BRANCHES {
            break;
        }
        if run.role_or_implied() != pitwall_schema::RunRole::History {
            continue;
        }
        if let Some(b) = &run.branch
            && !out.contains(b)
        {
            out.push(b.clone());
        }
    }
    out
}

/// The stored runs `filter`'s history can hold, each with only its results whose key contains
/// `pattern` (every result when it is empty), each result as its stored history point
/// (`summary`, no samples): one series is read, not every sample of every run. `history::series` over them gives what it gives over all runs, since it keeps exactly
/// these runs and results.
pub fn history_runs(
    store: &dyn Store,
    pattern: &str,
    filter: &HistoryFilter,
) -> Result<Vec<pitwall_schema::Run>, StoreError> {
    let keys = if pattern.is_empty() {
        None
    } else {
        Some(
            store
                .series_keys()?
                .into_iter()
                .filter(|k| k.contains(pattern))
                .collect(),
        )
    };
    runs_with_keys(store, keys, filter)
}

/// One series' runs, as [`history_runs`] reads them, with the results of exactly `key`: what
/// a series page or the API's series reads, without listing every key first or reading the
/// keys that merely contain it.
pub fn series_runs(
    store: &dyn Store,
    key: &str,
    filter: &HistoryFilter,
) -> Result<Vec<pitwall_schema::Run>, StoreError> {
    runs_with_keys(store, Some(vec![key.to_string()]), filter)
}

/// The stored runs `filter`'s history can hold, with the results of `keys` (all: `None`) as
/// their history points.
fn runs_with_keys(
    store: &dyn Store,
    keys: Option<Vec<String>>,
    filter: &HistoryFilter,
) -> Result<Vec<pitwall_schema::Run>, StoreError> {
    store.query_runs(&RunQuery {
        history_branch: Some(filter.branch.clone()),
        testbed: filter.testbed.clone(),
        keys,
        newest: None,
        // The stored history points: a history needs nothing more.
        samples: false,
        fingerprints: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::{
        BenchmarkResult, Direction, Fingerprint, ResultStatus, Run, RunStatus, Unit,
    };

    fn result() -> BenchmarkResult {
        BenchmarkResult {
            suite: "kernel".into(),
            name: "gemm".into(),
            params: Default::default(),
            measure: "time".into(),
            unit: Unit::new(Unit::NANOSECONDS),
            direction: Direction::LowerIsBetter,
            status: ResultStatus::Ok,
            error: None,
            samples: vec![1.0],
            sample_meta: Vec::new(),
            replicates: Vec::new(),
            summary: None,
        }
    }

    fn run(id: &str, results: usize) -> Run {
        Run {
            exclusion: None,
            contention: None,
            id: id.into(),
            project: "p".into(),
            commit: "0".repeat(40),
            branch: Some("main".into()),
            testbed: None,
            role: None,
            started_at: "2026-12-04T00:00:00Z".into(),
            finished_at: "2026-12-04T00:00:01Z".into(),
            config_hash: "c".into(),
            fingerprint: Fingerprint::default(),
            status: RunStatus::Complete,
            commit_info: None,
            error: None,
            pair: None,
            results: (0..results).map(|_| result()).collect(),
        }
    }

    /// The report reads the runs, then each key's runs: a run another process stores (or
    /// prunes) in between must not shift the indices the series' points hold (a concurrent
    /// `pitwall run` panicked writing the report: "the len is 1 but the index is 1").
    #[test]
    fn a_later_read_is_aligned_with_the_runs_read_first() {
        let listed = vec![run("a", 0), run("b", 0), run("c", 0)];
        // `b` was pruned meanwhile, `new` stored; the later read has results and another order.
        let fetched = vec![run("new", 1), run("c", 1), run("a", 1)];
        let aligned = aligned_with(&listed, fetched);
        let ids: Vec<&str> = aligned.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        let results: Vec<usize> = aligned.iter().map(|r| r.results.len()).collect();
        assert_eq!(results, [1, 0, 1]);
    }

    #[test]
    fn csv_and_json_series() {
        assert_eq!(
            parse_series("value\n1\n2.5\n\n3e2\n", "s.csv").unwrap(),
            vec![1.0, 2.5, 300.0]
        );
        assert_eq!(
            parse_series("[1, 2.5, 3]", "s.json").unwrap(),
            vec![1.0, 2.5, 3.0]
        );
        assert_eq!(
            parse_series("\"value\"\n\"4\"\n", "q.csv").unwrap(),
            vec![4.0]
        );
    }

    #[test]
    fn garbage_names_file_and_line() {
        let e = parse_series("value\n1\n2\nabc\n", "s.csv")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "s.csv:4: `abc` is not a finite number");
        let e = parse_series("time\n1\n", "s.csv").unwrap_err().to_string();
        assert!(
            e.starts_with("s.csv:1: expected the header `value`, found `time`"),
            "{e}"
        );
        let e = parse_series("[1,\n2,\n\"x\"]", "s.json")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "s.json:3: element 2 is not a finite number: \"x\"");
        let e = parse_series("[1, 2", "s.json").unwrap_err().to_string();
        assert!(e.starts_with("s.json:1: invalid JSON array"), "{e}");
        let e = parse_series("value\nNaN\n", "s.csv")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "s.csv:2: `NaN` is not a finite number");
        assert!(
            parse_series("", "e.csv")
                .unwrap_err()
                .to_string()
                .contains("empty file")
        );
    }

    /// The report's branches: the history branch, then the others of history runs, newest
    /// first, never a pull request's branch, at most `REPORT_MAX_BRANCHES`.
    #[test]
    fn report_branches_are_the_history_branch_then_the_newest_others() {
        let run = |branch: &str, role: pitwall_schema::RunRole| pitwall_schema::Run {
            exclusion: None,
            contention: None,
            id: "r".into(),
            project: "p".into(),
            commit: "c".into(),
            branch: Some(branch.to_string()),
            testbed: None,
            role: Some(role),
            started_at: "2026-01-01T00:00:00Z".into(),
            finished_at: "2026-01-01T00:00:00Z".into(),
            config_hash: "h".into(),
            fingerprint: pitwall_schema::Fingerprint::default(),
            status: pitwall_schema::RunStatus::Complete,
            commit_info: None,
            error: None,
            pair: None,
            results: Vec::new(),
        };
        use pitwall_schema::RunRole::{History, PrHead};
        let mut runs = vec![run("main", History), run("old", History), run("pr", PrHead)];
        runs.extend((0..10).map(|i| run(&format!("b{i}"), History)));
        let got = report_branches(&runs, "main");
        assert_eq!(got.len(), pitwall_engine::defaults::REPORT_MAX_BRANCHES);
        assert_eq!(got[..3], ["main", "b9", "b8"]);
        assert!(!got.contains(&"pr".to_string()));
        assert_eq!(
            report_branches(&runs[..3], "trunk"),
            ["trunk", "old", "main"]
        );
    }
}
