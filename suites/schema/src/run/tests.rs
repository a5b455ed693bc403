//! Tests of a run's status, and the run every other module's tests start from.

use super::*;
use crate::schema::tests::result;

pub(crate) fn run(results: Vec<BenchmarkResult>) -> Run {
    Run {
        exclusion: None,
        contention: None,
        id: "0190f0c0-0000-7000-8000-000000000000".into(),
        project: "toy".into(),
        commit: WORKING_TREE.into(),
        branch: None,
        testbed: None,
        role: None,
        started_at: "2026-12-02T10:00:00Z".into(),
        finished_at: "2026-12-02T10:01:00Z".into(),
        config_hash: "abc".into(),
        fingerprint: Fingerprint::default(),
        status: RunStatus::from_results(&results),
        commit_info: None,
        error: None,
        pair: None,
        results,
    }
}

#[test]
fn status_follows_results() {
    let mut failed = result(vec![]);
    failed.status = ResultStatus::Failed;
    assert_eq!(
        RunStatus::from_results(&[result(vec![1.0])]),
        RunStatus::Complete
    );
    assert_eq!(
        RunStatus::from_results(&[result(vec![1.0]), failed.clone()]),
        RunStatus::Partial
    );
    assert_eq!(
        RunStatus::from_results(&[failed.clone()]),
        RunStatus::Failed
    );
    assert_eq!(RunStatus::from_results(&[]), RunStatus::Failed);
    // A skip is the tool's decision, not a failure.
    let mut skipped = result(vec![]);
    skipped.status = ResultStatus::Skipped;
    assert_eq!(
        RunStatus::from_results(&[result(vec![1.0]), skipped.clone()]),
        RunStatus::Complete
    );
    assert_eq!(
        RunStatus::from_results(&[skipped.clone(), failed]),
        RunStatus::Partial
    );
    assert_eq!(ResultStatus::parse("skipped"), Some(ResultStatus::Skipped));
    assert_eq!(ResultStatus::Skipped.as_str(), "skipped");
}
