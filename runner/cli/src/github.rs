//! What goes to the forge: the comparison of two sides rendered as the sticky pull-request
//! comment and handed to the publish use case (`pitwall comment`, `pitwall ci`), which says
//! what it published; and the job summary (`$GITHUB_STEP_SUMMARY`).

use pitwall_engine::config::Config;
use pitwall_forge::ci::CiVars;
use pitwall_pipeline::publish::{self, PublishError, PublishRequest, Publisher};
use pitwall_pipeline::{compare, source};
use pitwall_reports::compare::ComparisonReport;
use pitwall_stats::ab::AbConfig;
use pitwall_store::Store;

use super::args::{GithubArgs, Global};
use super::exit::{ExitClass, Failure};

/// The publish request the flags make.
fn request(g: &Global, gh: &GithubArgs) -> PublishRequest {
    PublishRequest {
        pr: gh.pr,
        repo: gh.repo.clone(),
        api_url: gh.api_url.clone(),
        report_url: gh.report_url.clone(),
        sha: gh.sha.clone(),
        quiet: g.quiet,
    }
}

/// A publication that failed, as the exit class and message the commands have always given.
fn failure(e: PublishError) -> Failure {
    match e {
        PublishError::Refused(message) => Failure::rejected(message),
        e @ PublishError::NoRequest { .. } => Failure::rejected(e.to_string()),
        PublishError::GithubSetup(e) => Failure::of_github_setup(e),
        PublishError::GitlabSetup(e) => Failure::of_gitlab_setup(e),
        PublishError::Github { what, source } => Failure::of_github(what, source),
        PublishError::Gitlab { what, source } => Failure::of_gitlab(what, source),
    }
}

/// The comparison `pitwall comment` publishes: of two sides it resolved, made as `compare`
/// makes it (with the testbed's `noise` book); with the number of throttled samples the
/// comment mentions.
pub(super) fn compare_sides(
    config: &Config,
    (baseline, candidate): (&source::Side, &source::Side),
    noise: &pitwall_pipeline::noise::NoiseBook,
) -> (ComparisonReport, usize) {
    let report = compare::compare(
        baseline,
        candidate,
        config,
        None,
        &AbConfig::default(),
        compare::CompareOptions::default(),
        noise,
    );
    (report, throttled_samples((baseline, candidate)))
}

/// Samples taken while the GPU was throttled, on either side.
pub(super) fn throttled_samples((baseline, candidate): (&source::Side, &source::Side)) -> usize {
    [baseline, candidate]
        .iter()
        .flat_map(|s| s.results.iter())
        .map(|r| r.sample_meta.iter().filter(|m| m.throttled).count())
        .sum()
}

/// Renders the comment of `report` (the comparison already made: `ci` passes the pair's own,
/// the one it printed) and publishes it where the job runs: GitHub (comment, check run,
/// status as `[github] publish` says) or GitLab (the merge-request note), through `checked`
/// (the client `ci` built when it checked, before measuring) or a client built now. `pair_id`
/// names the interleaved pair compared, for the link to its page on the team's server.
pub(super) fn publish(
    g: &Global,
    config: &Config,
    gh: &GithubArgs,
    (report, throttled): (&ComparisonReport, usize),
    print_summary: bool,
    (commit, pair_id, store): (Option<&str>, Option<&str>, Option<&mut dyn Store>),
    checked: Option<Publisher>,
) -> Result<ExitClass, Failure> {
    use pitwall_reports::github::{CommentOptions, render_pr_comment};
    let mut req = request(g, gh);
    // The link of the comment and the check: the flag, the file's, else the pair's page on
    // the team's server (`[serve] url`).
    req.report_url = req.report_url(config, pair_id);
    // Redacted here too, for the sinks below that are not the forge's (the job summary,
    // `--dry-run`'s stdout); the forge redacts what it sends again.
    let redactor = pitwall_engine::process_redactor(&config.token_vars());
    let body = render_pr_comment(
        report,
        &CommentOptions {
            report_url: req.report_url.clone(),
            throttled_samples: throttled,
            ..CommentOptions::default()
        },
    );
    let body = redactor.redact(&body);
    let verdict = if report.incomparable {
        ExitClass::Usage
    } else {
        ExitClass::of_comparison(report)
    };
    let vars = CiVars::from_env();
    write_step_summary(&vars, &body)?;
    if gh.dry_run {
        print!("{body}");
        return Ok(verdict);
    }
    let warn = |w: &str| eprintln!("warning: {w}");
    let publisher = match checked {
        Some(p) => p,
        None => Publisher::connect(config, &req, &vars).map_err(failure)?,
    };
    let published = publisher
        .publish(config, &req, (report, &body), commit, store, &warn)
        .map_err(failure)?;
    if !g.quiet {
        eprintln!("{}", published.done.join("; "));
    }
    // `ci` has printed the comparison table, summary included, already.
    if print_summary {
        println!("{}", report.summary_line());
    }
    Ok(verdict)
}

/// What `pitwall ci` checks before it builds or measures anything (issue 28): that it can
/// publish where the job runs (`publish::check`); the client it built, to publish with after
/// measuring. Skipped with `--dry-run` (`None`). Every failure is a usage error (exit 2) that
/// says nothing was measured and names `pitwall comment`, which publishes a stored pair later.
pub(super) fn check_publishing(
    g: &Global,
    config: &Config,
    gh: &GithubArgs,
) -> Result<Option<Publisher>, Failure> {
    if gh.dry_run {
        return Ok(None);
    }
    let checked = publish::check(config, &request(g, gh), &CiVars::from_env()).map_err(failure);
    checked.map(Some).map_err(|f| {
        let why = f.one_line();
        f.restated(format!(
            "cannot publish, so nothing was measured: {why} (hint: fix it and run again, or measure with --dry-run and publish the stored pair later with `pitwall comment`)"
        ))
    })
}

/// Appends the Markdown to the job summary file GitHub Actions names in
/// `$GITHUB_STEP_SUMMARY`, when it does.
fn write_step_summary(vars: &CiVars, body: &str) -> Result<(), Failure> {
    use std::io::Write;
    let Some(path) = vars.get("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let what = || format!("$GITHUB_STEP_SUMMARY ({path})");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Failure::of_io(what(), e))?;
    writeln!(file, "{body}").map_err(|e| Failure::of_io(what(), e))
}
