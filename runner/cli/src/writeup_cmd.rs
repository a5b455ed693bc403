//! `pitwall writeup --from DATE --to DATE`: the first draft of a period's performance
//! write-up from the stored history (docs/WRITEUPS.md), as Markdown on stdout or into
//! `--out DIR`, or as one HTML page.

use pitwall_pipeline::git::Repo;
use pitwall_pipeline::writeup::{Period, WriteupRequest, writeup};
use pitwall_store::OpenMode;

use super::args::{Global, WriteupArgs, WriteupFormat};
use super::context::{current_dir, load_config, open_store, write_atomically};
use super::exit::{ExitClass, Failure};

/// `pitwall writeup`.
pub(super) fn cmd_writeup(g: &Global, a: &WriteupArgs) -> Result<ExitClass, Failure> {
    let period = Period::new(&a.from, &a.to).map_err(|e| Failure::rejected(e.to_string()))?;
    if let Some(out) = a.out.as_ref().filter(|o| o.exists() && !o.is_dir()) {
        return Err(Failure::rejected(format!(
            "--out {}: is a file, not a directory (hint: name a new or existing directory; the write-up goes into it)",
            out.display()
        )));
    }
    // A repository names commits and pull requests; without one the runs' own commit
    // descriptions are used, so a write-up needs no checkout.
    let repo = match &a.repo {
        Some(dir) => Some(Repo::discover(dir).map_err(|e| Failure::rejected(e.to_string()))?),
        None => Repo::discover(&current_dir()?).ok(),
    };
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let request = WriteupRequest {
        period,
        branch: a
            .branch
            .clone()
            .unwrap_or_else(|| config.history_branch.clone()),
        testbed: a.testbed.as_deref().map(pitwall_schema::sanitize_testbed),
        suites: a.suites.clone(),
    };
    let w = writeup(store.as_ref(), &config, &request, repo.as_ref()).map_err(Failure::of_store)?;
    let (text, file) = match a.format {
        WriteupFormat::Markdown => (pitwall_reports::writeup::render_markdown(&w), "writeup.md"),
        WriteupFormat::Html => (pitwall_reports::writeup::render_html(&w), "writeup.html"),
    };
    match &a.out {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::of_io(format!("cannot create {}", dir.display()), e))?;
            let path = dir.join(file);
            write_atomically(&path, &text)
                .map_err(|e| Failure::of_io(format!("cannot write {}", path.display()), e))?;
            println!("{}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(ExitClass::Ok)
}
