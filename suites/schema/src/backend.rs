//! Backends provide the built-in suites for one kind of hardware (CPU now, CUDA beside it), so
//! the runner asks a backend for `kernel`, `inference` or `collective` benchmarks and never
//! knows how they are implemented.

use crate::benchmark::Benchmark;
pub use crate::work::CacheMode;

/// The built-in suite kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuiteKind {
    Kernel,
    Inference,
    Collective,
    /// The user's own CUDA kernels, compiled from the measured commit with NVRTC as its
    /// manifest ([`SuiteOptions::kernels`]) says; only a GPU backend runs it.
    CudaKernels,
}

impl SuiteKind {
    /// The suites of the default configuration (every kind that needs no manifest).
    pub const ALL: [SuiteKind; 3] = [
        SuiteKind::Kernel,
        SuiteKind::Inference,
        SuiteKind::Collective,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SuiteKind::Kernel => "kernel",
            SuiteKind::Inference => "inference",
            SuiteKind::Collective => "collective",
            SuiteKind::CudaKernels => "cuda-kernels",
        }
    }

    pub fn parse(s: &str) -> Option<SuiteKind> {
        SuiteKind::ALL
            .into_iter()
            .chain([SuiteKind::CudaKernels])
            .find(|k| k.as_str() == s)
    }
}

/// Knobs the configuration passes to a built-in suite.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SuiteOptions {
    /// Number of ranks (threads on the CPU, devices on a GPU) for collectives; `None` picks
    /// the backend's default.
    pub ranks: Option<usize>,
    /// Upper bound on buffer and message sizes in bytes (bandwidth sweeps, collectives);
    /// `None` keeps the backend's full sweep.
    pub max_bytes: Option<u64>,
    /// GPU backends: flush L2 before each timed iteration (the default) or not. The CPU
    /// backend ignores it.
    pub cache: CacheMode,
    /// GPU backends: the PCI bus id of `[gpu] device` (the parent pitwall maps the NVML index
    /// to it), which the CUDA backend maps to its own device number; `None`: CUDA device 0.
    pub gpu_pci_bus_id: Option<String>,
    /// GPU backends: the MIG instance `[gpu] device` names (`MIG-…`): every instance on a GPU
    /// shares its bus id, so the CUDA backend picks it by UUID. `None` otherwise.
    pub gpu_uuid: Option<String>,
    /// `cuda-kernels` suites: the kernels to compile and measure.
    pub kernels: Option<crate::manifest::KernelManifest>,
    /// The checkout being measured (the manifest's sources are relative to it); set by the
    /// engine when it asks for the suite.
    pub checkout: Option<std::path::PathBuf>,
}

/// Why a backend could not provide a suite.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The hardware or library is absent; the runner skips the suite with this line.
    #[error("{backend} backend unavailable: {reason}")]
    Unavailable {
        backend: &'static str,
        reason: String,
    },
    #[error("{backend} backend: {reason}")]
    Failed {
        backend: &'static str,
        reason: String,
    },
}

/// A provider of built-in suites for one kind of hardware.
pub trait Backend {
    /// `cpu`, `cuda`.
    fn name(&self) -> &'static str;

    /// The benchmarks of one suite kind, ready to sample.
    fn benchmarks(
        &self,
        kind: SuiteKind,
        options: &SuiteOptions,
    ) -> Result<Vec<Box<dyn Benchmark>>, BackendError>;

    /// Lines about the last `benchmarks` call of `kind` that the run shows and keeps with its
    /// notes: benchmarks this machine leaves out and why (fp8 GEMMs on a card without fp8
    /// tensor cores). None by default.
    fn notes(&self, _kind: SuiteKind) -> Vec<String> {
        Vec::new()
    }
}
