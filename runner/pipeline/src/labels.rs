//! Which series a stored run belongs to: its branch, testbed and role, chosen once for `run`,
//! `ci` and `import` from the flags, `pitwall.toml` and the CI job's variables, so every use
//! case labels runs by the same rules (docs/CONFIG.md, "Branches, testbeds and roles"), and
//! which stored runs a history reads ([`SeriesFilter`]), and which commits a branch's history
//! can hold at all: those on its first-parent chain ([`first_parent_rule`]).

use pitwall_schema::{PairRole, Run, RunRole, WORKING_TREE, sanitize_testbed};

use crate::git::Repo;

use pitwall_engine::config::Config;

/// What the command line says about the runs it stores (`--branch`, `--testbed`, `--role`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelRequest {
    /// The branch of the runs (of the head, for a pair).
    pub branch: Option<String>,
    pub testbed: Option<String>,
    pub role: Option<RunRole>,
}

/// The labels runs of one command get, resolved from the request, the configuration and the
/// environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// `--branch`: wins over the branch git names.
    flag_branch: Option<String>,
    /// The CI variables' branch: used when git names none.
    ci_branch: Option<String>,
    /// The CI variables' target branch, for the base of a pair.
    base_branch: Option<String>,
    testbed: Option<String>,
    role: Option<RunRole>,
}

impl Labels {
    /// Branch: `--branch`, else the branch git names for the run, else the CI variables
    /// (`pitwall_forge::ci::HEAD_BRANCH_VARS`; `BASE_BRANCH_VARS` for the base of a pair),
    /// else none. Testbed: `--testbed`, else `[testbed] name`, else derived from the run's
    /// fingerprint (host and GPU; `unknown` for other tools' results). Role: `--role`, else
    /// what the run implies (`pr-base`/`pr-head` for the sides of a pair, else `history`).
    pub fn resolve(
        config: &Config,
        req: &LabelRequest,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Labels {
        Labels {
            flag_branch: req
                .branch
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            ci_branch: pitwall_forge::ci::head_branch(var),
            base_branch: pitwall_forge::ci::base_branch(var),
            testbed: req
                .testbed
                .as_deref()
                .map(sanitize_testbed)
                .or_else(|| config.testbed.clone()),
            role: req.role,
        }
    }

    /// [`Labels::resolve`] with this process's environment.
    pub fn from_env(config: &Config, req: &LabelRequest) -> Labels {
        Labels::resolve(config, req, &|n| std::env::var(n).ok())
    }

    /// These labels with every stored run given `role` (`pitwall calibrate`'s pair).
    pub fn with_role(mut self, role: RunRole) -> Labels {
        self.role = Some(role);
        self
    }

    /// The testbed a run measured here gets: `--testbed`, else `[testbed] name`, else the one
    /// this machine's fingerprint implies.
    pub fn testbed_here(&self) -> String {
        self.testbed.clone().unwrap_or_else(|| {
            pitwall_schema::default_testbed(&pitwall_host::fingerprint::current())
        })
    }

    /// Labels a run measured here, or read from another tool's results, before it is stored.
    pub fn apply(&self, run: &mut Run) {
        let base = run.pair.as_ref().map(|p| p.role) == Some(PairRole::Base);
        run.branch = if base {
            run.branch.take().or_else(|| self.base_branch.clone())
        } else {
            self.flag_branch
                .clone()
                .or_else(|| run.branch.take())
                .or_else(|| self.ci_branch.clone())
        };
        if let Some(t) = &self.testbed {
            run.testbed = Some(t.clone());
        }
        if let Some(r) = self.role {
            run.role = Some(r);
        }
        run.fill_labels();
    }

    /// Labels a run read from a pitwall export: it keeps what it records, and what it lacks
    /// comes from what it implies (its fingerprint's testbed, its pair's role), as the store
    /// migration gives old runs, so importing an old export twice stays idempotent. The flags
    /// fill only what the run does not record.
    pub fn apply_exported(&self, run: &mut Run) {
        if run.branch.is_none() {
            run.branch = self.flag_branch.clone();
        }
        if run.testbed.is_none() {
            run.testbed = self.testbed.clone();
        }
        if run.role.is_none() {
            run.role = self.role;
        }
        run.fill_labels();
    }
}

/// A branch's history is its first-parent chain: a `history` run of a commit that is not on the
/// chain of the branch it counts for (its own, else `history_branch`), such as a commit of a
/// branch merged into it, is still stored, but as a `local` run with no branch, which no
/// history holds. Returns the warning that says so, naming the commit and the branch. Runs of
/// the working tree or of other roles, and commits `repo` cannot place (no such branch here, a
/// shallow clone), are left as they are.
pub fn first_parent_rule(run: &mut Run, repo: &Repo, history_branch: &str) -> Option<String> {
    if run.role_or_implied() != RunRole::History || run.commit == WORKING_TREE {
        return None;
    }
    let branch = run
        .branch
        .clone()
        .unwrap_or_else(|| history_branch.to_string());
    if repo.on_first_parent_history(&run.commit, &branch)? {
        return None;
    }
    keep_out_of_history(run);
    let short: String = run.commit.chars().take(12).collect();
    Some(format!(
        "commit {short} is not on {branch}'s first-parent history (a merged branch's commit): stored as a `local` run, not part of {branch}'s history (hint: pass --branch naming a branch whose first-parent history has it)"
    ))
}

/// What [`first_parent_rule`] does to a run of a commit off its branch's chain: role `local`,
/// no branch, so no history holds it.
pub fn keep_out_of_history(run: &mut Run) {
    run.role = Some(RunRole::Local);
    run.branch = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn run(branch: Option<&str>, pair: Option<PairRole>) -> Run {
        let mut doc: serde_json::Value = serde_json::json!({
            "id": "0190f0c0-0000-7000-8000-000000000001",
            "project": "toy",
            "commit": "working tree",
            "started_at": "2026-12-02T10:00:00Z",
            "finished_at": "2026-12-02T10:01:00Z",
            "config_hash": "c",
            "fingerprint": {"hostname": "node07.example", "os": "linux", "arch": "x86_64"},
            "status": "failed",
            "results": []
        });
        if let Some(b) = branch {
            doc["branch"] = b.into();
        }
        if let Some(p) = pair {
            doc["pair"] = serde_json::json!({"id": "p", "role": p, "rounds": 3});
        }
        serde_json::from_value(doc).unwrap()
    }

    fn labels(req: LabelRequest, vars: &[(&str, &str)], testbed: Option<&str>) -> Labels {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut config = Config::builtin_default("toy");
        config.testbed = testbed.map(str::to_string);
        Labels::resolve(&config, &req, &|n| vars.get(n).cloned())
    }

    #[test]
    fn a_plain_run_is_history_on_its_git_branch_and_this_host() {
        let l = labels(LabelRequest::default(), &[], None);
        let mut r = run(Some("main"), None);
        l.apply(&mut r);
        assert_eq!(r.branch.as_deref(), Some("main"));
        assert_eq!(r.testbed.as_deref(), Some("cpu-node07"));
        assert_eq!(r.role, Some(RunRole::History));
    }

    #[test]
    fn ci_variables_name_the_branch_git_does_not() {
        let vars = [
            ("GITHUB_REF_NAME", "17/merge"),
            ("GITHUB_HEAD_REF", "feature/x"),
            ("GITHUB_BASE_REF", "main"),
        ];
        let l = labels(LabelRequest::default(), &vars, None);
        let (mut base, mut head) = (
            run(None, Some(PairRole::Base)),
            run(None, Some(PairRole::Head)),
        );
        l.apply(&mut base);
        l.apply(&mut head);
        assert_eq!(base.branch.as_deref(), Some("main"));
        assert_eq!(base.role, Some(RunRole::PrBase));
        assert_eq!(head.branch.as_deref(), Some("feature/x"));
        assert_eq!(head.role, Some(RunRole::PrHead));
        // A push job: only the pushed branch is set; a blank variable counts as unset.
        let gl = [
            ("GITHUB_HEAD_REF", " "),
            ("CI_COMMIT_REF_NAME", "release-2"),
        ];
        let mut r = run(None, None);
        labels(LabelRequest::default(), &gl, None).apply(&mut r);
        assert_eq!(r.branch.as_deref(), Some("release-2"));
        let mr = [
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "topic"),
            ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "develop"),
            ("CI_COMMIT_REF_NAME", "topic"),
        ];
        let mut base = run(None, Some(PairRole::Base));
        labels(LabelRequest::default(), &mr, None).apply(&mut base);
        assert_eq!(base.branch.as_deref(), Some("develop"));
        // git's branch wins over the variables.
        let mut r = run(Some("main"), None);
        labels(LabelRequest::default(), &vars, None).apply(&mut r);
        assert_eq!(r.branch.as_deref(), Some("main"));
    }

    #[test]
    fn flags_win_over_config_git_and_variables() {
        let req = LabelRequest {
            branch: Some("nightly".into()),
            testbed: Some("Rack 4/H200".into()),
            role: Some(RunRole::History),
        };
        let l = labels(req, &[("GITHUB_HEAD_REF", "x")], Some("from-config"));
        let mut r = run(Some("main"), Some(PairRole::Head));
        l.apply(&mut r);
        assert_eq!(r.branch.as_deref(), Some("nightly"));
        assert_eq!(r.testbed.as_deref(), Some("rack-4-h200"));
        assert_eq!(r.role, Some(RunRole::History));
        let mut r = run(None, None);
        labels(LabelRequest::default(), &[], Some("from-config")).apply(&mut r);
        assert_eq!(r.testbed.as_deref(), Some("from-config"));
    }

    #[test]
    fn exported_runs_keep_what_they_record() {
        let req = LabelRequest {
            branch: Some("flag".into()),
            testbed: Some("flag-bed".into()),
            role: None,
        };
        let l = labels(req, &[], None);
        let mut r = run(Some("main"), Some(PairRole::Base));
        r.testbed = Some("recorded".into());
        l.apply_exported(&mut r);
        assert_eq!(r.branch.as_deref(), Some("main"));
        assert_eq!(r.testbed.as_deref(), Some("recorded"));
        assert_eq!(r.role, Some(RunRole::PrBase));
        let mut old = run(None, None);
        labels(LabelRequest::default(), &[("GITHUB_REF_NAME", "x")], None).apply_exported(&mut old);
        assert_eq!(
            old.branch, None,
            "variables describe this job, not the export"
        );
        assert_eq!(old.testbed.as_deref(), Some("cpu-node07"));
    }

    #[test]
    fn a_pushed_tag_is_not_a_branch() {
        let tag_push = [
            ("GITHUB_REF_NAME", "v1.4"),
            ("GITHUB_REF_TYPE", "tag"),
            ("GITHUB_REF", "refs/tags/v1.4"),
        ];
        assert_eq!(
            labels(LabelRequest::default(), &tag_push, None).ci_branch,
            None
        );
        let gitlab_tag = [("CI_COMMIT_REF_NAME", "v1.4"), ("CI_COMMIT_TAG", "v1.4")];
        assert_eq!(
            labels(LabelRequest::default(), &gitlab_tag, None).ci_branch,
            None
        );
        let branch_push = [("GITHUB_REF_NAME", "main"), ("GITHUB_REF_TYPE", "branch")];
        assert_eq!(
            labels(LabelRequest::default(), &branch_push, None)
                .ci_branch
                .as_deref(),
            Some("main")
        );
    }
}
