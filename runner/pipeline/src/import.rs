//! `pitwall import`: export files and other tools' results read in, checked as a whole, then
//! stored. Reading happens when the request is built, so a bad file is reported before any
//! store is opened; [`import`] stores all or nothing of what was read.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use pitwall_formats::{InputFormat, ParsedRun};
use pitwall_schema::sections::{FormatNotes, ImportedFrom, ToolContext};
use pitwall_schema::{
    Alert, CommitInfo, Fingerprint, Run, RunStatus, WORKING_TREE, sanitize_testbed,
};

use crate::alerts::AlertSettings;
use crate::git::Repo;
use crate::labels::{Labels, first_parent_rule, keep_out_of_history};
use crate::source::{self, FileResults, SourceError};
use pitwall_engine::config::Config;
use pitwall_engine::defaults;
use pitwall_store::{InsertOutcome, Store, StoreError};

/// Why an import failed; nothing was stored unless the variant is `Store`.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read or parsed.
    #[error(transparent)]
    Read(#[from] SourceError),
    /// A run in a file is not valid.
    #[error("{}: {detail}", .path.display())]
    Invalid { path: PathBuf, detail: String },
    /// A run conflicts with another in the input or with a stored one.
    #[error("{}: run {id}: {detail}", .path.display())]
    Conflict {
        path: PathBuf,
        id: String,
        detail: String,
    },
    /// Storing failed; `run` says which file and run (`FILE: cannot import run ID`).
    #[error("{run}")]
    Store {
        run: String,
        #[source]
        source: StoreError,
    },
}

/// How to read other tools' results.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// `--input-format`; detected per file when unset.
    pub format: Option<InputFormat>,
    /// Suite name for tool results (the format's name when unset).
    pub suite: Option<String>,
    /// Commit the tool results belong to (the working tree when unset).
    pub commit: Option<String>,
    /// The checkout whose git history places `commit` (`pitwall import` runs in it, as
    /// `run --commit` does): its first-parent position, date and subject are recorded with the
    /// runs, and a history run of a commit off its branch's first-parent chain is stored as
    /// `local`. `None`, or no repository there: the runs keep date order.
    pub repo: Option<PathBuf>,
    /// Branch, testbed and role of the runs (`--branch`, `--testbed`, `--role`): other tools'
    /// results get them; exported runs keep what they record and get them only where not.
    pub labels: Labels,
}

/// The runs read from each file, in order, ready to store.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    pub files: Vec<(PathBuf, Vec<Run>)>,
    /// What the readers left out or doubt (`FILE: nccl-tests: 2 rows with an impossible size
    /// … left out`), one line each, for the user; also kept in the run's format notes.
    pub warnings: Vec<String>,
    /// How stored history runs re-detect their series' alerts.
    pub alerts: AlertSettings,
}

impl ImportRequest {
    /// Reads every file (without storing anything); tool results become one run each.
    pub fn read(
        config: &Config,
        files: &[PathBuf],
        options: &ImportOptions,
    ) -> Result<ImportRequest, ImportError> {
        let mut read = Vec::new();
        let mut warnings = Vec::new();
        let (repo, commit_info) = place_commit(options, &mut warnings);
        // Every file's runs share the commit and the labels, so the first-parent rule is
        // judged (and warned about) once: whether it made the run `local`.
        let mut off_chain: Option<bool> = None;
        for path in files {
            let spec = path.display().to_string();
            let runs = match source::read_results(&spec, path, options.format)? {
                FileResults::Runs(mut runs) => {
                    runs.iter_mut()
                        .for_each(|r| options.labels.apply_exported(r));
                    runs
                }
                FileResults::Parsed(format, parsed) => {
                    warnings.extend(
                        parsed
                            .warnings
                            .iter()
                            .map(|w| format!("{spec}: {}: {w}", format.name())),
                    );
                    let mut run = imported_run(config, options, &spec, format, parsed);
                    run.commit_info = commit_info.clone();
                    match (off_chain, &repo) {
                        (Some(true), _) => keep_out_of_history(&mut run),
                        (None, Some(repo)) => {
                            let warning = first_parent_rule(&mut run, repo, &config.history_branch);
                            off_chain = Some(warning.is_some());
                            warnings.extend(warning);
                        }
                        _ => {}
                    }
                    vec![run]
                }
            };
            read.push((path.clone(), runs));
        }
        Ok(ImportRequest {
            files: read,
            warnings,
            alerts: AlertSettings::of(config),
        })
    }
}

/// How many runs were stored, and how many were already there (imports are idempotent), and
/// the alerts the new history runs raised.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportOutcome {
    pub inserted: usize,
    pub already: usize,
    /// Alerts stored for the first time by re-detecting the series the new runs touched.
    pub new_alerts: Vec<Alert>,
}

/// Checks everything read, then stores it; then re-detects the alerts of the history series
/// the newly stored runs touched, once for the whole import.
pub fn import(req: &ImportRequest, store: &mut dyn Store) -> Result<ImportOutcome, ImportError> {
    check(req, store)?;
    let mut outcome = ImportOutcome::default();
    let mut stored: Vec<Run> = Vec::new();
    for (path, runs) in &req.files {
        for chunk in runs.chunks(defaults::IMPORT_BATCH_RUNS) {
            // One transaction per chunk (one request over a server); when it fails, run by
            // run, so the error names the run.
            let outcomes = match store.insert_runs(chunk) {
                Ok(o) => o,
                Err(_) if chunk.len() > 1 => one_by_one(store, path, chunk)?,
                Err(source) => {
                    return Err(ImportError::Store {
                        run: format!("{}: cannot import run {}", path.display(), chunk[0].id),
                        source,
                    });
                }
            };
            for (run, o) in chunk.iter().zip(outcomes) {
                match o {
                    InsertOutcome::Inserted => {
                        outcome.inserted += 1;
                        stored.push(run.clone());
                    }
                    InsertOutcome::AlreadyStored => outcome.already += 1,
                }
            }
        }
    }
    let refreshed = crate::alerts::refresh(
        store,
        &stored,
        &req.alerts,
        &pitwall_schema::time::now_rfc3339(),
    )
    .map_err(|source| ImportError::Store {
        run: "cannot update alerts after the import".into(),
        source,
    })?;
    outcome.new_alerts = refreshed.new;
    Ok(outcome)
}

/// `runs` stored one at a time: their outcomes, or the first error, naming its run.
fn one_by_one(
    store: &mut dyn Store,
    path: &std::path::Path,
    runs: &[Run],
) -> Result<Vec<InsertOutcome>, ImportError> {
    runs.iter()
        .map(|run| {
            store.insert_run(run).map_err(|source| ImportError::Store {
                run: format!("{}: cannot import run {}", path.display(), run.id),
                source,
            })
        })
        .collect()
}

/// Everything that would make an import fail part-way, checked before anything is stored: an
/// invalid run, one id twice in the input with different content, or an id already stored
/// with different content. (A run identical to a stored one is fine: imports are idempotent.)
/// Every run passes `Run::validate`, the check every stored run passes, fresh ones included
/// (testbeds in their written form among them); and no testbed may be another name of a
/// stored testbed's series (`H200 Node` stored by an older pitwall, `h200-node` imported).
fn check(req: &ImportRequest, store: &dyn Store) -> Result<(), ImportError> {
    let mut seen: HashMap<&str, (&PathBuf, String)> = HashMap::new();
    let stored_testbeds: BTreeSet<String> = store
        .list_runs(None)
        .map_err(|source| ImportError::Store {
            run: "cannot read the stored testbeds".into(),
            source,
        })?
        .into_iter()
        .filter_map(|r| r.testbed)
        .collect();
    for (path, runs) in &req.files {
        for run in runs {
            let at = |detail: String| ImportError::Conflict {
                path: path.clone(),
                id: run.id.clone(),
                detail,
            };
            run.validate().map_err(|e| ImportError::Invalid {
                path: path.clone(),
                detail: e.to_string(),
            })?;
            if let Some(testbed) = &run.testbed {
                if let Some(other) = stored_testbeds
                    .iter()
                    .find(|s| *s != testbed && sanitize_testbed(s) == *testbed)
                {
                    return Err(at(format!(
                        "testbed `{testbed}` is the series {} holds as testbed {other:?}; nothing was imported",
                        store.describe()
                    )));
                }
            }
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

/// What the repository at `options.repo` knows of `options.commit`, as `run --commit` records
/// it (`Repo::resolve`: first-parent position, author, date, subject), and the repository for
/// `labels::first_parent_rule`; a shallow clone or a commit the repository lacks is a warning.
/// No commit or no repository: nothing, and the runs keep date order.
fn place_commit(
    options: &ImportOptions,
    warnings: &mut Vec<String>,
) -> (Option<Repo>, Option<CommitInfo>) {
    let (Some(commit), Some(dir)) = (&options.commit, &options.repo) else {
        return (None, None);
    };
    let Ok(repo) = Repo::discover(dir) else {
        return (None, None);
    };
    match repo.resolve(commit) {
        Ok(resolved) => {
            if repo.is_shallow() {
                warnings.push(crate::git::SHALLOW_CLONE.to_string());
            }
            (Some(repo), Some(resolved.info))
        }
        Err(_) => {
            warnings.push(format!(
                "commit {commit} is not in the repository at {}: the imported runs keep date order (hint: fetch it first, e.g. git fetch origin {commit})",
                repo.root().display()
            ));
            (None, None)
        }
    }
}

/// A run for another tool's results: measured elsewhere, so the fingerprint holds only what
/// the tool said about its machine.
fn imported_run(
    config: &Config,
    options: &ImportOptions,
    spec: &str,
    format: InputFormat,
    parsed: ParsedRun,
) -> Run {
    let now = pitwall_schema::time::now_rfc3339();
    let mut fingerprint = Fingerprint::default();
    fingerprint.set_section(&ImportedFrom {
        file: spec.to_string(),
        format: format.name().to_string(),
        other: Default::default(),
    });
    if !parsed.context.is_empty() {
        let context = serde_json::to_value(&parsed.context).expect("context serializes");
        fingerprint.set_section(&ToolContext([(format.name().to_string(), context)].into()));
    }
    let notes: Vec<String> = parsed
        .notes
        .iter()
        .cloned()
        .chain(
            parsed
                .warnings
                .iter()
                .map(|w| format!("{}: {w}", format.name())),
        )
        .collect();
    if !notes.is_empty() {
        fingerprint.set_section(&FormatNotes(notes));
    }
    let suite = options
        .suite
        .clone()
        .unwrap_or_else(|| format.name().to_string());
    let results: Vec<_> = source::to_results(&suite, parsed)
        .into_iter()
        .map(crate::request::fail_unsummarisable)
        .collect();
    let mut run = Run {
        exclusion: None,
        contention: None,
        id: uuid::Uuid::now_v7().to_string(),
        project: config.project.name.clone(),
        commit: options
            .commit
            .clone()
            .unwrap_or_else(|| WORKING_TREE.to_string()),
        branch: None,
        testbed: None,
        role: None,
        started_at: now.clone(),
        finished_at: now,
        config_hash: config.hash(),
        fingerprint,
        status: RunStatus::from_results(&results),
        commit_info: None,
        error: None,
        pair: None,
        results,
    };
    options.labels.apply(&mut run);
    run
}
