//! The CUDA backend: built-in suites on NVIDIA GPUs through cudarc, every CUDA library loaded at
//! run time, so the same binary builds and runs (CPU suites only) on a machine without CUDA.
//! Which benchmarks the `kernel` suite holds is a plan that needs no GPU (so sizes and the
//! `max_bytes` cap are tested anywhere), made real on a device opened in the worker.

pub mod ceiling;
pub mod collective;
pub mod device;
pub mod error;
pub mod fp8;
pub mod gemm;
pub mod gpu_select;
pub mod graph;
pub mod half16;
pub mod infer_plan;
pub mod infer_ref;
pub mod inference;
pub mod kernels;
pub mod linear;
pub mod memory;
pub mod nccl;
pub mod nccl_data;
pub mod nccl_group;
mod nccl_mem;
pub mod nccl_ranks;
pub mod operands;
pub mod peaks;
pub mod plausible;
pub mod probe;
pub mod rows;
pub mod sticky;
pub mod timing;
#[cfg(test)]
mod timing_fake;
pub mod user;

pub use probe::{CudaInfo, CudaSystem, SystemCuda, probe_with};

use std::sync::{Arc, Mutex};

use crate::device::Device;
use crate::gemm::GemmBench;
use crate::linear::{LinearBench, LinearPlanned};
use crate::memory::{HostMemory, MemOp, MemoryBench};
use crate::rows::RowBench;
use crate::timing::Cache;
use pitwall_schema::backend::{Backend, BackendError, CacheMode, SuiteKind, SuiteOptions};
use pitwall_schema::benchmark::Benchmark;
use pitwall_schema::work::{Dtype, RowOp};

/// The CUDA backend, once [`CudaBackend::probe`] found a driver, a device and the libraries.
/// It holds no CUDA context: the probe runs in the parent pitwall, the benchmarks in its
/// `__worker` processes, each of which creates its own context when asked for a suite.
#[derive(Debug, Clone)]
pub struct CudaBackend {
    info: CudaInfo,
    /// What the last `benchmarks` call left out (`Backend::notes`).
    notes: Arc<Mutex<Vec<String>>>,
}

impl CudaBackend {
    /// The backend, or `BackendError::Unavailable` with a short reason (`no CUDA driver`,
    /// `no CUDA device`, …). Never panics, also without any CUDA library on the machine.
    pub fn probe() -> Result<CudaBackend, BackendError> {
        probe_with(&SystemCuda).map(|info| CudaBackend {
            info,
            notes: Arc::default(),
        })
    }

    /// What the probe found.
    pub fn info(&self) -> &CudaInfo {
        &self.info
    }

    /// A rank other than 0 under a launcher: serves rank 0's NCCL `collective` sessions until
    /// rank 0's run is over (docs/SUITES.md).
    pub fn follow_collective(
        &self,
        layout: &pitwall_rendezvous::Layout,
    ) -> Result<(), nccl_group::CollectiveError> {
        let provider = nccl_ranks::SystemNccl {
            visible: self.info.device_count,
        };
        nccl_group::follow(layout, &provider)
    }

    /// What the `collective` suite says about its layout when it runs with world size 1 (one
    /// process, one GPU: busbw 0 but for broadcast), for the run to show once; else `None`.
    pub fn collective_note(
        &self,
        layout: &pitwall_rendezvous::Layout,
        ranks: Option<usize>,
    ) -> Option<String> {
        let l = collective::NcclLayout::of(layout, ranks.unwrap_or(self.info.device_count));
        (self.info.nccl && l.world_size() == 1).then(|| format!("collective: {}", l.describe()))
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn benchmarks(
        &self,
        kind: SuiteKind,
        options: &SuiteOptions,
    ) -> Result<Vec<Box<dyn Benchmark>>, BackendError> {
        match kind {
            SuiteKind::Kernel => {
                let plan = plan(options);
                let dev = open_device(options)?;
                let left_out = plan.len() - runnable(&plan, dev.sm).len();
                if let Ok(mut notes) = self.notes.lock() {
                    *notes = left_out_note(left_out, dev.sm).into_iter().collect();
                }
                Ok(build(&dev, &plan, cache_of(options)))
            }
            SuiteKind::Inference => {
                let plan = infer_plan::plan(options);
                let dev = open_device(options)?;
                Ok(inference::build(&dev, &plan, cache_of(options)))
            }
            SuiteKind::Collective => collective::suite(
                self.info.nccl,
                pitwall_rendezvous::Layout::from_env().map_err(|e| e.to_string()),
                self.info.device_count,
                options,
            ),
            SuiteKind::CudaKernels => {
                let manifest = options
                    .kernels
                    .as_ref()
                    .ok_or_else(|| BackendError::Failed {
                        backend: "cuda",
                        reason: "a `cuda-kernels` suite without a manifest".into(),
                    })?;
                let root = options
                    .checkout
                    .clone()
                    .unwrap_or_else(|| std::path::PathBuf::from("."));
                let dev = open_device(options)?;
                Ok(user::build(
                    &dev,
                    manifest,
                    &root,
                    options.max_bytes,
                    cache_of(options),
                ))
            }
        }
    }

    fn notes(&self, kind: SuiteKind) -> Vec<String> {
        match kind {
            SuiteKind::Kernel => self.notes.lock().map(|n| n.clone()).unwrap_or_default(),
            // NCCL's version, algorithm and protocol, kept with the run's notes.
            SuiteKind::Collective if self.info.nccl => {
                let version = nccl::library().ok().and_then(|n| n.version().ok());
                vec![nccl::settings_note(version, &|name| {
                    std::env::var(name).ok()
                })]
            }
            _ => Vec::new(),
        }
    }
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// Array sizes of the device-memory benchmarks: about L2-sized on current GPUs, then
/// far beyond it.
pub const DEVICE_BYTES: [u64; 3] = [16 * MIB, 256 * MIB, 1024 * MIB];

/// Transfer sizes between host and device: 4 KiB (latency-bound) to 1 GiB (bandwidth-bound),
/// a factor of 16 apart.
pub const TRANSFER_BYTES: [u64; 6] = [4 * KIB, 64 * KIB, MIB, 16 * MIB, 256 * MIB, 1024 * MIB];

/// One benchmark of the suite, before a device is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Planned {
    Memory(MemOp, u64),
    Gemm(Dtype, usize),
    Rows(RowOp, (usize, usize)),
    /// A linear-layer GEMM: the square fp8 ones and the skinny ones (`linear`).
    Linear(LinearPlanned),
}

impl Planned {
    /// Device memory of all its buffer sets, the figure `max_bytes` caps.
    pub fn footprint_bytes(self) -> u64 {
        match self {
            Planned::Memory(op, bytes) => op.footprint_bytes(bytes),
            Planned::Gemm(dtype, n) => GemmBench::footprint_bytes(dtype, n),
            Planned::Rows(op, (rows, cols)) => rows::footprint_bytes(op, rows, cols),
            Planned::Linear(p) => p.footprint_bytes(),
        }
    }
}

fn fits(max_bytes: Option<u64>, bytes: u64) -> bool {
    max_bytes.is_none_or(|cap| bytes <= cap)
}

/// The `kernel` suite: GEMMs of every type and size, device copies and triad, transfers; each
/// only when its footprint is within `max_bytes`.
pub fn plan(options: &SuiteOptions) -> Vec<Planned> {
    let mut out = Vec::new();
    for dtype in gemm::DTYPES {
        for n in gemm::SIZES {
            out.push(Planned::Gemm(dtype, n));
        }
    }
    out.extend(linear::plan().into_iter().map(Planned::Linear));
    for op in [MemOp::MemcpyD2D, MemOp::CopyKernel, MemOp::Triad] {
        for bytes in DEVICE_BYTES {
            out.push(Planned::Memory(op, bytes));
        }
    }
    for op in [RowOp::Sum, RowOp::Softmax, RowOp::LayerNorm] {
        for shape in rows::SHAPES {
            out.push(Planned::Rows(op, shape));
        }
    }
    for host in [HostMemory::Pinned, HostMemory::Pageable] {
        for op in [MemOp::HostToDevice(host), MemOp::DeviceToHost(host)] {
            for bytes in TRANSFER_BYTES {
                out.push(Planned::Memory(op, bytes));
            }
        }
    }
    out.retain(|p| fits(options.max_bytes, p.footprint_bytes()));
    out
}

/// The planned benchmarks on `dev`, each allocating its buffers on its first run. Those the
/// device cannot run (fp8 GEMMs below compute capability 8.9) are left out.
pub fn build(dev: &Arc<Device>, plan: &[Planned], cache: Cache) -> Vec<Box<dyn Benchmark>> {
    let plan = runnable(plan, dev.sm);
    let benches = plan
        .iter()
        .map(|&p| -> Box<dyn Benchmark> {
            match p {
                Planned::Memory(op, bytes) => {
                    Box::new(MemoryBench::new(dev.clone(), op, bytes, cache))
                }
                Planned::Gemm(dtype, n) => Box::new(GemmBench::new(dev.clone(), dtype, n, cache)),
                Planned::Rows(op, shape) => Box::new(RowBench::new(dev.clone(), op, shape, cache)),
                Planned::Linear(p) => Box::new(LinearBench::new(dev.clone(), p, cache)),
            }
        })
        .collect();
    let card = plausible::Card {
        name: dev.name.clone(),
        l2_bytes: dev.l2_bytes,
        cache: match cache {
            Cache::Cold => CacheMode::Cold,
            Cache::Warm => CacheMode::Warm,
        },
    };
    plausible::with_bounds(&plan, &card, ceiling::with_ceilings(&plan, benches))
}

/// The line saying that `n` planned benchmarks need a newer card than compute capability `sm`
/// (today only the fp8 GEMMs, which need 8.9); `None` when nothing was left out.
pub fn left_out_note(n: usize, sm: u32) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "{n} fp8 GEMM benchmark{} left out: this GPU's compute capability {}.{} has no fp8 tensor cores (8.9 or newer needed)",
            if n == 1 { "" } else { "s" },
            sm / 10,
            sm % 10
        )
    })
}

/// The planned benchmarks a device of compute capability `sm` (90 for 9.0) can run.
pub fn runnable(plan: &[Planned], sm: u32) -> Vec<Planned> {
    plan.iter()
        .copied()
        .filter(|p| match p {
            Planned::Linear(l) => sm >= l.min_sm(),
            _ => true,
        })
        .collect()
}

/// The CUDA device of `[gpu] device` (by its PCI bus id), else CUDA device 0 (after
/// CUDA_VISIBLE_DEVICES), opened in the worker process.
fn open_device(options: &SuiteOptions) -> Result<Arc<Device>, BackendError> {
    let failed = |reason| BackendError::Failed {
        backend: "cuda",
        reason,
    };
    let ordinal = gpu_select::cuda_ordinal_of(
        options.gpu_uuid.as_deref(),
        options.gpu_pci_bus_id.as_deref(),
        &gpu_select::SystemDevices,
    )
    .map_err(failed)?;
    Device::open(ordinal).map_err(|e| failed(format!("cannot open CUDA device {ordinal}: {e}")))
}

fn cache_of(options: &SuiteOptions) -> Cache {
    match options.cache {
        CacheMode::Cold => Cache::Cold,
        CacheMode::Warm => Cache::Warm,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_without_a_driver_is_unavailable_not_a_panic() {
        // SAFETY: only tries to dlopen the driver library.
        if unsafe { cudarc::driver::sys::is_culib_present() } {
            eprintln!("skipped: this machine has a CUDA driver");
            return;
        }
        let err = CudaBackend::probe().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cuda backend unavailable: no CUDA driver; hint:"),
            "{err}"
        );
    }

    /// Issue 23, defect 7: the collective suite's notes carry NCCL's settings.
    #[test]
    fn the_collective_suite_records_ncls_settings_with_the_run() {
        let backend = CudaBackend {
            info: CudaInfo {
                driver_api: 13_000,
                device_count: 2,
                nccl: true,
            },
            notes: Arc::default(),
        };
        let notes = backend.notes(SuiteKind::Collective);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("collective: NCCL "), "{notes:?}");
        assert!(notes[0].contains("protocol"), "{notes:?}");
    }

    #[test]
    fn world_size_one_is_said_once_and_only_then() {
        let backend = |device_count, nccl| CudaBackend {
            info: CudaInfo {
                driver_api: 13_000,
                device_count,
                nccl,
            },
            notes: Arc::default(),
        };
        let single = pitwall_rendezvous::Layout::single();
        let note = backend(1, true).collective_note(&single, None).unwrap();
        assert!(
            note.starts_with("collective: one process, one GPU: world size 1 (busbw is 0"),
            "{note}"
        );
        assert_eq!(backend(8, true).collective_note(&single, None), None);
        // Without NCCL the suite is skipped with its own line instead.
        assert_eq!(backend(1, false).collective_note(&single, None), None);
        let ranked = pitwall_rendezvous::Layout {
            rank: 0,
            world_size: 2,
            local_rank: 0,
            launcher: pitwall_rendezvous::Launcher::Torchrun,
            addr: Some("127.0.0.1:29500".to_string()),
        };
        assert_eq!(backend(1, true).collective_note(&ranked, None), None);
    }

    #[test]
    fn the_full_plan_has_every_type_size_and_direction() {
        let all = plan(&SuiteOptions::default());
        // Square GEMMs, device memory, rows, transfers; 4 square fp8 GEMMs (fast accumulation
        // on and off) and 60 skinny ones (fp8 twice).
        assert_eq!(all.len(), 4 * 3 + 3 * 3 + 3 * 2 + 2 * 2 * 6 + 4 + 60);
        for bytes in [4 * KIB, 1024 * MIB] {
            assert!(all.contains(&Planned::Memory(
                MemOp::HostToDevice(HostMemory::Pinned),
                bytes
            )));
        }
        assert!(all.contains(&Planned::Rows(RowOp::Softmax, (16384, 1024))));
        assert!(all.contains(&Planned::Gemm(Dtype::Bf16, 8192)));
        assert!(all.contains(&Planned::Memory(
            MemOp::DeviceToHost(HostMemory::Pageable),
            16 * MIB
        )));
    }

    #[test]
    fn fp8_gemms_are_left_out_below_compute_capability_8_9() {
        let all = plan(&SuiteOptions::default());
        let fp8 = |p: &Planned| matches!(p, Planned::Linear(l) if l.dtype == Dtype::Fp8E4m3);
        let on_a100 = runnable(&all, 80);
        assert!(!on_a100.iter().any(fp8));
        assert_eq!(all.len() - on_a100.len(), 4 + 40);
        // Ada (8.9) and Hopper (9.0) run them all.
        assert_eq!(runnable(&all, 89), all);
        assert_eq!(runnable(&all, 90), all);
        // What the run says of them (Backend::notes), and nothing where none is left out.
        assert_eq!(
            left_out_note(all.len() - on_a100.len(), 80).as_deref(),
            Some(
                "44 fp8 GEMM benchmarks left out: this GPU's compute capability 8.0 has no fp8 tensor cores (8.9 or newer needed)"
            )
        );
        assert_eq!(left_out_note(0, 90), None);
    }

    #[test]
    fn max_bytes_caps_footprints_of_all_buffer_sets() {
        // 64 MiB: two sets of three 1024² f32 matrices (24 MiB) fit, 4096² (384 MiB) not.
        let capped = plan(&SuiteOptions {
            max_bytes: Some(64 * MIB),
            ..Default::default()
        });
        assert!(capped.contains(&Planned::Gemm(Dtype::F32, 1024)));
        assert!(!capped.contains(&Planned::Gemm(Dtype::F32, 4096)));
        // Copies of 16 MiB arrays need 2 sets × 2 arrays = 64 MiB; a triad 96 MiB.
        assert!(capped.contains(&Planned::Memory(MemOp::MemcpyD2D, 16 * MIB)));
        assert!(!capped.contains(&Planned::Memory(MemOp::Triad, 16 * MIB)));
        assert!(capped.iter().all(|p| p.footprint_bytes() <= 64 * MIB));
        assert_eq!(
            Planned::Memory(MemOp::Triad, MIB).footprint_bytes(),
            6 * MIB
        );
    }

    #[test]
    fn bytes_moved_follow_the_shared_formulas() {
        assert_eq!(MemOp::MemcpyD2D.moved_bytes(MIB), 2 * MIB);
        assert_eq!(MemOp::CopyKernel.moved_bytes(MIB), 2 * MIB);
        assert_eq!(MemOp::Triad.moved_bytes(MIB), 3 * MIB);
        assert_eq!(
            MemOp::HostToDevice(HostMemory::Pinned).moved_bytes(MIB),
            MIB
        );
    }
}
