//! One CUDA device as the CUDA benchmarks use it: its context (cudarc's per-buffer event
//! tracking off, so nothing but the benchmark's own work lands on the stream), one stream, the
//! NVRTC kernels compiled for its architecture, device-side random inputs and the L2 flush.
//! Every driver, NVRTC and cuBLAS return code becomes a `CudaError`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::cublas::result::CublasError;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError,
    LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use crate::benchmark::BenchError;
use crate::kernels::{self, KernelError, KernelSource};

/// Why a CUDA benchmark could not run; each keeps the library's own error.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    #[error("CUDA driver: {0}")]
    Driver(#[from] DriverError),
    #[error("cuBLAS: {0}")]
    Cublas(#[from] CublasError),
    #[error(transparent)]
    Kernel(#[from] KernelError),
    #[error("{0}")]
    Setup(String),
}

impl From<CudaError> for BenchError {
    fn from(e: CudaError) -> BenchError {
        match e {
            CudaError::Setup(m) => BenchError::Setup(m),
            e => BenchError::Backend(e.to_string()),
        }
    }
}

/// Threads per block of the grid-stride kernels.
const BLOCK: u32 = 256;

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
    /// The buffer the L2 flush overwrites, allocated on first use, and the flush count.
    flush: Mutex<(Option<CudaSlice<u32>>, u32)>,
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

    /// Overwrites a buffer of twice the L2 size (at least 8 MiB), so the next timed region
    /// starts with a cold cache. Enqueued on the stream before the region's start event.
    pub fn flush_l2(&self) -> Result<(), CudaError> {
        let mut flush = self.flush.lock().unwrap_or_else(|p| p.into_inner());
        let words = (2 * self.l2_bytes).max(8 << 20) / 4;
        if flush.0.is_none() {
            // SAFETY: the buffer is written by the flush kernel before anything reads it.
            flush.0 = Some(unsafe { self.stream.alloc::<u32>(words as usize) }?);
        }
        flush.1 = flush.1.wrapping_add(1);
        let value = flush.1;
        let f = self.function(&kernels::L2_FLUSH, "l2_flush")?;
        let cfg = self.grid_stride(words);
        let buf = flush.0.as_mut().expect("allocated above");
        let (ptr, _sync) = buf.device_ptr(&self.stream);
        let mut launch = self.stream.launch_builder(&f);
        launch.arg(&ptr).arg(&words).arg(&value);
        // SAFETY: `words` u32s are allocated at `ptr`; the arguments match `l2_flush`.
        unsafe { launch.launch(cfg) }?;
        Ok(())
    }
}
