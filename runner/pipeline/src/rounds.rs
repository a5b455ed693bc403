//! The rounds of one measurement: every selected suite of every target, round after round,
//! merged into one result per benchmark measure that remembers which process (replicate) each
//! sample came from and where each round began. `run::execute_interleaved` and the
//! until-decided loop of `crate::pair` both measure through it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use pitwall_schema::{
    Backend, BenchmarkResult, PairInfo, PairRole, ResultStatus, RoundOrder, SampleMeta,
};

use pitwall_schema::sections::{FormatNotes, ToolContext};
use pitwall_stats::ab::SequentialPlan;

use crate::request::{RunReport, RunRequest, Target, new_run};
use crate::setup::RunEnvironment;
use pitwall_engine::config::Config;
use pitwall_engine::{RunObserver, Selection, Step, run_suite};
use pitwall_host::machine::ContentionTally;
use pitwall_schema::time::now_rfc3339;

/// The rounds measured so far for a set of targets: merged results, replicate numbering and
/// where each round began. [`execute_interleaved`] and the until-decided loop of
/// [`crate::pair`] both measure through it.
#[derive(Debug)]
pub(crate) struct Rounds {
    started_at: String,
    results: Vec<Merged>,
    skipped: Vec<Vec<String>>,
    extras: Vec<(BTreeMap<String, serde_json::Value>, Vec<String>)>,
    /// Per target: the next replicate index (processes launched so far on that side).
    next_replicate: Vec<u32>,
    /// Per target: the first replicate index of each round.
    round_starts: Vec<Vec<u32>>,
    pair_id: String,
    /// Per target: the contention sampled while it was measured.
    contention: Vec<ContentionTally>,
    /// The most rounds planned, and what each target is called, for progress.
    planned: u32,
    sides: Vec<&'static str>,
}

impl Rounds {
    pub(crate) fn new(targets: usize) -> Rounds {
        Rounds {
            started_at: now_rfc3339(),
            results: vec![Merged::default(); targets],
            skipped: vec![Vec::new(); targets],
            extras: vec![Default::default(); targets],
            next_replicate: vec![0; targets],
            round_starts: vec![Vec::new(); targets],
            pair_id: uuid::Uuid::now_v7().to_string(),
            contention: vec![ContentionTally::default(); targets],
            planned: 1,
            sides: Vec::new(),
        }
    }

    /// For progress: at most `planned` rounds (the budget when measuring until decided), and
    /// what each target is called (`base`, `head`); each round tells the observer which round
    /// of how many measures which target (1 of 1 when measuring one target once).
    pub(crate) fn announced(mut self, planned: u32, sides: &[&'static str]) -> Rounds {
        self.planned = planned;
        self.sides = sides.to_vec();
        self
    }

    /// Rounds measured so far.
    pub(crate) fn count(&self) -> u32 {
        self.round_starts.first().map_or(0, |r| r.len() as u32)
    }

    /// One more round of every target. `only`: benchmark keys (`suite/name[params]/measure`)
    /// still wanted; suites with none of them are left out, built-in suites run just those
    /// benchmarks, and command suites run whole.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn round(
        &mut self,
        config: &Config,
        request: &RunRequest,
        only: Option<&BTreeSet<String>>,
        backend: &dyn Backend,
        targets: &[Target],
        env: &RunEnvironment,
        observer: &dyn RunObserver,
    ) {
        let first = self.count() == 0;
        let round = self.count() + 1;
        // A pair alternates its order (base-head, head-base, …) so that a drift shared by both
        // sides is balanced and the cross-over analysis can estimate the period effect.
        let order: Vec<usize> =
            if targets.len() == 2 && RoundOrder::balanced(round) == RoundOrder::HeadBase {
                vec![1, 0]
            } else {
                (0..targets.len()).collect()
            };
        for t in order {
            let target = &targets[t];
            self.round_starts[t].push(self.next_replicate[t]);
            // Terminating: the round still counts but runs nothing; the loops stop after it and
            // the use case returns the cancellation.
            if crate::cancel::requested() {
                continue;
            }
            observer.step(&Step::Round {
                round,
                rounds: self.planned.max(round),
                side: self.sides.get(t).copied(),
                target: &target.describe(),
            });
            let watch = env.watch_contention();
            for suite in &config.suites {
                if !request.suites.is_empty() && !request.suites.contains(&suite.name) {
                    continue;
                }
                let wanted: Option<BTreeSet<String>> = only.map(|keys| {
                    let prefix = format!("{}/", suite.name);
                    keys.iter()
                        .filter_map(|k| k.strip_prefix(&prefix))
                        .filter_map(|rest| rest.rsplit_once('/').map(|(shown, _)| shown))
                        .map(str::to_string)
                        .collect()
                });
                if wanted.as_ref().is_some_and(BTreeSet::is_empty) {
                    continue;
                }
                let suite = env.with_gpu(suite);
                let outcome = run_suite(
                    &suite,
                    backend,
                    &target.checkout,
                    Selection {
                        filter: request.filter.as_deref(),
                        only: wanted.as_ref(),
                    },
                    observer,
                    env.meta_source(),
                    env.isolation(),
                );
                let base = self.next_replicate[t];
                self.next_replicate[t] += merge(&mut self.results[t], outcome.results, base);
                if first {
                    self.skipped[t].extend(outcome.skipped);
                    self.extras[t].0.extend(outcome.context);
                    self.extras[t].1.extend(outcome.notes);
                }
            }
            if let Some(w) = watch {
                self.contention[t].add_window(&w.stop());
            }
        }
    }

    /// One run per target with everything measured so far; a pair (two targets) is linked and
    /// records its rounds, replicate numbering and, when measured until decided, the record of
    /// its plan.
    pub(crate) fn reports(
        &self,
        config: &Config,
        targets: &[Target],
        env: &RunEnvironment,
        sequential: Option<&SequentialPlan>,
    ) -> Vec<RunReport> {
        let sequential = sequential.map(pitwall_analysis::sequential::record);
        let monitor = env.monitor_health();
        let rounds = self.count().max(1);
        targets
            .iter()
            .enumerate()
            .map(|(i, target)| {
                let pair = (targets.len() == 2).then(|| PairInfo {
                    id: self.pair_id.clone(),
                    role: if i == 0 {
                        PairRole::Base
                    } else {
                        PairRole::Head
                    },
                    rounds,
                    round_starts: self.round_starts[i].clone(),
                    sequential,
                    round_orders: (1..=self.count()).map(RoundOrder::balanced).collect(),
                    identical: Vec::new(),
                    measured_ms: None,
                    saved_ms_estimate: None,
                });
                let mut fp = env.fingerprint.clone();
                if let Some(m) = &monitor {
                    fp.set_section(m);
                }
                let (context, notes) = &self.extras[i];
                if !context.is_empty() {
                    fp.set_section(&ToolContext(context.clone()));
                }
                if !notes.is_empty() {
                    fp.set_section(&FormatNotes(notes.clone()));
                }
                let mut run = new_run(
                    config,
                    target,
                    fp,
                    &self.started_at,
                    self.results[i].results.clone(),
                );
                run.pair = pair;
                run.contention = self.contention[i].summary(&config.contended);
                RunReport {
                    run,
                    skipped: self.skipped[i].clone(),
                }
            })
            .collect()
    }
}

/// The results of one target so far, with an index by benchmark measure so that merging a
/// round costs time linear in its results (a tool can print 10⁶ of them).
#[derive(Debug, Clone, Default)]
struct Merged {
    results: Vec<BenchmarkResult>,
    index: HashMap<(String, String, BTreeMap<String, String>, String), usize>,
}

/// Adds one suite execution's results: same benchmark measure → samples appended; a failure
/// in any round marks the result failed. Replicate indices local to the execution (0 when a
/// result has none: the suite ran in one process) are shifted by `first_replicate`; returns
/// how many replicate indices the execution used.
fn merge(into: &mut Merged, round: Vec<BenchmarkResult>, first_replicate: u32) -> u32 {
    let mut used = 0;
    for mut r in round {
        if !r.samples.is_empty() {
            if r.replicates.len() != r.samples.len() {
                r.replicates = vec![0; r.samples.len()];
            }
            used = used.max(r.replicates.iter().max().map_or(0, |m| m + 1));
            for i in &mut r.replicates {
                *i += first_replicate;
            }
        }
        let key = (
            r.suite.clone(),
            r.name.clone(),
            r.params.clone(),
            r.measure.clone(),
        );
        let Some(&at) = into.index.get(&key) else {
            into.index.insert(key, into.results.len());
            into.results.push(r);
            continue;
        };
        let existing = &mut into.results[at];
        if !r.sample_meta.is_empty() || !existing.sample_meta.is_empty() {
            // Keep the metadata parallel to the samples when only some rounds had it.
            existing
                .sample_meta
                .resize(existing.samples.len(), SampleMeta::default());
            let mut meta = r.sample_meta;
            meta.resize(r.samples.len(), SampleMeta::default());
            existing.sample_meta.extend(meta);
        }
        existing.samples.extend(r.samples);
        existing.replicates.extend(r.replicates);
        let combined = existing.status.combine(r.status);
        if combined == ResultStatus::Ok {
            existing.error = None;
        } else if combined != existing.status {
            existing.error = r.error.or(existing.error.take());
        }
        existing.status = combined;
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::{Direction, Unit};

    fn result(name: &str, samples: Vec<f64>, status: ResultStatus) -> BenchmarkResult {
        BenchmarkResult {
            suite: "s".into(),
            name: name.into(),
            params: Default::default(),
            measure: "time".into(),
            unit: Unit::new("ns"),
            direction: Direction::LowerIsBetter,
            status,
            error: (status == ResultStatus::Failed).then(|| "boom".to_string()),
            samples,
            sample_meta: vec![],
            replicates: Vec::new(),
            summary: None,
        }
    }

    #[test]
    fn merge_appends_rounds_and_keeps_failures() {
        let mut acc = Merged::default();
        let used = merge(
            &mut acc,
            vec![
                result("a", vec![1.0, 2.0], ResultStatus::Ok),
                result("b", vec![5.0], ResultStatus::Ok),
            ],
            0,
        );
        assert_eq!(used, 1, "a suite without replicates ran in one process");
        let mut with_meta = result("a", vec![3.0], ResultStatus::Ok);
        with_meta.sample_meta = vec![SampleMeta {
            throttled: true,
            ..Default::default()
        }];
        merge(
            &mut acc,
            vec![with_meta, result("b", vec![], ResultStatus::Failed)],
            used,
        );
        assert_eq!(acc.results[0].samples, vec![1.0, 2.0, 3.0]);
        assert_eq!(acc.results[0].replicates, vec![0, 0, 1]);
        assert_eq!(acc.results[0].sample_meta.len(), 3);
        assert!(
            acc.results[0].sample_meta[2].throttled && !acc.results[0].sample_meta[0].throttled
        );
        assert_eq!(acc.results[1].status, ResultStatus::Failed);
        assert_eq!(acc.results[1].error.as_deref(), Some("boom"));
        assert_eq!(acc.results[1].replicates, vec![0]);
    }

    #[test]
    fn merge_numbers_the_processes_of_each_execution_after_earlier_ones() {
        // Two executions of a command suite (replicates 0, 1), then another round of it.
        let mut acc = Merged::default();
        let mut a = result("a", vec![1.0, 2.0, 3.0, 4.0], ResultStatus::Ok);
        a.replicates = vec![0, 0, 1, 1];
        let used = merge(&mut acc, vec![a.clone()], 5);
        assert_eq!(used, 2);
        merge(&mut acc, vec![a], 5 + used);
        assert_eq!(acc.results[0].replicates, vec![5, 5, 6, 6, 7, 7, 8, 8]);
    }
}
