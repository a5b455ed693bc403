//! The data plane of the CPU collectives across processes: one TCP connection between every
//! pair of ranks, and the five collectives over it (ring all-reduce, all-gather and
//! reduce-scatter, a pipelined chain broadcast, pairwise all-to-all) with the reference each
//! rank's result is checked against, so a multi-node CPU run moves real bytes between ranks.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::ops::Range;
use std::thread;
use std::time::{Duration, Instant};

use pitwall_schema::work::{Collective, CollectiveShape};

/// Elements a broadcast forwards at a time along the chain, so ranks downstream start before
/// the root has sent everything (NCCL pipelines its ring the same way).
const BROADCAST_SEGMENT_ELEMENTS: usize = 64 << 10;
/// Pause between attempts to connect to a peer that is not accepting yet.
const CONNECT_RETRY: Duration = Duration::from_millis(20);

/// Rank `rank`'s input element `i`: small integers, so every sum is exact in f32.
pub(crate) fn input_value(rank: usize, i: usize) -> f32 {
    ((i * 7 + rank * 13) % 61) as f32 - 30.0
}

/// Elements of chunk `c` when `len` elements are split over `n` chunks as evenly as possible.
pub(crate) fn chunk_range(len: usize, n: usize, c: usize) -> Range<usize> {
    let (base, extra) = (len / n, len % n);
    let start = c * base + c.min(extra);
    start..start + base + usize::from(c < extra)
}

fn as_bytes(v: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding; the byte view covers exactly the slice and borrows it.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), size_of_val(v)) }
}

fn as_bytes_mut(v: &mut [f32]) -> &mut [u8] {
    // SAFETY: as above, and every byte pattern is a valid f32.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), size_of_val(v)) }
}

/// `buf[send]` to read and `buf[recv]` to write at once (the ranges must not overlap).
fn split(buf: &mut [f32], send: Range<usize>, recv: Range<usize>) -> (&[f32], &mut [f32]) {
    if send.start < recv.start {
        let (lo, hi) = buf.split_at_mut(recv.start);
        (&lo[send], &mut hi[..recv.len()])
    } else {
        let (lo, hi) = buf.split_at_mut(send.start);
        (&hi[..send.len()], &mut lo[recv])
    }
}

/// A connection to every other rank.
#[derive(Debug)]
pub(crate) struct Mesh {
    pub rank: usize,
    pub world_size: usize,
    peers: Vec<Option<TcpStream>>,
}

impl Mesh {
    /// Connects to every lower rank at `addrs[rank]` (saying who it is) and accepts every
    /// higher rank on `listener`, before `deadline`.
    pub fn connect(
        rank: usize,
        addrs: &[SocketAddr],
        listener: &TcpListener,
        deadline: Instant,
    ) -> io::Result<Mesh> {
        let world_size = addrs.len();
        let mut peers: Vec<Option<TcpStream>> = (0..world_size).map(|_| None).collect();
        for (lower, addr) in addrs.iter().enumerate().take(rank) {
            let mut stream = loop {
                match TcpStream::connect(addr) {
                    Ok(s) => break s,
                    Err(e) if Instant::now() >= deadline => {
                        return Err(io::Error::new(
                            e.kind(),
                            format!("rank {rank} cannot connect to rank {lower} at {addr}: {e}"),
                        ));
                    }
                    Err(_) => thread::sleep(CONNECT_RETRY),
                }
            };
            stream.write_all(&(rank as u32).to_le_bytes())?;
            peers[lower] = Some(stream);
        }
        listener.set_nonblocking(true)?;
        let mut waiting = world_size - rank - 1;
        while waiting > 0 {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    stream.set_nonblocking(false)?;
                    let mut who = [0u8; 4];
                    stream.read_exact(&mut who)?;
                    let who = u32::from_le_bytes(who) as usize;
                    if who <= rank || who >= world_size || peers[who].is_some() {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("rank {rank} was joined by an unexpected rank {who}"),
                        ));
                    }
                    peers[who] = Some(stream);
                    waiting -= 1;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("rank {rank}: {waiting} higher ranks never connected"),
                        ));
                    }
                    thread::sleep(CONNECT_RETRY);
                }
                Err(e) => return Err(e),
            }
        }
        for stream in peers.iter().flatten() {
            stream.set_nodelay(true)?;
        }
        Ok(Mesh {
            rank,
            world_size,
            peers,
        })
    }

    fn peer(&self, rank: usize) -> io::Result<&TcpStream> {
        self.peers[rank].as_ref().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotConnected,
                format!("no link to rank {rank}"),
            )
        })
    }

    /// Sends `send` to `to` while receiving `recv` from `from` (a writer thread, so two ranks
    /// sending to each other never both block on full socket buffers).
    fn exchange(&self, to: usize, send: &[f32], from: usize, recv: &mut [f32]) -> io::Result<()> {
        let (mut w, mut r) = (self.peer(to)?, self.peer(from)?);
        thread::scope(|s| {
            let writer = s.spawn(move || w.write_all(as_bytes(send)));
            let got = r.read_exact(as_bytes_mut(recv));
            let sent = writer
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("writer thread panicked")));
            got.and(sent)
        })
    }

    /// One collective of `op` (sum for the reductions) on buffers shaped by
    /// `collective_shape`: `input` has `send_elements`, `output` `recv_elements`, `work` at
    /// least `send_elements + recv_elements`.
    pub fn run(
        &self,
        op: Collective,
        input: &[f32],
        output: &mut [f32],
        work: &mut [f32],
    ) -> io::Result<()> {
        let (r, n) = (self.rank, self.world_size);
        if n == 1 {
            output.copy_from_slice(&input[..output.len()]);
            return Ok(());
        }
        match op {
            Collective::AllReduce | Collective::Reduce => {
                let count = input.len();
                output.copy_from_slice(input);
                let tmp = &mut work[..chunk_range(count, n, 0).len()];
                // Reduce-scatter: after step s, chunk (r−s−1) holds s+2 contributions.
                for s in 0..n - 1 {
                    let send = chunk_range(count, n, (r + n - s) % n);
                    let recv = chunk_range(count, n, (r + 2 * n - s - 1) % n);
                    let buf = &mut tmp[..recv.len()];
                    self.exchange((r + 1) % n, &output[send], (r + n - 1) % n, buf)?;
                    for (d, x) in output[recv].iter_mut().zip(buf.iter()) {
                        *d += x;
                    }
                }
                // All-gather of the complete chunks, (r+1) first.
                for s in 0..n - 1 {
                    let send = chunk_range(count, n, (r + 1 + n - s) % n);
                    let recv = chunk_range(count, n, (r + n - s) % n);
                    let (out, into) = split(output, send, recv);
                    self.exchange((r + 1) % n, out, (r + n - 1) % n, into)?;
                }
            }
            Collective::AllGather => {
                let m = input.len();
                output[r * m..(r + 1) * m].copy_from_slice(input);
                for s in 0..n - 1 {
                    let (sb, rb) = ((r + n - s) % n, (r + 2 * n - s - 1) % n);
                    let (out, into) = split(output, sb * m..(sb + 1) * m, rb * m..(rb + 1) * m);
                    self.exchange((r + 1) % n, out, (r + n - 1) % n, into)?;
                }
            }
            Collective::ReduceScatter => {
                let m = output.len();
                let (acc, tmp) = work.split_at_mut(n * m);
                acc.copy_from_slice(input);
                let tmp = &mut tmp[..m];
                // After the last step, block r holds every rank's contribution.
                for s in 0..n - 1 {
                    let (sb, rb) = ((r + 2 * n - s - 1) % n, (r + 2 * n - s - 2) % n);
                    self.exchange(
                        (r + 1) % n,
                        &acc[sb * m..(sb + 1) * m],
                        (r + n - 1) % n,
                        tmp,
                    )?;
                    for (d, x) in acc[rb * m..(rb + 1) * m].iter_mut().zip(tmp.iter()) {
                        *d += x;
                    }
                }
                output.copy_from_slice(&acc[r * m..(r + 1) * m]);
            }
            Collective::Broadcast => {
                // A chain from root 0: receive a segment from the left, pass it right.
                if r == 0 {
                    output.copy_from_slice(input);
                }
                for start in (0..output.len()).step_by(BROADCAST_SEGMENT_ELEMENTS) {
                    let seg = start..(start + BROADCAST_SEGMENT_ELEMENTS).min(output.len());
                    if r > 0 {
                        self.peer(r - 1)?
                            .read_exact(as_bytes_mut(&mut output[seg.clone()]))?;
                    }
                    if r + 1 < n {
                        self.peer(r + 1)?.write_all(as_bytes(&output[seg]))?;
                    }
                }
            }
            Collective::AllToAll => {
                let m = input.len() / n;
                output[r * m..(r + 1) * m].copy_from_slice(&input[r * m..(r + 1) * m]);
                for s in 1..n {
                    let (to, from) = ((r + s) % n, (r + n - s) % n);
                    let send = &input[to * m..(to + 1) * m];
                    self.exchange(to, send, from, &mut output[from * m..(from + 1) * m])?;
                }
            }
        }
        Ok(())
    }
}

/// Rank `rank`'s input for `op` (every rank's input is `input_value` of its rank).
pub(crate) fn input_for(rank: usize, shape: &CollectiveShape) -> Vec<f32> {
    (0..shape.send_elements as usize)
        .map(|i| input_value(rank, i))
        .collect()
}

/// What rank `rank` of `n` must hold after `op` at element `i` of its output.
pub(crate) fn expected(op: Collective, rank: usize, n: usize, m: usize, i: usize) -> f32 {
    match op {
        Collective::AllReduce | Collective::Reduce => (0..n).map(|q| input_value(q, i)).sum(),
        // Block b of the output is rank b's input.
        Collective::AllGather => input_value(i / m, i % m),
        Collective::ReduceScatter => (0..n).map(|q| input_value(q, rank * m + i)).sum(),
        Collective::Broadcast => input_value(0, i),
        // Block b of the output is block `rank` of rank b's input.
        Collective::AllToAll => input_value(i / m, rank * m + i % m),
    }
}

/// Checks rank `rank`'s `output` of `op` against the reference; the first wrong element.
pub(crate) fn check(
    op: Collective,
    rank: usize,
    n: usize,
    shape: &CollectiveShape,
    output: &[f32],
) -> Result<(), String> {
    // The block each rank contributes or receives, for the collectives that split.
    let m = match op {
        Collective::AllGather => shape.send_elements as usize,
        Collective::ReduceScatter => shape.recv_elements as usize,
        Collective::AllToAll => shape.send_elements as usize / n,
        _ => output.len(),
    };
    for (i, &got) in output.iter().enumerate() {
        let want = expected(op, rank, n, m.max(1), i);
        if got != want {
            return Err(format!(
                "{} over {n} ranks: rank {rank} element {i} is {got}, expected {want}",
                op.as_str()
            ));
        }
    }
    Ok(())
}
