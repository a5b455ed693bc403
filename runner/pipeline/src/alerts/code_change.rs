//! Whether an alert's first bad commit changed any code (`[history] code_paths`): a step at a
//! commit that touched only documentation is more likely the machine or noise than the code,
//! and the alert says so ("no code changed: environment or noise suspected", issue 27). The
//! commit's files are its diff against its first parent (every file of a root commit), read
//! with libgit2 from the repository the runs measured.

use std::collections::HashMap;

use git2::{Oid, Repository};
use pitwall_engine::config::CodePaths;
use pitwall_schema::{Alert, AlertLabel};

use super::AlertSettings;

/// Labels each alert about to be stored: `NoCodeChanged` when its first bad commit touches
/// none of the code paths, none when it touches one. Where that cannot be told (no repository,
/// a commit it does not hold) the stored alert's label stays as it was for the same first bad
/// commit, and a new alert has none.
pub(super) fn label(alerts: &mut [Alert], existing: &[Alert], settings: &AlertSettings) {
    let repo = settings
        .repo
        .as_deref()
        .and_then(|d| Repository::discover(d).ok());
    let mut seen: HashMap<String, Option<Option<AlertLabel>>> = HashMap::new();
    for a in alerts.iter_mut() {
        let told = seen
            .entry(a.first_bad.clone())
            .or_insert_with(|| {
                let repo = repo.as_ref()?;
                let code = changes_code(repo, &a.first_bad, &settings.code_paths)?;
                Some((!code).then_some(AlertLabel::NoCodeChanged))
            })
            .to_owned();
        a.label = match told {
            Some(label) => label,
            None => existing
                .iter()
                .find(|e| e.id == a.id && e.first_bad == a.first_bad)
                .and_then(|e| e.label),
        };
    }
}

/// Whether commit `sha` touches a code path (added, deleted, modified or renamed from or to
/// one); `None` when the repository does not hold it.
pub(crate) fn changes_code(repo: &Repository, sha: &str, paths: &CodePaths) -> Option<bool> {
    let commit = repo.find_commit(Oid::from_str(sha).ok()?).ok()?;
    let tree = commit.tree().ok()?;
    let parent = commit.parent(0).ok().and_then(|p| p.tree().ok());
    let diff = repo
        .diff_tree_to_tree(parent.as_ref(), Some(&tree), None)
        .ok()?;
    let is_code = |f: git2::DiffFile<'_>| {
        f.path()
            .and_then(|p| p.to_str())
            .is_some_and(|p| paths.is_code(p))
    };
    Some(
        diff.deltas()
            .any(|d| is_code(d.old_file()) || is_code(d.new_file())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn commit(repo: &Repository, files: &[(&str, &str)]) -> String {
        let dir = repo.workdir().unwrap();
        let mut index = repo.index().unwrap();
        for (path, text) in files {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, text).unwrap();
            index.add_path(Path::new(path)).unwrap();
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &parents)
            .unwrap()
            .to_string()
    }

    #[test]
    fn a_commit_of_documentation_only_changes_no_code() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let paths = CodePaths::default();
        let root = commit(&repo, &[("sort.c", "int x;"), ("README.md", "# a")]);
        let docs = commit(&repo, &[("README.md", "# b"), ("docs/x.rst", "x")]);
        let code = commit(&repo, &[("sort.c", "int y;"), ("LICENSE", "MIT")]);
        assert_eq!(changes_code(&repo, &root, &paths), Some(true));
        assert_eq!(changes_code(&repo, &docs, &paths), Some(false));
        assert_eq!(changes_code(&repo, &code, &paths), Some(true));
        assert_eq!(changes_code(&repo, &"0".repeat(40), &paths), None);
        let only_src = CodePaths {
            include: vec!["src/**".into()],
            ..CodePaths::default()
        };
        assert_eq!(changes_code(&repo, &code, &only_src), Some(false));
    }
}
