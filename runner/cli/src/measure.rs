//! How measured runs and pairs are shown, shared by `pitwall run` and `pitwall ci`: where a
//! pair was stored, its comparison table, the HTML report written after measuring, and the
//! exit class a pair's outcome maps to.

use std::path::{Path, PathBuf};

use pitwall_engine::config::Config;
use pitwall_pipeline::measure::MeasuredPair;
use pitwall_pipeline::pair::PairStop;
use pitwall_store::Store;

use super::args::Global;
use super::exit::{ExitClass, Failure};
use super::site::{REPORT_DIR, write_report};

/// Where `run` and `ci` write the HTML report: `--report-dir`, else `[report] dir`, else
/// beside a SQLite store (`.pitwall/report` for the default `.pitwall/pitwall.db`,
/// `DIR/report` for another `pitwall.db`, `DIR/NAME-report` for `DIR/NAME.db`). A PostgreSQL
/// store has no directory of its own, so one must be named: decided before measuring. A
/// server store (`--store https://…`) writes none: `None`.
pub(super) fn report_dir(
    flag: Option<&Path>,
    config: &Config,
    store: &dyn Store,
) -> Result<Option<PathBuf>, Failure> {
    // A server's store is read through its API: the history the report needs is the
    // server's to show (docs/SERVE.md), not a runner's to render.
    if store.detects_alerts() {
        return Ok(None);
    }
    report_dir_for(flag.or(config.report_dir.as_deref()), &store.describe())
        .map(Some)
        .map_err(Failure::rejected)
}

/// [`report_dir`] on the store's description (`sqlite:PATH` or a PostgreSQL URL).
fn report_dir_for(named: Option<&Path>, described: &str) -> Result<PathBuf, String> {
    if let Some(dir) = named {
        return Ok(dir.to_path_buf());
    }
    let Some(db) = described.strip_prefix("sqlite:").map(Path::new) else {
        return Err(format!(
            "store {described} has no directory for the HTML report (hint: --report-dir DIR or [report] dir in pitwall.toml; `run --no-report` skips it)"
        ));
    };
    if db == Path::new(".pitwall/pitwall.db") {
        return Ok(PathBuf::from(REPORT_DIR));
    }
    let parent = db.parent().unwrap_or(Path::new("."));
    let stem = db.file_stem().and_then(|s| s.to_str()).unwrap_or("pitwall");
    Ok(if stem == "pitwall" {
        parent.join("report")
    } else {
        parent.join(format!("{stem}-report"))
    })
}

/// Writes the HTML report to `out` after measuring; a failure is only a warning.
pub(super) fn report_after(g: &Global, config: &Config, store: &dyn Store, out: &Path) {
    match write_report(config, store, out) {
        Ok(_) if !g.quiet => eprintln!("report: {}", out.join("index.html").display()),
        Ok(_) => {}
        Err(f) => eprintln!("warning: report not written: {:#}", f.error),
    }
}

/// A measured pair: where it was stored, its comparison table and (unless `no_report`) the
/// HTML report. The exit class: a partial run is infrastructure, else the verdict.
pub(super) fn print_pair(
    g: &Global,
    config: &Config,
    store: &mut dyn Store,
    pair: &MeasuredPair,
    report: Option<&Path>,
) -> ExitClass {
    let outcome = &pair.outcome;
    if !g.quiet {
        eprintln!(
            "stored base run {} and head run {} (pair {}, {} rounds{}) in {}",
            outcome.base.run.id,
            outcome.head.run.id,
            outcome
                .base
                .run
                .pair
                .as_ref()
                .map(|p| p.id.clone())
                .unwrap_or_default(),
            outcome.rounds,
            match outcome.stop {
                PairStop::Fixed => "",
                PairStop::AllDecided => ", every benchmark decided or given up",
                PairStop::MaxRounds => ", stopped at --max-rounds",
                PairStop::MaxTime => ", stopped at --max-time",
            },
            store.describe()
        );
    }
    print!(
        "{}",
        pitwall_reports::compare::render_table(&outcome.comparison)
    );
    if let Some(out) = report {
        report_after(g, config, store, out);
    }
    if pair.partial() {
        ExitClass::Infra
    } else {
        ExitClass::of_comparison(&outcome.comparison)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_goes_beside_its_store() {
        let at = |named: Option<&str>, described: &str| {
            report_dir_for(named.map(Path::new), described).map(|p| p.display().to_string())
        };
        assert_eq!(
            at(None, "sqlite:.pitwall/pitwall.db").unwrap(),
            ".pitwall/report"
        );
        assert_eq!(
            at(None, "sqlite:/data/shared.db").unwrap(),
            "/data/shared-report"
        );
        assert_eq!(at(None, "sqlite:/data/pitwall.db").unwrap(), "/data/report");
        assert_eq!(at(Some("out"), "sqlite:/data/pitwall.db").unwrap(), "out");
        assert_eq!(at(Some("out"), "postgres://pw@db/pitwall").unwrap(), "out");
        let e = at(None, "postgres://pw@db/pitwall").unwrap_err();
        assert!(
            e.contains("has no directory for the HTML report") && e.contains("--report-dir"),
            "{e}"
        );
    }
}
