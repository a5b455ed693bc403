//! The CPU `collective` suite: a real ring all-reduce across OS threads over shared memory,
//! reported as nccl-tests' algbw and busbw, so collective regressions can be caught without GPUs.

use std::hint::spin_loop;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use super::kernel::fits;
use pitwall_schema::backend::SuiteOptions;
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::schema::Unit;
use pitwall_schema::work::{Collective, bus_factor};

/// Message sizes measured, 8 B to 64 MiB.
pub const MESSAGE_BYTES: [u64; 9] = [
    8,
    64,
    512,
    4 << 10,
    32 << 10,
    256 << 10,
    2 << 20,
    16 << 20,
    64 << 20,
];

pub fn suite(options: &SuiteOptions) -> Vec<Box<dyn Benchmark>> {
    let ranks = options.ranks.unwrap_or_else(default_ranks);
    MESSAGE_BYTES
        .iter()
        .filter(|&&bytes| fits(options.max_bytes, bytes))
        .map(|&bytes| Box::new(AllReduceBench::new(bytes, ranks)) as Box<dyn Benchmark>)
        .collect()
}

/// min(available parallelism, 4), but at least 2 so there is a ring.
pub fn default_ranks() -> usize {
    thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4)
}

/// Elements of chunk `c` when `len` elements are split over `n` chunks as evenly as possible.
fn chunk_range(len: usize, n: usize, c: usize) -> Range<usize> {
    let (base, extra) = (len / n, len % n);
    let start = c * base + c.min(extra);
    start..start + base + usize::from(c < extra)
}

/// Rank `r`'s input element `i`: small integers, so every sum is exact in f32.
fn input_value(rank: usize, i: usize) -> f32 {
    ((i * 7 + rank * 13) % 61) as f32 - 30.0
}

/// A barrier for threads that spin briefly then yield, so ring steps stay cheap on idle cores
/// and do not starve other ranks when threads outnumber cores.
struct SpinBarrier {
    parties: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(parties: usize) -> SpinBarrier {
        SpinBarrier {
            parties,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < 2000 {
                spins += 1;
                spin_loop();
            } else {
                thread::yield_now();
            }
        }
    }
}

/// What the bench asks of its workers; they sleep on a condvar between runs.
struct Control {
    generation: u64,
    iters: u64,
    exit: bool,
    /// Generation whose all-reduces rank 0 has finished timing, and how long they took.
    done: u64,
    elapsed_ns: f64,
}

/// Buffers and synchronisation shared by the ranks. Each rank's buffers are split into `ranks`
/// chunks, each behind its own lock; within one ring step no two ranks touch the same chunk
/// mutably, so the locks are never contended and only make the sharing safe.
struct Shared {
    ranks: usize,
    /// `input[rank][chunk]`, never written after setup (out-of-place all-reduce).
    input: Vec<Vec<Vec<f32>>>,
    /// `output[rank][chunk]`, each rank's result.
    output: Vec<Vec<RwLock<Vec<f32>>>>,
    step: SpinBarrier,
    control: Mutex<Control>,
    wake: Condvar,
    finished: Condvar,
}

impl Shared {
    fn new(elements: usize, ranks: usize) -> Shared {
        let input: Vec<Vec<Vec<f32>>> = (0..ranks)
            .map(|r| {
                (0..ranks)
                    .map(|c| {
                        chunk_range(elements, ranks, c)
                            .map(|i| input_value(r, i))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let output = input
            .iter()
            .map(|chunks| {
                chunks
                    .iter()
                    .map(|c: &Vec<f32>| RwLock::new(vec![0.0; c.len()]))
                    .collect()
            })
            .collect();
        Shared {
            ranks,
            input,
            output,
            step: SpinBarrier::new(ranks),
            control: Mutex::new(Control {
                generation: 0,
                iters: 0,
                exit: false,
                done: 0,
                elapsed_ns: 0.0,
            }),
            wake: Condvar::new(),
            finished: Condvar::new(),
        }
    }

    /// Rank `rank`'s part of `iters` ring all-reduces: reduce-scatter, then all-gather, each in
    /// ranks−1 steps in which every rank reads one chunk of its left neighbour.
    fn all_reduce(&self, rank: usize, iters: u64) {
        let n = self.ranks;
        let prev = (rank + n - 1) % n;
        let mine = &self.output[rank];
        for _ in 0..iters {
            if n == 1 {
                for (dst, src) in mine.iter().zip(&self.input[rank]) {
                    dst.write().unwrap().copy_from_slice(src);
                }
                continue;
            }
            // Reduce-scatter: at step s, chunk (rank−1−s) gains this rank's contribution; after
            // the last step, chunk (rank+1) holds the sum over all ranks.
            for s in 0..n - 1 {
                let c = (rank + 2 * n - 1 - s) % n;
                {
                    let mut dst = mine[c].write().unwrap();
                    let own = &self.input[rank][c];
                    if s == 0 {
                        add(&mut dst, own, &self.input[prev][c]);
                    } else {
                        add(&mut dst, own, &self.output[prev][c].read().unwrap());
                    }
                }
                self.step.wait();
            }
            // All-gather: at step t, copy the complete chunk (rank−t) from the left neighbour.
            for t in 0..n - 1 {
                let c = (rank + n - t) % n;
                {
                    let mut dst = mine[c].write().unwrap();
                    dst.copy_from_slice(&self.output[prev][c].read().unwrap());
                }
                self.step.wait();
            }
        }
    }

    /// Checks that every rank holds the elementwise sum of all inputs.
    fn verify(&self) -> Result<(), BenchError> {
        let n = self.ranks;
        for (rank, chunks) in self.output.iter().enumerate() {
            let elements = chunks.iter().map(|c| c.read().unwrap().len()).sum();
            for (c, chunk) in chunks.iter().enumerate() {
                let chunk = chunk.read().unwrap();
                for (i, &got) in chunk_range(elements, n, c).zip(chunk.iter()) {
                    let want: f32 = (0..n).map(|r| input_value(r, i)).sum();
                    if got != want {
                        return Err(BenchError::Validation(format!(
                            "all-reduce over {n} ranks: rank {rank} element {i} is {got}, expected {want}"
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

fn add(dst: &mut [f32], a: &[f32], b: &[f32]) {
    for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
        *d = x + y;
    }
}

fn worker(shared: Arc<Shared>, rank: usize, cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        pin_current_thread(cpu);
    }
    let mut seen = 0;
    loop {
        let iters = {
            let mut control = shared.control.lock().unwrap();
            while !control.exit && control.generation == seen {
                control = shared.wake.wait(control).unwrap();
            }
            if control.exit {
                return;
            }
            seen = control.generation;
            control.iters
        };
        shared.step.wait();
        let start = Instant::now();
        shared.all_reduce(rank, iters);
        shared.step.wait();
        if rank == 0 {
            let elapsed_ns = start.elapsed().as_nanos() as f64;
            let mut control = shared.control.lock().unwrap();
            control.done = seen;
            control.elapsed_ns = elapsed_ns;
            shared.finished.notify_all();
        }
    }
}

/// The CPUs this process may run on, in order.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to one CPU (best effort: a refusal leaves it unpinned).
fn pin_current_thread(cpu: usize) {
    // SAFETY: as above; pid 0 means the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The ranks: one persistent worker thread per rank; the calling thread only waits.
struct Ring {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl Ring {
    /// Starts one worker thread per rank. When there are at least as many allowed CPUs as
    /// ranks, rank r is pinned to the r-th allowed CPU, so ranks never share a core (as NCCL
    /// runs one rank per GPU); the calling thread only waits.
    fn start(elements: usize, ranks: usize) -> Result<Ring, BenchError> {
        let mut ring = Ring {
            shared: Arc::new(Shared::new(elements, ranks)),
            workers: Vec::with_capacity(ranks),
        };
        let cpus = allowed_cpus();
        for rank in 0..ranks {
            let shared = Arc::clone(&ring.shared);
            let cpu = (cpus.len() >= ranks).then(|| cpus[rank]);
            let handle = thread::Builder::new()
                .name(format!("pitwall-allreduce-{rank}"))
                .spawn(move || worker(shared, rank, cpu))
                .map_err(|e| BenchError::Setup(format!("spawning rank {rank}: {e}")))?;
            ring.workers.push(handle);
        }
        Ok(ring)
    }

    /// Runs `iters` all-reduces on all ranks; nanoseconds, timed by rank 0, from the barrier
    /// before the first iteration to the barrier after the last (nccl-tests style).
    fn run(&self, iters: u64) -> f64 {
        let mut control = self.shared.control.lock().unwrap();
        control.generation += 1;
        control.iters = iters;
        let generation = control.generation;
        self.shared.wake.notify_all();
        while control.done != generation {
            control = self.shared.finished.wait(control).unwrap();
        }
        control.elapsed_ns
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        self.shared.control.lock().unwrap().exit = true;
        self.shared.wake.notify_all();
        for handle in self.workers.drain(..) {
            // A worker that panicked has already stopped; nothing more to clean up.
            let _ = handle.join();
        }
    }
}

/// Out-of-place ring all-reduce (sum, f32) of `bytes` across `ranks` threads.
pub struct AllReduceBench {
    bytes: u64,
    ranks: usize,
    ring: Option<Ring>,
    verified: bool,
}

impl AllReduceBench {
    /// `ranks` below 1 is taken as 1; buffers and threads are set up on the first run.
    pub fn new(bytes: u64, ranks: usize) -> AllReduceBench {
        AllReduceBench {
            bytes,
            ranks: ranks.max(1),
            ring: None,
            verified: false,
        }
    }
}

impl Benchmark for AllReduceBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new(
            "allreduce_sum_f32",
            &[
                ("bytes", self.bytes.to_string()),
                ("ranks", self.ranks.to_string()),
            ],
        )
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        let bytes = self.bytes as f64;
        vec![
            MetricSpec::rate("algbw", Unit::GB_PER_S, bytes, 1e9),
            MetricSpec::rate(
                "busbw",
                Unit::GB_PER_S,
                bytes * bus_factor(Collective::AllReduce, self.ranks),
                1e9,
            ),
        ]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        let elem_bytes = size_of::<f32>() as u64;
        if self.bytes == 0 || self.bytes % elem_bytes != 0 {
            return Err(BenchError::Setup(format!(
                "message of {} bytes is not a whole, non-zero number of f32s",
                self.bytes
            )));
        }
        if self.ring.is_none() {
            let elements = usize::try_from(self.bytes / elem_bytes)
                .map_err(|e| BenchError::Setup(e.to_string()))?;
            self.ring = Some(Ring::start(elements, self.ranks)?);
        }
        let ring = self.ring.as_ref().expect("started above");
        let ns = ring.run(iters);
        if !self.verified && iters > 0 {
            ring.shared.verify()?;
            self.verified = true;
        }
        Ok(ns)
    }
}

#[cfg(test)]
mod tests;
