//! Applying a pinning plan under the configured policy and recording what actually took
//! effect, read back from the kernel rather than assumed from the calls that succeeded.

use serde::Serialize;

use super::PinPolicy;
use super::affinity::Affinity;
use super::pinning::{PinError, PinPlan};
use super::sysfs::format_cpulist;

/// What pinning did, for the run's record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinOutcome {
    /// `"require"`, `"prefer"` or `"off"`.
    pub policy: String,
    /// The plan that was applied (in part, under `prefer`); `None` when there was none.
    pub plan: Option<PinPlan>,
    /// The cpus the kernel reports after pinning; empty under `off` or when unreadable.
    pub applied_cpus: Vec<usize>,
    /// The nodes of the memory policy the kernel reports; `None` for the default policy.
    pub applied_memory_nodes: Option<Vec<u32>>,
    /// One line per part of the plan that did not take effect: what, and why.
    pub not_applied: Vec<String>,
}

/// Applies `plan` through `affinity`.
///
/// - `Off`: nothing is called; the outcome is empty.
/// - `Prefer`: applies what works; each failure (including a plan that could not be made)
///   becomes a line of `not_applied`, and the outcome is `Ok`.
/// - `Require`: the first failure is the error, naming what failed. Parts applied before it
///   stay applied (the run is expected to stop).
///
/// A plan without a NUMA node binds no memory; that is recorded in `not_applied` but is not
/// a failure under `Require`, since there is nothing to bind to. After applying, the cpus
/// and memory policy are read back; a read-back that differs from the plan counts as a
/// failure of that part.
pub fn apply_pinning(
    policy: PinPolicy,
    plan: Result<PinPlan, PinError>,
    affinity: &dyn Affinity,
) -> Result<PinOutcome, PinError> {
    let mut outcome = PinOutcome {
        policy: policy_name(policy).to_string(),
        plan: None,
        applied_cpus: Vec::new(),
        applied_memory_nodes: None,
        not_applied: Vec::new(),
    };
    if policy == PinPolicy::Off {
        return Ok(outcome);
    }
    let require = policy == PinPolicy::Require;
    // Under `prefer`, a failure is recorded and the rest goes on.
    let fail = |outcome: &mut PinOutcome, err: PinError| {
        if require {
            Err(err)
        } else {
            outcome.not_applied.push(err.to_string());
            Ok(())
        }
    };

    let plan = match plan {
        Ok(plan) => plan,
        Err(err) => {
            fail(&mut outcome, err)?;
            read_back(&mut outcome, affinity);
            return Ok(outcome);
        }
    };
    outcome.plan = Some(plan.clone());

    let cpus_set = match affinity.set_cpus(&plan.cpus) {
        Ok(()) => true,
        Err(source) => {
            let err = PinError::SetAffinity {
                cpus: format_cpulist(&plan.cpus),
                source,
            };
            fail(&mut outcome, err)?;
            false
        }
    };
    let memory_bound = match plan.numa_node {
        Some(node) => match affinity.bind_memory(node) {
            Ok(()) => Some(node),
            Err(source) => {
                fail(&mut outcome, PinError::BindMemory { node, source })?;
                None
            }
        },
        None => {
            outcome.not_applied.push(format!(
                "memory binding: no NUMA node is known for cpus {} ({})",
                format_cpulist(&plan.cpus),
                plan.source
            ));
            None
        }
    };

    read_back_applied(&mut outcome, &plan, cpus_set, memory_bound, affinity, &fail)?;
    Ok(outcome)
}

/// Reads back what the kernel applied into `outcome`, and fails (`fail`) where it is not what
/// was set: the cpus when they were set, the memory node when it was bound.
fn read_back_applied(
    outcome: &mut PinOutcome,
    plan: &PinPlan,
    cpus_set: bool,
    memory_bound: Option<u32>,
    affinity: &dyn Affinity,
    fail: &dyn Fn(&mut PinOutcome, PinError) -> Result<(), PinError>,
) -> Result<(), PinError> {
    match affinity.cpus() {
        Ok(cpus) => {
            outcome.applied_cpus = cpus.clone();
            if cpus_set && cpus != plan.cpus {
                let err = PinError::NotApplied {
                    what: "cpu affinity",
                    wanted: format_cpulist(&plan.cpus),
                    got: format_cpulist(&cpus),
                };
                fail(outcome, err)?;
            }
        }
        Err(source) => {
            let what = "cpu affinity";
            fail(outcome, PinError::ReadBack { what, source })?;
        }
    }
    match affinity.memory_nodes() {
        Ok(nodes) => {
            outcome.applied_memory_nodes = nodes.clone();
            if let Some(node) = memory_bound {
                if nodes.as_deref() != Some(&[node][..]) {
                    let err = PinError::NotApplied {
                        what: "memory binding",
                        wanted: format!("node {node}"),
                        got: describe_nodes(nodes.as_deref()),
                    };
                    fail(outcome, err)?;
                }
            }
        }
        Err(source) => {
            let what = "memory policy";
            fail(outcome, PinError::ReadBack { what, source })?;
        }
    }
    Ok(())
}

/// Records the current affinity when no plan was applied, so the outcome still says where
/// the benchmark ran. Failures to read are recorded, never raised.
fn read_back(outcome: &mut PinOutcome, affinity: &dyn Affinity) {
    match affinity.cpus() {
        Ok(cpus) => outcome.applied_cpus = cpus,
        Err(e) => outcome
            .not_applied
            .push(format!("cpu affinity: cannot read it back: {e}")),
    }
    match affinity.memory_nodes() {
        Ok(nodes) => outcome.applied_memory_nodes = nodes,
        Err(e) => outcome
            .not_applied
            .push(format!("memory policy: cannot read it back: {e}")),
    }
}

fn describe_nodes(nodes: Option<&[u32]>) -> String {
    match nodes {
        None => "the default policy".to_string(),
        Some(nodes) => {
            let list: Vec<String> = nodes.iter().map(u32::to_string).collect();
            format!("nodes {}", list.join(","))
        }
    }
}

fn policy_name(policy: PinPolicy) -> &'static str {
    match policy {
        PinPolicy::Require => "require",
        PinPolicy::Prefer => "prefer",
        PinPolicy::Off => "off",
    }
}

#[cfg(test)]
mod tests;
