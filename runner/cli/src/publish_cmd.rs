//! `pitwall report`, `pitwall comment` and `pitwall ci`: the HTML report and what goes to GitHub.

use pitwall_forge::ci::CiVars;
use pitwall_pipeline::measure::{CiRequest, PairResult, ci};
use pitwall_pipeline::source;
use pitwall_store::OpenMode;

use super::alert_notice::announce_alerts;
use super::args::{CiArgs, CommentArgs, Global, ReportArgs};
use super::context::{current_dir, load_config, noise_book, open_store, resolve_side, store_for};
use super::exit::{ExitClass, Failure};
use super::github::{check_publishing, compare_sides, publish, throttled_samples};
use super::measure::{print_pair, report_dir};
use super::measuring::measuring;
use super::site::write_report;

pub(super) fn cmd_report(g: &Global, a: &ReportArgs) -> Result<ExitClass, Failure> {
    if let Some(out) = a.out.as_ref().filter(|o| o.exists() && !o.is_dir()) {
        return Err(Failure::rejected(format!(
            "--out {}: is a file, not a directory (hint: the report is a directory of pages; name a new or existing directory)",
            out.display()
        )));
    }
    let config = load_config(g)?;
    super::context::database_only(g, &config, "`pitwall report`")?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    // As after `run` and `ci`: --out, else [report] dir, else beside the store.
    let out = report_dir(a.out.as_deref(), &config, store.as_ref())?
        .expect("a database store has a report directory or an error");
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
    Ok(ExitClass::Ok)
}

pub(super) fn cmd_comment(g: &Global, a: &CommentArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    // The store, when the sides come from it, also keeps the comment's id for the next time.
    let (mut store, (baseline, candidate)) = match (&a.baseline, &a.candidate) {
        (Some(b), Some(c)) => {
            let store = store_for(g, &config, b, c)?;
            let sides = (
                resolve_side("--baseline", b, store.as_deref(), None)?,
                resolve_side("--candidate", c, store.as_deref(), None)?,
            );
            (store, sides)
        }
        _ => {
            let store = open_store(g, &config, OpenMode::Existing)?;
            let sides = source::resolve_pair("latest", store.as_ref()).map_err(|e| {
                Failure::of_pair(
                    "no --baseline/--candidate given, so the latest stored pair is compared",
                    e,
                )
            })?;
            (Some(store), sides)
        }
    };
    let noise = noise_book(store.as_deref(), (&baseline, &candidate))?;
    let (report, throttled) = compare_sides(&config, (&baseline, &candidate), &noise);
    let commit = candidate.run.as_ref().map(|r| r.commit.as_str());
    let pair_id = candidate
        .run
        .as_ref()
        .and_then(|r| r.pair.as_ref())
        .map(|p| p.id.clone());
    publish(
        g,
        &config,
        &a.github,
        (&report, throttled),
        true,
        (
            commit,
            pair_id.as_deref(),
            store
                .as_mut()
                .map(|s| s.as_mut() as &mut dyn pitwall_store::Store),
        ),
        None,
    )
}

/// The pull-request job: build and measure `--base` and `--head` interleaved (until decided
/// when `[ci] until_decided`), store both runs, write the report, then publish the comparison
/// of exactly the pair measured here (another job's pair on a shared store is never
/// published by mistake).
pub(super) fn cmd_ci(g: &Global, a: &CiArgs) -> Result<ExitClass, Failure> {
    // `ci` has no flag naming the git repository (its --repo is the GitHub OWNER/NAME), so
    // the request checks before measuring that it runs inside one.
    let cwd = current_dir()?;
    let (base, head) = CiVars::from_env()
        .base_and_head(a.base.as_deref(), a.head.as_deref())
        .map_err(|e| Failure::rejected(e.to_string()))?;
    let mut request = CiRequest::new(&cwd, &base, &head, a.rounds).map_err(Failure::of_measure)?;
    request.max_rounds = a.max_rounds;
    request.max_time = a.max_time;
    let config = load_config(g)?;
    // Where the comparison goes is checked before anything is built or measured: a missing
    // or refused token must not cost a GPU runner a measurement.
    let publisher = check_publishing(g, &config, &a.github)?;
    let mut store = open_store(g, &config, OpenMode::Create)?;
    let report = report_dir(a.report_dir.as_deref(), &config, store.as_ref())?;
    let labels = pitwall_pipeline::labels::Labels::from_env(&config, &a.labels.request());
    let measured = measuring(g, &config, labels, None, |m| {
        ci(m, store.as_mut(), &request)
    })?;
    let pair = match measured.map_err(Failure::of_measure)? {
        PairResult::NotBuilt => return Ok(ExitClass::Infra),
        PairResult::Measured(pair) => pair,
    };
    announce_alerts(g, &config, &pair.new_alerts);
    if print_pair(g, &config, store.as_mut(), &pair, report.as_deref()) == ExitClass::Infra {
        return Ok(ExitClass::Infra);
    }
    // What is published is the comparison printed above: the pair's own.
    let throttled = throttled_samples((&pair.base, &pair.head));
    let commit = pair.head.run.as_ref().map(|r| r.commit.clone());
    let pair_id = pair
        .head
        .run
        .as_ref()
        .and_then(|r| r.pair.as_ref())
        .map(|p| p.id.clone());
    publish(
        g,
        &config,
        &a.github,
        (&pair.outcome.comparison, throttled),
        false,
        (commit.as_deref(), pair_id.as_deref(), Some(store.as_mut())),
        publisher,
    )
}
