//! `pitwall runs`, `show`, `export` and `import`: the stored runs, listed, printed, written
//! out as versioned JSON, or read in from export files and other tools' results.

use std::path::PathBuf;

use anyhow::{Context, anyhow};
use pitwall_formats::InputFormat;
use pitwall_pipeline::config::Config;
use pitwall_pipeline::source;
use pitwall_reports::{Table, exporter_for};
use pitwall_schema::ExportDoc;
use pitwall_store::{InsertOutcome, OpenMode, Store};

use super::args::{ExportArgs, Format, Global, ImportArgs, RunsArgs, ShowArgs};
use super::context::{format, load_config, open_store, write_atomically};
use super::exit::{ExitClass, Failure};

pub(super) fn cmd_runs(g: &Global, a: &RunsArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let runs = store
        .list_runs(a.limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
        .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
    match a.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&runs).expect("summaries serialize");
            s.push('\n');
            print!("{s}");
        }
        Format::Table => {
            let mut t = Table::new(&[
                "RUN", "STARTED", "PROJECT", "COMMIT", "STATUS", ">RESULTS", ">FAILED",
            ]);
            for r in &runs {
                let commit = if r.commit.len() == 40 {
                    r.commit[..12].to_string()
                } else {
                    r.commit.clone()
                };
                t.row(vec![
                    r.id.clone(),
                    r.started_at.clone(),
                    r.project.clone(),
                    commit,
                    r.status.as_str().to_string(),
                    r.results.to_string(),
                    r.failed_results.to_string(),
                ]);
            }
            if t.is_empty() {
                eprintln!("no runs in {}", store.describe());
            } else {
                print!("{}", t.render());
            }
        }
    }
    Ok(ExitClass::Ok)
}

pub(super) fn cmd_show(g: &Global, a: &ShowArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let run = store
        .get_run(&a.run)
        .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
    print!("{}", exporter_for(format(a.format)).render(&run, &[]));
    Ok(ExitClass::Ok)
}

pub(super) fn cmd_export(g: &Global, a: &ExportArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let runs = if a.runs.is_empty() {
        store
            .all_runs()
            .map_err(|e| Failure::from(anyhow::Error::new(e)))?
    } else {
        a.runs
            .iter()
            .map(|id| store.get_run(id))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Failure::from(anyhow::Error::new(e)))?
    };
    let text = ExportDoc::new(runs).to_json();
    match &a.out {
        None => print!("{text}"),
        Some(path) => write_atomically(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(Failure::infra)?,
    }
    Ok(ExitClass::Ok)
}

pub(super) fn cmd_import(g: &Global, a: &ImportArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    // Read and validate every file before storing anything.
    let mut docs = Vec::new();
    for path in &a.files {
        let spec = path.display().to_string();
        let runs = match source::read_results(&spec, path, a.input_format)
            .map_err(|e| Failure::usage(e.into()))?
        {
            source::FileResults::Runs(runs) => runs,
            source::FileResults::Parsed(format, parsed) => {
                vec![imported_run(&config, a, &spec, format, parsed)]
            }
        };
        docs.push((path, runs));
    }
    let mut store = open_store(g, &config, OpenMode::Create)?;
    check_import(&docs, store.as_ref())?;
    let (mut inserted, mut already) = (0, 0);
    for (path, runs) in docs {
        for run in &runs {
            match store
                .insert_run(run)
                .with_context(|| format!("{}: cannot import run {}", path.display(), run.id))
                .map_err(Failure::from)?
            {
                InsertOutcome::Inserted => inserted += 1,
                InsertOutcome::AlreadyStored => already += 1,
            }
        }
    }
    if !g.quiet {
        eprintln!(
            "imported {inserted} run(s), {already} already stored, into {}",
            store.describe()
        );
    }
    Ok(ExitClass::Ok)
}

/// Everything that would make an import fail part-way, checked before anything is stored: an
/// invalid run, one id twice in the input with different content, or an id already stored
/// with different content. (A run identical to a stored one is fine: imports are idempotent.)
fn check_import(
    docs: &[(&PathBuf, Vec<pitwall_schema::Run>)],
    store: &dyn Store,
) -> Result<(), Failure> {
    let mut seen: std::collections::HashMap<&str, (&PathBuf, String)> = Default::default();
    for (path, runs) in docs {
        for run in runs {
            let at = |what: String| {
                Failure::usage(anyhow!("{}: run {}: {what}", path.display(), run.id))
            };
            run.validate()
                .map_err(|e| Failure::usage(anyhow!("{}: {e}", path.display())))?;
            let text = serde_json::to_string(run).expect("runs serialize");
            if let Some((first, other)) = seen.get(run.id.as_str()) {
                if *other != text {
                    return Err(at(format!(
                        "appears again with different content (first in {}); nothing was imported",
                        first.display()
                    )));
                }
                continue;
            }
            // `get_run` also resolves prefixes: only a run with exactly this id counts.
            if let Ok(stored) = store.get_run(&run.id) {
                if stored.id == run.id
                    && serde_json::to_string(&stored).expect("runs serialize") != text
                {
                    return Err(at(format!(
                        "already stored in {} with different content; nothing was imported",
                        store.describe()
                    )));
                }
            }
            seen.insert(run.id.as_str(), (path, text));
        }
    }
    Ok(())
}

/// A run for another tool's results: measured elsewhere, so the fingerprint holds only what
/// the tool said about its machine.
pub(super) fn imported_run(
    config: &Config,
    a: &ImportArgs,
    spec: &str,
    format: InputFormat,
    parsed: pitwall_formats::ParsedRun,
) -> pitwall_schema::Run {
    let now = pitwall_pipeline::run::now_rfc3339();
    let mut fingerprint = pitwall_schema::Fingerprint::default();
    fingerprint.extra.insert(
        "imported_from".into(),
        serde_json::json!({ "file": spec, "format": format.name() }),
    );
    if !parsed.context.is_empty() {
        fingerprint.extra.insert(
            "tool_context".into(),
            serde_json::json!({ format.name(): parsed.context }),
        );
    }
    if !parsed.notes.is_empty() {
        fingerprint
            .extra
            .insert("format_notes".into(), serde_json::json!(parsed.notes));
    }
    let suite = a.suite.clone().unwrap_or_else(|| format.name().to_string());
    let results = source::to_results(&suite, parsed);
    pitwall_schema::Run {
        id: uuid::Uuid::now_v7().to_string(),
        project: config.project.name.clone(),
        commit: a
            .commit
            .clone()
            .unwrap_or_else(|| pitwall_schema::WORKING_TREE.to_string()),
        branch: None,
        started_at: now.clone(),
        finished_at: now,
        config_hash: config.hash(),
        fingerprint,
        status: pitwall_schema::RunStatus::from_results(&results),
        commit_info: None,
        error: None,
        pair: None,
        results,
    }
}
