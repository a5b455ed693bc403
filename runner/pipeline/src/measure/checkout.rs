//! The commits a measuring use case checks out and builds: `--commit` revisions expanded
//! (`A..B` ranges along the first parent), each resolved, checked out into its cached
//! worktree and built, a failed build stored as a failed run. Split from `measure.rs`, whose
//! use cases share it.

use std::path::Path;

use super::{MeasureError, Measurer, insert};
use crate::cancel;
use crate::git::Repo;
use crate::request::Target;
use crate::run::{build, failed_build_run};
use pitwall_engine::{Step, process_redactor};
use pitwall_store::Store;

/// `--commit` revisions as full shas in the order they are measured: each `A..B` becomes its
/// first-parent range, oldest first. In a shallow clone, says once that no first-parent
/// position can be recorded.
pub(super) fn expand_revisions(
    m: &Measurer,
    repo_dir: &Path,
    revs: &[String],
) -> Result<Vec<String>, MeasureError> {
    let repo = Repo::discover(repo_dir).map_err(MeasureError::Repo)?;
    if repo.is_shallow() {
        m.hooks
            .observer()
            .warning("history", crate::git::SHALLOW_CLONE);
    }
    let mut out = Vec::new();
    for rev in revs {
        out.extend(repo.expand(rev).map_err(MeasureError::Repo)?);
    }
    Ok(out)
}

/// Resolves every revision (before measuring anything), checks each out in the cached
/// worktrees (telling the observer, under its label) and builds it. A failed build is stored as
/// a failed run with its log tail and the others go on; the flag says whether one failed.
pub(super) fn checkout_and_build(
    m: &Measurer,
    store: &mut dyn Store,
    repo_dir: &Path,
    revs: &[String],
    labels: &[String],
    rebuild: bool,
) -> Result<(Vec<Target>, bool), MeasureError> {
    let repo = Repo::discover(repo_dir).map_err(MeasureError::Repo)?;
    let commits = revs
        .iter()
        .map(|r| repo.resolve(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(MeasureError::Repo)?;
    let cache = repo.root().join(".pitwall").join("worktrees");
    let mut targets = Vec::new();
    let mut failed = false;
    let observer = m.hooks.observer();
    for (i, c) in commits.iter().enumerate() {
        observer.step(&Step::Checkout {
            label: labels.get(i).map_or("commit", String::as_str),
            sha: &c.sha,
            subject: &c.info.subject,
        });
        let checkout = repo
            .checkout(c, &cache, rebuild)
            .map_err(MeasureError::Checkout)?;
        let target = Target {
            checkout: checkout.path,
            commit: c.sha.clone(),
            branch: c.branch.clone(),
            commit_info: Some(c.info.clone()),
        };
        let marker = cache.join(format!("{}.build", c.sha));
        let built = build(m.config, &target, Some(&marker), rebuild, observer);
        // A build killed by the signal is no failed build to store.
        cancel::check()?;
        match built {
            Ok(_) => targets.push(target),
            Err(e) => {
                // Keep the failure with its log tail, then go on with the other commits.
                let mut run = failed_build_run(m.config, &target, &e);
                // A failed build has no results: it raises no alert.
                insert(
                    m,
                    store,
                    &mut run,
                    &process_redactor(&m.config.token_vars()),
                    Some(&repo),
                )?;
                m.hooks.build_failed(&target, &run, &e, &store.describe());
                failed = true;
            }
        }
    }
    Ok((targets, failed))
}
