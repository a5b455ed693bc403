//! What goes to the forge: the comparison of two sides rendered as the sticky pull-request
//! comment, the `pitwall` check run and (when asked for) a commit status on GitHub, or the
//! sticky merge-request note on GitLab (`pitwall comment`, `pitwall ci`); and the job summary
//! (`$GITHUB_STEP_SUMMARY`).

use pitwall_engine::config::{Config, Publish};
use pitwall_pipeline::{compare, source};
use pitwall_reports::compare::ComparisonReport;
use pitwall_stats::ab::AbConfig;

use pitwall_reports::github::GithubError;

use pitwall_store::Store;

use super::args::{GithubArgs, Global};
use super::exit::{ExitClass, Failure};
use super::forge::{CiVars, Forge, api_url, publish_gitlab_note};

/// Compares, renders the comment and publishes it where the job runs: GitHub (comment, check
/// run, status as `[github] publish` says) or GitLab (the merge-request note).
pub(super) fn publish(
    g: &Global,
    config: &Config,
    gh: &GithubArgs,
    baseline: &source::Side,
    candidate: &source::Side,
    print_summary: bool,
    store: Option<&mut dyn Store>,
) -> Result<ExitClass, Failure> {
    use pitwall_reports::github::{CommentOptions, render_pr_comment};
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
        ExitClass::Usage
    } else {
        ExitClass::of_comparison(&report)
    };
    let vars = CiVars::from_env();
    write_step_summary(&vars, &body)?;
    if gh.dry_run {
        print!("{body}");
        return Ok(verdict);
    }
    let sha = gh.sha.clone().or_else(|| {
        candidate
            .run
            .as_ref()
            .map(|r| r.commit.clone())
            .filter(|c| c.len() == 40 && c.chars().all(|ch| ch.is_ascii_hexdigit()))
    });
    let done = match vars.forge() {
        Forge::Gitlab => {
            let iid = gh.pr.or(vars.merge_request()).ok_or_else(|| {
                Failure::rejected(
                    "no merge request to comment on (hint: --mr N, or run in a merge-request pipeline)"
                        .into(),
                )
            })?;
            format!(
                "merge request !{iid}: {}",
                publish_gitlab_note(config, &vars, (gh.api_url.as_deref(), g.quiet), iid, &body)?
            )
        }
        Forge::Github => publish_github(
            config,
            (gh, g.quiet),
            &vars,
            (&report, &body),
            sha,
            report_url,
            store,
        )?,
    };
    if !g.quiet {
        eprintln!("{done}");
    }
    // `ci` has printed the comparison table, summary included, already.
    if print_summary {
        println!("{}", report.summary_line());
    }
    Ok(verdict)
}

/// Publishes to GitHub what `[github] publish` names; returns what was done, for one line.
fn publish_github(
    config: &Config,
    (gh, quiet): (&GithubArgs, bool),
    vars: &CiVars,
    (report, body): (&ComparisonReport, &str),
    sha: Option<String>,
    report_url: Option<String>,
    store: Option<&mut dyn Store>,
) -> Result<String, Failure> {
    use pitwall_reports::github::{
        CheckRun, CommentOutcome, identity, publish_check, publish_comment_at, publish_status,
    };
    let targets = &config.github.publish;
    let pr = gh.pr.or(vars.pull_request());
    if targets.contains(&Publish::Comment) && pr.is_none() {
        return Err(Failure::rejected(
            "no pull request to comment on (hint: --pr N, run in a pull_request job, or leave \"comment\" out of [github] publish)"
                .into(),
        ));
    }
    let api = github_client(config, (gh, quiet), vars)?;
    let token_var = &config.github.token_env;
    let mut done = Vec::new();
    if let (true, Some(pr)) = (targets.contains(&Publish::Comment), pr) {
        let login = identity(&api, vars.is_actions_token(token_var))
            .map_err(|e| Failure::of_github("cannot tell which account the token belongs to", e))?;
        // The comment id kept in the store for this pull request is tried first.
        let target = format!("github:{}#{pr}", api.config().repo);
        let known = store
            .as_deref()
            .and_then(|s| s.forge_comment(&target).ok().flatten());
        let outcome = publish_comment_at(&api, pr, body, &login, known).map_err(|e| {
            Failure::of_github(format!("pull request {pr}: cannot publish the comment"), e)
        })?;
        let (CommentOutcome::Created(id) | CommentOutcome::Updated(id)) = outcome;
        if let Some(s) = store.filter(|_| known != Some(id)) {
            if let Err(e) = s.set_forge_comment(&target, id) {
                eprintln!("warning: cannot keep comment {id} in the store: {e}");
            }
        }
        done.push(format!("pull request {pr}: {outcome}"));
    }
    let wants_sha = targets.contains(&Publish::Check) || targets.contains(&Publish::Status);
    match (&sha, wants_sha) {
        (Some(sha), _) => {
            if targets.contains(&Publish::Check) {
                let run = CheckRun::for_report(report, body, report_url.as_deref());
                let outcome = publish_check(&api, sha, &run).map_err(|e| {
                    Failure::of_github(format!("commit {sha}: cannot set the check run"), e)
                })?;
                done.push(outcome.to_string());
            }
            if targets.contains(&Publish::Status) {
                publish_status(&api, sha, report, report_url.as_deref()).map_err(|e| {
                    Failure::of_github(format!("commit {sha}: cannot set the status"), e)
                })?;
                done.push("status set".to_string());
            }
        }
        (None, true) => done.push("no check run or status (no commit sha; hint: --sha)".into()),
        (None, false) => {}
    }
    Ok(done.join("; "))
}

/// The GitHub client for the repository and token publishing uses: the repository from
/// `--repo`, `[github] repo` or the job, the API host by the token rule (`forge::api_url`).
fn github_client(
    config: &Config,
    (gh, quiet): (&GithubArgs, bool),
    vars: &CiVars,
) -> Result<pitwall_reports::github::HttpGithub, Failure> {
    use pitwall_reports::github::{GithubConfig, HttpGithub, Secret};
    let repo = gh
        .repo
        .clone()
        .or_else(|| config.github.repo.clone())
        .or_else(|| vars.get("GITHUB_REPOSITORY"))
        .ok_or_else(|| {
            Failure::rejected(
                "no repository to publish to (hint: --repo OWNER/NAME or [github] repo)".into(),
            )
        })?;
    let api = api_url(
        Forge::Github,
        gh.api_url.as_deref(),
        Some(&config.github.api_url),
        vars,
    )?;
    if let (Some(w), false) = (&api.warning, quiet) {
        eprintln!("warning: {w}");
    }
    let token_var = &config.github.token_env;
    let token = Secret::from_env(token_var).map_err(Failure::of_github_setup)?;
    pitwall_schema::secrets::remember(token.expose());
    let mut cfg = GithubConfig::new(api.url, repo, token.clone());
    cfg.token_var = token_var.clone();
    cfg.redactor = pitwall_engine::process_redactor(&config.token_vars());
    cfg.redactor.add(token.expose());
    HttpGithub::new(cfg).map_err(Failure::of_github_setup)
}

/// What `pitwall ci` checks before it builds or measures anything (issue 28): that it can
/// publish where the job runs: the pull or merge request, the repository (or project) and
/// the token, with one authenticated GET of the repository (write permission is not
/// probed). Skipped with `--dry-run`. Every failure is a usage error (exit 2) that says
/// nothing was measured and names `pitwall comment`, which publishes a stored pair later.
pub(super) fn check_publishing(config: &Config, gh: &GithubArgs) -> Result<(), Failure> {
    if gh.dry_run {
        return Ok(());
    }
    let vars = CiVars::from_env();
    // The API-host warning, if any, is said once, when the comparison is published.
    let quiet = true;
    let checked = match vars.forge() {
        Forge::Github => check_github(config, (gh, quiet), &vars),
        Forge::Gitlab => {
            super::forge::check_gitlab(config, &vars, (gh.api_url.as_deref(), quiet), gh.pr)
        }
    };
    checked.map_err(|f| {
        let why = f.one_line();
        f.restated(format!(
            "cannot publish, so nothing was measured: {why} (hint: fix it and run again, or measure with --dry-run and publish the stored pair later with `pitwall comment`)"
        ))
    })
}

fn check_github(
    config: &Config,
    (gh, quiet): (&GithubArgs, bool),
    vars: &CiVars,
) -> Result<(), Failure> {
    let targets = &config.github.publish;
    if targets.contains(&Publish::Comment) && gh.pr.or(vars.pull_request()).is_none() {
        return Err(Failure::rejected(
            "no pull request to comment on (--pr N, a pull_request job, or leave \"comment\" out of [github] publish)".into(),
        ));
    }
    let api = github_client(config, (gh, quiet), vars)?;
    api.check_repository().map_err(|e| match e {
        // The token refused, or the repository out of its sight: the job's to fix (exit 2).
        GithubError::TokenRejected { .. }
        | GithubError::Forbidden { .. }
        | GithubError::NotFound { .. } => Failure::of_github_setup(e),
        other => Failure::of_github("cannot reach the repository", other),
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

/// Opens one GitHub issue per alert when `[github] publish` names `issue`: in `[github] repo`
/// (else the job's `GITHUB_REPOSITORY`), through the API `comment` and `ci` would use
/// (`forge::api_url`), with the token `[github] token_env` names. The issue numbers, or a
/// one-line reason (the token redacted) for the caller to warn with.
pub(super) fn open_alert_issues(
    config: &Config,
    alerts: &[pitwall_schema::Alert],
) -> Result<Vec<pitwall_reports::notify::IssueOutcome>, String> {
    use pitwall_reports::github::{GithubConfig, HttpGithub, Secret};
    if alerts.is_empty() || !config.github.publish.contains(&Publish::Issue) {
        return Ok(Vec::new());
    }
    let vars = CiVars::from_env();
    let chain = |e: &dyn std::error::Error| {
        std::iter::successors(Some(e), |e| e.source())
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(": ")
    };
    let repo = config
        .github
        .repo
        .clone()
        .or_else(|| vars.get("GITHUB_REPOSITORY"))
        .ok_or("no repository to open alert issues in (hint: [github] repo)")?;
    let api = api_url(Forge::Github, None, Some(&config.github.api_url), &vars)
        .map_err(|f| f.error.to_string())?;
    if let Some(w) = &api.warning {
        eprintln!("warning: {w}");
    }
    let api_url = api.url;
    let token_var = &config.github.token_env;
    let token = Secret::from_env(token_var).map_err(|e| chain(&e))?;
    pitwall_schema::secrets::remember(token.expose());
    let mut cfg = GithubConfig::new(api_url, repo, token.clone());
    cfg.token_var = token_var.clone();
    cfg.redactor = pitwall_engine::process_redactor(&config.token_vars());
    cfg.redactor.add(token.expose());
    let api = HttpGithub::new(cfg).map_err(|e| chain(&e))?;
    let login = pitwall_reports::github::identity(&api, vars.is_actions_token(token_var))
        .map_err(|e| chain(&e))?;
    pitwall_reports::notify::publish_issues(&api, alerts, &login).map_err(|e| chain(&e))
}
