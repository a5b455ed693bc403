//! What goes to GitHub: the comparison of two sides rendered as the sticky pull-request
//! comment and a commit status (`pitwall comment`, `pitwall ci`).

use pitwall_pipeline::config::Config;
use pitwall_pipeline::{compare, source};
use pitwall_stats::ab::AbConfig;

use super::args::{GithubArgs, Global};
use super::exit::{ExitClass, Failure};

/// Compares, renders the pull-request comment and publishes it with a commit status.
pub(super) fn publish(
    g: &Global,
    config: &Config,
    gh: &GithubArgs,
    baseline: &source::Side,
    candidate: &source::Side,
    print_summary: bool,
) -> Result<ExitClass, Failure> {
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
        ExitClass::Usage
    } else {
        ExitClass::of_comparison(&report)
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
            Failure::rejected(
                "no repository to publish to (hint: --repo OWNER/NAME or [github] repo)".into(),
            )
        })?;
    let api_url = gh
        .api_url
        .clone()
        .or_else(|| std::env::var("GITHUB_API_URL").ok())
        .unwrap_or_else(|| config.github.api_url.clone());
    let token = Secret::from_env(&config.github.token_env).map_err(Failure::of_github_setup)?;
    let mut cfg = GithubConfig::new(api_url, repo, token);
    cfg.token_var = config.github.token_env.clone();
    let api = HttpGithub::new(cfg).map_err(Failure::of_github_setup)?;
    let outcome = publish_comment(&api, gh.pr, &body).map_err(|e| {
        Failure::of_github(
            format!("pull request {}: cannot publish the comment", gh.pr),
            e,
        )
    })?;
    let sha = gh.sha.clone().or_else(|| {
        candidate
            .run
            .as_ref()
            .map(|r| r.commit.clone())
            .filter(|c| c.len() == 40 && c.chars().all(|ch| ch.is_ascii_hexdigit()))
    });
    if let Some(sha) = &sha {
        publish_status(&api, sha, &report, report_url.as_deref())
            .map_err(|e| Failure::of_github(format!("commit {sha}: cannot set the status"), e))?;
    }
    if !g.quiet {
        eprintln!(
            "pull request {}: {}; status {}",
            gh.pr,
            outcome,
            if sha.is_some() {
                "set"
            } else {
                "not set (no commit sha; hint: --sha)"
            }
        );
    }
    // `ci` has printed the comparison table, summary included, already.
    if print_summary {
        println!("{}", report.summary_line());
    }
    Ok(verdict)
}
