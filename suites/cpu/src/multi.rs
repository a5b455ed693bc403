//! The CPU `collective` suite across processes (torchrun or srun starting one pitwall per
//! rank): rank 0 meets the others through `pitwall-rendezvous`, drives every benchmark and
//! keeps each rank's time; the other ranks follow its commands ([`follow`]) and store nothing.
//!
//! Per sample: rank 0 broadcasts the command, every rank checks its result once (before the
//! first timed batch), barriers, times its own iterations and sends its time to rank 0. The
//! sample is the mean of the ranks' times, as nccl-tests reports by default (`-a 1`:
//! `Allreduce(args, &deltaSec, average)` in its common.cu); every rank's time is kept
//! ([`Benchmark::rank_times_ns`]), so a straggler shows.

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pitwall_rendezvous::session::{Bound, DEFAULT_TIMEOUT};
use pitwall_rendezvous::{Hello, Layout, LayoutError, RendezvousError, Session};

use crate::mesh::{Mesh, check, input_for};
use pitwall_schema::backend::SuiteOptions;
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::schema::Unit;
use pitwall_schema::work::{
    Collective, CollectiveCommand as Command, CollectiveShape, bus_factor, collective_shape,
    sweep_bytes,
};

/// Largest message of the CPU sweep across processes when `max_bytes` is not set: TCP
/// between processes, so far below NCCL's 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 4 << 20;
/// How long a follower waits for rank 0's next session (rank 0 may be building the project).
pub const FOLLOWER_WAIT: Duration = Duration::from_secs(3600);
const ELEM_BYTES: u64 = 4;

/// Why a multi-process collective could not run.
#[derive(Debug, thiserror::Error)]
pub enum CollectiveError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    Rendezvous(#[from] RendezvousError),
    #[error("rank {rank}: data plane: {source}")]
    DataPlane { rank: usize, source: std::io::Error },
    #[error("rank {rank}: {reason}")]
    Protocol { rank: usize, reason: String },
}

/// What rank 0 hands every rank at the rendezvous.
#[derive(Debug, Clone, PartialEq)]
enum Blob {
    /// A session: its id and every rank's data-plane address (`None` for rank 0: the others
    /// reach it where they reached its rendezvous).
    Session {
        id: u64,
        addrs: Vec<(Option<IpAddr>, u16)>,
    },
    /// Rank 0's run is over: followers exit.
    EndRun,
}

impl Blob {
    fn encode(&self) -> Vec<u8> {
        match self {
            Blob::EndRun => b"end".to_vec(),
            Blob::Session { id, addrs } => {
                let mut text = format!("session {id}");
                for (ip, port) in addrs {
                    let ip = ip.map_or("-".to_string(), |ip| ip.to_string());
                    text.push_str(&format!("\n{ip} {port}"));
                }
                text.into_bytes()
            }
        }
    }

    fn decode(bytes: &[u8]) -> Option<Blob> {
        let text = std::str::from_utf8(bytes).ok()?;
        if text == "end" {
            return Some(Blob::EndRun);
        }
        let mut lines = text.lines();
        let id = lines.next()?.strip_prefix("session ")?.parse().ok()?;
        let addrs = lines
            .map(|l| {
                let (ip, port) = l.split_once(' ')?;
                let ip = if ip == "-" {
                    None
                } else {
                    Some(ip.parse().ok()?)
                };
                Some((ip, port.parse().ok()?))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Blob::Session { id, addrs })
    }
}

/// One rank's part of a session: the control channel, the data plane and its buffers.
#[derive(Debug)]
pub(crate) struct Group {
    session: Session,
    mesh: Mesh,
    buffers: Option<Buffers>,
}

/// One rank's buffers for one (collective, requested bytes).
#[derive(Debug)]
struct Buffers {
    key: (Collective, u64),
    input: Vec<f32>,
    output: Vec<f32>,
    work: Vec<f32>,
}

/// Rendezvous, then the data plane. `None` when rank 0 said the run is over.
fn meet(
    layout: &Layout,
    bound: Bound,
    timeout: Duration,
) -> Result<Option<Group>, CollectiveError> {
    let rank = layout.rank;
    let data_err = |source| CollectiveError::DataPlane { rank, source };
    let listener = TcpListener::bind("0.0.0.0:0").map_err(data_err)?;
    let port = listener.local_addr().map_err(data_err)?.port();
    let session_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id());
    let session = bound.join(
        &port.to_le_bytes(),
        |hellos: &[Hello]| {
            let addrs = hellos
                .iter()
                .map(|h| {
                    let port = h
                        .payload
                        .get(..2)
                        .map_or(0, |p| u16::from_le_bytes([p[0], p[1]]));
                    (if h.rank == 0 { None } else { h.peer_ip }, port)
                })
                .collect();
            Blob::Session {
                id: session_id,
                addrs,
            }
            .encode()
        },
        timeout,
    )?;
    let (_, addrs) = match Blob::decode(&session.blob) {
        Some(Blob::EndRun) => return Ok(None),
        Some(Blob::Session { id, addrs }) if addrs.len() == layout.world_size => (id, addrs),
        _ => {
            return Err(CollectiveError::Protocol {
                rank,
                reason: "rank 0 sent no valid session".to_string(),
            });
        }
    };
    let rank0_ip = if rank == 0 { None } else { session.peer_ip(0) };
    let sockets: Vec<SocketAddr> = addrs
        .iter()
        .map(|(ip, port)| {
            let ip = ip.or(rank0_ip).unwrap_or(IpAddr::from([127, 0, 0, 1]));
            SocketAddr::new(ip, *port)
        })
        .collect();
    let mesh =
        Mesh::connect(rank, &sockets, &listener, Instant::now() + timeout).map_err(data_err)?;
    Ok(Some(Group {
        session,
        mesh,
        buffers: None,
    }))
}

impl Group {
    /// Rank 0's side: meets the followers on its bound listener.
    fn lead(layout: &Layout, bound: Bound) -> Result<Group, CollectiveError> {
        meet(layout, bound, DEFAULT_TIMEOUT)?.ok_or_else(|| CollectiveError::Protocol {
            rank: 0,
            reason: "no session".to_string(),
        })
    }

    /// This rank's part of one command: the check (when asked), a barrier, then `iters`
    /// timed collectives. Ok(ns) or why this rank's result is wrong.
    fn execute(
        &mut self,
        op: Collective,
        bytes: u64,
        iters: u64,
        verify: bool,
    ) -> Result<Result<f64, String>, CollectiveError> {
        let (rank, n) = (self.mesh.rank, self.mesh.world_size);
        let Some(shape) = collective_shape(op, bytes, n, ELEM_BYTES) else {
            return Ok(Err(format!("{bytes} bytes leave no element for {n} ranks")));
        };
        if self.buffers.as_ref().is_none_or(|b| b.key != (op, bytes)) {
            let work = shape.send_elements as usize + shape.recv_elements as usize;
            self.buffers = Some(Buffers {
                key: (op, bytes),
                input: input_for(rank, &shape),
                output: vec![0.0; shape.recv_elements as usize],
                work: vec![0.0; work],
            });
        }
        let Buffers {
            input,
            output,
            work,
            ..
        } = self.buffers.as_mut().expect("set above");
        let data_err = |source| CollectiveError::DataPlane { rank, source };
        let mut status = Ok(());
        if verify {
            output.fill(0.0);
            self.mesh.run(op, input, output, work).map_err(data_err)?;
            status = check(op, rank, n, &shape, output);
        }
        self.session.barrier()?;
        let start = Instant::now();
        for _ in 0..iters {
            self.mesh.run(op, input, output, work).map_err(data_err)?;
        }
        let ns = start.elapsed().as_nanos() as f64;
        Ok(status.map(|()| ns))
    }

    /// Rank 0: every rank runs `command`; each rank's time, or the first rank's error.
    fn drive(
        &mut self,
        op: Collective,
        bytes: u64,
        iters: u64,
        verify: bool,
    ) -> Result<Vec<f64>, BenchError> {
        let cmd = Command::Run {
            op,
            bytes,
            iters,
            verify,
        };
        let backend = |e: CollectiveError| BenchError::Backend(e.to_string());
        self.session
            .broadcast(Some(&cmd.encode()))
            .map_err(|e| backend(e.into()))?;
        let own = self.execute(op, bytes, iters, verify).map_err(backend)?;
        let replies = self
            .session
            .gather(&reply(&own))
            .map_err(|e| backend(e.into()))?
            .unwrap_or_default();
        let mut times = Vec::with_capacity(replies.len());
        for (r, bytes) in replies.iter().enumerate() {
            let text = String::from_utf8_lossy(bytes);
            match text.strip_prefix("ok ").and_then(|t| t.parse::<f64>().ok()) {
                Some(ns) => times.push(ns),
                None => {
                    let why = text.strip_prefix("err ").unwrap_or(&text);
                    return Err(BenchError::Validation(format!("rank {r}: {why}")));
                }
            }
        }
        Ok(times)
    }
}

fn reply(result: &Result<f64, String>) -> Vec<u8> {
    match result {
        Ok(ns) => format!("ok {ns}").into_bytes(),
        Err(why) => format!("err {why}").into_bytes(),
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.session.rank == 0 {
            // Followers go back to waiting for the next session; a dead one changes nothing.
            let _ = self.session.broadcast(Some(&Command::EndSession.encode()));
        }
    }
}

/// A rank other than 0: serves rank 0's sessions until rank 0 says the run is over.
pub fn follow(layout: &Layout) -> Result<(), CollectiveError> {
    loop {
        let Some(mut group) = meet(layout, Bound::bind(layout)?, FOLLOWER_WAIT)? else {
            return Ok(());
        };
        loop {
            let cmd = group.session.broadcast(None)?;
            match Command::decode(&cmd) {
                Some(Command::Run {
                    op,
                    bytes,
                    iters,
                    verify,
                }) => {
                    let result = group.execute(op, bytes, iters, verify)?;
                    group.session.gather(&reply(&result))?;
                }
                Some(Command::EndSession) => break,
                None => {
                    return Err(CollectiveError::Protocol {
                        rank: layout.rank,
                        reason: format!("unknown command {:?}", String::from_utf8_lossy(&cmd)),
                    });
                }
            }
        }
    }
}

/// Rank 0, when its run is over: one last rendezvous telling every follower to exit.
pub fn release_followers(layout: &Layout) -> Result<(), CollectiveError> {
    if layout.rank != 0 || !layout.is_multi_process() {
        return Ok(());
    }
    Bound::bind(layout)?.join(&[], |_| Blob::EndRun.encode(), DEFAULT_TIMEOUT)?;
    Ok(())
}

/// One collective of the sweep, run by every rank of the session.
pub struct RankCollectiveBench {
    op: Collective,
    requested_bytes: u64,
    shape: CollectiveShape,
    world_size: usize,
    group: Arc<Mutex<Group>>,
    verified: bool,
    last_rank_ns: Option<Vec<f64>>,
}

/// Rank 0's benchmarks: the five collectives over the sweep up to `max_bytes` (default
/// [`DEFAULT_MAX_BYTES`]), sizes that leave no element per rank left out.
pub fn suite(
    layout: &Layout,
    options: &SuiteOptions,
) -> Result<Vec<Box<dyn Benchmark>>, CollectiveError> {
    suite_on(layout, Bound::bind(layout)?, options)
}

/// [`suite`] on a listener already bound (tests bind port 0 first to learn the port).
pub fn suite_on(
    layout: &Layout,
    bound: Bound,
    options: &SuiteOptions,
) -> Result<Vec<Box<dyn Benchmark>>, CollectiveError> {
    let group = Arc::new(Mutex::new(Group::lead(layout, bound)?));
    let n = layout.world_size;
    let mut benches: Vec<Box<dyn Benchmark>> = Vec::new();
    for op in Collective::MEASURED {
        for bytes in sweep_bytes(options.max_bytes.unwrap_or(DEFAULT_MAX_BYTES)) {
            if let Some(shape) = collective_shape(op, bytes, n, ELEM_BYTES) {
                benches.push(Box::new(RankCollectiveBench {
                    op,
                    requested_bytes: bytes,
                    shape,
                    world_size: n,
                    group: Arc::clone(&group),
                    verified: false,
                    last_rank_ns: None,
                }));
            }
        }
    }
    Ok(benches)
}

/// The benchmark name of `op` on f32 (`allreduce_sum_f32`, `broadcast_f32`…).
pub fn bench_name(op: Collective) -> String {
    match op {
        Collective::AllReduce | Collective::ReduceScatter | Collective::Reduce => {
            format!("{}_sum_f32", op.as_str())
        }
        _ => format!("{}_f32", op.as_str()),
    }
}

impl Benchmark for RankCollectiveBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new(
            &bench_name(self.op),
            &[
                ("bytes", self.shape.bytes.to_string()),
                ("ranks", self.world_size.to_string()),
                ("layout", "processes".to_string()),
            ],
        )
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        let bytes = self.shape.bytes as f64;
        vec![
            MetricSpec::rate("algbw", Unit::GB_PER_S, bytes, 1e9),
            MetricSpec::rate(
                "busbw",
                Unit::GB_PER_S,
                bytes * bus_factor(self.op, self.world_size),
                1e9,
            ),
        ]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        let mut group = self
            .group
            .lock()
            .map_err(|_| BenchError::Backend("a rank's session panicked".to_string()))?;
        let times = group.drive(self.op, self.requested_bytes, iters, !self.verified)?;
        self.verified = true;
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        self.last_rank_ns = Some(times);
        Ok(mean)
    }

    fn rank_times_ns(&self) -> Option<Vec<f64>> {
        self.last_rank_ns.clone()
    }
}

#[cfg(test)]
mod tests;
