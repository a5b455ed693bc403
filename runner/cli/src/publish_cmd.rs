//! `pitwall report`, `pitwall comment` and `pitwall ci`: the HTML report and what goes to GitHub.

use std::path::PathBuf;

use anyhow::{Context, anyhow};
use pitwall_pipeline::git::Repo;
use pitwall_pipeline::pair::{PairPlan, UntilDecided};
use pitwall_pipeline::run::{RunRequest, check_suites};
use pitwall_pipeline::source;
use pitwall_store::OpenMode;

use super::args::{CiArgs, CommentArgs, Global, ReportArgs};
use super::context::{load_config, open_store, resolve_side, store_for};
use super::exit::{ExitClass, Failure};
use super::github::publish;
use super::measure::{checkout_and_build, measure_and_store_pair};
use super::progress::Bars;
use super::site::{REPORT_DIR, write_report};

pub(super) fn cmd_report(g: &Global, a: &ReportArgs) -> Result<ExitClass, Failure> {
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from(REPORT_DIR));
    if out.exists() && !out.is_dir() {
        return Err(Failure::usage(anyhow!(
            "--out {}: is a file, not a directory (hint: the report is a directory of pages; name a new or existing directory)",
            out.display()
        )));
    }
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
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
    let (baseline, candidate) = match (&a.baseline, &a.candidate) {
        (Some(b), Some(c)) => {
            let store = store_for(g, &config, b, c)?;
            (
                resolve_side("--baseline", b, store.as_deref(), None)?,
                resolve_side("--candidate", c, store.as_deref(), None)?,
            )
        }
        _ => {
            let store = open_store(g, &config, OpenMode::Existing)?;
            source::resolve_pair("latest", store.as_ref())
                .context("no --baseline/--candidate given, so the latest stored pair is compared")
                .map_err(Failure::usage)?
        }
    };
    publish(g, &config, &a.github, &baseline, &candidate)
}

/// The pull-request job: build and measure `--base` and `--head` interleaved (until decided
/// when `[ci] until_decided`), store both runs, write the report, then publish the comparison
/// of exactly the pair measured here (another job's pair on a shared store is never
/// published by mistake).
pub(super) fn cmd_ci(g: &Global, a: &CiArgs) -> Result<ExitClass, Failure> {
    // `ci` has no flag naming the git repository (its --repo is the GitHub OWNER/NAME), so
    // check before measuring that it runs inside one.
    let cwd = std::env::current_dir()
        .context("cannot read the working directory")
        .map_err(Failure::infra)?;
    if Repo::discover(&cwd).is_err() {
        return Err(Failure::usage(anyhow!(
            "{} is not inside a git repository (hint: run pitwall ci in a checkout of the repository; --repo names the GitHub repository, OWNER/NAME)",
            cwd.display()
        )));
    }
    let config = load_config(g)?;
    let mut store = open_store(g, &config, OpenMode::Create)?;
    let request = RunRequest::default();
    let bars = Bars::new(g.quiet);
    check_suites(&config, &request).map_err(|e| Failure::usage(e.into()))?;
    let revs = [a.base.as_str(), a.head.as_str()];
    let built = checkout_and_build(g, &config, store.as_mut(), &cwd, &revs, false)?;
    let [base, head] = built.targets.as_slice() else {
        return Ok(ExitClass::Infra);
    };
    let plan = PairPlan {
        rounds: a.rounds,
        until_decided: config.ci.until_decided.then(|| UntilDecided {
            max_rounds: a.max_rounds.unwrap_or(config.ci.max_rounds),
            max_time: a.max_time,
        }),
    };
    let measured = measure_and_store_pair(
        g,
        &config,
        store.as_mut(),
        &request,
        base,
        head,
        &plan,
        false,
        built.class,
        &bars,
    )?;
    if measured.class == ExitClass::Infra {
        return Ok(ExitClass::Infra);
    }
    publish(g, &config, &a.github, &measured.base, &measured.head)
}
