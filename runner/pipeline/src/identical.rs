//! No measurement of identical code (issue 26): before a pair is measured, each `cuda-kernels`
//! suite's kernels are compiled from both checkouts with NVRTC (no GPU needed; the binary
//! provides it through [`KernelDigests`]) and each command suite's `artifacts` are hashed after
//! both builds. A kernel whose cubin and manifest entry are the same on both sides, or a
//! command suite whose artifacts are, is not measured: it gets the verdict `identical`, kept in
//! both runs' `PairInfo` with the time the pair measured and the time it saved, estimated from
//! the last pair on this testbed that measured that code. `[ci] measure_identical = true`
//! measures it anyway.

use std::collections::BTreeSet;
use std::path::Path;

use pitwall_engine::artifacts::{ArtifactError, hash_artifacts};
use pitwall_engine::config::{CommandSuite, Config, SuiteSpec};
use pitwall_engine::{RunObserver, escape_controls};
use pitwall_schema::manifest::KernelManifest;
use pitwall_schema::{IdenticalBasis, IdenticalCode, ResultStatus, Run, SuiteKind};
use pitwall_store::{RunQuery, Store};

use crate::labels::Labels;
use crate::pair::{PairOutcome, PairStop};
use crate::request::{RunRequest, Target};
use crate::rounds::Rounds;
use crate::setup::RunEnvironment;

/// Each kernel of a manifest with the digest of what it runs, compiled from one checkout.
pub trait KernelDigests {
    /// Each kernel of `manifest` (in order) with the digest of its cubins and its manifest
    /// entry, compiled from `checkout`; `None` for a kernel that does not compile. `Err` (one
    /// line) when kernels cannot be compiled here at all (no libnvrtc).
    fn digests(
        &self,
        checkout: &Path,
        manifest: &KernelManifest,
    ) -> Result<Vec<(String, Option<String>)>, String>;
}

/// The kernels identical on both sides: present on both with the same digest (a kernel that
/// does not compile on either side is never identical, so its failure is measured and shown).
pub fn identical_kernels(
    base: &[(String, Option<String>)],
    head: &[(String, Option<String>)],
) -> BTreeSet<String> {
    base.iter()
        .filter_map(|(name, digest)| {
            let digest = digest.as_ref()?;
            head.iter()
                .any(|(n, d)| n == name && d.as_ref() == Some(digest))
                .then(|| name.clone())
        })
        .collect()
}

/// Whether the request measures the suite called `name`.
fn selected(request: &RunRequest, name: &str) -> bool {
    request.suites.is_empty() || request.suites.iter().any(|s| s == name)
}

/// The code identical on `base` and `head` among the suites `request` selects, each found one
/// said to `observer` in one line; empty with `[ci] measure_identical = true`.
pub(crate) fn find(
    config: &Config,
    request: &RunRequest,
    base: &Target,
    head: &Target,
    kernels: Option<&dyn KernelDigests>,
    observer: &dyn RunObserver,
) -> Result<Vec<IdenticalCode>, ArtifactError> {
    let mut found = Vec::new();
    if config.ci.measure_identical {
        return Ok(found);
    }
    for suite in config.suites.iter().filter(|s| selected(request, &s.name)) {
        match &suite.spec {
            SuiteSpec::Command(CommandSuite { artifacts, .. }) if !artifacts.is_empty() => {
                let b = hash_artifacts(&base.checkout, &suite.name, artifacts)?;
                let h = hash_artifacts(&head.checkout, &suite.name, artifacts)?;
                if b == h {
                    observer.suite_skipped(&suite.name, &format!(
                        "suite `{}` not measured: its artifacts are identical on both sides (verdict identical; hint: [ci] measure_identical = true measures it anyway)",
                        escape_controls(&suite.name)
                    ));
                    found.push(IdenticalCode {
                        suite: suite.name.clone(),
                        kernel: None,
                        basis: IdenticalBasis::Artifacts,
                    });
                }
            }
            SuiteSpec::Builtin {
                kind: SuiteKind::CudaKernels,
                kernels: Some(manifest),
                ..
            } => {
                let Some(digests) = kernels else { continue };
                let same = match (
                    digests.digests(&base.checkout, manifest),
                    digests.digests(&head.checkout, manifest),
                ) {
                    (Ok(b), Ok(h)) => identical_kernels(&b, &h),
                    (Err(e), _) | (_, Err(e)) => {
                        observer.warning(&suite.name, &format!(
                            "suite `{}`: cannot tell identical kernels apart ({}): every kernel is measured",
                            escape_controls(&suite.name),
                            escape_controls(&e)
                        ));
                        continue;
                    }
                };
                observer.suite_skipped(&suite.name, &kernels_line(&suite.name, manifest, &same));
                found.extend(same.into_iter().map(|k| IdenticalCode {
                    suite: suite.name.clone(),
                    kernel: Some(k),
                    basis: IdenticalBasis::Cubin,
                }));
            }
            _ => {}
        }
    }
    Ok(found)
}

/// `suite `k`: 2 of 3 kernels identical on both sides, not measured (copy, saxpy); measuring: scale`.
fn kernels_line(suite: &str, manifest: &KernelManifest, same: &BTreeSet<String>) -> String {
    let changed: Vec<String> = manifest
        .kernels
        .iter()
        .filter(|k| !same.contains(&k.name))
        .map(|k| escape_controls(&k.name))
        .collect();
    let same_list: Vec<String> = same.iter().map(|k| escape_controls(k)).collect();
    format!(
        "suite `{}`: {} of {} kernels identical on both sides, not measured ({}); measuring: {}",
        escape_controls(suite),
        same.len(),
        manifest.kernels.len(),
        if same_list.is_empty() {
            "none".to_string()
        } else {
            same_list.join(", ")
        },
        if changed.is_empty() {
            "none".to_string()
        } else {
            changed.join(", ")
        },
    )
}

/// The configuration and request that measure what is left: suites identical as a whole
/// removed, identical kernels removed from their manifests (a manifest left empty removes its
/// suite). `None` when nothing is left to measure.
pub(crate) fn reduced(
    config: &Config,
    request: &RunRequest,
    identical: &[IdenticalCode],
) -> Option<(Config, RunRequest)> {
    let mut config = config.clone();
    config.suites.retain_mut(|s| {
        let gone = |k: &str| {
            identical
                .iter()
                .any(|c| c.suite == s.name && c.kernel.as_deref() == Some(k))
        };
        if identical
            .iter()
            .any(|c| c.suite == s.name && c.kernel.is_none())
        {
            return false;
        }
        if let SuiteSpec::Builtin {
            kernels: Some(m),
            options,
            ..
        } = &mut s.spec
        {
            m.kernels.retain(|k| !gone(&k.name));
            if let Some(o) = &mut options.kernels {
                o.kernels.retain(|k| !gone(&k.name));
            }
            return !m.kernels.is_empty();
        }
        true
    });
    let left: Vec<String> = config
        .suites
        .iter()
        .filter(|s| selected(request, &s.name))
        .map(|s| s.name.clone())
        .collect();
    if left.is_empty() {
        return None;
    }
    let mut request = request.clone();
    if !request.suites.is_empty() {
        request.suites = left;
    }
    Some((config, request))
}

/// The time the identical code would have taken: from the newest pair on `testbed` that
/// measured some of it and recorded its time, that time in proportion to the share of its
/// results that belong to the identical code. `None` when no stored pair says.
pub(crate) fn saved_estimate(
    store: &dyn Store,
    testbed: Option<String>,
    identical: &[IdenticalCode],
) -> Option<u64> {
    let mut runs = store
        .query_runs(&RunQuery {
            history_branch: None,
            testbed,
            keys: None,
            newest: Some(pitwall_engine::defaults::SAVED_ESTIMATE_LOOKBACK),
            samples: false,
            fingerprints: false,
        })
        .ok()?;
    runs.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    runs.iter().find_map(|r| share(r, identical))
}

/// The part of `run`'s pair time spent on `identical` code, when it measured some of it.
fn share(run: &Run, identical: &[IdenticalCode]) -> Option<u64> {
    let ms = run.pair.as_ref()?.measured_ms?;
    let measured = |r: &&pitwall_schema::BenchmarkResult| r.status != ResultStatus::Skipped;
    let total = run.results.iter().filter(measured).count();
    let covered = run
        .results
        .iter()
        .filter(measured)
        .filter(|r| identical.iter().any(|c| c.covers(&r.suite, &r.name)))
        .count();
    (covered > 0).then(|| ms.saturating_mul(covered as u64) / total as u64)
}

/// The pair of `base` and `head` when all their code is identical: two runs without results,
/// linked as a pair (nothing measured, no GPU needed).
pub(crate) fn unmeasured(
    config: &Config,
    base: &Target,
    head: &Target,
    env: &RunEnvironment,
) -> PairOutcome {
    let mut reports = Rounds::new(2).reports(config, &[base.clone(), head.clone()], env, None);
    let head_report = reports.pop().expect("two targets");
    let base_report = reports.pop().expect("two targets");
    let (b, h) = crate::pair::sides(&base_report, &head_report);
    let comparison = crate::compare::compare(
        &b,
        &h,
        config,
        None,
        &pitwall_stats::ab::AbConfig::default(),
        crate::compare::CompareOptions::default(),
        // Nothing measured: no variance to borrow.
        &pitwall_analysis::NoiseBook::empty(),
    );
    PairOutcome {
        base: base_report,
        head: head_report,
        rounds: 0,
        stop: PairStop::Fixed,
        comparison,
    }
}

/// Records on both runs of `outcome` the identical code, the time measured and the time saved
/// (estimated from `store` on the testbed the runs will be labelled with); each run keeps the
/// hash of the whole configuration (not of the part left to measure) and the status its
/// results and identical code make it.
pub(crate) fn record(
    outcome: &mut PairOutcome,
    config: &Config,
    identical: &[IdenticalCode],
    measured_ms: u64,
    (store, labels): (&dyn Store, &Labels),
) {
    let saved = if identical.is_empty() {
        None
    } else {
        let mut probe = Run {
            contention: None,
            results: Vec::new(),
            ..outcome.head.run.clone()
        };
        labels.apply(&mut probe);
        saved_estimate(store, probe.testbed, identical)
    };
    let hash = config.hash();
    for report in [&mut outcome.base, &mut outcome.head] {
        let run = &mut report.run;
        run.config_hash = hash.clone();
        if let Some(p) = &mut run.pair {
            p.identical = identical.to_vec();
            p.measured_ms = Some(measured_ms);
            p.saved_ms_estimate = saved;
        }
        run.status = run.implied_status();
    }
}

#[cfg(test)]
mod tests;
