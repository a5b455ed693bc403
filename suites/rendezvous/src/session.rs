//! The TCP rendezvous itself: rank 0 listens, every other rank connects (retrying until a
//! deadline) and says hello, rank 0 answers each with the session blob built from all hellos,
//! then all ranks barrier. The connections stay open as the control channel of the run.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::thread;
use std::time::{Duration, Instant};

use crate::layout::Layout;

/// How long ranks wait for each other (connect, hello, blob) before giving up.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Pause between connection attempts while rank 0 is not listening yet.
const CONNECT_RETRY: Duration = Duration::from_millis(50);
/// Longest wait for one connection attempt (an address that drops packets).
const CONNECT_ATTEMPT: Duration = Duration::from_millis(500);
/// First bytes of every hello: the protocol and its version.
const MAGIC: &[u8; 8] = b"PWRDV001";
/// Largest frame accepted, so a stray peer cannot make a rank allocate without bound.
const MAX_FRAME_BYTES: usize = 64 << 20;

/// Why the ranks could not meet, or the control channel failed.
#[derive(Debug, thiserror::Error)]
pub enum RendezvousError {
    #[error("rank 0 cannot listen on {addr}: {source} (hint: pick a free port)")]
    Listen { addr: String, source: io::Error },
    #[error(
        "rank {rank} cannot reach the rendezvous at {addr} within {secs} s: {source} (hint: is rank 0 running, and is the address reachable from this node?)"
    )]
    Connect {
        rank: usize,
        addr: String,
        secs: u64,
        source: io::Error,
    },
    #[error(
        "rendezvous at {addr}: {joined} of {world_size} ranks joined within {secs} s (hint: start every rank with the same WORLD_SIZE)"
    )]
    Incomplete {
        addr: String,
        joined: usize,
        world_size: usize,
        secs: u64,
    },
    #[error("rendezvous at {addr}: {reason}")]
    Protocol { addr: String, reason: String },
    #[error("rendezvous at {addr}: {source}")]
    Io { addr: String, source: io::Error },
}

/// What one rank told rank 0 when it joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    pub rank: usize,
    /// The address rank 0 saw the connection come from (rank 0's own: its listen host).
    pub peer_ip: Option<IpAddr>,
    pub payload: Vec<u8>,
}

/// Rank 0's listening socket, bound before the others are started (its port is known then,
/// which lets tests use ephemeral ports); other ranks hold nothing yet.
#[derive(Debug)]
pub struct Bound {
    layout: Layout,
    listener: Option<TcpListener>,
}

/// The ranks, met: this rank's place, the blob, and the control connections (rank 0: one per
/// other rank, by rank; the others: one to rank 0).
#[derive(Debug)]
pub struct Session {
    pub rank: usize,
    pub world_size: usize,
    pub blob: Vec<u8>,
    addr: String,
    peers: Vec<Option<TcpStream>>,
}

/// Binds rank 0's listener (`host:port` of the layout; port 0 picks one) and meets the other
/// ranks: see [`Bound::join`].
pub fn rendezvous(
    layout: &Layout,
    hello: &[u8],
    make_blob: impl FnOnce(&[Hello]) -> Vec<u8>,
    timeout: Duration,
) -> Result<Session, RendezvousError> {
    Bound::bind(layout)?.join(hello, make_blob, timeout)
}

impl Bound {
    /// Rank 0 binds its listener on every interface at the layout's port; others bind nothing.
    pub fn bind(layout: &Layout) -> Result<Bound, RendezvousError> {
        let listener = match (&layout.addr, layout.rank) {
            (Some(addr), 0) => {
                let port = addr.rsplit_once(':').map_or("0", |(_, p)| p);
                let any = format!("0.0.0.0:{port}");
                Some(
                    TcpListener::bind(&any)
                        .map_err(|source| RendezvousError::Listen { addr: any, source })?,
                )
            }
            _ => None,
        };
        Ok(Bound {
            layout: layout.clone(),
            listener,
        })
    }

    /// The port rank 0 listens on (`None` on other ranks and with world size 1).
    pub fn port(&self) -> Option<u16> {
        self.listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.port())
    }

    /// Meets the other ranks. Every rank sends `hello`; rank 0 calls `make_blob` with every
    /// rank's hello, in rank order, and sends the result to all; then all ranks barrier. With
    /// world size 1 the blob is `make_blob` of this rank's hello alone.
    pub fn join(
        self,
        hello: &[u8],
        make_blob: impl FnOnce(&[Hello]) -> Vec<u8>,
        timeout: Duration,
    ) -> Result<Session, RendezvousError> {
        let layout = self.layout;
        let addr = layout.addr.clone().unwrap_or_default();
        let own = Hello {
            rank: layout.rank,
            peer_ip: None,
            payload: hello.to_vec(),
        };
        let mut session = Session {
            rank: layout.rank,
            world_size: layout.world_size,
            blob: Vec::new(),
            addr,
            peers: (0..layout.world_size).map(|_| None).collect(),
        };
        if layout.world_size == 1 {
            session.blob = make_blob(&[own]);
            return Ok(session);
        }
        let deadline = Instant::now() + timeout;
        match self.listener {
            Some(listener) => {
                let mut hellos = session.accept_all(&listener, own, deadline, timeout)?;
                let own_host = session.addr.rsplit_once(':').map(|(h, _)| h.to_string());
                hellos[0].peer_ip = own_host.and_then(|h| resolve_ip(&h));
                session.blob = make_blob(&hellos);
                let blob = session.blob.clone();
                session.broadcast(Some(&blob))?;
            }
            None => {
                let mut stream = connect(&session.addr, layout.rank, deadline, timeout)?;
                stream
                    .set_read_timeout(Some(timeout))
                    .map_err(|e| session.io(e))?;
                let mut frame = MAGIC.to_vec();
                frame.extend((layout.rank as u32).to_le_bytes());
                frame.extend((layout.world_size as u32).to_le_bytes());
                frame.extend(hello);
                write_frame(&mut stream, &frame).map_err(|e| session.io(e))?;
                session.peers[0] = Some(stream);
                session.blob = session.broadcast(None)?;
            }
        }
        session.barrier()?;
        // From here on the ranks wait as long as the slowest benchmark lasts.
        for stream in session.peers.iter().flatten() {
            stream.set_read_timeout(None).map_err(|e| session.io(e))?;
        }
        Ok(session)
    }
}

impl Session {
    /// Rank 0: accepts world_size−1 hellos before `deadline`, checking rank and world size.
    fn accept_all(
        &mut self,
        listener: &TcpListener,
        own: Hello,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Vec<Hello>, RendezvousError> {
        let mut hellos: Vec<Option<Hello>> = (0..self.world_size).map(|_| None).collect();
        hellos[0] = Some(own);
        listener.set_nonblocking(true).map_err(|e| self.io(e))?;
        let mut joined = 1;
        while joined < self.world_size {
            let (mut stream, peer) = match listener.accept() {
                Ok(s) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(RendezvousError::Incomplete {
                            addr: self.addr.clone(),
                            joined,
                            world_size: self.world_size,
                            secs: timeout.as_secs(),
                        });
                    }
                    thread::sleep(CONNECT_RETRY);
                    continue;
                }
                Err(e) => return Err(self.io(e)),
            };
            stream.set_nonblocking(false).map_err(|e| self.io(e))?;
            stream
                .set_read_timeout(Some(timeout))
                .map_err(|e| self.io(e))?;
            stream.set_nodelay(true).map_err(|e| self.io(e))?;
            let frame = read_frame(&mut stream).map_err(|e| self.io(e))?;
            let (rank, world_size, payload) = parse_hello(&frame)
                .ok_or_else(|| self.protocol(format!("a peer at {peer} sent no valid hello")))?;
            if world_size != self.world_size {
                return Err(self.protocol(format!(
                    "rank {rank} says world size {world_size}, rank 0 has {}",
                    self.world_size
                )));
            }
            if rank == 0 || rank >= self.world_size || hellos[rank].is_some() {
                return Err(self.protocol(format!("rank {rank} joined twice or is out of range")));
            }
            hellos[rank] = Some(Hello {
                rank,
                peer_ip: Some(peer.ip()),
                payload,
            });
            self.peers[rank] = Some(stream);
            joined += 1;
        }
        Ok(hellos.into_iter().flatten().collect())
    }

    /// Rank 0 sends `data` to every rank and returns it; the others return what rank 0 sent.
    pub fn broadcast(&mut self, data: Option<&[u8]>) -> Result<Vec<u8>, RendezvousError> {
        if self.rank == 0 {
            let data = data.unwrap_or_default();
            for r in 1..self.world_size {
                let stream = self.stream(r)?;
                write_frame(stream, data).map_err(|e| self.io(e))?;
            }
            Ok(data.to_vec())
        } else {
            let stream = self.stream(0)?;
            read_frame(stream).map_err(|e| self.io(e))
        }
    }

    /// Every rank sends `data`; rank 0 returns all of them in rank order (its own first), the
    /// others `None`.
    pub fn gather(&mut self, data: &[u8]) -> Result<Option<Vec<Vec<u8>>>, RendezvousError> {
        if self.rank == 0 {
            let mut all = vec![data.to_vec()];
            for r in 1..self.world_size {
                let stream = self.stream(r)?;
                all.push(read_frame(stream).map_err(|e| self.io(e))?);
            }
            Ok(Some(all))
        } else {
            let stream = self.stream(0)?;
            write_frame(stream, data).map_err(|e| self.io(e))?;
            Ok(None)
        }
    }

    /// Returns once every rank has called it.
    pub fn barrier(&mut self) -> Result<(), RendezvousError> {
        self.gather(&[])?;
        self.broadcast(Some(&[]))?;
        Ok(())
    }

    /// The address this rank's control connection to `rank` reaches (ranks other than 0 know
    /// only rank 0's; rank 0 knows everyone's): where that rank's other listeners are reachable.
    pub fn peer_ip(&self, rank: usize) -> Option<IpAddr> {
        self.peers
            .get(rank)
            .and_then(Option::as_ref)
            .and_then(|s| s.peer_addr().ok())
            .map(|a| a.ip())
    }

    fn stream(&mut self, rank: usize) -> Result<&mut TcpStream, RendezvousError> {
        let addr = self.addr.clone();
        self.peers
            .get_mut(rank)
            .and_then(Option::as_mut)
            .ok_or_else(|| RendezvousError::Protocol {
                addr,
                reason: format!("no connection to rank {rank}"),
            })
    }

    fn io(&self, source: io::Error) -> RendezvousError {
        RendezvousError::Io {
            addr: self.addr.clone(),
            source,
        }
    }

    fn protocol(&self, reason: String) -> RendezvousError {
        RendezvousError::Protocol {
            addr: self.addr.clone(),
            reason,
        }
    }
}

/// Connects to rank 0, retrying until `deadline` (rank 0 may start last).
fn connect(
    addr: &str,
    rank: usize,
    deadline: Instant,
    timeout: Duration,
) -> Result<TcpStream, RendezvousError> {
    loop {
        // Every address the name resolves to (`localhost` may give ::1 before 127.0.0.1).
        let attempt = addr.to_socket_addrs().and_then(|addrs| {
            let mut last = io::Error::new(io::ErrorKind::NotFound, "the name has no address");
            for target in addrs.collect::<Vec<SocketAddr>>() {
                match TcpStream::connect_timeout(&target, CONNECT_ATTEMPT) {
                    Ok(stream) => return Ok(stream),
                    Err(e) => last = e,
                }
            }
            Err(last)
        });
        match attempt {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(source) if Instant::now() >= deadline => {
                return Err(RendezvousError::Connect {
                    rank,
                    addr: addr.to_string(),
                    secs: timeout.as_secs(),
                    source,
                });
            }
            Err(_) => thread::sleep(CONNECT_RETRY),
        }
    }
}

fn resolve_ip(host: &str) -> Option<IpAddr> {
    (host, 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .map(|a| a.ip())
}

fn parse_hello(frame: &[u8]) -> Option<(usize, usize, Vec<u8>)> {
    let rest = frame.strip_prefix(MAGIC.as_slice())?;
    let rank = u32::from_le_bytes(rest.get(0..4)?.try_into().ok()?) as usize;
    let world = u32::from_le_bytes(rest.get(4..8)?.try_into().ok()?) as usize;
    Some((rank, world, rest[8..].to_vec()))
}

/// One frame: its length as a little-endian u32, then its bytes.
pub fn write_frame(stream: &mut impl Write, data: &[u8]) -> io::Result<()> {
    let len = u32::try_from(data.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    stream.write_all(&len.to_le_bytes())?;
    stream.write_all(data)?;
    stream.flush()
}

/// Reads one frame written by [`write_frame`].
pub fn read_frame(stream: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {len} bytes is over the {MAX_FRAME_BYTES}-byte limit"),
        ));
    }
    let mut data = vec![0u8; len];
    stream.read_exact(&mut data)?;
    Ok(data)
}

#[cfg(test)]
mod tests;
