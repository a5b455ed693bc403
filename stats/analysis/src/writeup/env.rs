//! The environment side of the write-up: what each run's fingerprint says of the driver, CUDA,
//! NCCL, GPU model and clock policy, the changes between consecutive runs of a testbed within
//! the period (each placed next to the change points a few runs around it), and the runners
//! the methodology lists.

use std::collections::BTreeMap;

use pitwall_schema::Run;
use pitwall_schema::sections::{Clocks, CudaLibraries};

use super::{LedgerGroup, NEAR_RUNS, Period};

/// The parts of the environment a write-up follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EnvField {
    Driver,
    Cuda,
    Nccl,
    GpuModel,
    ClockPolicy,
}

impl EnvField {
    pub const ALL: [EnvField; 5] = [
        EnvField::Driver,
        EnvField::Cuda,
        EnvField::Nccl,
        EnvField::GpuModel,
        EnvField::ClockPolicy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EnvField::Driver => "driver",
            EnvField::Cuda => "CUDA",
            EnvField::Nccl => "NCCL",
            EnvField::GpuModel => "GPU model",
            EnvField::ClockPolicy => "clock policy",
        }
    }
}

/// What one run's fingerprint says of each `EnvField` (`None`: it does not say).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvState(pub BTreeMap<EnvField, String>);

impl EnvState {
    pub fn of(run: &Run) -> EnvState {
        let fp = &run.fingerprint;
        let mut m = BTreeMap::new();
        let gpus = |f: &dyn Fn(&pitwall_schema::GpuInfo) -> Option<String>| {
            let mut v: Vec<String> = fp.gpus.iter().filter_map(f).collect();
            v.dedup();
            (!v.is_empty()).then(|| v.join(", "))
        };
        if let Some(d) = gpus(&|g| g.driver.clone()) {
            m.insert(EnvField::Driver, d);
        }
        if let Some(g) = gpus(&|g| Some(g.model.clone()).filter(|m| !m.is_empty())) {
            m.insert(EnvField::GpuModel, g);
        }
        let libs = fp.section::<CudaLibraries>().unwrap_or_default().0;
        let cuda = libs
            .get("cuda_runtime")
            .cloned()
            .or_else(|| gpus(&|g| g.details().and_then(|d| d.cuda_driver_version)));
        if let Some(c) = cuda {
            m.insert(EnvField::Cuda, c);
        }
        if let Some(n) = libs.get("nccl") {
            m.insert(EnvField::Nccl, n.clone());
        }
        if let Some(c) = fp.section::<Clocks>() {
            let mode = c.mode.unwrap_or_else(|| "default".to_string());
            let policy = match c.locked_sm_mhz {
                Some(mhz) => format!("{mode} (SM locked at {mhz} MHz)"),
                None => mode,
            };
            m.insert(EnvField::ClockPolicy, policy);
        }
        EnvState(m)
    }
}

/// A part of the environment that changed between two consecutive runs of a testbed.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvChange {
    pub testbed: String,
    pub field: EnvField,
    pub before: String,
    pub after: String,
    /// The first run with the new value, and its commit.
    pub run_id: String,
    pub commit: String,
    /// When that commit was made (its `commit_info`), else when the run started: RFC 3339.
    pub date: String,
    /// First bad commits of the ledger's groups on this testbed within `NEAR_RUNS` runs.
    pub near: Vec<String>,
}

/// Each testbed's runs in time order (`times`; runs without one left out), as indices into
/// `runs`.
fn by_testbed(runs: &[Run], times: &[Option<f64>]) -> BTreeMap<String, Vec<usize>> {
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        if times[i].is_some() {
            out.entry(r.testbed_or_derived()).or_default().push(i);
        }
    }
    for v in out.values_mut() {
        v.sort_by(|&a, &b| {
            times[a]
                .unwrap_or(f64::NEG_INFINITY)
                .total_cmp(&times[b].unwrap_or(f64::NEG_INFINITY))
        });
    }
    out
}

/// The environment changes of the period: a field both runs state, different in a run whose
/// commit is in the period from the testbed's run before it.
pub fn environment_changes(
    runs: &[Run],
    times: &[Option<f64>],
    period: &Period,
    ledger: &[LedgerGroup],
) -> Vec<EnvChange> {
    let mut out = Vec::new();
    for (testbed, order) in by_testbed(runs, times) {
        let states: Vec<EnvState> = order.iter().map(|&i| EnvState::of(&runs[i])).collect();
        let pos_of = |commit: &str| order.iter().position(|&i| runs[i].commit == commit);
        for k in 1..order.len() {
            let ri = order[k];
            if !times[ri].is_some_and(|t| period.contains(t)) {
                continue;
            }
            for field in EnvField::ALL {
                let (Some(before), Some(after)) =
                    (states[k - 1].0.get(&field), states[k].0.get(&field))
                else {
                    continue;
                };
                if before == after {
                    continue;
                }
                let near = ledger
                    .iter()
                    .filter(|g| g.entries.iter().any(|e| e.testbed == testbed))
                    .filter(|g| pos_of(&g.first_bad).is_some_and(|p| p.abs_diff(k) <= NEAR_RUNS))
                    .map(|g| g.first_bad.clone())
                    .collect();
                out.push(EnvChange {
                    testbed: testbed.clone(),
                    field,
                    before: before.clone(),
                    after: after.clone(),
                    run_id: runs[ri].id.clone(),
                    commit: runs[ri].commit.clone(),
                    date: runs[ri]
                        .commit_info
                        .as_ref()
                        .map_or_else(|| runs[ri].started_at.clone(), |c| c.date.clone()),
                    near,
                });
            }
        }
    }
    out
}

/// A testbed that measured in the period, as its last run there describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Runner {
    pub testbed: String,
    pub runs: usize,
    pub hostname: String,
    pub cpu_model: String,
    pub env: EnvState,
}

/// The runners of the period, by testbed.
pub fn runners(runs: &[Run], in_period: &dyn Fn(usize) -> bool) -> Vec<Runner> {
    let mut out: BTreeMap<String, Runner> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        if !in_period(i) {
            continue;
        }
        let entry = out.entry(r.testbed_or_derived()).or_insert_with(|| Runner {
            testbed: r.testbed_or_derived(),
            runs: 0,
            hostname: String::new(),
            cpu_model: String::new(),
            env: EnvState::default(),
        });
        entry.runs += 1;
        entry.hostname = r.fingerprint.hostname.clone();
        entry.cpu_model = r.fingerprint.cpu_model.clone();
        entry.env = EnvState::of(r);
    }
    out.into_values().collect()
}
