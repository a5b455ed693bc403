//! `write_site`: renders every page with minijinja templates embedded at build time
//! (autoescaping on, as every template name ends in `.html`) and writes the static site.

use std::fs;
use std::path::{Path, PathBuf};

use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior, Value, context};
use pitwall_schema::{Alert, Run};

use super::compare_page;
use super::model::{self, PageComparison};
use super::pages;

/// Everything a report is made from.
#[derive(Debug, Clone, Copy)]
pub struct ReportInput<'a> {
    /// Project name shown in titles.
    pub project: &'a str,
    /// Runs, oldest first.
    pub runs: &'a [Run],
    /// Comparisons to render; one page each, at `compare/<id>.html` (a pair's id: a stable
    /// path a PR comment can link to).
    pub comparisons: &'a [PageComparison],
    /// When the report was made (shown as given).
    pub generated_at: &'a str,
    /// The branch whose `history` runs make the histories (`[history] branch`), one series per
    /// testbed; pull-request runs are only on comparison pages.
    pub history_branch: &'a str,
    /// The stored alerts; the index lists them, open ones first.
    pub alerts: &'a [Alert],
    /// The histories of `history_branch`, when the caller built them key by key
    /// (`history::series_by_key`) because `runs` holds no results; built from `runs` when
    /// `None`. Their points index `runs`.
    pub histories: Option<&'a [pitwall_analysis::Series]>,
    /// The latest run of the working tree (role `local`), with its results: shown apart on
    /// the index, marked local, since it is in no history.
    pub local: Option<&'a Run>,
}

/// What `write_site` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteSummary {
    /// HTML pages written.
    pub pages: usize,
    /// Size of `index.html` in bytes.
    pub index_bytes: u64,
    /// Benchmark measures (one page each).
    pub benchmarks: usize,
    /// Pages of an earlier report in the same directory that this one no longer has
    /// (benchmarks gone from the history, fewer comparisons), removed so no stale page lingers:
    /// only files the earlier report listed in its [`MANIFEST`].
    pub stale_removed: usize,
}

/// Why the site could not be written.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error("template {template}: {source}")]
    Template {
        template: &'static str,
        #[source]
        source: minijinja::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

const TEMPLATES: [(&str, &str); 12] = [
    ("base.html", include_str!("../../../templates/base.html")),
    ("index.html", include_str!("../../../templates/index.html")),
    (
        "alerts_table.html",
        include_str!("../../../templates/alerts_table.html"),
    ),
    // The pages only `pitwall serve` renders (`live`).
    (
        "triage_form.html",
        include_str!("../../../templates/triage_form.html"),
    ),
    (
        "live_nav.html",
        include_str!("../../../templates/live_nav.html"),
    ),
    (
        "alerts.html",
        include_str!("../../../templates/alerts.html"),
    ),
    ("alert.html", include_str!("../../../templates/alert.html")),
    (
        "signin.html",
        include_str!("../../../templates/signin.html"),
    ),
    ("bench.html", include_str!("../../../templates/bench.html")),
    (
        "compare.html",
        include_str!("../../../templates/compare.html"),
    ),
    ("env.html", include_str!("../../../templates/env.html")),
    // The quarterly write-up's page (`writeup::render_html`), not part of the site.
    (
        "writeup.html",
        include_str!("../../../templates/writeup.html"),
    ),
];

/// The file in a report's directory listing, one relative path a line, every file the report
/// wrote: the next report into that directory removes what it lists and no longer writes,
/// and nothing else.
pub const MANIFEST: &str = ".pitwall-manifest";

pub(crate) const STYLE_CSS: &str = include_str!("../../../templates/assets/style.css");
const FILTER_JS: &str = include_str!("../../../templates/assets/filter.js");

/// The files under `assets/` besides the stylesheet: the benchmark pages' chart script and the
/// vendored uPlot (docs/REPORTS.md), its licence with it. Written with every report, so a page
/// opened from `file://` loads them from beside it and nothing from the network.
const ASSETS: [(&str, &str); 4] = [
    (
        "history.js",
        include_str!("../../../templates/assets/history.js"),
    ),
    (
        "vendor/uplot/uPlot.iife.min.js",
        include_str!("../../../templates/assets/vendor/uplot/uPlot.iife.min.js"),
    ),
    (
        "vendor/uplot/uPlot.min.css",
        include_str!("../../../templates/assets/vendor/uplot/uPlot.min.css"),
    ),
    (
        "vendor/uplot/LICENSE",
        include_str!("../../../templates/assets/vendor/uplot/LICENSE"),
    ),
];

/// The text of asset `path` (relative to `assets/`), if it is one: the stylesheet, the
/// index's filter script (inlined in the static index, a file on the server's) and [`ASSETS`].
pub(crate) fn asset(path: &str) -> Option<&'static str> {
    match path {
        "style.css" => Some(STYLE_CSS),
        "filter.js" => Some(FILTER_JS),
        _ => ASSETS.iter().find(|(p, _)| *p == path).map(|(_, t)| *t),
    }
}

/// `text` with control characters other than line breaks and tabs written as `\xNN`, as the
/// terminal and Markdown show them: HTML escaping leaves them alone, and a raw ESC in a page
/// is at best invisible.
fn visible_controls(text: &str) -> Option<String> {
    if !text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return None;
    }
    Some(
        text.chars()
            .map(|c| {
                if c.is_control() && !matches!(c, '\n' | '\r' | '\t') {
                    format!("\\x{:02x}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

fn environment() -> Result<Environment<'static>, HtmlError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Every interpolated string (names, subjects, tool output) shows its control characters.
    env.set_formatter(|out, state, value| {
        match value
            .as_str()
            .filter(|_| !value.is_safe())
            .and_then(visible_controls)
        {
            Some(shown) => minijinja::escape_formatter(out, state, &Value::from(shown)),
            None => minijinja::escape_formatter(out, state, value),
        }
    });
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .map_err(|source| HtmlError::Template {
                template: name,
                source,
            })?;
    }
    Ok(env)
}

fn render(env: &Environment<'_>, template: &'static str, ctx: Value) -> Result<String, HtmlError> {
    env.get_template(template)
        .and_then(|t| t.render(ctx))
        .map_err(|source| HtmlError::Template { template, source })
}

/// Renders one of the templates with the site's environment (its escaping, its strict
/// undefined values): for pages made outside the site, such as the write-up.
pub(crate) fn render_template(template: &'static str, ctx: Value) -> Result<String, HtmlError> {
    render(&environment()?, template, ctx)
}

fn write(path: PathBuf, text: &str) -> Result<u64, HtmlError> {
    fs::write(&path, text).map_err(|source| HtmlError::Io { path, source })?;
    Ok(text.len() as u64)
}

fn mkdir(path: PathBuf) -> Result<(), HtmlError> {
    fs::create_dir_all(&path).map_err(|source| HtmlError::Io { path, source })
}

/// Writes `index.html`, `bench/<slug>.html` per benchmark measure, `compare/<id>.html` per
/// comparison, `env.html`, `assets/style.css` and the chart assets ([`ASSETS`]) under `out_dir` (created when missing), and
/// the [`MANIFEST`] of them; files an earlier report's manifest lists that this one does not
/// write are removed (only regular files inside `out_dir`), and nothing else. Comparison pages
/// are not listed: each keeps its path for links to it.
pub fn write_site(input: &ReportInput<'_>, out_dir: &Path) -> Result<SiteSummary, HtmlError> {
    for sub in ["", "bench", "compare", "assets", "assets/vendor/uplot"] {
        mkdir(out_dir.join(sub))?;
    }
    let env = environment()?;
    let series = match input.histories {
        Some(histories) => model::with_slugs(histories.to_vec(), input.history_branch),
        None => model::collect(input.runs, input.history_branch),
    };
    let page = |root: &str, title: &str| {
        context! {
            project => input.project,
            generated_at => input.generated_at,
            root => root,
            title => title,
        }
    };
    let mut pages_written = 0;
    let mut written: Vec<PathBuf> = Vec::new();

    let mut index = pages::index(
        &series,
        input.runs,
        input.comparisons,
        input.alerts,
        input.history_branch,
    );
    index.local = input.local.map(super::local_run::view);
    let html = render(
        &env,
        "index.html",
        context! { page => Serde(&index), filter_js => FILTER_JS, ..page("", "benchmarks") },
    )?;
    let index_bytes = write(out_dir.join("index.html"), &html)?;
    written.push(out_dir.join("index.html"));
    pages_written += 1;

    let groups = pages::sweep_groups(&series);
    for s in &series {
        let group = &groups[&(s.suite.as_str(), s.name.as_str(), s.measure.as_str())];
        let bench = pages::bench(s, &series, group, input.runs, input.alerts, true);
        let html = render(
            &env,
            "bench.html",
            context! { page => Serde(&bench), ..page("../", &s.key) },
        )?;
        let path = out_dir.join("bench").join(format!("{}.html", s.slug));
        write(path.clone(), &html)?;
        written.push(path);
        pages_written += 1;
    }

    for c in input.comparisons {
        let cmp = compare_page::compare(&c.title, &c.report, &series, input.runs);
        let html = render(
            &env,
            "compare.html",
            context! { page => Serde(&cmp), ..page("../", &c.title) },
        )?;
        // Not added to `written`: a comparison page stays where a PR comment links to it,
        // whatever later reports in the same directory compare.
        write(
            out_dir.join("compare").join(format!("{}.html", c.page())),
            &html,
        )?;
        pages_written += 1;
    }

    let envs = pages::envs(input.runs);
    let html = render(
        &env,
        "env.html",
        context! { envs => Serde(&envs), ..page("", "environments") },
    )?;
    write(out_dir.join("env.html"), &html)?;
    written.push(out_dir.join("env.html"));
    pages_written += 1;
    write(out_dir.join("assets").join("style.css"), STYLE_CSS)?;
    written.push(out_dir.join("assets").join("style.css"));
    for (name, text) in ASSETS {
        let path = out_dir.join("assets").join(name);
        write(path.clone(), text)?;
        written.push(path);
    }

    let stale_removed = remove_stale(out_dir, &written)?;
    Ok(SiteSummary {
        pages: pages_written,
        index_bytes,
        benchmarks: series.len(),
        stale_removed,
    })
}

/// Removes the files the earlier report's [`MANIFEST`] lists that this one did not write, then
/// writes this one's. An entry is removed only when it is a plain relative path (no `..`, not
/// absolute) to a regular file (not a link) whose directory resolves inside `out_dir`: a
/// tampered manifest removes nothing outside the report.
fn remove_stale(out_dir: &Path, written: &[PathBuf]) -> Result<usize, HtmlError> {
    let relative: Vec<String> = written
        .iter()
        .filter_map(|p| p.strip_prefix(out_dir).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let keep: std::collections::HashSet<&str> = relative.iter().map(String::as_str).collect();
    let manifest = out_dir.join(MANIFEST);
    let listed = match fs::symlink_metadata(&manifest) {
        Ok(m) if m.is_file() => fs::read_to_string(&manifest).unwrap_or_default(),
        _ => String::new(),
    };
    let root = fs::canonicalize(out_dir).map_err(|source| HtmlError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let mut removed = 0;
    for entry in listed.lines().filter(|l| !keep.contains(l)) {
        let Some(path) = removable(&root, out_dir, entry) else {
            continue;
        };
        match fs::remove_file(&path) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(HtmlError::Io { path, source }),
        }
    }
    let mut text = relative.join("\n");
    text.push('\n');
    // Never written through a link someone left in its place.
    if fs::symlink_metadata(&manifest).is_ok_and(|m| m.file_type().is_symlink()) {
        fs::remove_file(&manifest).map_err(|source| HtmlError::Io {
            path: manifest.clone(),
            source,
        })?;
    }
    write(manifest, &text)?;
    Ok(removed)
}

/// The file a manifest entry names, when the report may remove it: a relative path of plain
/// components to a regular file whose directory is `root` (`out_dir` resolved) or inside it.
fn removable(root: &Path, out_dir: &Path, entry: &str) -> Option<PathBuf> {
    use std::path::Component;
    let rel = Path::new(entry);
    if entry.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let path = out_dir.join(rel);
    let meta = fs::symlink_metadata(&path).ok()?;
    let parent = fs::canonicalize(path.parent()?).ok()?;
    (meta.is_file() && parent.starts_with(root)).then_some(path)
}
