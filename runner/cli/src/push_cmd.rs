//! `pitwall ci --push`: the job of a push to a branch, or of a nightly schedule. The pushed
//! commit is measured as one `history` run of its branch (every configured suite, in its own
//! cached worktree), stored, the alerts of the series it touched refreshed and announced, and
//! the report written. Nothing is compared and no pull request is commented on; the exit is 1
//! when this run raised a regression alert, so a scheduled job turns red on a new step.

use pitwall_pipeline::measure::{CommitsRequest, Revisions, measure_commits};
use pitwall_pipeline::request::{RunReport, RunRequest};
use pitwall_reports::{OutputFormat, exporter_for};
use pitwall_schema::{AlertKind, AlertStatus, RunRole};
use pitwall_store::{OpenMode, Store};

use super::alert_notice::announce_alerts;
use super::args::{CiArgs, Global};
use super::context::{current_dir, load_config, open_store};
use super::exit::{ExitClass, Failure};
use super::measure::{report_after, report_dir};
use super::measuring::measuring;
use pitwall_forge::ci::CiVars;

pub(super) fn cmd_ci_push(g: &Global, a: &CiArgs) -> Result<ExitClass, Failure> {
    let cwd = current_dir()?;
    let commit = CiVars::from_env().pushed_commit(a.head.as_deref());
    let config = load_config(g)?;
    let mut store = open_store(g, &config, OpenMode::Create)?;
    let report = report_dir(a.report_dir.as_deref(), &config, store.as_ref())?;
    let mut labels = a.labels.request();
    if labels.role.is_none() {
        labels.role = Some(RunRole::History);
    }
    let request = CommitsRequest {
        select: RunRequest {
            suites: Vec::new(),
            filter: None,
        },
        revisions: Revisions::Commits {
            repo: cwd,
            revs: vec![commit],
            rebuild: false,
        },
    };
    let print = |r: &RunReport, store: &mut dyn Store| {
        print!(
            "{}",
            exporter_for(OutputFormat::Table).render(&r.run, &r.skipped)
        );
        if !g.quiet {
            // A commit off the branch's first-parent chain is stored `local`, in no history.
            let of = match r.run.role {
                Some(RunRole::History) | None => format!(
                    "history of {}",
                    r.run.branch.as_deref().unwrap_or("no branch")
                ),
                Some(role) => format!("{}, in no history", role.as_str()),
            };
            eprintln!(
                "stored run {} ({}, {of}) in {}",
                r.run.id,
                r.run.status.as_str(),
                store.describe()
            );
        }
    };
    let labels = pitwall_pipeline::labels::Labels::from_env(&config, &labels);
    let outcome = measuring(g, &config, labels, Some(&print), |m| {
        measure_commits(m, store.as_mut(), &request)
    })?;
    let outcome = outcome.map_err(Failure::of_measure)?;
    announce_alerts(g, &config, &outcome.new_alerts);
    if let Some(report) = &report {
        report_after(g, &config, store.as_ref(), report);
    }
    let raised = outcome
        .new_alerts
        .iter()
        .any(|a| a.kind == AlertKind::Regression && a.status == AlertStatus::Active);
    let built = if outcome.build_failed {
        ExitClass::Infra
    } else {
        ExitClass::Ok
    };
    let alerted = if raised {
        ExitClass::Regression
    } else {
        ExitClass::Ok
    };
    Ok(outcome
        .runs
        .iter()
        .map(|r| ExitClass::of_run(r.run.status))
        .fold(built.max(alerted), ExitClass::max))
}
