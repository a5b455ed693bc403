//! Which commits are on a branch's first-parent history (`Repo::on_first_parent_history`), on a
//! real temporary repository with a `--no-ff` merge.

use super::Repo;
use pitwall_e2e::git;

#[test]
fn a_merged_branchs_commits_are_not_on_the_branchs_first_parent_history() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let commit = |msg: &str| {
        std::fs::write(d.join(msg), "\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", msg]);
        git(d, &["rev-parse", "HEAD"])
    };
    git(d, &["init", "-q", "-b", "main"]);
    let m0 = commit("m0");
    git(d, &["checkout", "-q", "-b", "feature"]);
    let f1 = commit("f1");
    git(d, &["checkout", "-q", "main"]);
    let m1 = commit("m1");
    git(d, &["merge", "-q", "--no-ff", "-m", "merge", "feature"]);
    let merge = git(d, &["rev-parse", "HEAD"]);
    // A commit ahead of the local branch (a pushed commit main has not caught up with).
    git(d, &["checkout", "-q", "--detach"]);
    let ahead = commit("ahead");
    let repo = Repo::discover(d).unwrap();
    for sha in [&m0, &m1, &merge, &ahead] {
        assert_eq!(
            repo.on_first_parent_history(sha, "main"),
            Some(true),
            "{sha}"
        );
    }
    assert_eq!(repo.on_first_parent_history(&f1, "main"), Some(false));
    assert_eq!(repo.on_first_parent_history(&f1, "feature"), Some(true));
    assert_eq!(repo.on_first_parent_history(&m1, "feature"), Some(false));
    assert_eq!(
        repo.on_first_parent_history(&m0, "trunk"),
        None,
        "no such branch"
    );
}
