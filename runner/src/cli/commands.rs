//! What each subcommand does: resolve config and store, call the library, print, and pick the
//! exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, anyhow};
use clap::Parser;
use pitwall_reports::detect::{DetectedChange, SeriesDetection, SeriesSource};
use pitwall_reports::{OutputFormat, Table, exporter_for};
use pitwall_runner::config::{self, Config};
use pitwall_runner::git::Repo;
use pitwall_runner::gpu::load_nvml;
use pitwall_runner::machine::{DirSysfs, ProcessAffinity};
use pitwall_runner::run::{
    BuildOutcome, RunReport, RunRequest, Target, build, check_suites, execute, execute_interleaved,
    failed_build_run,
};
use pitwall_runner::setup::{Mode, RunEnvironment};
use pitwall_runner::store::{self, InsertOutcome, Store, StoreUrl};
use pitwall_runner::{compare, detect, source};
use pitwall_stats::ab::AbConfig;
use pitwall_stats::changepoint::{self, DetectConfig};
use pitwall_suites::cpu::CpuBackend;
use pitwall_suites::formats::InputFormat;
use pitwall_suites::{ExportDoc, RunStatus};
use std::sync::Arc;

use super::args::{
    CiArgs, Cli, Cmd, CommentArgs, CompareArgs, CompareFormat, DetectArgs, EnvArgs, ExportArgs,
    Format, GithubArgs, Global, ImportArgs, ReportArgs, RunArgs, RunsArgs, ShowArgs,
};
use super::exit::{self, Failure};
use super::progress::Bars;

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
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => exit::report(f),
    }
}

fn format(f: Format) -> OutputFormat {
    match f {
        Format::Table => OutputFormat::Table,
        Format::Json => OutputFormat::Json,
    }
}

/// `--config FILE`, else `./pitwall.toml`, else the built-in default.
fn load_config(g: &Global) -> Result<Config, Failure> {
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

/// `--store`/`PITWALL_STORE`, else `[store] url`, else the default SQLite file.
fn open_store(g: &Global, config: &Config) -> Result<Box<dyn Store>, Failure> {
    let url = match (&g.store, &config.store_url) {
        (Some(s), _) => StoreUrl::parse(s)
            .context("--store")
            .map_err(Failure::usage)?,
        (None, Some(s)) => {
            let file = config
                .source
                .as_deref()
                .map_or("config".into(), |p: &Path| p.display().to_string());
            StoreUrl::parse(s)
                .with_context(|| format!("{file}: [store] url"))
                .map_err(Failure::usage)?
        }
        (None, None) => {
            // pitwall's own directory ignores itself, so it never shows in `git status`.
            let dir = Path::new(".pitwall");
            if std::fs::create_dir_all(dir).is_ok() && !dir.join(".gitignore").exists() {
                let _ = std::fs::write(dir.join(".gitignore"), "*\n");
            }
            StoreUrl::default_sqlite()
        }
    };
    store::open(&url).map_err(|e| Failure::from(anyhow::Error::new(e)))
}

fn cmd_run(g: &Global, a: &RunArgs) -> Result<u8, Failure> {
    let config = load_config(g)?;
    let mut store = open_store(g, &config)?;
    let cwd = std::env::current_dir()
        .context("cannot read the working directory")
        .map_err(Failure::infra)?;
    let request = RunRequest {
        suites: a.suites.clone(),
        filter: a.bench.clone(),
    };
    let bars = Bars::new(g.quiet);
    check_suites(&config, &request).map_err(|e| Failure::usage(e.into()))?;
    if a.base.is_some() || !a.commits.is_empty() {
        return run_commits(g, a, &config, store.as_mut(), &cwd, &request, &bars);
    }
    let mut target = Target::working_tree(&cwd);
    if let Ok(repo) = Repo::discover(&cwd) {
        if let Some((_, branch, _)) = repo.head_state() {
            target.branch = branch;
        }
    }
    build(&config, &target, None, true).map_err(|e| Failure::infra(e.into()))?;
    let env = prepare_env(&config, g)?;
    let report = execute(&config, &request, &CpuBackend, &target, &env, &bars)
        .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
    store_and_print(g, a, store.as_mut(), &report)
}

/// Pins this process, applies the clock policy and starts GPU monitoring; prints what is not
/// as it should be. Keep the result alive while measuring.
fn prepare_env(config: &Config, g: &Global) -> Result<RunEnvironment, Failure> {
    // On SIGINT/SIGTERM: kill running benchmark commands, restore clocks, then die.
    pitwall_runner::gpu::on_terminate(pitwall_runner::engine::kill_running_commands);
    pitwall_runner::gpu::install_signal_handler().map_err(|e| Failure::infra(e.into()))?;
    let nvml = load_nvml().map(Arc::from);
    let env = RunEnvironment::prepare(
        config,
        Path::new("/"),
        &DirSysfs::real(),
        &ProcessAffinity,
        nvml,
        Mode::Apply,
    )
    .map_err(|e| Failure::infra(e.into()))?;
    if !g.quiet {
        if let Some(reason) = env
            .fingerprint
            .extra
            .get("gpu")
            .and_then(|g| g.get("reason"))
            .and_then(|r| r.as_str())
        {
            eprintln!("no GPU: {reason}; GPU monitoring skipped, CPU suites only");
        }
        for w in &env.warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok(env)
}

/// A run interrupted by SIGINT/SIGTERM is not stored: wait here for the signal to end the
/// process once the clocks are restored.
fn halt_if_terminating() {
    while pitwall_runner::gpu::terminating() {
        std::thread::park();
    }
}

/// Stores a finished run and prints it; the exit code follows its status.
fn store_and_print(
    g: &Global,
    a: &RunArgs,
    store: &mut dyn Store,
    report: &RunReport,
) -> Result<u8, Failure> {
    halt_if_terminating();
    let run = &report.run;
    if run.results.is_empty() {
        let msg = if a.bench.is_some() || !a.suites.is_empty() {
            "no benchmark matched the selection (hint: check --suite and --bench)"
        } else {
            "no benchmark ran (every suite was skipped)"
        };
        for s in &report.skipped {
            eprintln!("{s}");
        }
        return Err(Failure::usage(anyhow!(msg)));
    }
    store
        .insert_run(run)
        .with_context(|| format!("cannot store run {}", run.id))
        .map_err(Failure::infra)?;
    print!(
        "{}",
        exporter_for(format(a.format)).render(run, &report.skipped)
    );
    if !g.quiet {
        eprintln!(
            "stored run {} ({}) in {}",
            run.id,
            run.status.as_str(),
            store.describe()
        );
    }
    if !a.no_report {
        let out = PathBuf::from(REPORT_DIR);
        match load_config(g).and_then(|config| write_report(&config, store, &out)) {
            Ok(_) if !g.quiet => eprintln!("report: {}", out.join("index.html").display()),
            Ok(_) => {}
            Err(f) => eprintln!("warning: report not written: {:#}", f.error),
        }
    }
    Ok(match run.status {
        RunStatus::Complete => exit::OK,
        RunStatus::Partial | RunStatus::Failed => exit::INFRA,
    })
}

/// `--commit REV…` and `--base REV --head REV`: exact commits in cached worktrees.
fn run_commits(
    g: &Global,
    a: &RunArgs,
    config: &Config,
    store: &mut dyn Store,
    cwd: &Path,
    request: &RunRequest,
    bars: &Bars,
) -> Result<u8, Failure> {
    let repo =
        Repo::discover(a.repo.as_deref().unwrap_or(cwd)).map_err(|e| Failure::usage(e.into()))?;
    let revs: Vec<&str> = match (&a.base, &a.head) {
        (Some(b), Some(h)) => vec![b, h],
        _ => a.commits.iter().map(String::as_str).collect(),
    };
    // Resolve every revision before measuring anything.
    let commits = revs
        .iter()
        .map(|r| repo.resolve(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::usage(e.into()))?;
    let cache = repo.root().join(".pitwall").join("worktrees");
    let mut targets = Vec::new();
    let mut code = exit::OK;
    for c in &commits {
        let checkout = repo
            .checkout(c, &cache, a.rebuild)
            .map_err(|e| Failure::infra(anyhow::Error::new(e)))?;
        let target = Target {
            checkout: checkout.path,
            commit: c.sha.clone(),
            branch: c.branch.clone(),
            commit_info: Some(c.info.clone()),
        };
        let marker = cache.join(format!("{}.build", c.sha));
        match build(config, &target, Some(&marker), a.rebuild) {
            Ok(outcome) => {
                if !g.quiet && outcome == BuildOutcome::Cached {
                    eprintln!(
                        "{}: build cached (hint: --rebuild forces it)",
                        target.describe()
                    );
                }
                targets.push(target);
            }
            Err(e) => {
                // Keep the failure with its log tail, then go on with the other commits.
                let run = failed_build_run(config, &target, &e);
                store
                    .insert_run(&run)
                    .with_context(|| format!("cannot store run {}", run.id))
                    .map_err(Failure::infra)?;
                eprintln!("error: {e}");
                eprintln!(
                    "stored failed run {} for {} in {}",
                    run.id,
                    target.describe(),
                    store.describe()
                );
                code = exit::INFRA;
            }
        }
    }
    if a.base.is_some() {
        if targets.len() < 2 {
            return Ok(exit::INFRA);
        }
        let env = prepare_env(config, g)?;
        let reports =
            execute_interleaved(config, request, &CpuBackend, &targets, a.rounds, &env, bars)
                .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
        if reports.iter().any(|r| r.run.results.is_empty()) {
            return Err(Failure::usage(anyhow!(
                "no benchmark matched the selection (hint: check --suite and --bench)"
            )));
        }
        halt_if_terminating();
        for report in &reports {
            store
                .insert_run(&report.run)
                .with_context(|| format!("cannot store run {}", report.run.id))
                .map_err(Failure::infra)?;
        }
        let pair = reports[0]
            .run
            .pair
            .as_ref()
            .map(|p| p.id.clone())
            .unwrap_or_default();
        if !g.quiet {
            eprintln!(
                "stored base run {} and head run {} (pair {pair}, {} rounds) in {}",
                reports[0].run.id,
                reports[1].run.id,
                a.rounds,
                store.describe()
            );
        }
        let side = |r: &RunReport, role: &str| source::Side {
            label: format!("{role} {} (run {})", &r.run.commit[..12], r.run.id),
            results: r.run.results.clone(),
            run: Some(r.run.clone()),
        };
        let report = compare::compare(
            &side(&reports[0], "base"),
            &side(&reports[1], "head"),
            config,
            None,
            &AbConfig::default(),
            compare::CompareOptions::default(),
        );
        print!("{}", pitwall_reports::compare::render_table(&report));
        if !a.no_report {
            let out = PathBuf::from(REPORT_DIR);
            match write_report(config, store, &out) {
                Ok(_) if !g.quiet => eprintln!("report: {}", out.join("index.html").display()),
                Ok(_) => {}
                Err(f) => eprintln!("warning: report not written: {:#}", f.error),
            }
        }
        let partial = reports.iter().any(|r| r.run.status != RunStatus::Complete);
        return Ok(if partial || code != exit::OK {
            exit::INFRA
        } else if report.has_regression() {
            exit::REGRESSION
        } else {
            exit::OK
        });
    }
    let env = prepare_env(config, g)?;
    for target in &targets {
        let report = execute(config, request, &CpuBackend, target, &env, bars)
            .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
        let c = store_and_print(g, a, store, &report)?;
        code = code.max(c);
    }
    Ok(code)
}

fn cmd_runs(g: &Global, a: &RunsArgs) -> Result<u8, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config)?;
    let runs = store
        .list_runs(a.limit)
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

fn cmd_show(g: &Global, a: &ShowArgs) -> Result<u8, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config)?;
    let run = store
        .get_run(&a.run)
        .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
    print!("{}", exporter_for(format(a.format)).render(&run, &[]));
    Ok(exit::OK)
}

fn cmd_export(g: &Global, a: &ExportArgs) -> Result<u8, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config)?;
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
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp: PathBuf = path.with_extension("pitwall-tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

fn cmd_import(g: &Global, a: &ImportArgs) -> Result<u8, Failure> {
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
    let mut store = open_store(g, &config)?;
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

/// A run for another tool's results: measured elsewhere, so the fingerprint holds only what
/// the tool said about its machine.
fn imported_run(
    config: &Config,
    a: &ImportArgs,
    spec: &str,
    format: InputFormat,
    parsed: pitwall_suites::formats::ParsedRun,
) -> pitwall_suites::Run {
    let now = pitwall_runner::run::now_rfc3339();
    let mut fingerprint = pitwall_suites::Fingerprint::default();
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
    pitwall_suites::Run {
        id: uuid::Uuid::now_v7().to_string(),
        project: config.project.name.clone(),
        commit: a
            .commit
            .clone()
            .unwrap_or_else(|| pitwall_suites::WORKING_TREE.to_string()),
        branch: None,
        started_at: now.clone(),
        finished_at: now,
        config_hash: config.hash(),
        fingerprint,
        status: pitwall_suites::RunStatus::from_results(&results),
        commit_info: None,
        error: None,
        pair: None,
        results,
    }
}

fn cmd_compare(g: &Global, a: &CompareArgs) -> Result<u8, Failure> {
    if let Some(t) = a.threshold {
        if !(t > 0.0 && t.is_finite()) {
            return Err(Failure::usage(anyhow!(
                "--threshold {t}: must be a positive percentage (hint: --threshold 2 means ±2%)"
            )));
        }
    }
    let config = load_config(g)?;
    let store = open_store(g, &config)?;
    let (baseline, candidate) = match (&a.baseline, &a.candidate) {
        (Some(b), Some(c)) => (
            resolve_side("--baseline", b, store.as_ref(), a.input_format)?,
            resolve_side("--candidate", c, store.as_ref(), a.input_format)?,
        ),
        _ => {
            let pair = a.pair.as_deref().unwrap_or("latest");
            source::resolve_pair(pair, store.as_ref())
                .context("--pair")
                .map_err(Failure::usage)?
        }
    };
    let report = compare::compare(
        &baseline,
        &candidate,
        &config,
        a.threshold,
        &AbConfig::default(),
        compare::CompareOptions {
            allow_env_mismatch: a.allow_env_mismatch,
            exclude_throttled: a.exclude_throttled,
        },
    );
    if report.benchmarks.is_empty() && report.failed.is_empty() {
        return Err(Failure::usage(anyhow!(
            "{} and {} have no benchmark in common (hint: compare runs of the same suites)",
            baseline.label,
            candidate.label
        )));
    }
    let text = match a.format {
        CompareFormat::Table => pitwall_reports::compare::render_table(&report),
        CompareFormat::Json => pitwall_reports::compare::render_json(&report),
        CompareFormat::Markdown => pitwall_reports::compare::render_markdown(&report),
    };
    print!("{text}");
    if report.incomparable {
        return Err(Failure::usage(anyhow!(
            "the runs are incomparable: {} (hint: --allow-env-mismatch compares anyway)",
            report.env_mismatch.join("; ")
        )));
    }
    Ok(if report.has_regression() {
        exit::REGRESSION
    } else {
        exit::OK
    })
}

/// A comparison side; a store that fails is infrastructure, anything else the user's input.
fn resolve_side(
    flag: &str,
    spec: &str,
    store: &dyn Store,
    format: Option<InputFormat>,
) -> Result<source::Side, Failure> {
    source::resolve(spec, store, format).map_err(|e| match e {
        source::SourceError::Store(inner) => {
            Failure::from(anyhow::Error::new(inner).context(flag.to_string()))
        }
        other => Failure::usage(anyhow::Error::new(other).context(flag.to_string())),
    })
}

fn cmd_detect(g: &Global, a: &DetectArgs) -> Result<u8, Failure> {
    let config = DetectConfig::default();
    let mut out = Vec::new();
    if !a.series.is_empty() {
        // Read every file first, so a bad one fails before any output.
        let mut series = Vec::new();
        for path in &a.series {
            series.push((
                path,
                detect::read_series_file(path).map_err(|e| Failure::usage(e.into()))?,
            ));
        }
        for (path, values) in series {
            let changes = changepoint::detect(&values, &config)
                .into_iter()
                .map(|change| DetectedChange {
                    change,
                    commit_before: None,
                    commit_after: None,
                    run_after: None,
                })
                .collect();
            out.push(SeriesDetection {
                source: SeriesSource::File(path.display().to_string()),
                points: values.len(),
                changes,
            });
        }
    }
    if let Some(pattern) = &a.benchmark {
        let cfg = load_config(g)?;
        let store = open_store(g, &cfg)?;
        let histories = detect::detect_history(store.as_ref(), pattern, &config)
            .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
        if histories.is_empty() {
            return Err(Failure::usage(anyhow!(
                "no stored benchmark matches `{pattern}` in {}",
                store.describe()
            )));
        }
        for h in histories {
            let changes = h
                .change_points
                .iter()
                .map(|c| DetectedChange {
                    change: c.clone(),
                    commit_before: c.index.checked_sub(1).map(|i| h.points[i].commit.clone()),
                    commit_after: h.points.get(c.index).map(|p| p.commit.clone()),
                    run_after: h.points.get(c.index).map(|p| p.run.clone()),
                })
                .collect();
            out.push(SeriesDetection {
                source: SeriesSource::Benchmark {
                    key: h.key,
                    unit: h.unit,
                },
                points: h.points.len(),
                changes,
            });
        }
    }
    print!(
        "{}",
        match a.format {
            Format::Table => pitwall_reports::detect::render_table(&out),
            Format::Json => pitwall_reports::detect::render_json_lines(&out),
        }
    );
    Ok(exit::OK)
}

fn cmd_env(g: &Global, a: &EnvArgs) -> Result<u8, Failure> {
    let config = load_config(g)?;
    let nvml = load_nvml().map(Arc::from);
    let env = RunEnvironment::prepare(
        &config,
        Path::new("/"),
        &DirSysfs::real(),
        &ProcessAffinity,
        nvml,
        Mode::Inspect,
    )
    .map_err(|e| Failure::infra(e.into()))?;
    match a.format {
        Format::Json => {
            let doc =
                serde_json::json!({ "fingerprint": env.fingerprint, "warnings": env.warnings });
            println!(
                "{}",
                serde_json::to_string_pretty(&doc).expect("fingerprint serializes")
            );
        }
        Format::Table => print!(
            "{}",
            pitwall_reports::env::render_env(&env.fingerprint, &env.warnings)
        ),
    }
    Ok(exit::OK)
}

/// Default report directory.
const REPORT_DIR: &str = ".pitwall/report";

fn cmd_report(g: &Global, a: &ReportArgs) -> Result<u8, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config)?;
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from(REPORT_DIR));
    let summary = write_report(&config, store.as_ref(), &out)?;
    println!("{}", out.join("index.html").display());
    if !g.quiet {
        eprintln!(
            "report: {} pages, {} benchmarks, index {} KiB",
            summary.pages,
            summary.benchmarks,
            summary.index_bytes / 1024
        );
    }
    Ok(exit::OK)
}

/// Writes the HTML report of every stored run, with the latest interleaved pair (or else the
/// two latest runs) as its comparison.
fn write_report(
    config: &Config,
    store: &dyn Store,
    out: &Path,
) -> Result<pitwall_reports::html::SiteSummary, Failure> {
    let runs = store
        .all_runs()
        .map_err(|e| Failure::from(anyhow::Error::new(e)))?;
    let mut comparisons = Vec::new();
    let sides = match source::resolve_pair("latest", store) {
        Ok(pair) => Some(("latest base/head pair".to_string(), pair)),
        Err(_) if runs.len() >= 2 => {
            let side = |r: &pitwall_suites::Run| source::Side {
                label: format!("run {}", r.id),
                results: r.results.clone(),
                run: Some(r.clone()),
            };
            Some((
                "latest run vs the one before".to_string(),
                (side(&runs[runs.len() - 2]), side(&runs[runs.len() - 1])),
            ))
        }
        Err(_) => None,
    };
    if let Some((title, (base, head))) = sides {
        let report = compare::compare(
            &base,
            &head,
            config,
            None,
            &AbConfig::default(),
            compare::CompareOptions {
                allow_env_mismatch: true,
                exclude_throttled: false,
            },
        );
        if !report.benchmarks.is_empty() {
            comparisons.push((title, report));
        }
    }
    let generated_at = pitwall_runner::run::now_rfc3339();
    let input = pitwall_reports::html::ReportInput {
        project: &config.project.name,
        runs: &runs,
        comparisons: &comparisons,
        generated_at: &generated_at,
    };
    pitwall_reports::html::write_site(&input, out)
        .with_context(|| format!("cannot write the report to {}", out.display()))
        .map_err(Failure::infra)
}

fn cmd_comment(g: &Global, a: &CommentArgs) -> Result<u8, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config)?;
    let (baseline, candidate) = match (&a.baseline, &a.candidate) {
        (Some(b), Some(c)) => (
            resolve_side("--baseline", b, store.as_ref(), None)?,
            resolve_side("--candidate", c, store.as_ref(), None)?,
        ),
        _ => source::resolve_pair("latest", store.as_ref())
            .context("--pair")
            .map_err(Failure::usage)?,
    };
    publish(g, &config, &a.github, &baseline, &candidate)
}

/// Compares, renders the pull-request comment and publishes it with a commit status.
fn publish(
    g: &Global,
    config: &Config,
    gh: &GithubArgs,
    baseline: &source::Side,
    candidate: &source::Side,
) -> Result<u8, Failure> {
    use pitwall_reports::github::{
        CommentOptions, GithubConfig, HttpGithub, Secret, publish_comment, publish_status,
        render_pr_comment,
    };
    let report = compare::compare(
        baseline,
        candidate,
        config,
        None,
        &AbConfig::default(),
        compare::CompareOptions::default(),
    );
    let throttled = [baseline, candidate]
        .iter()
        .flat_map(|s| s.results.iter())
        .map(|r| r.sample_meta.iter().filter(|m| m.throttled).count())
        .sum();
    let report_url = gh
        .report_url
        .clone()
        .or_else(|| config.github.report_url.clone());
    let body = render_pr_comment(
        &report,
        &CommentOptions {
            report_url: report_url.clone(),
            throttled_samples: throttled,
            ..CommentOptions::default()
        },
    );
    let verdict = if report.incomparable {
        exit::USAGE
    } else if report.has_regression() {
        exit::REGRESSION
    } else {
        exit::OK
    };
    if gh.dry_run {
        print!("{body}");
        return Ok(verdict);
    }
    let repo = gh
        .repo
        .clone()
        .or_else(|| config.github.repo.clone())
        .or_else(|| std::env::var("GITHUB_REPOSITORY").ok())
        .ok_or_else(|| {
            Failure::usage(anyhow!(
                "no repository to publish to (hint: --repo OWNER/NAME or [github] repo)"
            ))
        })?;
    let api_url = gh
        .api_url
        .clone()
        .or_else(|| std::env::var("GITHUB_API_URL").ok())
        .unwrap_or_else(|| config.github.api_url.clone());
    let token = Secret::from_env(&config.github.token_env).map_err(|e| Failure::usage(e.into()))?;
    let mut cfg = GithubConfig::new(api_url, repo, token);
    cfg.token_var = config.github.token_env.clone();
    let api = HttpGithub::new(cfg).map_err(|e| Failure::usage(e.into()))?;
    let outcome = publish_comment(&api, gh.pr, &body)
        .with_context(|| format!("pull request {}: cannot publish the comment", gh.pr))
        .map_err(Failure::infra)?;
    let sha = gh.sha.clone().or_else(|| {
        candidate
            .run
            .as_ref()
            .map(|r| r.commit.clone())
            .filter(|c| c.len() == 40 && c.chars().all(|ch| ch.is_ascii_hexdigit()))
    });
    if let Some(sha) = &sha {
        publish_status(&api, sha, &report, report_url.as_deref())
            .with_context(|| format!("commit {sha}: cannot set the status"))
            .map_err(Failure::infra)?;
    }
    if !g.quiet {
        eprintln!(
            "pull request {}: {:?}; status {}",
            gh.pr,
            outcome,
            if sha.is_some() {
                "set"
            } else {
                "not set (no commit sha; hint: --sha)"
            }
        );
    }
    println!("{}", report.summary_line());
    Ok(verdict)
}

fn cmd_ci(g: &Global, a: &CiArgs) -> Result<u8, Failure> {
    let run = RunArgs {
        suites: Vec::new(),
        bench: None,
        format: Format::Table,
        no_report: false,
        commits: Vec::new(),
        base: Some(a.base.clone()),
        head: Some(a.head.clone()),
        rounds: a.rounds,
        rebuild: false,
        repo: None,
    };
    let measured = cmd_run(g, &run)?;
    if measured == exit::INFRA {
        return Ok(exit::INFRA);
    }
    let config = load_config(g)?;
    let store = open_store(g, &config)?;
    let (baseline, candidate) = source::resolve_pair("latest", store.as_ref())
        .context("--pair")
        .map_err(Failure::usage)?;
    publish(g, &config, &a.github, &baseline, &candidate)
}
