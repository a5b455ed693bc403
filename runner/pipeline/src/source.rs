//! Where the two sides of a comparison come from: a stored run (id, unique prefix, `latest`,
//! or a commit sha prefix) or a results file (a `pitwall export` of one run, or pitwall JSON
//! benchmark output).

use std::path::Path;

use pitwall_formats::{self as formats, Input, InputFormat, ParsedRun};
use pitwall_schema::{BenchmarkResult, ExportDoc, Run};

use pitwall_store::{Store, StoreError};

pub use pitwall_analysis::compare::{FILE_SUITE, Side};

/// Why a source could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{spec}: cannot read file: {source}")]
    Read {
        spec: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{spec}: cannot read results: {detail}")]
    Format { spec: String, detail: String },
    #[error(
        "{spec}: the file holds {count} runs; compare one run (hint: pitwall export RUN -o FILE)"
    )]
    ManyRuns { spec: String, count: usize },
    #[error("`{spec}` is neither a file, a stored run nor a stored commit ({detail})")]
    NotFound { spec: String, detail: String },
    #[error(
        "no interleaved base/head pair{} in {store} (hint: `pitwall run --base REV --head REV` stores one)",
        matching(.spec)
    )]
    NoPair { spec: String, store: String },
    #[error(
        "{spec}: run {id} was pruned (`pitwall prune --keep-summaries` replaced its raw samples with summaries) and a comparison needs raw samples (hint: compare newer runs)"
    )]
    Pruned { spec: String, id: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Refuses a run whose samples were pruned: its summaries place it in a history, but a
/// comparison of them would be a comparison of nothing.
fn unpruned(spec: &str, run: Run) -> Result<Run, SourceError> {
    if run.results.iter().any(|r| r.is_pruned()) {
        return Err(SourceError::Pruned {
            spec: spec.to_string(),
            id: run.id,
        });
    }
    Ok(run)
}

/// ` matching `ID`` for a pair id prefix; nothing for `latest`.
fn matching(spec: &str) -> String {
    if spec == "latest" {
        String::new()
    } else {
        format!(" matching `{spec}`")
    }
}

/// Whether `resolve` reads `spec` as a file (or criterion directory) rather than looking it up
/// in the store.
pub fn names_a_file(spec: &str) -> bool {
    let path = Path::new(spec);
    path.is_file() || path.is_dir()
}

/// Resolves a source: an existing file (or criterion directory) first, then a run in the
/// store, then a commit. `format` names a file's format when it cannot be detected.
pub fn resolve(
    spec: &str,
    store: &dyn Store,
    format: Option<InputFormat>,
) -> Result<Side, SourceError> {
    if names_a_file(spec) {
        return read_file(spec, Path::new(spec), format);
    }
    match store.get_run(spec) {
        Ok(run) => {
            let run = unpruned(spec, run)?;
            let label = format!("run {}", run.id);
            return Ok(Side {
                label,
                results: run.results.clone(),
                run: Some(run),
            });
        }
        Err(StoreError::NotFound { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let hexish = spec.len() >= 4 && spec.chars().all(|c| c.is_ascii_hexdigit());
    if hexish {
        let runs = store.list_runs(None)?;
        let prefix = spec.to_ascii_lowercase();
        let of_commit: Vec<_> = runs
            .iter()
            .filter(|r| r.commit.starts_with(&prefix))
            .collect();
        // Newest first: the latest run of that commit that has results (a failed build leaves
        // a run without any, which would hide an earlier good one).
        let chosen = of_commit
            .iter()
            .find(|r| r.results > 0)
            .or_else(|| of_commit.first());
        if let Some(summary) = chosen {
            let run = unpruned(spec, store.get_run(&summary.id)?)?;
            let label = format!("commit {} (run {})", short(&run.commit), run.id);
            return Ok(Side {
                label,
                results: run.results.clone(),
                run: Some(run),
            });
        }
    }
    Err(SourceError::NotFound {
        spec: spec.to_string(),
        detail: format!("looked in {}", store.describe()),
    })
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// Reads a results file: an export of one run, or any benchmark output format pitwall reads
/// (named, or detected when unambiguous); a directory is read as criterion's `target/criterion`.
pub fn read_file(
    spec: &str,
    path: &Path,
    format: Option<InputFormat>,
) -> Result<Side, SourceError> {
    let parsed = read_results(spec, path, format)?;
    match parsed {
        FileResults::Runs(runs) if runs.len() != 1 => Err(SourceError::ManyRuns {
            spec: spec.to_string(),
            count: runs.len(),
        }),
        FileResults::Runs(mut runs) => {
            let run = unpruned(spec, runs.remove(0))?;
            Ok(Side {
                label: format!("file {spec} (run {})", run.id),
                results: run.results.clone(),
                run: Some(run),
            })
        }
        FileResults::Parsed(format, parsed) => Ok(Side {
            label: format!("file {spec} ({})", format.name()),
            run: None,
            results: to_results(FILE_SUITE, parsed),
        }),
    }
}

/// What a results file holds.
#[derive(Debug)]
pub enum FileResults {
    /// A `pitwall export` (validated runs).
    Runs(Vec<Run>),
    /// Another tool's output, read in this format.
    Parsed(InputFormat, ParsedRun),
}

/// Reads a results file or directory without storing anything.
pub fn read_results(
    spec: &str,
    path: &Path,
    format: Option<InputFormat>,
) -> Result<FileResults, SourceError> {
    let bad = |detail: String| SourceError::Format {
        spec: spec.to_string(),
        detail,
    };
    if path.is_dir() {
        let format = format.unwrap_or(InputFormat::Criterion);
        return formats::parse(format, Input::Dir(path))
            .map(|p| FileResults::Parsed(format, p))
            .map_err(|e| bad(e.to_string()));
    }
    let text =
        pitwall_engine::files::read_capped(path, pitwall_engine::defaults::RESULTS_FILE_MAX_BYTES)
            .map_err(|source| SourceError::Read {
                spec: spec.to_string(),
                source,
            })?;
    // An export (even a damaged one, so its error names the line) is recognised by its keys.
    // The tool formats drop a leading byte order mark themselves (formats::parse, detect).
    let body = formats::strip_bom(&text);
    if format.is_none()
        && body.contains("\"runs\"")
        && body.contains(
            pitwall_schema::SCHEMA_V1
                .split('/')
                .next()
                .unwrap_or("pitwall"),
        )
    {
        let is_export = serde_json::from_str::<serde_json::Value>(body)
            .map_or(true, |v| v.get("runs").is_some());
        if is_export {
            let doc = ExportDoc::from_json(body)
                .map_err(|e| bad(format!("not a valid pitwall export: {e}")))?;
            return Ok(FileResults::Runs(doc.runs));
        }
    }
    let format = match format.or_else(|| formats::detect(&text)) {
        Some(f) => f,
        None => {
            return Err(bad(format!(
                "format not recognised (hint: name it with --input-format, one of {})",
                InputFormat::names()
            )));
        }
    };
    // Files the output names beside itself (nvbench's `--jsonbin` samples).
    let beside = formats::DirFiles::beside(path);
    formats::parse(format, Input::TextBeside(&text, &beside))
        .map(|p| FileResults::Parsed(format, p))
        .map_err(|e| bad(e.to_string()))
}

/// Benchmark results for parsed tool output, under `suite`. [`formats::parse`] has already
/// merged entries of the same benchmark (`formats::merge_duplicates`), so each key is once here.
pub fn to_results(suite: &str, parsed: ParsedRun) -> Vec<BenchmarkResult> {
    parsed
        .benchmarks
        .into_iter()
        .map(|p| p.into_result(suite))
        .collect()
}

/// The base and head runs of an interleaved measurement: a pair id (or unique prefix) or
/// `latest`.
pub fn resolve_pair(spec: &str, store: &dyn Store) -> Result<(Side, Side), SourceError> {
    let runs = store.list_runs(None)?;
    let pair_id = if spec == "latest" {
        runs.iter().find_map(|r| r.pair_id.clone())
    } else {
        let ids: std::collections::BTreeSet<&String> = runs
            .iter()
            .filter_map(|r| r.pair_id.as_ref())
            .filter(|p| p.starts_with(spec))
            .collect();
        (ids.len() == 1).then(|| ids.into_iter().next().expect("one").clone())
    };
    let not_found = || SourceError::NoPair {
        spec: spec.to_string(),
        store: store.describe(),
    };
    let pair_id = pair_id.ok_or_else(not_found)?;
    let mut base = None;
    let mut head = None;
    for summary in runs
        .iter()
        .filter(|r| r.pair_id.as_deref() == Some(pair_id.as_str()))
    {
        let run = unpruned(spec, store.get_run(&summary.id)?)?;
        let role = run.pair.as_ref().map(|p| p.role);
        let label = format!(
            "{} {} (run {})",
            if role == Some(pitwall_schema::PairRole::Base) {
                "base"
            } else {
                "head"
            },
            short(&run.commit),
            run.id
        );
        let side = Side {
            label,
            results: run.results.clone(),
            run: Some(run),
        };
        match role {
            Some(pitwall_schema::PairRole::Base) => base = Some(side),
            _ => head = Some(side),
        }
    }
    match (base, head) {
        (Some(b), Some(h)) => Ok((b, h)),
        _ => Err(not_found()),
    }
}
