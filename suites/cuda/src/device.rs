//! One CUDA device as the CUDA benchmarks use it, and how they time themselves on it: its
//! context (cudarc's per-buffer event tracking off, so nothing but the benchmark's own work lands
//! on the stream), one stream, the NVRTC kernels compiled for its architecture, device-side
//! random inputs, the L2 flush (a write sweep, then a read-only sweep, so the lines left are
//! clean), the blocking kernel of warm mode, and the event timer: the real `timing::Stream` on
//! this stream, driven by the timing loops of `timing.rs`, which decide what a timed region
//! contains. Every driver, NVRTC and cuBLAS return code becomes a `CudaError`; a sticky one
//! becomes `BenchError::DeviceLost` (`sticky`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUdevice_attribute as Attr, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use crate::error::CudaError;
use crate::graph::Graph;
use crate::kernels::{self, KernelSource};
use crate::timing::{self, BLOCK_TIMEOUT_NS, Cache, Stream, Timing};

/// Threads per block of the grid-stride kernels.
const BLOCK: u32 = 256;

/// The launch shape of the bandwidth kernels (copy, triad): one item per thread, 256 threads a
/// block, as many blocks as that takes (the grid-stride loop then runs once per thread; past
/// `MAX_GRID_BLOCKS` it strides). On an H200 (2026-12-04, docs/PERFORMANCE.md "GPU") the copy
/// kernel reached 4,281 GB/s at 1 GiB this way against 4,265 for `cuMemcpyDtoD`, and 3,980
/// (−6.7%) with the grid capped at 32 blocks per multiprocessor as [`Device::grid_stride`]
/// caps it: fewer bytes in flight per thread.
pub(crate) fn one_per_thread(n: u64) -> LaunchConfig {
    let blocks = n.div_ceil(u64::from(BLOCK)).clamp(1, MAX_GRID_BLOCKS);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The most blocks a grid's x dimension may have (CUDA: 2³¹ − 1).
const MAX_GRID_BLOCKS: u64 = (1 << 31) - 1;

/// A CUDA device with its context and stream; shared by the benchmarks of one suite.
pub struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub name: String,
    /// Compute capability as NVRTC's `sm_XY` number (90 for 9.0).
    pub sm: u32,
    pub multiprocessors: u32,
    pub l2_bytes: u64,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
    /// Kernels looked up so far, by entry name: no `cuModuleGetFunction` on a timed path.
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
    /// The L2 flush's buffers, allocated on first use, and the flush count.
    flush: Mutex<(Option<FlushBuffers>, u32)>,
    /// The blocking kernel's flags in mapped page-locked host memory, allocated on first use:
    /// `[release, gave_up]`.
    blocker: Mutex<Option<PinnedHostSlice<u32>>>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("name", &self.name)
            .field("sm", &self.sm)
            .field("l2_bytes", &self.l2_bytes)
            .finish_non_exhaustive()
    }
}

fn attribute(ctx: &CudaContext, a: Attr) -> Result<u32, CudaError> {
    let v = ctx.attribute(a)?;
    u32::try_from(v).map_err(|_| CudaError::Setup(format!("device attribute {a:?} is {v}")))
}

impl Device {
    /// Opens CUDA device `ordinal` (after `CUDA_VISIBLE_DEVICES`). Call only after the probe
    /// found a driver and a device: cudarc panics without them.
    pub fn open(ordinal: usize) -> Result<Arc<Device>, CudaError> {
        let ctx = CudaContext::new(ordinal)?;
        // SAFETY: nothing has been allocated in this context yet, and every buffer is used on
        // this one stream, in order, so cudarc's cross-stream event tracking is not needed;
        // without it a kernel launch or copy enqueues no extra event records or waits.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        let (major, minor) = ctx.compute_capability()?;
        Ok(Arc::new(Device {
            name: ctx.name()?,
            sm: (major * 10 + minor) as u32,
            multiprocessors: attribute(&ctx, Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            l2_bytes: u64::from(attribute(&ctx, Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?),
            stream,
            ctx,
            modules: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
            flush: Mutex::new((None, 0)),
            blocker: Mutex::new(None),
        }))
    }

    /// Kernel `entry` of `kernel`, compiled by NVRTC for this device on first use.
    pub fn function(
        &self,
        kernel: &KernelSource,
        entry: &'static str,
    ) -> Result<CudaFunction, CudaError> {
        let mut functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = functions.get(entry) {
            return Ok(f.clone());
        }
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        let module = match modules.get(kernel.file) {
            Some(m) => m.clone(),
            None => {
                let cubin = kernels::compile(kernel, self.sm)?;
                let m = self.ctx.load_module(Ptx::from_binary(cubin))?;
                modules.insert(kernel.file, m.clone());
                m
            }
        };
        let f = module.load_function(entry)?;
        functions.insert(entry, f.clone());
        Ok(f)
    }

    /// The launch shape of a grid-stride kernel over `n` items: 256 threads a block, at most
    /// 32 blocks per multiprocessor.
    pub fn grid_stride(&self, n: u64) -> LaunchConfig {
        let blocks = n.div_ceil(u64::from(BLOCK)).max(1);
        let cap = u64::from(self.multiprocessors.max(1)) * 32;
        LaunchConfig {
            grid_dim: (blocks.min(cap) as u32, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Fills `elements` values of `dtype_entry`'s type at the start of `buf` with the
    /// counter-hash uniform values of `random_init.cu` for `seed`: in (−1, 1), never zero.
    /// `dtype_entry` is one of its kernels (`random_uniform_f32`, `_f64`, `_f16`, `_bf16`).
    pub fn fill_uniform<T>(
        &self,
        dtype_entry: &'static str,
        buf: &mut CudaSlice<T>,
        elements: u64,
        seed: u64,
    ) -> Result<(), CudaError> {
        let f = self.function(&kernels::RANDOM_INIT, dtype_entry)?;
        let cfg = self.grid_stride(elements);
        let (ptr, _sync) = buf.device_ptr(&self.stream);
        let mut launch = self.stream.launch_builder(&f);
        launch.arg(&ptr).arg(&elements).arg(&seed);
        // SAFETY: the kernel writes `elements` values below `ptr`, which `buf` holds (callers
        // size `elements` to the buffer); the arguments match its signature.
        unsafe { launch.launch(cfg) }?;
        Ok(())
    }

    /// Empties the L2 ([`flush_steps`]): overwrites a buffer of twice the L2 size (at least
    /// 8 MiB), then reads a second buffer of the same size, so the next timed region starts
    /// with a cold cache holding only clean lines (the write-backs of the first buffer's dirty
    /// lines happen inside the flush). Enqueued on the stream before the region's start event.
    pub fn flush_l2(&self) -> Result<(), CudaError> {
        let mut flush = self.flush.lock().unwrap_or_else(|p| p.into_inner());
        let steps = flush_steps(self.l2_bytes);
        if flush.0.is_none() {
            let words = |step: &FlushStep| match *step {
                FlushStep::Write { bytes } | FlushStep::Read { bytes } => (bytes / 4) as usize,
            };
            let most = steps.iter().map(words).max().unwrap_or(0);
            flush.0 = Some(FlushBuffers {
                // SAFETY: the buffer is written by the flush kernel before anything reads it.
                write: unsafe { self.stream.alloc::<u32>(most) }?,
                // Zeros: the sweep's xor of them is 0, never `SWEEP_NEVER`.
                read: self.stream.alloc_zeros::<u32>(most)?,
                sink: self.stream.alloc_zeros::<u32>(1)?,
            });
        }
        flush.1 = flush.1.wrapping_add(1);
        let value = flush.1;
        let buffers = flush.0.as_mut().expect("allocated above");
        for step in steps {
            match step {
                FlushStep::Write { bytes } => {
                    let words = bytes / 4;
                    let f = self.function(&kernels::L2_FLUSH, "l2_flush")?;
                    let (ptr, _sync) = buffers.write.device_ptr(&self.stream);
                    let mut launch = self.stream.launch_builder(&f);
                    launch.arg(&ptr).arg(&words).arg(&value);
                    // SAFETY: `words` u32s are allocated at `ptr`; the arguments match.
                    unsafe { launch.launch(self.grid_stride(words)) }?;
                }
                FlushStep::Read { bytes } => {
                    let words = bytes / 4;
                    let f = self.function(&kernels::L2_FLUSH, "l2_read_sweep")?;
                    let (ptr, _sync) = buffers.read.device_ptr(&self.stream);
                    let (sink, _sink) = buffers.sink.device_ptr(&self.stream);
                    let mut launch = self.stream.launch_builder(&f);
                    launch.arg(&ptr).arg(&words).arg(&SWEEP_NEVER).arg(&sink);
                    // SAFETY: `words` u32s are allocated at `ptr`, one at `sink`; the
                    // arguments match `l2_read_sweep`.
                    unsafe { launch.launch(self.grid_stride(words)) }?;
                }
            }
        }
        Ok(())
    }
}

impl Device {
    /// Enqueues the blocking kernel (warm mode): one thread spinning until [`Device::release`]
    /// or for [`BLOCK_TIMEOUT_NS`]. The stream must be idle (the flags are reset here).
    pub fn block(&self) -> Result<(), CudaError> {
        let mut blocker = self.blocker.lock().unwrap_or_else(|p| p.into_inner());
        if blocker.is_none() {
            let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
            // SAFETY: both words are written below before the kernel reads them.
            *blocker = Some(unsafe { self.ctx.alloc_pinned_with_flags::<u32>(2, flags) }?);
        }
        let host = blocker.as_mut().expect("allocated above").as_mut_ptr()?;
        let mut device: sys::CUdeviceptr = 0;
        // SAFETY: `host` holds two u32s of page-locked memory mapped for the device; the
        // stream is idle, so no kernel reads them while they are reset.
        unsafe {
            host.write_volatile(0);
            host.add(1).write_volatile(0);
            sys::cuMemHostGetDevicePointer_v2(&mut device, host.cast(), 0).result()?;
        }
        let f = self.function(&kernels::BLOCKING, "block_stream")?;
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(&f);
        launch.arg(&device).arg(&BLOCK_TIMEOUT_NS);
        // SAFETY: `device` maps the two flags; the arguments match `block_stream`.
        unsafe { launch.launch(cfg) }?;
        Ok(())
    }

    /// Releases the blocking kernel: a host write it sees through the mapping.
    pub fn release(&self) -> Result<(), CudaError> {
        self.blocker_flag(0, Some(1)).map(|_| ())
    }

    /// After the stream was synchronised: whether the blocking kernel gave up.
    pub fn block_gave_up(&self) -> Result<bool, CudaError> {
        self.blocker_flag(1, None).map(|v| v == 1)
    }

    /// Reads flag `index`, or writes `value` to it.
    fn blocker_flag(&self, index: usize, value: Option<u32>) -> Result<u32, CudaError> {
        let mut blocker = self.blocker.lock().unwrap_or_else(|p| p.into_inner());
        let flags = blocker
            .as_mut()
            .ok_or_else(|| CudaError::Setup("the blocking kernel was never started".into()))?;
        let host = flags.as_mut_ptr()?;
        // SAFETY: `index` < 2 words of page-locked memory; volatile, as the kernel spins on it.
        unsafe {
            let at = host.add(index);
            if let Some(v) = value {
                at.write_volatile(v);
            }
            Ok(at.read_volatile())
        }
    }
}

/// The L2 flush's buffers: the one it overwrites, the one it then reads, and the word the read
/// sweep would write if a thread's xor came out as [`SWEEP_NEVER`] (it cannot: `read` holds
/// zeros).
struct FlushBuffers {
    write: CudaSlice<u32>,
    read: CudaSlice<u32>,
    sink: CudaSlice<u32>,
}

/// The value the read sweep compares its xor with, so its loads cannot be elided.
const SWEEP_NEVER: u32 = 1;

/// One kernel of the L2 flush, on a buffer of `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushStep {
    /// `l2_flush`: overwrites the first buffer, evicting the benchmark's lines.
    Write { bytes: u64 },
    /// `l2_read_sweep`: only reads the second buffer.
    Read { bytes: u64 },
}

/// The kernels of an L2 flush on a card with `l2_bytes` of L2, in order.
pub fn flush_steps(l2_bytes: u64) -> Vec<FlushStep> {
    let bytes = (2 * l2_bytes).max(MIN_FLUSH_BYTES);
    vec![FlushStep::Write { bytes }, FlushStep::Read { bytes }]
}

/// The smallest flush buffer (when the driver reports a tiny or no L2).
const MIN_FLUSH_BYTES: u64 = 8 << 20;

/// Times iterations of a benchmark's work with events, reusing its events between samples:
/// the real [`Stream`] of the timing loops (`timing`) on the device's stream.
pub struct EventTimer {
    pairs: Vec<(CudaEvent, CudaEvent)>,
    /// Iterations started so far, over every call: the rotation over buffer sets continues
    /// from sample to sample instead of restarting at set 0.
    next: u64,
}

impl EventTimer {
    pub fn new() -> EventTimer {
        EventTimer {
            pairs: Vec::new(),
            next: 0,
        }
    }

    /// Runs `op` `iters` times and returns the device time of the `op`s in nanoseconds. `op`
    /// gets the running iteration number (to pick a buffer set) and must only enqueue work on
    /// `dev.stream`.
    pub fn time(
        &mut self,
        dev: &Device,
        cache: Cache,
        iters: u64,
        op: impl FnMut(u64) -> Result<(), CudaError>,
    ) -> Result<f64, CudaError> {
        self.run(dev, cache, Timing::PER_ITERATION, None, iters, op)
    }

    /// The run loop of every CUDA benchmark: `iters` iterations of `op` timed as `timing`
    /// says (`timing::time`), launched eagerly or, with `Work::Graph`, as replays of `graph`.
    pub fn run(
        &mut self,
        dev: &Device,
        cache: Cache,
        timing: Timing,
        graph: Option<&Graph>,
        iters: u64,
        op: impl FnMut(u64) -> Result<(), CudaError>,
    ) -> Result<f64, CudaError> {
        let mut stream = CudaOps {
            dev,
            pairs: &mut self.pairs,
            op,
            graph,
        };
        timing::time(&mut stream, &mut self.next, cache, timing, iters)
    }
}

impl Default for EventTimer {
    fn default() -> Self {
        EventTimer::new()
    }
}

/// [`Stream`] on a device's CUDA stream: its events, the benchmark's `op` and its graph.
struct CudaOps<'a, F> {
    dev: &'a Device,
    pairs: &'a mut Vec<(CudaEvent, CudaEvent)>,
    op: F,
    graph: Option<&'a Graph>,
}

impl<F: FnMut(u64) -> Result<(), CudaError>> Stream for CudaOps<'_, F> {
    fn flush(&mut self) -> Result<(), CudaError> {
        self.dev.flush_l2()
    }

    fn reserve(&mut self, pairs: usize) -> Result<(), CudaError> {
        while self.pairs.len() < pairs {
            let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
            let ctx = &self.dev.ctx;
            self.pairs
                .push((ctx.new_event(flags)?, ctx.new_event(flags)?));
        }
        Ok(())
    }

    fn record_start(&mut self, pair: usize) -> Result<(), CudaError> {
        Ok(self.pairs[pair].0.record(&self.dev.stream)?)
    }

    fn record_end(&mut self, pair: usize) -> Result<(), CudaError> {
        Ok(self.pairs[pair].1.record(&self.dev.stream)?)
    }

    fn launch(&mut self, iter: u64) -> Result<(), CudaError> {
        (self.op)(iter)
    }

    fn graph_launch(&mut self) -> Result<(), CudaError> {
        match self.graph {
            Some(g) => g.launch(),
            None => Err(CudaError::Setup("no CUDA graph was captured".to_string())),
        }
    }

    fn synchronize(&mut self) -> Result<(), CudaError> {
        Ok(self.dev.stream.synchronize()?)
    }

    fn elapsed_ms(&mut self, pair: usize) -> Result<f64, CudaError> {
        let (start, end) = &self.pairs[pair];
        Ok(f64::from(start.elapsed_ms(end)?))
    }

    fn block(&mut self) -> Result<(), CudaError> {
        self.dev.block()
    }

    fn release(&mut self) -> Result<(), CudaError> {
        self.dev.release()
    }

    fn block_timed_out(&mut self) -> Result<bool, CudaError> {
        self.dev.block_gave_up()
    }

    fn warn(&mut self, message: &str) {
        eprintln!("warning: {}: {message}", self.dev.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy kernel at 1 GiB gets a thread per 16-byte word, never a capped grid; a
    /// size past the x dimension's limit strides instead of overflowing it.
    #[test]
    fn bandwidth_kernels_get_one_thread_per_item() {
        let cfg = one_per_thread((1u64 << 30) / 16);
        assert_eq!(
            (cfg.grid_dim, cfg.block_dim),
            ((262_144, 1, 1), (256, 1, 1))
        );
        assert_eq!(one_per_thread(1).grid_dim.0, 1);
        assert_eq!(one_per_thread(0).grid_dim.0, 1);
        assert_eq!(one_per_thread(257).grid_dim.0, 2);
        assert_eq!(one_per_thread(u64::MAX / 2).grid_dim.0, (1u32 << 31) - 1);
    }

    /// Issue 23, defect 2: the flush's writes leave L2 full of dirty lines whose write-back
    /// the timed op would pay for; a read-only sweep of a second buffer of at least the L2 size
    /// at the end leaves only clean lines.
    #[test]
    fn the_flush_ends_with_a_read_only_sweep_of_a_second_buffer_of_at_least_l2() {
        for l2 in [0, 40 << 20, 50 << 20, 126 << 20] {
            let steps = flush_steps(l2);
            assert!(matches!(steps[0], FlushStep::Write { bytes } if bytes >= 2 * l2));
            match steps.last() {
                Some(&FlushStep::Read { bytes }) => assert!(bytes >= l2.max(MIN_FLUSH_BYTES)),
                other => panic!("the flush ends with {other:?}"),
            }
        }
    }
}
