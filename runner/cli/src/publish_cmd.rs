//! `pitwall report`, `pitwall comment` and `pitwall ci`: the HTML report and what goes to GitHub.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use pitwall_pipeline::config::Config;
use pitwall_pipeline::git::Repo;
use pitwall_pipeline::{compare, source};
use pitwall_stats::ab::AbConfig;
use pitwall_store::{OpenMode, Store};

use super::analyze_cmd::{resolve_side, store_for};
use super::args::{CiArgs, CommentArgs, Format, GithubArgs, Global, ReportArgs, RunArgs};
use super::commands::{load_config, open_store};
use super::exit::{self, Failure};
use super::run_cmd::cmd_run;

/// Default report directory.
pub(super) const REPORT_DIR: &str = ".pitwall/report";

pub(super) fn cmd_report(g: &Global, a: &ReportArgs) -> Result<u8, Failure> {
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
    Ok(exit::OK)
}

/// Writes the HTML report of every stored run, with the latest interleaved pair (or else the
/// two latest runs) as its comparison.
pub(super) fn write_report(
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
            let side = |r: &pitwall_schema::Run| source::Side {
                label: format!("run {}", r.id),
                results: r.results.clone(),
                run: Some(r.clone()),
            };
            Some((
                "latest run vs the one before (separate runs: noise between runs is not in the samples; `pitwall run --base --head` interleaves)".to_string(),
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
    let generated_at = pitwall_pipeline::run::now_rfc3339();
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

pub(super) fn cmd_comment(g: &Global, a: &CommentArgs) -> Result<u8, Failure> {
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

/// Compares, renders the pull-request comment and publishes it with a commit status.
pub(super) fn publish(
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

pub(super) fn cmd_ci(g: &Global, a: &CiArgs) -> Result<u8, Failure> {
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
    let run = RunArgs {
        suites: Vec::new(),
        bench: None,
        format: Format::Table,
        no_report: false,
        commits: Vec::new(),
        base: Some(a.base.clone()),
        head: Some(a.head.clone()),
        rounds: Some(a.rounds),
        until_decided: config.ci.until_decided,
        max_rounds: Some(a.max_rounds.unwrap_or(config.ci.max_rounds)),
        max_time: a.max_time,
        rebuild: false,
        repo: None,
    };
    let measured = cmd_run(g, &run)?;
    if measured == exit::INFRA {
        return Ok(exit::INFRA);
    }
    let store = open_store(g, &config, OpenMode::Existing)?;
    let (baseline, candidate) = source::resolve_pair("latest", store.as_ref())
        .context("the pair just measured")
        .map_err(Failure::usage)?;
    publish(g, &config, &a.github, &baseline, &candidate)
}
