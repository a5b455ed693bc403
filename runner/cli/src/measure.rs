//! How measured runs and pairs are shown, shared by `pitwall run` and `pitwall ci`: where a
//! pair was stored, its comparison table, the HTML report written after measuring, and the
//! exit class a pair's outcome maps to.

use std::path::PathBuf;

use pitwall_pipeline::config::Config;
use pitwall_pipeline::measure::MeasuredPair;
use pitwall_pipeline::pair::PairStop;
use pitwall_store::Store;

use super::args::Global;
use super::exit::ExitClass;
use super::site::{REPORT_DIR, write_report};

/// Writes the HTML report after measuring; a failure is only a warning.
pub(super) fn report_after(g: &Global, config: &Config, store: &dyn Store) {
    let out = PathBuf::from(REPORT_DIR);
    match write_report(config, store, &out) {
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
    no_report: bool,
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
    if !no_report {
        report_after(g, config, store);
    }
    if pair.partial() {
        ExitClass::Infra
    } else {
        ExitClass::of_comparison(&outcome.comparison)
    }
}
