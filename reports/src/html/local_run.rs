//! The index's "latest local run" box: a run of the working tree (role `local`) is never
//! history, so without this the first report after `pitwall run` would show nothing of what
//! was just measured. It is shown apart and marked local, with how to record one as history.

use pitwall_analysis::history::summarize;
use pitwall_analysis::number::with_unit;
use pitwall_schema::Run;
use serde::Serialize;

/// One result of the local run as the index lists it.
#[derive(Debug, Serialize)]
pub(crate) struct LocalRow {
    pub key: String,
    /// The median with its unit (`149.7 µs`), or the result's status when it has none.
    pub median: String,
}

/// The latest local run, as the index shows it.
#[derive(Debug, Serialize)]
pub(crate) struct LocalRunView {
    pub id: String,
    pub started_at: String,
    pub branch: String,
    pub rows: Vec<LocalRow>,
}

/// What the index shows of `run` (the latest run with role `local`, read with its results).
pub(crate) fn view(run: &Run) -> LocalRunView {
    LocalRunView {
        id: run.id.clone(),
        started_at: run.started_at.clone(),
        branch: run.branch.clone().unwrap_or_default(),
        rows: run
            .results
            .iter()
            .map(|r| LocalRow {
                key: r.key(),
                median: summarize(r).map_or_else(
                    || r.status.as_str().to_string(),
                    |s| with_unit(s.median, r.unit.as_str()),
                ),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::RunRole;

    #[test]
    fn a_local_run_shows_each_result_with_its_median_in_a_readable_unit() {
        let mut run = super::super::synthetic::runs(2, 1, 3).remove(0);
        run.role = Some(RunRole::Local);
        run.results[0].unit = pitwall_schema::Unit("ns".into());
        run.results[0].samples = vec![10.0e6, 10.2e6, 10.4e6];
        run.results[0].summary = None;
        let v = view(&run);
        assert_eq!(v.rows.len(), 2);
        assert_eq!(v.rows[0].key, run.results[0].key());
        assert_eq!(v.rows[0].median, "10.20 ms");
        assert_eq!(v.branch, "main");
    }
}
