//! The NCCL `collective` suite's ranks and how they agree, independent of the GPUs: rank 0
//! creates the `ncclUniqueId` and hands it to the other processes in the rendezvous' session
//! blob (`pitwall-rendezvous`), every process then creates its communicator; per sample rank 0
//! sends the command, every process prepares its ranks (buffers, the check before the first
//! timed batch) and says so, rank 0 says go (or stop, when a rank failed, so no rank waits
//! in a collective another never enters), every rank times its collectives with CUDA events
//! and sends its time. The sample is the mean of the ranks' times, as nccl-tests reports by
//! default and as the CPU backend does; each rank's time is kept (`Benchmark::rank_times_ns`).
//! The GPUs are behind [`NcclProvider`] and [`LocalRanks`], so all of this is tested with a
//! fake NCCL (`nccl_group_tests.rs`); `nccl_ranks.rs` is the real one, `collective.rs` holds
//! the benchmarks over a group.

use std::time::Duration;

use pitwall_rendezvous::session::{Bound, DEFAULT_TIMEOUT};
use pitwall_rendezvous::{Hello, Layout, LayoutError, RendezvousError, Session};

use crate::nccl::UNIQUE_ID_BYTES;
use pitwall_schema::benchmark::BenchError;
use pitwall_schema::work::{
    Collective, CollectiveCommand as Command, CollectiveShape, collective_shape,
};

/// How long a follower waits for rank 0's next session (rank 0 may be building the project),
/// as the CPU backend's followers.
pub const FOLLOWER_WAIT: Duration = Duration::from_secs(3600);
/// First bytes of an NCCL hello and of an NCCL session blob.
const MAGIC: &[u8; 8] = b"PWNCCL01";
/// First bytes of the blob that calls a session off, then why.
const REFUSED: &[u8; 8] = b"PWNCCLNO";
/// The blob of `release_followers` (both backends): rank 0's run is over.
const END_RUN: &[u8] = b"end";

/// Why the NCCL collective suite could not run.
#[derive(Debug, thiserror::Error)]
pub enum CollectiveError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    Rendezvous(#[from] RendezvousError),
    #[error("rank {rank}: {reason}")]
    Rank { rank: usize, reason: String },
    #[error("nccl session refused: {0}")]
    Refused(String),
}

/// The ranks one process drives: one (a process per GPU) or every local GPU.
pub trait LocalRanks: Send {
    /// The global ranks, in order.
    fn ranks(&self) -> Vec<usize>;
    /// Buffers for (`op`, `shape`) filled with the ranks' inputs; with `verify`, one untimed
    /// collective and each rank's output checked. One status per local rank: `Ok`, or why its
    /// output is wrong. `Err` when the GPU work itself failed.
    fn prepare(
        &mut self,
        op: Collective,
        shape: &CollectiveShape,
        verify: bool,
    ) -> Result<Vec<Result<(), String>>, String>;
    /// `iters` collectives; each local rank's device time in ns (its own CUDA events).
    fn time(
        &mut self,
        op: Collective,
        shape: &CollectiveShape,
        iters: u64,
    ) -> Result<Vec<f64>, String>;
}

/// NCCL as the suite needs it: the unique id, communicators for one rank or every local GPU.
pub trait NcclProvider: Send + Sync {
    /// Why this process cannot take part (no NCCL, no such GPU); checked before it says hello.
    fn ready(&self, local_rank: usize) -> Result<(), String>;
    /// `ncclGetUniqueId` (rank 0).
    fn unique_id(&self) -> Result<[u8; UNIQUE_ID_BYTES], String>;
    /// Rank `rank` of `world_size` on GPU `local_rank` (`ncclCommInitRank`).
    fn join_rank(
        &self,
        rank: usize,
        world_size: usize,
        local_rank: usize,
        id: &[u8; UNIQUE_ID_BYTES],
    ) -> Result<Box<dyn LocalRanks>, String>;
    /// Ranks 0..devices on GPUs 0..devices of this process (`ncclCommInitAll`).
    fn all_local(&self, devices: usize) -> Result<Box<dyn LocalRanks>, String>;
}

fn hello_of(provider: &dyn NcclProvider, local_rank: usize) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    match provider.ready(local_rank) {
        Ok(()) => h.push(1),
        Err(why) => {
            h.push(0);
            h.extend(why.into_bytes());
        }
    }
    h
}

/// Rank 0's blob from every hello: the id when every rank is ready, else why not.
fn blob_of(hellos: &[Hello], provider: &dyn NcclProvider) -> Vec<u8> {
    let mut refused = Vec::new();
    for h in hellos {
        match h.payload.strip_prefix(MAGIC.as_slice()) {
            Some([1]) => {}
            Some([0, why @ ..]) => {
                refused.push(format!("rank {}: {}", h.rank, String::from_utf8_lossy(why)))
            }
            _ => refused.push(format!(
                "rank {} does not follow with the CUDA backend (hint: the same [suites] backend on every rank)",
                h.rank
            )),
        }
    }
    if refused.is_empty() {
        match provider.unique_id() {
            Ok(id) => return [MAGIC.as_slice(), &id].concat(),
            Err(e) => refused.push(format!("rank 0: {e}")),
        }
    }
    [REFUSED.as_slice(), refused.join("; ").as_bytes()].concat()
}

/// What a blob says.
#[derive(Debug, PartialEq)]
enum Blob {
    Id([u8; UNIQUE_ID_BYTES]),
    Refused(String),
    EndRun,
}

fn decode_blob(blob: &[u8]) -> Option<Blob> {
    if blob == END_RUN {
        return Some(Blob::EndRun);
    }
    if let Some(why) = blob.strip_prefix(REFUSED.as_slice()) {
        return Some(Blob::Refused(String::from_utf8_lossy(why).into_owned()));
    }
    let id = blob.strip_prefix(MAGIC.as_slice())?;
    Some(Blob::Id(id.try_into().ok()?))
}

/// One process's part of the suite: the control channel (none in the one-process layout)
/// and its ranks.
pub struct Group {
    session: Option<Session>,
    local: Box<dyn LocalRanks>,
    world_size: usize,
}

impl Group {
    /// The one-process layout: every local GPU a rank, no rendezvous.
    pub fn all_local(
        provider: &dyn NcclProvider,
        devices: usize,
    ) -> Result<Group, CollectiveError> {
        let local = provider
            .all_local(devices)
            .map_err(|reason| CollectiveError::Rank { rank: 0, reason })?;
        Ok(Group {
            session: None,
            local,
            world_size: devices,
        })
    }

    /// Rank 0 of a multi-process layout, on its bound rendezvous listener.
    pub fn lead(
        layout: &Layout,
        bound: Bound,
        provider: &dyn NcclProvider,
        timeout: Duration,
    ) -> Result<Group, CollectiveError> {
        match meet(layout, bound, provider, timeout)? {
            Some(group) => Ok(group),
            None => Err(CollectiveError::Refused("rank 0 ended the run".to_string())),
        }
    }

    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// This process's part of one command. Ok(Ok(times by rank)) or Ok(Err(why a rank's
    /// result is wrong, as a benchmark error)).
    fn execute(
        &mut self,
        op: Collective,
        shape: &CollectiveShape,
        iters: u64,
        verify: bool,
    ) -> Result<Result<Vec<(usize, f64)>, BenchError>, CollectiveError> {
        let ranks = self.local.ranks();
        let statuses = match self.local.prepare(op, shape, verify) {
            Ok(s) => s
                .into_iter()
                .zip(&ranks)
                .map(|(s, r)| match s {
                    Ok(()) => format!("{r} ok"),
                    Err(why) => format!("{r} bad {}", one_line(&why)),
                })
                .collect::<Vec<_>>(),
            Err(why) => ranks
                .iter()
                .map(|r| format!("{r} fail {}", one_line(&why)))
                .collect(),
        };
        let own = statuses.join("\n");
        // Rank 0 decides from every status; the others learn go or stop.
        let verdict = match &mut self.session {
            None => verdict_of(&[own.into_bytes()]),
            Some(s) => match s.gather(own.as_bytes())? {
                Some(all) => {
                    let v = verdict_of(&all);
                    let word: &[u8] = if v.is_ok() { b"go" } else { b"stop" };
                    s.broadcast(Some(word))?;
                    v
                }
                None => match s.broadcast(None)?.as_slice() {
                    b"go" => Ok(()),
                    _ => Err(BenchError::Validation("rank 0 stopped the sample".into())),
                },
            },
        };
        if let Err(e) = verdict {
            return Ok(Err(e));
        }
        let local = self.local.time(op, shape, iters);
        let own = match &local {
            Ok(t) => ranks
                .iter()
                .zip(t)
                .map(|(r, ns)| format!("{r} {ns}"))
                .collect::<Vec<_>>()
                .join("\n"),
            Err(why) => format!(
                "{} fail {}",
                ranks.first().copied().unwrap_or(0),
                one_line(why)
            ),
        };
        let all = match &mut self.session {
            None => vec![own.into_bytes()],
            Some(s) => match s.gather(own.as_bytes())? {
                Some(all) => all,
                None => return Ok(Ok(Vec::new())),
            },
        };
        Ok(times_of(&all, self.world_size))
    }

    /// A follower: serves rank 0's commands until rank 0 ends the session.
    fn serve(&mut self) -> Result<(), CollectiveError> {
        let rank = self.local.ranks().first().copied().unwrap_or(0);
        loop {
            let Some(s) = self.session.as_mut() else {
                return Ok(());
            };
            let cmd = s.broadcast(None)?;
            match Command::decode(&cmd) {
                Some(Command::Run {
                    op,
                    bytes,
                    iters,
                    verify,
                }) => {
                    let shape =
                        collective_shape(op, bytes, self.world_size, 4).ok_or_else(|| {
                            CollectiveError::Rank {
                                rank,
                                reason: format!("{bytes} bytes leave no element per rank"),
                            }
                        })?;
                    // A wrong result is rank 0's to report; this rank goes on serving.
                    let _verdict = self.execute(op, &shape, iters, verify)?;
                }
                Some(Command::EndSession) => return Ok(()),
                None => {
                    return Err(CollectiveError::Rank {
                        rank,
                        reason: format!("unknown command {:?}", String::from_utf8_lossy(&cmd)),
                    });
                }
            }
        }
    }

    /// Rank 0 (or the one process): every rank runs `iters` of `op`; each rank's time.
    pub(crate) fn drive(
        &mut self,
        op: Collective,
        requested_bytes: u64,
        shape: &CollectiveShape,
        iters: u64,
        verify: bool,
    ) -> Result<Vec<f64>, BenchError> {
        let backend = |e: CollectiveError| BenchError::Backend(e.to_string());
        if let Some(s) = self.session.as_mut() {
            let cmd = Command::Run {
                op,
                bytes: requested_bytes,
                iters,
                verify,
            };
            s.broadcast(Some(&cmd.encode()))
                .map_err(|e| backend(e.into()))?;
        }
        let times = self.execute(op, shape, iters, verify).map_err(backend)??;
        Ok(times.into_iter().map(|(_, ns)| ns).collect())
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(s) = self.session.as_mut().filter(|s| s.rank == 0) {
            // Followers go back to waiting for the next session; a dead one changes nothing.
            let _ = s.broadcast(Some(&Command::EndSession.encode()));
        }
    }
}

/// A reason as one line of the reply protocol (one line per rank).
fn one_line(why: &str) -> String {
    why.replace(['\n', '\r'], " ")
}

/// Rank 0's verdict on every process's statuses: a failed rank first, then a wrong result.
fn verdict_of(all: &[Vec<u8>]) -> Result<(), BenchError> {
    let lines: Vec<String> = all
        .iter()
        .flat_map(|b| {
            String::from_utf8_lossy(b)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let find = |word: &str| {
        lines.iter().find_map(|l| {
            let (rank, rest) = l.split_once(' ')?;
            let why = rest.strip_prefix(word)?.trim_start();
            Some(format!("rank {rank}: {why}"))
        })
    };
    if let Some(why) = find("fail") {
        return Err(BenchError::Backend(why));
    }
    if let Some(why) = find("bad") {
        return Err(BenchError::Validation(why));
    }
    Ok(())
}

/// Every rank's time, in rank order, from the processes' replies.
fn times_of(all: &[Vec<u8>], world_size: usize) -> Result<Vec<(usize, f64)>, BenchError> {
    verdict_of(all)?;
    let mut times: Vec<Option<f64>> = vec![None; world_size];
    for line in all.iter().flat_map(|b| {
        String::from_utf8_lossy(b)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    }) {
        let parsed = line
            .split_once(' ')
            .and_then(|(r, ns)| Some((r.parse::<usize>().ok()?, ns.parse::<f64>().ok()?)));
        match parsed {
            Some((r, ns)) if r < world_size && times[r].is_none() => times[r] = Some(ns),
            _ => {
                return Err(BenchError::Backend(format!(
                    "a rank sent no valid time: {line:?}"
                )));
            }
        }
    }
    times
        .into_iter()
        .enumerate()
        .map(|(r, t)| {
            t.map(|ns| (r, ns))
                .ok_or_else(|| BenchError::Backend(format!("rank {r} sent no time")))
        })
        .collect()
}

/// Rendezvous, then the communicator. `None` when rank 0 said the run is over.
fn meet(
    layout: &Layout,
    bound: Bound,
    provider: &dyn NcclProvider,
    timeout: Duration,
) -> Result<Option<Group>, CollectiveError> {
    let rank = layout.rank;
    let hello = hello_of(provider, layout.local_rank);
    let session = bound.join(&hello, |hellos| blob_of(hellos, provider), timeout)?;
    let id = match decode_blob(&session.blob) {
        Some(Blob::EndRun) => return Ok(None),
        Some(Blob::Refused(why)) => return Err(CollectiveError::Refused(why)),
        Some(Blob::Id(id)) => id,
        None => {
            return Err(CollectiveError::Rank {
                rank,
                reason:
                    "rank 0 sent no NCCL session (hint: the same [suites] backend on every rank)"
                        .to_string(),
            });
        }
    };
    let local = provider
        .join_rank(rank, layout.world_size, layout.local_rank, &id)
        .map_err(|reason| CollectiveError::Rank { rank, reason })?;
    Ok(Some(Group {
        session: Some(session),
        local,
        world_size: layout.world_size,
    }))
}

/// A rank other than 0: serves rank 0's NCCL sessions until rank 0 says the run is over. A
/// session rank 0 calls off (another rank not ready) is skipped: rank 0 fails that suite and
/// goes on.
pub fn follow(layout: &Layout, provider: &dyn NcclProvider) -> Result<(), CollectiveError> {
    follow_with(layout, provider, FOLLOWER_WAIT)
}

/// [`follow`] with its own wait for rank 0 (tests).
pub fn follow_with(
    layout: &Layout,
    provider: &dyn NcclProvider,
    wait: Duration,
) -> Result<(), CollectiveError> {
    loop {
        match meet(layout, Bound::bind(layout)?, provider, wait) {
            Ok(None) => return Ok(()),
            Ok(Some(mut group)) => group.serve()?,
            Err(CollectiveError::Refused(_)) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Rank 0's default wait for the others at a session.
pub const LEAD_TIMEOUT: Duration = DEFAULT_TIMEOUT;

#[cfg(test)]
mod tests;
