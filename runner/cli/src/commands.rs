//! What each subcommand does: resolve config and store, call the library, print, and pick the
//! exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, anyhow};
use clap::Parser;
use pitwall_formats::InputFormat;
use pitwall_pipeline::config::{self, Config};
use pitwall_pipeline::source;
use pitwall_reports::{OutputFormat, Table, exporter_for};
use pitwall_schema::ExportDoc;
use pitwall_store::{self as store, InsertOutcome, OpenMode, Store, StoreUrl};

use super::analyze_cmd::{cmd_compare, cmd_detect, cmd_env};
use super::args::{Cli, Cmd, ExportArgs, Format, Global, ImportArgs, RunsArgs, ShowArgs};
use super::exit::{self, Failure};
use super::publish_cmd::{cmd_ci, cmd_comment, cmd_report};
use super::run_cmd::cmd_run;

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let result = match &cli.command {
        Cmd::Run(a) => cmd_run(&cli.global, a),
        Cmd::Runs(a) => cmd_runs(&cli.global, a),
        Cmd::Show(a) => cmd_show(&cli.global, a),
        Cmd::Export(a) => cmd_export(&cli.global, a),
        Cmd::Import(a) => cmd_import(&cli.global, a),
        Cmd::Compare(a) => cmd_compare(&cli.global, a),
        Cmd::Detect(a) => cmd_detect(&cli.global, a),
        Cmd::Env(a) => cmd_env(&cli.global, a),
        Cmd::Report(a) => cmd_report(&cli.global, a),
        Cmd::Comment(a) => cmd_comment(&cli.global, a),
        Cmd::Ci(a) => cmd_ci(&cli.global, a),
        Cmd::Bisect(a) => super::bisect_cmd::cmd_bisect(&cli.global, a),
        Cmd::Worker => super::run_cmd::cmd_worker(),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => exit::report(f),
    }
}

pub(super) fn format(f: Format) -> OutputFormat {
    match f {
        Format::Table => OutputFormat::Table,
        Format::Json => OutputFormat::Json,
    }
}

/// `--config FILE`, else `./pitwall.toml`, else the built-in default.
pub(super) fn load_config(g: &Global) -> Result<Config, Failure> {
    let cwd = std::env::current_dir()
        .context("cannot read the working directory")
        .map_err(Failure::infra)?;
    let project = cwd.file_name().map_or_else(
        || "pitwall".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let path = match &g.config {
        Some(p) => Some(p.clone()),
        None => config::find_default(&cwd),
    };
    match path {
        Some(p) => config::load_file(&p, &project).map_err(|e| Failure::usage(e.into())),
        None => Ok(Config::builtin_default(&project)),
    }
}

/// `--store`, else `PITWALL_STORE` (empty counts as unset), else `[store] url`, else the
/// default SQLite file. Commands that store runs open it with `OpenMode::Create`; commands
/// that only read with `OpenMode::Existing`, so they never create a store.
pub(super) fn open_store(
    g: &Global,
    config: &Config,
    mode: OpenMode,
) -> Result<Box<dyn Store>, Failure> {
    let env = std::env::var("PITWALL_STORE")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let url = match (&g.store, env, &config.store_url) {
        (Some(s), _, _) => StoreUrl::parse(s)
            .context("--store")
            .map_err(Failure::usage)?,
        (None, Some(s), _) => StoreUrl::parse(&s)
            .context("PITWALL_STORE")
            .map_err(Failure::usage)?,
        (None, None, Some(s)) => {
            let file = config
                .source
                .as_deref()
                .map_or("config".into(), |p: &Path| p.display().to_string());
            StoreUrl::parse(s)
                .with_context(|| format!("{file}: [store] url"))
                .map_err(Failure::usage)?
        }
        (None, None, None) => {
            // pitwall's own directory ignores itself, so it never shows in `git status`.
            let dir = Path::new(".pitwall");
            if mode == OpenMode::Create
                && std::fs::create_dir_all(dir).is_ok()
                && !dir.join(".gitignore").exists()
            {
                let _ = std::fs::write(dir.join(".gitignore"), "*\n");
            }
            StoreUrl::default_sqlite()
        }
    };
    store::open(&url, mode).map_err(|e| Failure::from(anyhow::Error::new(e)))
}

pub(super) fn cmd_runs(g: &Global, a: &RunsArgs) -> Result<u8, Failure> {
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
    Ok(exit::OK)
}

pub(super) fn cmd_show(g: &Global, a: &ShowArgs) -> Result<u8, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let run = store
        .get_run(&a.run)
        .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
    print!("{}", exporter_for(format(a.format)).render(&run, &[]));
    Ok(exit::OK)
}

pub(super) fn cmd_export(g: &Global, a: &ExportArgs) -> Result<u8, Failure> {
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
    Ok(exit::OK)
}

/// Writes through a temporary file and a rename, so a reader never sees half a file.
pub(super) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp: PathBuf = path.with_extension("pitwall-tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

pub(super) fn cmd_import(g: &Global, a: &ImportArgs) -> Result<u8, Failure> {
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
    Ok(exit::OK)
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
