//! What most commands start from: the configuration, the store, and the comparison sides
//! named on the command line. Shared by the command modules, importing none of them.

use std::path::{Path, PathBuf};

use pitwall_engine::config::{self, Config};
use pitwall_formats::InputFormat;
use pitwall_pipeline::source;
use pitwall_reports::OutputFormat;
use pitwall_schema::{Redactor, secrets};
use pitwall_store::{self as store, OpenMode, RedactingStore, Store, StoreUrl};

use super::args::{Format, Global};
use super::exit::Failure;

pub(super) fn format(f: Format) -> OutputFormat {
    match f {
        Format::Table => OutputFormat::Table,
        Format::Json => OutputFormat::Json,
    }
}

/// The directory pitwall runs in.
pub(super) fn current_dir() -> Result<PathBuf, Failure> {
    std::env::current_dir().map_err(|e| Failure::of_io("cannot read the working directory", e))
}

/// `--config FILE`, else `./pitwall.toml`, else the built-in default.
pub(super) fn load_config(g: &Global) -> Result<Config, Failure> {
    let cwd = current_dir()?;
    let project = cwd.file_name().map_or_else(
        || "pitwall".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let path = match &g.config {
        Some(p) => Some(p.clone()),
        None => config::find_default(&cwd),
    };
    let config = match path {
        Some(p) => config::load_file(&p, &project).map_err(Failure::of_config)?,
        None => Config::builtin_default(&project),
    };
    // The token and webhook variables it names are secrets whatever their names: every
    // redactor built from now on knows their values.
    for var in config.token_vars() {
        if let Ok(value) = std::env::var(&var) {
            secrets::remember(&value);
            for s in secrets::url_secrets(&value, true) {
                secrets::remember(&s);
            }
        }
    }
    Ok(config)
}

/// Remembers the credentials of the store URLs given to this process (`--store`,
/// `PITWALL_STORE`) as secrets, before anything runs: they are redacted from everything
/// shown, stored and published, and no command gets a variable holding them.
pub(super) fn remember_store_secrets(g: &Global) {
    let given = g
        .store
        .iter()
        .cloned()
        .chain(std::env::var("PITWALL_STORE").ok());
    for url in given {
        for s in secrets::url_secrets(&url, false) {
            secrets::remember_store_credential(&s);
        }
        if let Some(p) = StoreUrl::password(&url) {
            secrets::remember_store_credential(&p);
        }
    }
    // A server store's token: redacted from everything, whatever command runs.
    if let Ok(token) = std::env::var(TOKEN_ENV) {
        if !token.trim().is_empty() {
            secrets::remember(token.trim());
        }
    }
}

/// Every secret the process knows, for what it prints, stores and publishes.
pub(super) fn redactor() -> Redactor {
    pitwall_engine::process_redactor(&[])
}

/// `--store`, else `PITWALL_STORE` (empty counts as unset), else `[store] url`, else the
/// default SQLite file. Commands that store runs open it with `OpenMode::Create`; commands
/// that only read with `OpenMode::Existing`, so they never create a store.
pub(super) fn open_store(
    g: &Global,
    config: &Config,
    mode: OpenMode,
) -> Result<Box<dyn Store>, Failure> {
    match store_url(g, config, mode)? {
        StoreUrl::Http(base) => open_server(&base, config),
        url => open_url(&url, mode),
    }
}

/// Refuses `what` (`pitwall prune`, `pitwall token`, …) when the store is a server: it needs
/// the database itself.
pub(super) fn database_only(g: &Global, config: &Config, what: &str) -> Result<(), Failure> {
    match store_url(g, config, OpenMode::Existing)? {
        StoreUrl::Http(base) => Err(Failure::rejected(format!(
            "--store {base}: {what} needs the store's database, not a server (hint: run it on the server's host with --store naming its database)"
        ))),
        _ => Ok(()),
    }
}

/// The variable a server store's token is read from.
pub(super) const TOKEN_ENV: &str = "PITWALL_TOKEN";

/// A `pitwall serve` as the store (`--store https://…`): its API with the token in
/// `PITWALL_TOKEN`, for the configuration's project; uploads carry its alert thresholds.
fn open_server(base: &str, config: &Config) -> Result<Box<dyn Store>, Failure> {
    let token = std::env::var(TOKEN_ENV)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            Failure::rejected(format!(
                "--store {base}: a server store needs its token in {TOKEN_ENV} (hint: `pitwall token create --role runner` on the server's store makes one)"
            ))
        })?;
    secrets::remember(&token);
    let rules = pitwall_schema::UploadAlertRules {
        threshold_pct: Some(config.thresholds.regression_pct),
        suite_threshold_pct: config
            .suites
            .iter()
            .filter_map(|s| s.threshold_pct.map(|t| (s.name.clone(), t)))
            .collect(),
        history_branch: Some(config.history_branch.clone()),
    };
    let store = pitwall_forge::store_client::HttpStore::connect(
        base,
        &config.project.name,
        token.trim(),
        rules,
    )
    .map_err(Failure::of_store)?;
    Ok(RedactingStore::wrap(Box::new(store), redactor()))
}

/// Which store `open_store` opens (creating pitwall's own directory for the default one when
/// `mode` may create it).
pub(super) fn store_url(g: &Global, config: &Config, mode: OpenMode) -> Result<StoreUrl, Failure> {
    let env = std::env::var("PITWALL_STORE")
        .ok()
        .filter(|v| !v.trim().is_empty());
    Ok(match (&g.store, env, &config.store_url) {
        (Some(s), _, _) => StoreUrl::parse(s).map_err(|e| Failure::of_store_url("--store", e))?,
        (None, Some(s), _) => {
            StoreUrl::parse(&s).map_err(|e| Failure::of_store_url("PITWALL_STORE", e))?
        }
        (None, None, Some(s)) => {
            let file = config
                .source
                .as_deref()
                .map_or("config".into(), |p: &Path| p.display().to_string());
            let url = StoreUrl::parse(s)
                .map_err(|e| Failure::of_store_url(format!("{file}: [store] url"), e))?;
            if url.is_http() {
                // The repository's own file never picks where the token goes.
                return Err(Failure::rejected(format!(
                    "{file}: [store] url: a server URL receives {TOKEN_ENV}, so it is taken only from --store or PITWALL_STORE, never from pitwall.toml"
                )));
            }
            url
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
    })
}

/// Opens the store at `url`: what it skips is warned about, what migrating it said is noted,
/// and everything read and stored through it is redacted.
pub(super) fn open_url(url: &StoreUrl, mode: OpenMode) -> Result<Box<dyn Store>, Failure> {
    let mut store = store::open(url, mode).map_err(Failure::of_store)?;
    // A run with a row that cannot be read is left out of what is read, said once here.
    store.on_skipped(Box::new(|line| eprintln!("warning: {line}")));
    for note in store.migration_notes() {
        eprintln!("note: {note}");
    }
    // Runs stored before a secret was known, by an older pitwall or by `import` are
    // redacted as they are read, and whatever is stored from here on is too.
    Ok(RedactingStore::wrap(store, redactor()))
}

/// Writes through a temporary file and a rename, so a reader never sees half a file; a write
/// that fails (a full disk) removes the temporary file instead of leaving it.
pub(super) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp: PathBuf = path.with_extension("pitwall-tmp");
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The store comparison sides are looked up in: none when every side is a file, so comparing
/// two files needs no store; otherwise the existing one (never created here), and a failure
/// to open it names the side that needed it.
/// The testbed's noise book for comparing two sides of one stored pair (none without a store
/// or for other sides): what `ci` used when it measured them, so a comparison read again
/// agrees with what was printed.
pub(super) fn noise_book(
    store: Option<&dyn Store>,
    (baseline, candidate): (&source::Side, &source::Side),
) -> Result<pitwall_pipeline::noise::NoiseBook, Failure> {
    match store {
        Some(store) => pitwall_pipeline::noise::book_for_sides(store, baseline, candidate)
            .map_err(Failure::of_store),
        None => Ok(pitwall_pipeline::noise::NoiseBook::empty()),
    }
}

pub(super) fn store_for(
    g: &Global,
    config: &Config,
    baseline: &str,
    candidate: &str,
) -> Result<Option<Box<dyn Store>>, Failure> {
    let needs = [("--baseline", baseline), ("--candidate", candidate)]
        .into_iter()
        .find(|(_, spec)| !source::names_a_file(spec));
    let Some((flag, spec)) = needs else {
        return Ok(None);
    };
    open_store(g, config, OpenMode::Existing)
        .map(Some)
        .map_err(|mut f| {
            f.error = f.error.context(format!(
                "{flag}: `{spec}` is not a file, so it is looked up in the store"
            ));
            f
        })
}

/// A comparison side (a file when there is no store); a store that fails is infrastructure,
/// anything else the user's input.
pub(super) fn resolve_side(
    flag: &str,
    spec: &str,
    store: Option<&dyn Store>,
    format: Option<InputFormat>,
) -> Result<source::Side, Failure> {
    let side = match store {
        Some(store) => source::resolve(spec, store, format),
        None => source::read_file(spec, Path::new(spec), format),
    };
    let mut side = side.map_err(|e| Failure::of_source(flag, e))?;
    // A file (`comment --baseline FILE`) or a stored run is shown, rendered and published:
    // nothing of it goes out unredacted.
    let r = redactor();
    side.label = r.redact(&side.label);
    if let Some(run) = &mut side.run {
        store::redact_run(&r, run);
    }
    if r.redact_serde(&mut side.results).is_err() {
        side.results.clear();
    }
    Ok(side)
}
