//! The CUDA `kernel` suite's bandwidth benchmarks: device-to-device copy by the copy engine
//! (`cuMemcpyDtoDAsync`) and by an NVRTC kernel, STREAM triad, and host-to-device and
//! device-to-host transfers from pinned and pageable memory. Bytes are counted as
//! `pitwall_schema::work` counts them for the CPU suite, reported in GB/s; each result is
//! checked on sampled ranges after the warm-up, before anything is timed.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, PinnedHostSlice, PushKernelArg, result};

use crate::device::{Device, EventTimer};
use crate::error::CudaError;
use crate::kernels;
use crate::timing::Cache;
use crate::timing::{Start, Timing};
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::check::{Compared, check, tolerance};
use pitwall_schema::schema::Unit;
use pitwall_schema::work::{Dtype, copy_bytes, transfer_bytes, triad_bytes};

/// Buffer sets the timed iterations rotate over, so no iteration reuses the previous one's
/// buffers (with a cold L2 this changes little; with a warm one it keeps TLB and L2 honest).
pub const SETS: usize = 2;

/// The largest L2 the plan sizes buffer sets for (a B200's 126 MiB, rounded up); on the
/// device the sets follow its own L2 (`LinearPlanned::buffer_sets`).
pub const PLAN_L2_BYTES: u64 = 128 << 20;

/// Whether an iteration touching `bytes` (a copy: read and written) may still have them in L2
/// at its end event on a card pitwall plans for (L2 up to [`PLAN_L2_BYTES`]): its
/// bandwidth is then no HBM figure, and it gets no HBM ceiling (16 MiB copies).
pub fn may_sit_in_l2(bytes: u64) -> bool {
    bytes <= PLAN_L2_BYTES
}

/// Where the host side of a transfer lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMemory {
    /// Page-locked (`cuMemHostAlloc`): DMA straight from it.
    Pinned,
    /// Ordinary `Vec` memory: the driver stages it through its own pinned buffers, so the
    /// time includes that host-side copy (`memory=pageable_staged`).
    Pageable,
}

impl HostMemory {
    pub fn as_str(self) -> &'static str {
        match self {
            HostMemory::Pinned => "pinned",
            HostMemory::Pageable => "pageable_staged",
        }
    }
}

/// The operations measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOp {
    /// `cuMemcpyDtoDAsync`: the copy engine or the driver's own copy kernel.
    MemcpyD2D,
    /// `copy_u128` from `kernels/copy.cu`, 16 bytes per thread.
    CopyKernel,
    /// `triad_f64`: a = b + 3·c over f64.
    Triad,
    HostToDevice(HostMemory),
    DeviceToHost(HostMemory),
}

impl MemOp {
    pub fn name(self) -> &'static str {
        match self {
            MemOp::MemcpyD2D => "cuda_memcpy_d2d",
            MemOp::CopyKernel => "cuda_copy_kernel",
            MemOp::Triad => "cuda_triad",
            MemOp::HostToDevice(_) => "cuda_h2d",
            MemOp::DeviceToHost(_) => "cuda_d2h",
        }
    }

    /// Device arrays of `bytes` each in one buffer set.
    fn arrays(self) -> u64 {
        match self {
            MemOp::MemcpyD2D | MemOp::CopyKernel => 2,
            MemOp::Triad => 3,
            MemOp::HostToDevice(_) | MemOp::DeviceToHost(_) => 1,
        }
    }

    /// Bytes moved per iteration for arrays of `bytes`.
    pub fn moved_bytes(self, bytes: u64) -> u64 {
        match self {
            // Counted in f64 words: `bytes` is a multiple of 16.
            MemOp::MemcpyD2D | MemOp::CopyKernel => copy_bytes(bytes / 8, Dtype::F64),
            MemOp::Triad => triad_bytes(bytes / 8, Dtype::F64),
            MemOp::HostToDevice(_) | MemOp::DeviceToHost(_) => transfer_bytes(bytes),
        }
    }

    /// How it is timed: transfers from or to pageable memory wait on the host for the stream
    /// when enqueued, so warm mode does not hold the stream for them (`Start::HostWaits`).
    pub fn timing(self) -> Timing {
        match self {
            MemOp::HostToDevice(HostMemory::Pageable)
            | MemOp::DeviceToHost(HostMemory::Pageable) => Timing {
                start: Start::HostWaits,
                ..Timing::PER_ITERATION
            },
            _ => Timing::PER_ITERATION,
        }
    }

    /// Device memory of every buffer set (host buffers not counted).
    pub fn footprint_bytes(self, bytes: u64) -> u64 {
        SETS as u64 * self.arrays() * bytes
    }
}

/// The triad's scalar, as in the CPU suite.
pub const TRIAD_SCALAR: f64 = 3.0;

/// A host buffer of either kind.
enum HostBuf {
    Pinned(PinnedHostSlice<u8>),
    Pageable(Vec<u8>),
}

impl HostBuf {
    fn as_slice(&self) -> Result<&[u8], CudaError> {
        match self {
            HostBuf::Pinned(p) => Ok(p.as_slice()?),
            HostBuf::Pageable(v) => Ok(v),
        }
    }

    fn as_mut_slice(&mut self) -> Result<&mut [u8], CudaError> {
        match self {
            HostBuf::Pinned(p) => Ok(p.as_mut_slice()?),
            HostBuf::Pageable(v) => Ok(v),
        }
    }
}

/// What a memory benchmark allocates on its first run.
struct State {
    /// `sets[s][array]`, each `bytes` long: copies read 0 and write 1; triad writes 0 (a) from
    /// 1 (b) and 2 (c); transfers use 0.
    sets: Vec<Vec<CudaSlice<u8>>>,
    host: Option<HostBuf>,
    /// The NVRTC kernel of `CopyKernel` and `Triad`, looked up before anything is timed.
    func: Option<CudaFunction>,
    timer: EventTimer,
}

/// One bandwidth benchmark over arrays of `bytes`.
pub struct MemoryBench {
    dev: Arc<Device>,
    op: MemOp,
    bytes: u64,
    cache: Cache,
    state: Option<State>,
}

impl MemoryBench {
    pub fn new(dev: Arc<Device>, op: MemOp, bytes: u64, cache: Cache) -> MemoryBench {
        MemoryBench {
            dev,
            op,
            bytes,
            cache,
            state: None,
        }
    }

    fn setup(&self) -> Result<State, CudaError> {
        if self.bytes == 0 || self.bytes % 16 != 0 {
            return Err(CudaError::Setup(format!(
                "{} bytes is not a positive multiple of 16",
                self.bytes
            )));
        }
        let dev = &self.dev;
        let mut sets = Vec::with_capacity(SETS);
        for s in 0..SETS {
            let mut arrays = Vec::new();
            for a in 0..self.op.arrays() {
                // SAFETY: every array is filled before it is read.
                let mut buf = unsafe { dev.stream.alloc::<u8>(self.bytes as usize) }?;
                let seed = (s as u64) << 8 | a;
                dev.fill_uniform("random_uniform_f64", &mut buf, self.bytes / 8, seed)?;
                arrays.push(buf);
            }
            sets.push(arrays);
        }
        let host = match self.op {
            MemOp::HostToDevice(kind) | MemOp::DeviceToHost(kind) => {
                let len = self.bytes as usize;
                let mut host = match kind {
                    // SAFETY: filled below before any copy reads it. Flags 0: not
                    // write-combined, so the host can read it back for the check.
                    HostMemory::Pinned => {
                        HostBuf::Pinned(unsafe { dev.ctx.alloc_pinned_with_flags::<u8>(len, 0) }?)
                    }
                    HostMemory::Pageable => HostBuf::Pageable(vec![0u8; len]),
                };
                for (i, b) in host.as_mut_slice()?.iter_mut().enumerate() {
                    *b = (i as u64)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        .rotate_left(17) as u8;
                }
                Some(host)
            }
            _ => None,
        };
        let func = match self.op {
            MemOp::CopyKernel => Some(dev.function(&kernels::COPY, "copy_u128")?),
            MemOp::Triad => Some(dev.function(&kernels::TRIAD, "triad_f64")?),
            _ => None,
        };
        dev.stream.synchronize()?;
        Ok(State {
            sets,
            host,
            func,
            timer: EventTimer::new(),
        })
    }

    /// Enqueues one iteration on buffer set `set`.
    fn enqueue(&self, state: &mut State, set: usize) -> Result<(), CudaError> {
        let dev = &self.dev;
        let stream = &dev.stream;
        let bytes = self.bytes;
        let arrays = &mut state.sets[set];
        match self.op {
            MemOp::MemcpyD2D => {
                let (src, _s) = arrays[0].device_ptr(stream);
                let (dst, _d) = arrays[1].device_ptr(stream);
                // SAFETY: both arrays hold `bytes` bytes on this context.
                unsafe { result::memcpy_dtod_async(dst, src, bytes as usize, stream.cu_stream()) }?;
            }
            MemOp::CopyKernel => {
                let f = state.func.as_ref().expect("looked up in setup");
                let n16 = bytes / 16;
                let (src, _s) = arrays[0].device_ptr(stream);
                let (dst, _d) = arrays[1].device_ptr(stream);
                let mut launch = stream.launch_builder(f);
                launch.arg(&dst).arg(&src).arg(&n16);
                // SAFETY: `n16` 16-byte words fit both arrays; arguments match `copy_u128`.
                unsafe { launch.launch(crate::device::one_per_thread(n16)) }?;
            }
            MemOp::Triad => {
                let f = state.func.as_ref().expect("looked up in setup");
                let n = bytes / 8;
                let (a, _a) = arrays[0].device_ptr(stream);
                let (b, _b) = arrays[1].device_ptr(stream);
                let (c, _c) = arrays[2].device_ptr(stream);
                let mut launch = stream.launch_builder(f);
                launch.arg(&a).arg(&b).arg(&c).arg(&TRIAD_SCALAR).arg(&n);
                // SAFETY: `n` f64s fit each array; arguments match `triad_f64`.
                unsafe { launch.launch(crate::device::one_per_thread(n)) }?;
            }
            MemOp::HostToDevice(_) => {
                let host = state.host.as_ref().expect("transfers have a host buffer");
                let (dst, _d) = arrays[0].device_ptr(stream);
                // SAFETY: the device array holds `bytes` bytes, as many as the host slice.
                unsafe { result::memcpy_htod_async(dst, host.as_slice()?, stream.cu_stream()) }?;
            }
            MemOp::DeviceToHost(_) => {
                let host = state.host.as_mut().expect("transfers have a host buffer");
                let (src, _s) = arrays[0].device_ptr(stream);
                // SAFETY: as above; the host buffer is not read until the stream is synced.
                unsafe {
                    result::memcpy_dtoh_async(host.as_mut_slice()?, src, stream.cu_stream())
                }?;
            }
        }
        Ok(())
    }

    /// After one iteration on every set (stream synchronised): the last set's output is what
    /// the operation computes, on sampled 4 KiB ranges (start, end and 14 spread between).
    fn validate(&self, state: &State) -> Result<(), BenchError> {
        let stream = &self.dev.stream;
        let chunk = 4096.min(self.bytes) as usize;
        let ranges: Vec<std::ops::Range<usize>> = (0..16u64)
            .map(|i| {
                let start = ((self.bytes as usize - chunk) as u64 * i / 15) as usize & !7;
                start..start + chunk
            })
            .collect();
        let down =
            |buf: &CudaSlice<u8>, r: &std::ops::Range<usize>| -> Result<Vec<u8>, CudaError> {
                let bytes = stream.clone_dtoh(&buf.slice(r.clone()))?;
                stream.synchronize()?;
                Ok(bytes)
            };
        // The last set: the warm-up ran every set in order, and a device-to-host copy leaves
        // the host buffer holding the last one's data.
        let arrays = &state.sets[SETS - 1];
        let what = format!("{}[bytes={}]", self.op.name(), self.bytes);
        for r in &ranges {
            let ok = match self.op {
                MemOp::MemcpyD2D | MemOp::CopyKernel => {
                    down(&arrays[0], r)? == down(&arrays[1], r)?
                }
                MemOp::HostToDevice(_) | MemOp::DeviceToHost(_) => {
                    down(&arrays[0], r)?
                        == state.host.as_ref().expect("host").as_slice()?[r.clone()]
                }
                MemOp::Triad => {
                    let f64s = |v: Vec<u8>| -> Vec<f64> {
                        v.chunks_exact(8)
                            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                            .collect()
                    };
                    let (a, b, c) = (
                        f64s(down(&arrays[0], r)?),
                        f64s(down(&arrays[1], r)?),
                        f64s(down(&arrays[2], r)?),
                    );
                    let elements =
                        a.iter()
                            .zip(&b)
                            .zip(&c)
                            .enumerate()
                            .map(|(i, ((&a, &b), &c))| Compared {
                                index: r.start / 8 + i,
                                got: a,
                                want: b + TRIAD_SCALAR * c,
                                scale: b.abs() + (TRIAD_SCALAR * c).abs(),
                            });
                    let verdict = check(elements, tolerance(Dtype::F64, 2));
                    if !verdict.passed() {
                        return Err(BenchError::Validation(verdict.describe(&what)));
                    }
                    true
                }
            };
            if !ok {
                return Err(BenchError::Validation(format!(
                    "{what}: bytes {}..{} differ after one iteration",
                    r.start, r.end
                )));
            }
        }
        Ok(())
    }
}

impl Benchmark for MemoryBench {
    fn id(&self) -> BenchmarkId {
        let mut params = vec![("bytes", self.bytes.to_string())];
        if let MemOp::HostToDevice(kind) | MemOp::DeviceToHost(kind) = self.op {
            params.push(("memory", kind.as_str().to_string()));
        }
        BenchmarkId::new(self.op.name(), &params)
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    fn metrics(&self) -> Vec<MetricSpec> {
        vec![MetricSpec::rate(
            "bandwidth",
            Unit::GB_PER_S,
            self.op.moved_bytes(self.bytes) as f64,
            1e9,
        )]
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        // The raw driver and cuBLAS calls use the thread's current context.
        self.dev.ctx.bind_to_thread().map_err(CudaError::from)?;
        if self.state.is_none() {
            let mut state = self.setup()?;
            // Warm-up: one untimed iteration on every set (module loads, first-touch), then
            // the check of the last.
            for set in 0..SETS {
                self.enqueue(&mut state, set)?;
            }
            self.dev.stream.synchronize().map_err(CudaError::from)?;
            self.validate(&state)?;
            self.state = Some(state);
        }
        let mut state = self.state.take().expect("set above");
        let mut timer = std::mem::take(&mut state.timer);
        let dev = self.dev.clone();
        let timed = timer.run(&dev, self.cache, self.op.timing(), None, iters, |i| {
            self.enqueue(&mut state, (i % SETS as u64) as usize)
        });
        state.timer = timer;
        self.state = Some(state);
        Ok(timed?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 23, defect 11: a pageable transfer's time includes the driver's staging copy on
    /// the host; its parameter says so.
    #[test]
    fn pageable_transfers_are_labelled_as_including_host_staging() {
        assert_eq!(HostMemory::Pageable.as_str(), "pageable_staged");
        assert_eq!(HostMemory::Pinned.as_str(), "pinned");
        assert!(may_sit_in_l2(2 * (16 << 20)) && !may_sit_in_l2(2 * (256 << 20)));
    }
}
