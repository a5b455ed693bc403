//! `pitwall writeup`: the quarterly write-up of a period as values. Reads the history of one
//! branch (one testbed or each) one series at a time (`Store::query_runs`, as the report does),
//! the stored alerts, and what is known of each commit (its `commit_info`, or the repository's
//! author, date and message, where pull requests are named), and hands them to
//! `pitwall_analysis::writeup::build`. Nothing here prints.

use std::collections::BTreeMap;

use pitwall_analysis::HistoryFilter;
use pitwall_analysis::writeup::{CommitMeta, WriteupInput, build, pull_request_of};
pub use pitwall_analysis::writeup::{Period, PeriodError, Writeup};
use pitwall_schema::{CommitInfo, Run};
use pitwall_stats::changepoint::DetectConfig;

use crate::git::Repo;
use pitwall_engine::config::Config;
use pitwall_store::{RunQuery, Store, StoreError};

/// What to write up.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteupRequest {
    pub period: Period,
    /// The history branch (`--branch`, else `[history] branch`).
    pub branch: String,
    /// Only this testbed (`--testbed`); each testbed its own series otherwise.
    pub testbed: Option<String>,
    /// Only these suites (`--suite`, repeatable); every suite when empty.
    pub suites: Vec<String>,
}

impl WriteupRequest {
    fn admits_key(&self, key: &str) -> bool {
        self.suites.is_empty()
            || self.suites.iter().any(|s| {
                key.strip_prefix(s.as_str())
                    .is_some_and(|r| r.starts_with('/'))
            })
    }
}

/// The write-up of `req.period`, from `store`; `repo`, when at hand, names the commits the
/// runs do not describe themselves and the pull requests they came from.
pub fn writeup(
    store: &dyn Store,
    config: &Config,
    req: &WriteupRequest,
    repo: Option<&Repo>,
) -> Result<Writeup, StoreError> {
    let filter = HistoryFilter {
        branch: req.branch.clone(),
        testbed: req.testbed.clone(),
    };
    let query = |keys: Vec<String>, fingerprints: bool| RunQuery {
        history_branch: Some(req.branch.clone()),
        testbed: req.testbed.clone(),
        keys: Some(keys),
        newest: None,
        samples: false,
        fingerprints,
    };
    // Every run the per-key queries give (the series' points index them), fingerprints too.
    let mut runs = store.query_runs(&query(Vec::new(), true))?;
    let admitted: Vec<&Run> = runs.iter().filter(|r| filter.admits(r)).collect();
    let commits = commit_metas(&admitted, repo);
    describe_commits(&mut runs, &commits);
    let keys: Vec<String> = store
        .series_keys()?
        .into_iter()
        .filter(|k| req.admits_key(k))
        .collect();
    let noise = crate::noise::history_noise(store, &runs)?;
    let series = pitwall_analysis::history::series_by_key(
        &keys,
        |key| {
            let with_key = store.query_runs(&query(vec![key.to_string()], false))?;
            let mut with_key = crate::detect::aligned_with(&runs, with_key);
            describe_commits(&mut with_key, &commits);
            Ok(with_key)
        },
        &filter,
        &DetectConfig::default(),
        &noise,
    )?;
    let alerts: Vec<_> = store
        .list_alerts()?
        .into_iter()
        .filter(|a| a.series.branch == req.branch)
        .filter(|a| req.testbed.as_ref().is_none_or(|t| *t == a.series.testbed))
        .filter(|a| req.admits_key(&a.series.key))
        .collect();
    let rules = crate::alerts::rules(config);
    Ok(build(&WriteupInput {
        period: &req.period,
        filter: &filter,
        runs: &runs,
        series: &series,
        alerts: &alerts,
        commits: &commits,
        rules: &rules,
        settings: settings(config),
    }))
}

/// Gives runs that do not describe their commit the description found (imports), so their
/// series are in commit order.
fn describe_commits(runs: &mut [Run], commits: &BTreeMap<String, CommitMeta>) {
    for r in runs.iter_mut().filter(|r| r.commit_info.is_none()) {
        if let Some(c) = commits.get(&r.commit) {
            r.commit_info = Some(CommitInfo {
                first_parent_position: None,
                author: c.author.clone(),
                date: c.date.clone(),
                subject: c.subject.clone(),
            });
        }
    }
}

/// What is known of each run's commit: the repository's author, date and message when it has
/// the commit, else the run's own `commit_info`.
fn commit_metas(runs: &[&Run], repo: Option<&Repo>) -> BTreeMap<String, CommitMeta> {
    let mut out = BTreeMap::new();
    for r in runs {
        if out.contains_key(&r.commit) {
            continue;
        }
        let from_repo = repo.and_then(|repo| {
            let resolved = repo.resolve(&r.commit).ok()?;
            let message = repo.message(&resolved.sha).unwrap_or_default();
            Some((resolved.info, message))
        });
        let Some((info, message)) = from_repo.or_else(|| {
            r.commit_info
                .as_ref()
                .map(|c| (c.clone(), c.subject.clone()))
        }) else {
            continue;
        };
        out.insert(
            r.commit.clone(),
            CommitMeta {
                sha: r.commit.clone(),
                pr: pull_request_of(&message),
                author: info.author,
                date: info.date,
                subject: info.subject,
            },
        );
    }
    out
}

/// The settings the methodology lists: how benchmarks were sampled and how change points
/// were found.
fn settings(config: &Config) -> Vec<(String, String)> {
    let s = &config.sampling;
    let d = DetectConfig::default();
    vec![
        (
            "sampling configured now (`[sampling]`; the runs' own counts are under noise and samples)".into(),
            format!(
                "{} s warm-up; {}–{} samples; until the 95% interval of the median is within ±{}%, at most {} s; {} s timeout",
                s.warmup_s,
                s.min_samples,
                s.max_samples,
                s.target_rel_ci * 100.0,
                s.max_time_s,
                s.timeout_s
            ),
        ),
        (
            "change points".into(),
            "the Hunter/Otava scheme over per-run medians (E-divisive means, Matteson & James 2014; Fleming et al. 2023)".into(),
        ),
        (
            "change-point test".into(),
            format!(
                "windows of {} points, segments of at least {}, p < {} (weak {}), steps of at least {} robust SD and {}%",
                d.window,
                d.min_segment,
                d.max_p_value,
                d.weak_p_value,
                d.min_effect,
                d.min_rel_change * 100.0
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(suites: &[&str]) -> WriteupRequest {
        WriteupRequest {
            period: Period::new("2026-01-01", "2026-03-31").unwrap(),
            branch: "main".into(),
            testbed: None,
            suites: suites.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn suites_select_keys_by_their_whole_suite_name() {
        assert!(request(&[]).admits_key("kernel/gemm/time"));
        let r = request(&["kernel"]);
        assert!(r.admits_key("kernel/gemm[n=8]/time"));
        assert!(
            !r.admits_key("kernels/gemm/time"),
            "a prefix is not the suite"
        );
        assert!(!r.admits_key("nccl/all_reduce/busbw"));
    }

    #[test]
    fn runs_without_a_repository_describe_their_commits_and_pull_requests() {
        let mut run: Run = serde_json::from_value(serde_json::json!({
            "id": "r1", "project": "p", "commit": "abc", "started_at": "2026-01-02T00:00:00Z",
            "finished_at": "2026-01-02T00:01:00Z", "config_hash": "", "status": "complete",
            "fingerprint": {"hostname": "h", "os": "linux", "arch": "x86_64", "kernel": "",
                "cpu_model": "", "logical_cpus": 1, "memory_bytes": 0, "gpus": [],
                "pitwall_version": "", "env": {}},
            "results": []
        }))
        .unwrap();
        let bare = run.clone();
        run.commit_info = Some(CommitInfo {
            first_parent_position: None,
            author: "Ada <ada@example.com>".into(),
            date: "2026-01-01T10:00:00+00:00".into(),
            subject: "Faster tiles (#9)".into(),
        });
        let metas = commit_metas(&[&run], None);
        let m = &metas["abc"];
        assert_eq!(m.pr.as_ref().map(|p| p.number), Some(9));
        assert_eq!(m.date, "2026-01-01T10:00:00+00:00");
        // An imported run of the same commit gets the description, so it sorts by its date.
        let mut runs = vec![bare];
        describe_commits(&mut runs, &metas);
        assert_eq!(runs[0].commit_info, run.commit_info);
        assert!(commit_metas(&[&runs[0]], None).contains_key("abc"));
        assert!(commit_metas(&[], None).is_empty());
    }
}
