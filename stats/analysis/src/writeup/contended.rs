//! Steps that only contended runs make (issue 27: "only confirmed steps go into the headline;
//! suspected and contended ones are listed apart"). Contended runs never enter detection
//! (`history::series` keeps them in `Series::contended`), so a loaded machine cannot put a
//! step into the headline. The write-up still says where one would have appeared: each series
//! is detected again with its contended points put back in commit order, and every step found
//! there that the clean series does not have (no step of the clean series within the alert
//! rule's match window) is listed apart as `contended`, with the commit range it would have
//! named. A reader who sees "matmul −43% (contended)" knows why it is not in the headline.

use pitwall_stats::changepoint::{DetectConfig, detect};

use super::WriteupInput;
use crate::alerts::{AlertRules, detect_alerts};
use crate::history::Series;

/// `s` with its contended points put back among the clean ones (each after the clean points
/// that preceded it), its change points detected again, and for each of its points the clean
/// points before it; `None` without contended points.
fn with_contended(s: &Series, config: &DetectConfig) -> Option<(Series, Vec<usize>)> {
    if s.contended.is_empty() {
        return None;
    }
    let mut points = Vec::with_capacity(s.points.len() + s.contended.len());
    let mut clean_before = Vec::with_capacity(points.capacity());
    let mut extra = s.contended.iter().peekable();
    for (i, p) in s.points.iter().enumerate() {
        while let Some(c) = extra.next_if(|c| c.after <= i) {
            points.push(c.point.clone());
            clean_before.push(i);
        }
        points.push(p.clone());
        clean_before.push(i);
    }
    for c in extra {
        points.push(c.point.clone());
        clean_before.push(s.points.len());
    }
    let values: Vec<f64> = points.iter().map(|p| p.median).collect();
    let changes = detect(&values, config);
    let mixed = Series {
        points,
        changes,
        suspected: None,
        contended: Vec::new(),
        ..s.clone()
    };
    Some((mixed, clean_before))
}

/// The steps of the period that contended runs alone make, as ledger entries (last good,
/// first bad, entry) standing `contended`.
pub(super) fn contended_steps(
    input: &WriteupInput<'_>,
    all: &AlertRules,
    in_period: &dyn Fn(usize) -> bool,
    entry: &dyn Fn(&pitwall_schema::Alert, &Series) -> crate::writeup::LedgerEntry,
) -> Vec<(String, String, crate::writeup::LedgerEntry)> {
    let mut out = Vec::new();
    for s in input.series {
        let Some((mixed, clean_before)) = with_contended(s, &DetectConfig::default()) else {
            continue;
        };
        let clean = detect_alerts(s, input.runs, "", &input.filter.branch, all, "");
        for step in detect_alerts(&mixed, input.runs, "", &input.filter.branch, all, "") {
            if !in_period(mixed.points[step.index].run) {
                continue;
            }
            // The clean point this step's first point sits at (or just before).
            let at = clean_before[step.index];
            let known = clean
                .iter()
                .any(|c| c.index.abs_diff(at) <= input.rules.match_window);
            if known {
                continue;
            }
            let a = &step.alert;
            let mut e = entry(a, s);
            e.standing = crate::writeup::StepStanding::Contended;
            e.alert = None;
            out.push((a.last_good.clone(), a.first_bad.clone(), e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pitwall_schema::Contention;

    use super::super::tests::{planted, writeup_of};
    use crate::writeup::{LedgerEntry, StepStanding};

    fn contended() -> Contention {
        Contention {
            samples: 40,
            other_runnable_threads: Some(1.8),
            steal_pct: Some(0.0),
            psi_some_pct: None,
            psi_cgroup_some_pct: None,
            contended: true,
            reasons: vec!["other runnable threads 1.8 (limit 0.5)".into()],
        }
    }

    #[test]
    fn a_step_only_contended_runs_make_is_listed_apart_never_confirmed() {
        // The last ten runs were taken on a loaded machine: `copy` reads 40% faster there.
        let mut runs = planted();
        for r in &mut runs[40..] {
            r.contention = Some(contended());
            for x in &mut r.results {
                if x.name == "copy" {
                    x.samples.iter_mut().for_each(|v| *v *= 0.6);
                }
            }
        }
        let w = writeup_of(&runs, "2026-01-01", "2026-02-19");
        let confirmed = w.confirmed();
        let confirmed: Vec<&str> = confirmed
            .iter()
            .flat_map(|g| g.entries.iter().map(|e| e.key.as_str()))
            .collect();
        assert!(!confirmed.contains(&"kernel/copy/time"), "{confirmed:?}");
        assert!(confirmed.contains(&"kernel/gemm/time"), "{confirmed:?}");
        let apart = w.listed_apart();
        let copy: Vec<&LedgerEntry> = apart
            .iter()
            .flat_map(|g| &g.entries)
            .filter(|e| e.key == "kernel/copy/time")
            .collect();
        assert_eq!(copy.len(), 1, "{apart:?}");
        assert_eq!(copy[0].standing, StepStanding::Contended);
        assert!((copy[0].rel_change + 0.4).abs() < 0.01, "{:?}", copy[0]);
        let group = apart
            .iter()
            .find(|g| g.entries.iter().any(|e| e.key == "kernel/copy/time"))
            .unwrap();
        assert_eq!(group.first_bad, runs[40].commit);
        // The confirmed steps of clean runs are not listed again as contended.
        assert!(
            apart
                .iter()
                .flat_map(|g| &g.entries)
                .all(|e| e.key == "kernel/copy/time"),
            "{apart:?}"
        );
    }
}
