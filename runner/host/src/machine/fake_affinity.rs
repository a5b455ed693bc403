//! A recording `Affinity` for tests: compiled for this crate's tests and with the
//! `test-hooks` feature, never in a release build.

use std::io;
use std::sync::Mutex;

use super::affinity::Affinity;

/// One call a [`FakeAffinity`] received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AffinityCall {
    SetCpus(Vec<usize>),
    Cpus,
    BindMemory(u32),
    MemoryNodes,
}

/// A recording [`Affinity`] for tests: keeps the state a real kernel would, can refuse
/// calls with `EPERM`, and can behave like a cpuset that silently narrows the cpus set.
#[derive(Debug, Default)]
pub struct FakeAffinity {
    state: Mutex<FakeState>,
    refuse_cpus: bool,
    refuse_memory: bool,
    cpuset: Option<Vec<usize>>,
}

#[derive(Debug, Default)]
struct FakeState {
    cpus: Vec<usize>,
    memory_nodes: Option<Vec<u32>>,
    calls: Vec<AffinityCall>,
}

impl FakeAffinity {
    /// A process currently allowed on `cpus`, with the default memory policy.
    pub fn new(cpus: Vec<usize>) -> Self {
        Self {
            state: Mutex::new(FakeState {
                cpus,
                ..FakeState::default()
            }),
            ..Self::default()
        }
    }

    /// `set_cpus` fails with `EPERM`.
    pub fn refusing_cpus(mut self) -> Self {
        self.refuse_cpus = true;
        self
    }

    /// `bind_memory` fails with `EPERM`, as under docker's default seccomp profile.
    pub fn refusing_memory(mut self) -> Self {
        self.refuse_memory = true;
        self
    }

    /// `set_cpus` keeps only cpus in `cpuset` (`EINVAL` when none is), as the kernel does.
    pub fn within_cpuset(mut self, cpuset: Vec<usize>) -> Self {
        self.cpuset = Some(cpuset);
        self
    }

    /// The calls received, in order.
    pub fn calls(&self) -> Vec<AffinityCall> {
        self.lock().calls.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FakeState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Affinity for FakeAffinity {
    fn set_cpus(&self, cpus: &[usize]) -> io::Result<()> {
        let mut state = self.lock();
        state.calls.push(AffinityCall::SetCpus(cpus.to_vec()));
        if self.refuse_cpus {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        let mut kept: Vec<usize> = cpus
            .iter()
            .copied()
            .filter(|c| self.cpuset.as_ref().is_none_or(|set| set.contains(c)))
            .collect();
        kept.sort_unstable();
        kept.dedup();
        if kept.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        state.cpus = kept;
        Ok(())
    }

    fn cpus(&self) -> io::Result<Vec<usize>> {
        let mut state = self.lock();
        state.calls.push(AffinityCall::Cpus);
        Ok(state.cpus.clone())
    }

    fn bind_memory(&self, node: u32) -> io::Result<()> {
        let mut state = self.lock();
        state.calls.push(AffinityCall::BindMemory(node));
        if self.refuse_memory {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        state.memory_nodes = Some(vec![node]);
        Ok(())
    }

    fn memory_nodes(&self) -> io::Result<Option<Vec<u32>>> {
        let mut state = self.lock();
        state.calls.push(AffinityCall::MemoryNodes);
        Ok(state.memory_nodes.clone())
    }
}
