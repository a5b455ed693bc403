//! Output formats of a finished run (`pitwall run --format`, `pitwall show --format`): a
//! summary table for people and a stable JSON document for machines.

use pitwall_analysis::order::{BenchRef, bench_cmp};
use pitwall_analysis::precision::{self, Precision};
use pitwall_schema::schema::display_name;
use pitwall_schema::{BenchmarkResult, ResultStatus, Run};
use pitwall_stats::Summary;
use serde::Serialize;

use crate::table::Table;
use pitwall_analysis::number::{DisplayUnit, pct};

/// The formats a run can be shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Table,
    Json,
}

/// Renders a run in one format.
pub trait Exporter {
    /// `skipped` lists suites that could not run here, one line each.
    fn render(&self, run: &Run, skipped: &[String]) -> String;
}

/// The exporter for a format.
pub fn exporter_for(format: OutputFormat) -> Box<dyn Exporter> {
    match format {
        OutputFormat::Table => Box::new(TableExporter),
        OutputFormat::Json => Box::new(JsonExporter),
    }
}

/// Human summary: one line per benchmark measure with median, interval and tail.
#[derive(Debug, Default, Clone, Copy)]
pub struct TableExporter;

impl Exporter for TableExporter {
    fn render(&self, run: &Run, skipped: &[String]) -> String {
        let mut rows = ResultRows::default();
        for r in listed(&run.results) {
            rows.add(r, precision::of_result(run, r));
        }
        let esc = crate::table::escape_controls;
        let mut out = run_header(run);
        if !rows.table.is_empty() {
            out.push('\n');
            out.push_str(&rows.table.render());
        }
        for line in skipped {
            out.push_str(&format!("\nskipped: {}", esc(line)));
        }
        if !skipped.is_empty() {
            out.push('\n');
        }
        for (title, lines) in [
            ("failures", rows.errors),
            ("skipped by the tool", rows.skips),
            ("noisy (the interval missed its target_ci_pct)", rows.noisy),
        ] {
            if !lines.is_empty() {
                out.push_str(&format!("\n{title}:\n"));
                for e in lines {
                    out.push_str(&format!("  {}\n", esc(&e)));
                }
            }
        }
        out
    }
}

/// The run's first line (id, project, commit, status) and its error, each line escaped.
fn run_header(run: &Run) -> String {
    let esc = crate::table::escape_controls;
    let mut out = format!(
        "run {}  project {}  commit {}  status {}\n",
        esc(&run.id),
        esc(&run.project),
        esc(&run.commit),
        run.status.as_str()
    );
    if let Some(error) = &run.error {
        let mut lines = error.lines();
        out.push_str(&format!(
            "error: {}\n",
            esc(lines.next().unwrap_or_default())
        ));
        for line in lines {
            out.push_str(&format!("  | {}\n", esc(line)));
        }
    }
    out
}

/// The table of a run's results and the lines below it: one per failed or implausible
/// benchmark, one per benchmark the tool skipped (a failure covers all of a benchmark's
/// measures, so each is listed once).
struct ResultRows {
    table: Table,
    errors: Vec<String>,
    skips: Vec<String>,
    /// One line per `noisy` result: what it reached against its target.
    noisy: Vec<String>,
}

impl Default for ResultRows {
    fn default() -> Self {
        ResultRows {
            table: Table::new(&[
                "SUITE",
                "BENCHMARK",
                "MEASURE",
                ">N",
                ">MEDIAN",
                ">±CI",
                ">P99",
                "UNIT",
                "STATUS",
            ]),
            errors: Vec::new(),
            skips: Vec::new(),
            noisy: Vec::new(),
        }
    }
}

impl ResultRows {
    fn add(&mut self, r: &BenchmarkResult, precision: Option<Precision>) {
        let noisy = precision.filter(Precision::noisy);
        let bench = display_name(&r.name, &r.params);
        match (r.status, Summary::of(&r.samples)) {
            // An implausible result keeps its numbers, marked, with its reason below.
            (status @ (ResultStatus::Ok | ResultStatus::Implausible), Some(s)) => {
                let unit = DisplayUnit::for_value(r.unit.as_str(), s.median);
                self.table.row(vec![
                    r.suite.clone(),
                    bench.clone(),
                    r.measure.clone(),
                    s.n.to_string(),
                    unit.num(s.median),
                    s.ci_rel_half_width().map_or_else(|| "-".to_string(), pct),
                    unit.num(s.p99),
                    unit.name().to_string(),
                    match (status, noisy) {
                        (ResultStatus::Ok, None) => "ok",
                        (ResultStatus::Ok, Some(_)) => "noisy",
                        _ => "IMPLAUSIBLE",
                    }
                    .to_string(),
                ]);
                if let Some(p) = noisy {
                    let line = format!("{}/{bench}/{}: {}", r.suite, r.measure, p.describe());
                    self.noisy.push(line);
                }
                if status == ResultStatus::Implausible {
                    let line = format!(
                        "{}/{bench}: {}",
                        r.suite,
                        r.error.as_deref().unwrap_or("implausible")
                    );
                    push_once(&mut self.errors, line);
                }
            }
            _ => {
                self.table.row(vec![
                    r.suite.clone(),
                    bench.clone(),
                    r.measure.clone(),
                    r.samples.len().to_string(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    r.unit.to_string(),
                    if r.status == ResultStatus::Skipped {
                        "skipped"
                    } else {
                        "FAILED"
                    }
                    .into(),
                ]);
                let (list, default) = if r.status == ResultStatus::Skipped {
                    (&mut self.skips, "skipped")
                } else {
                    (&mut self.errors, "failed")
                };
                let line = format!(
                    "{}/{bench}: {}",
                    r.suite,
                    r.error.as_deref().unwrap_or(default)
                );
                push_once(list, line);
            }
        }
    }
}

fn push_once(list: &mut Vec<String>, line: String) {
    if !list.contains(&line) {
        list.push(line);
    }
}

/// A run's results in the order the table lists them: suites as they ran, and inside a suite
/// benchmarks with numbers as numbers (`bytes=2097152` before `bytes=16777216`, as a tool that
/// lists its results by file name would not); the measures of one benchmark as they ran.
fn listed(results: &[BenchmarkResult]) -> Vec<&BenchmarkResult> {
    let mut suites: Vec<&str> = Vec::new();
    for r in results {
        if !suites.contains(&r.suite.as_str()) {
            suites.push(&r.suite);
        }
    }
    let suite_pos = |r: &BenchmarkResult| suites.iter().position(|s| *s == r.suite);
    // The measure is left out of the comparison: a stable sort keeps measures as they ran.
    fn bench(r: &BenchmarkResult) -> BenchRef<'_> {
        BenchRef {
            suite: "",
            name: &r.name,
            params: &r.params,
            measure: "",
        }
    }
    let mut v: Vec<&BenchmarkResult> = results.iter().collect();
    v.sort_by(|a, b| {
        suite_pos(a)
            .cmp(&suite_pos(b))
            .then_with(|| bench_cmp(bench(a), bench(b)))
    });
    v
}

/// Machine summary: `{"run": {…}, "benchmarks": [{…, "median": …, "ci": [lo, hi]}], "skipped": […]}`.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsonExporter;

#[derive(Serialize)]
struct JsonRun<'a> {
    schema: &'static str,
    run: RunHead<'a>,
    benchmarks: Vec<JsonBench<'a>>,
    skipped: &'a [String],
}

#[derive(Serialize)]
struct RunHead<'a> {
    id: &'a str,
    project: &'a str,
    commit: &'a str,
    branch: Option<&'a str>,
    started_at: &'a str,
    finished_at: &'a str,
    status: &'static str,
    config_hash: &'a str,
    /// Why the run has no results (a failed build's log tail), when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    /// Set when a person took the run out of history (`pitwall runs exclude`).
    #[serde(skip_serializing_if = "Option::is_none")]
    exclusion: Option<&'a pitwall_schema::Exclusion>,
}

#[derive(Serialize)]
struct JsonBench<'a> {
    suite: &'a str,
    name: &'a str,
    params: &'a std::collections::BTreeMap<String, String>,
    measure: &'a str,
    unit: &'a str,
    direction: &'static str,
    status: &'static str,
    error: Option<&'a str>,
    n: usize,
    median: Option<f64>,
    ci: Option<[f64; 2]>,
    mean: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    p90: Option<f64>,
    p99: Option<f64>,
    p999: Option<f64>,
    /// The interval's relative half-width against the suite's target, when the run recorded
    /// one; `noisy` when the interval is wider.
    #[serde(skip_serializing_if = "Option::is_none")]
    precision: Option<JsonPrecision>,
}

#[derive(Serialize)]
struct JsonPrecision {
    #[serde(flatten)]
    precision: Precision,
    noisy: bool,
}

impl Exporter for JsonExporter {
    fn render(&self, run: &Run, skipped: &[String]) -> String {
        let benchmarks = run
            .results
            .iter()
            .map(|r| {
                let s = Summary::of(&r.samples);
                JsonBench {
                    suite: &r.suite,
                    name: &r.name,
                    params: &r.params,
                    measure: &r.measure,
                    unit: r.unit.as_str(),
                    direction: r.direction.as_str(),
                    status: r.status.as_str(),
                    error: r.error.as_deref(),
                    n: r.samples.len(),
                    median: s.map(|s| s.median),
                    ci: s.and_then(|s| s.median_ci).map(|(lo, hi)| [lo, hi]),
                    mean: s.map(|s| s.mean),
                    min: s.map(|s| s.min),
                    max: s.map(|s| s.max),
                    p90: s.map(|s| s.p90),
                    p99: s.map(|s| s.p99),
                    p999: s.map(|s| s.p999),
                    precision: precision::of_result(run, r).map(|precision| JsonPrecision {
                        noisy: precision.noisy(),
                        precision,
                    }),
                }
            })
            .collect();
        let doc = JsonRun {
            schema: pitwall_schema::SCHEMA_V1,
            run: RunHead {
                id: &run.id,
                project: &run.project,
                commit: &run.commit,
                branch: run.branch.as_deref(),
                started_at: &run.started_at,
                finished_at: &run.finished_at,
                status: run.status.as_str(),
                config_hash: &run.config_hash,
                error: run.error.as_deref(),
                exclusion: run.exclusion.as_ref(),
            },
            benchmarks,
            skipped,
        };
        let mut s = serde_json::to_string_pretty(&doc).expect("summary always serializes");
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests;
