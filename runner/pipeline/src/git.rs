//! Exact commits: resolving revisions with libgit2 and checking each commit out into a cached,
//! detached worktree under `.pitwall/worktrees/<sha>`, so a run means "this commit" and a
//! second run of the same commit reuses its checkout and build.

use std::path::{Path, PathBuf};
use std::process::Command;

use git2::{BranchType, Oid, Repository, StatusOptions, WorktreeAddOptions};
use pitwall_schema::CommitInfo;

/// What is said, once, when runs are stored from a shallow clone.
pub const SHALLOW_CLONE: &str = "this is a shallow clone: no first-parent position is recorded, so histories order these runs by commit date (hint: fetch the whole history, e.g. `git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout)";

/// A commit a run measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCommit {
    /// The revision as the user wrote it.
    pub rev: String,
    pub sha: String,
    /// The branch the revision names (or HEAD's branch when it resolves to HEAD).
    pub branch: Option<String>,
    pub info: CommitInfo,
}

/// A checked-out commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub path: PathBuf,
    /// The worktree existed already (clean, at the right commit) and was reused.
    pub reused: bool,
}

/// Git failures, each naming the revision or worktree at fault.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error(
        "{dir} is not inside a git repository (hint: run pitwall in the repository, or pass --repo DIR)"
    )]
    NotARepo { dir: String },
    #[error(
        "unknown revision `{rev}` (hint: check the name, or fetch it first: git fetch origin {rev})"
    )]
    BadRev { rev: String },
    #[error("revision `{rev}` is not a commit")]
    NotACommit { rev: String },
    #[error(
        "good `{good}` is not an ancestor of bad `{bad}` (hint: the good commit must come first in the history)"
    )]
    NotAncestor { good: String, bad: String },
    #[error(
        "worktree for commit {sha} at {path} is dirty ({detail}) (hint: pass --rebuild to recreate it)"
    )]
    DirtyWorktree {
        sha: String,
        path: String,
        detail: String,
    },
    #[error("commit {sha}: cannot check out into {path}: {source}")]
    Checkout {
        sha: String,
        path: String,
        #[source]
        source: git2::Error,
    },
    #[error("commit {sha}: submodules failed: {detail}")]
    Submodules { sha: String, detail: String },
    #[error("git: {0}")]
    Other(#[from] git2::Error),
}

/// The repository being measured.
pub struct Repo {
    repo: Repository,
    root: PathBuf,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo").field("root", &self.root).finish()
    }
}

impl Repo {
    /// The repository containing `dir`.
    pub fn discover(dir: &Path) -> Result<Repo, GitError> {
        let repo = Repository::discover(dir).map_err(|_| GitError::NotARepo {
            dir: dir.display().to_string(),
        })?;
        let root = repo
            .workdir()
            .map(Path::to_path_buf)
            .ok_or_else(|| GitError::NotARepo {
                dir: dir.display().to_string(),
            })?;
        Ok(Repo { repo, root })
    }

    /// The working directory of the repository.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a revision (sha, prefix, branch, tag, `HEAD~2`…) to a commit.
    pub fn resolve(&self, rev: &str) -> Result<ResolvedCommit, GitError> {
        let obj = self
            .repo
            .revparse_single(rev)
            .map_err(|_| GitError::BadRev {
                rev: rev.to_string(),
            })?;
        let commit = obj.peel_to_commit().map_err(|_| GitError::NotACommit {
            rev: rev.to_string(),
        })?;
        let branch = if self.repo.find_branch(rev, BranchType::Local).is_ok() {
            Some(rev.to_string())
        } else if rev == "HEAD" {
            self.repo
                .head()
                .ok()
                .filter(|h| h.is_branch())
                .and_then(|h| h.shorthand().ok().map(str::to_string))
        } else {
            None
        };
        let author = commit.author();
        let when = author.when();
        // At the author's own offset; one git cannot express is shown in UTC.
        let date = pitwall_schema::time::rfc3339_at_offset(when.seconds(), when.offset_minutes())
            .or_else(|| pitwall_schema::time::rfc3339_at_offset(when.seconds(), 0))
            .unwrap_or_default();
        Ok(ResolvedCommit {
            rev: rev.to_string(),
            sha: commit.id().to_string(),
            branch,
            info: CommitInfo {
                first_parent_position: self.first_parent_position(commit.id()),
                author: format!(
                    "{} <{}>",
                    author.name().unwrap_or(""),
                    author.email().unwrap_or("")
                ),
                date,
                subject: commit.summary().ok().flatten().unwrap_or("").to_string(),
            },
        })
    }

    /// Whether this is a shallow clone: its history is cut, so first-parent positions would be
    /// wrong and none are recorded (histories then fall back to commit dates).
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow()
    }

    /// How many commits `git rev-list --first-parent OID` lists (1 for a root commit): the
    /// commit's place on its first-parent chain, which orders a branch's history as git does.
    /// `None` in a shallow clone, or when the walk fails.
    fn first_parent_position(&self, oid: Oid) -> Option<u64> {
        if self.repo.is_shallow() {
            return None;
        }
        let mut walk = self.repo.revwalk().ok()?;
        walk.push(oid).ok()?;
        walk.simplify_first_parent().ok()?;
        let mut n = 0u64;
        for step in walk {
            step.ok()?;
            n += 1;
        }
        Some(n)
    }

    /// Whether commit `sha` is on `branch`'s history, a branch's history being its first-parent
    /// chain (what `git rev-list --first-parent BRANCH` lists, asv's convention): on the chain of
    /// the local branch or of a remote-tracking one of that name (`origin/BRANCH`), or ahead of
    /// one along its own first parents (a pushed commit the local branch has not caught up
    /// with). `None` when no branch of that name is here, in a shallow clone (its chains are
    /// cut), or when the walk fails: nothing can be told.
    pub fn on_first_parent_history(&self, sha: &str, branch: &str) -> Option<bool> {
        if self.repo.is_shallow() {
            return None;
        }
        let oid = Oid::from_str(sha).ok()?;
        let mut tips = self.branch_tips(branch);
        // The local branch and `origin/BRANCH` are usually the same commit: walk it once.
        tips.sort_unstable();
        tips.dedup();
        if tips.is_empty() {
            return None;
        }
        for tip in tips {
            if self.first_parent_reaches(tip, oid)? || self.first_parent_reaches(oid, tip)? {
                return Some(true);
            }
        }
        Some(false)
    }

    /// The commits `branch` names here: the local branch, and each remote's of that name.
    fn branch_tips(&self, branch: &str) -> Vec<Oid> {
        let mut names = vec![(branch.to_string(), BranchType::Local)];
        if let Ok(remotes) = self.repo.remotes() {
            for remote in remotes.iter().flatten().flatten() {
                names.push((format!("{remote}/{branch}"), BranchType::Remote));
            }
        }
        names
            .iter()
            .filter_map(|(name, kind)| self.repo.find_branch(name, *kind).ok())
            .filter_map(|b| b.get().peel_to_commit().ok().map(|c| c.id()))
            .collect()
    }

    /// Whether `to` is on the first-parent chain that starts at `from` (`from` included).
    fn first_parent_reaches(&self, from: Oid, to: Oid) -> Option<bool> {
        if from == to {
            return Some(true);
        }
        if !self.repo.graph_descendant_of(from, to).ok()? {
            return Some(false);
        }
        let mut walk = self.repo.revwalk().ok()?;
        walk.push(from).ok()?;
        walk.simplify_first_parent().ok()?;
        for step in walk {
            if step.ok()? == to {
                return Some(true);
            }
        }
        Some(false)
    }

    /// The revisions `spec` names, oldest first: `A..B` is the full shas of the first-parent
    /// commits after A up to B ([`Repo::first_parent_range`], asv's convention for a range);
    /// anything else is `spec` itself, once it resolves (a branch name keeps naming the
    /// branch).
    pub fn expand(&self, spec: &str) -> Result<Vec<String>, GitError> {
        match spec.split_once("..") {
            Some((a, b)) if !a.is_empty() && !b.is_empty() && !b.starts_with('.') => Ok(self
                .first_parent_range(&self.resolve(a)?, &self.resolve(b)?)?
                .into_iter()
                .map(|c| c.sha)
                .collect()),
            _ => self.resolve(spec).map(|_| vec![spec.to_string()]),
        }
    }

    /// The whole message of commit `sha` (subject and body), `None` when the repository does
    /// not have it: what a write-up reads a pull request's number and title from.
    pub fn message(&self, sha: &str) -> Option<String> {
        let oid = Oid::from_str(sha).ok()?;
        let commit = self.repo.find_commit(oid).ok()?;
        commit.message().ok().map(str::to_string)
    }

    /// The first-parent commits after `good` up to and including `bad`, oldest first (what
    /// `git rev-list --first-parent --reverse good..bad` lists). `good` must be an ancestor of
    /// `bad`.
    pub fn first_parent_range(
        &self,
        good: &ResolvedCommit,
        bad: &ResolvedCommit,
    ) -> Result<Vec<ResolvedCommit>, GitError> {
        let (g, b) = (Oid::from_str(&good.sha)?, Oid::from_str(&bad.sha)?);
        if g == b || !self.repo.graph_descendant_of(b, g)? {
            return Err(GitError::NotAncestor {
                good: good.rev.clone(),
                bad: bad.rev.clone(),
            });
        }
        let mut walk = self.repo.revwalk()?;
        walk.push(b)?;
        walk.hide(g)?;
        walk.simplify_first_parent()?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
        walk.map(|oid| self.resolve(&oid?.to_string())).collect()
    }

    /// HEAD's sha, its branch, and whether tracked files differ from it (for working-tree runs).
    pub fn head_state(&self) -> Option<(String, Option<String>, bool)> {
        let head = self.repo.head().ok()?;
        let sha = head.peel_to_commit().ok()?.id().to_string();
        let branch = head
            .is_branch()
            .then(|| head.shorthand().ok().map(str::to_string))
            .flatten();
        Some((
            sha,
            branch,
            !tracked_changes(&self.repo).unwrap_or_default().is_empty(),
        ))
    }

    /// Checks `commit` out, detached, into `cache_dir/<sha>`, reusing a clean existing one.
    /// With `recreate`, an existing worktree is removed first.
    pub fn checkout(
        &self,
        commit: &ResolvedCommit,
        cache_dir: &Path,
        recreate: bool,
    ) -> Result<Checkout, GitError> {
        let sha = &commit.sha;
        let path = cache_dir.join(sha);
        let name = format!("pitwall-{}", &sha[..12]);
        if path.exists() && recreate {
            self.remove_worktree(&name, &path);
        }
        if path.exists() {
            let wt = Repository::open(&path).map_err(|e| GitError::Checkout {
                sha: sha.clone(),
                path: path.display().to_string(),
                source: e,
            })?;
            let head = wt
                .head()
                .ok()
                .and_then(|h| h.target())
                .map(|o| o.to_string());
            if head.as_deref() != Some(sha.as_str()) {
                return Err(GitError::DirtyWorktree {
                    sha: sha.clone(),
                    path: path.display().to_string(),
                    detail: format!("HEAD is {}", head.unwrap_or_else(|| "unborn".into())),
                });
            }
            let changed = tracked_changes(&wt)?;
            if !changed.is_empty() {
                return Err(GitError::DirtyWorktree {
                    sha: sha.clone(),
                    path: path.display().to_string(),
                    detail: format!("changed: {}", changed.join(", ")),
                });
            }
            return Ok(Checkout { path, reused: true });
        }
        std::fs::create_dir_all(cache_dir).map_err(|e| GitError::Checkout {
            sha: sha.clone(),
            path: path.display().to_string(),
            source: git2::Error::from_str(&e.to_string()),
        })?;
        // Keep pitwall's cache out of the user's `git status`.
        if let Some(pitwall_dir) = cache_dir.parent() {
            let ignore = pitwall_dir.join(".gitignore");
            if !ignore.exists() {
                let _ = std::fs::write(ignore, "*\n");
            }
        }
        // A stale registration (its directory deleted by hand) would block the name.
        if let Ok(old) = self.repo.find_worktree(&name) {
            if old.validate().is_err() {
                let _ = old.prune(Some(git2::WorktreePruneOptions::new().working_tree(true)));
            }
        }
        let err = |e: git2::Error| GitError::Checkout {
            sha: sha.clone(),
            path: path.display().to_string(),
            source: e,
        };
        let oid = Oid::from_str(sha).map_err(err)?;
        let target = self.repo.find_commit(oid).map_err(err)?;
        // libgit2 adds worktrees on a branch; add on a temporary one, detach, then delete it.
        let mut branch = self.repo.branch(&name, &target, true).map_err(err)?;
        let reference = branch.get().name().map(str::to_string).map_err(err)?;
        let reference = self.repo.find_reference(&reference).map_err(err)?;
        let mut opts = WorktreeAddOptions::new();
        opts.reference(Some(&reference));
        self.repo.worktree(&name, &path, Some(&opts)).map_err(err)?;
        let wt = Repository::open(&path).map_err(err)?;
        wt.set_head_detached(oid).map_err(err)?;
        wt.checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
            .map_err(err)?;
        branch.delete().map_err(err)?;
        if path.join(".gitmodules").exists() {
            init_submodules(sha, &path)?;
        }
        Ok(Checkout {
            path,
            reused: false,
        })
    }

    fn remove_worktree(&self, name: &str, path: &Path) {
        let _ = std::fs::remove_dir_all(path);
        if let Ok(wt) = self.repo.find_worktree(name) {
            let _ = wt.prune(Some(
                git2::WorktreePruneOptions::new()
                    .valid(true)
                    .working_tree(true),
            ));
        }
    }
}

/// Paths of tracked files that differ from HEAD (untracked and ignored files do not count:
/// builds create them).
fn tracked_changes(repo: &Repository) -> Result<Vec<String>, GitError> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(false)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut opts))?;
    Ok(statuses
        .iter()
        .filter_map(|s| s.path().ok().map(str::to_string))
        .take(5)
        .collect())
}

/// `git submodule update --init --recursive` in the worktree (libgit2 here has no transport for
/// remote URLs; the git CLI uses the user's credentials and configuration).
fn init_submodules(sha: &str, path: &Path) -> Result<(), GitError> {
    let out = Command::new("git")
        .args(["submodule", "update", "--init", "--recursive"])
        .current_dir(path)
        .output()
        .map_err(|e| GitError::Submodules {
            sha: sha.to_string(),
            detail: format!(
                "cannot run git: {e} (hint: install git for repositories with submodules)"
            ),
        })?;
    if !out.status.success() {
        let tail = String::from_utf8_lossy(&out.stderr);
        return Err(GitError::Submodules {
            sha: sha.to_string(),
            detail: tail.lines().last().unwrap_or("").to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
