//! The backend of the built-in suites (`[suites] backend`): CUDA when asked for or found, else
//! the CPU with why CUDA was skipped, and the one short line a run without a usable GPU says.

use pitwall_cpu::CpuBackend;
use pitwall_cuda::CudaBackend;
use pitwall_engine::config::{BackendChoice, Config, SuiteSpec};
use pitwall_schema::backend::BackendError;
use pitwall_schema::{Backend, SuiteKind};

use super::exit::Failure;

/// The backend of the built-in suites and, when `auto` fell back to the CPU, why CUDA could not
/// run (its probe's short reason).
pub(super) struct SuiteBackend {
    pub(super) backend: Box<dyn Backend>,
    cuda_skipped: Option<String>,
    /// Lines the run shows once before measuring (the CUDA collective suite's world size 1).
    pub(super) notes: Vec<String>,
}

impl SuiteBackend {
    /// `[suites] backend`: `cpu` as asked; `cuda` or an infrastructure failure; `auto` CUDA
    /// when its probe succeeds, else the CPU. Without built-in suites nothing is probed.
    pub(super) fn select(config: &Config) -> Result<SuiteBackend, Failure> {
        Ok(match choose(config)? {
            Ok(cuda) => {
                let layout = pitwall_rendezvous::Layout::from_env().ok();
                let notes = config
                    .suites
                    .iter()
                    .filter_map(|s| match (&s.spec, &layout) {
                        (
                            SuiteSpec::Builtin {
                                kind: SuiteKind::Collective,
                                options,
                                ..
                            },
                            Some(l),
                        ) => cuda.collective_note(l, options.ranks),
                        _ => None,
                    })
                    .take(1)
                    .collect();
                SuiteBackend {
                    backend: Box::new(cuda),
                    cuda_skipped: None,
                    notes,
                }
            }
            Err(cuda_skipped) => SuiteBackend {
                backend: Box::new(CpuBackend),
                cuda_skipped,
                notes: Vec::new(),
            },
        })
    }
}

/// The decision of `[suites] backend`: the CUDA backend, or the CPU with why CUDA was skipped
/// (`auto` without CUDA); `cuda` where CUDA cannot run is an infrastructure failure.
fn choose(config: &Config) -> Result<Result<CudaBackend, Option<String>>, Failure> {
    let builtin = config
        .suites
        .iter()
        .any(|s| matches!(s.spec, SuiteSpec::Builtin { .. }));
    match config.backend {
        BackendChoice::Cpu => Ok(Err(None)),
        _ if !builtin => Ok(Err(None)),
        BackendChoice::Cuda => match CudaBackend::probe() {
            Ok(cuda) => Ok(Ok(cuda)),
            Err(e) => Err(Failure::of_backend("[suites] backend = \"cuda\"", e)),
        },
        BackendChoice::Auto => Ok(CudaBackend::probe().map_err(|e| Some(short_reason(&e)))),
    }
}

/// The backend a rank other than 0 follows rank 0's collective suites with: the one rank 0
/// chooses from the same configuration (CUDA: NCCL sessions; `None`: the CPU's TCP ones).
pub(super) fn follower_backend(config: &Config) -> Result<Option<CudaBackend>, Failure> {
    Ok(choose(config)?.ok())
}

/// A backend error's reason without its hint: what fits in one line.
pub(super) fn short_reason(e: &BackendError) -> String {
    let reason = match e {
        BackendError::Unavailable { reason, .. } | BackendError::Failed { reason, .. } => reason,
    };
    reason.split("; hint:").next().unwrap_or(reason).to_string()
}

/// The one short line of a run without a usable GPU: the causes in a few words (the full
/// reasons, with their hints, are in the fingerprint, `pitwall env` and the probe's error).
/// `nvml` is why GPU monitoring is off; CUDA's reason comes from the backend selection.
pub(super) fn no_gpu_line(nvml: Option<&str>, suites: &SuiteBackend) -> Option<String> {
    let nvml_cause = nvml.map(|reason| {
        if reason.contains("libnvidia-ml") && reason.contains("cannot load") {
            "no NVIDIA driver".to_string()
        } else {
            let first = reason.split("; hint:").next().unwrap_or(reason);
            pitwall_reports::table::escape_controls(
                first.trim_start_matches("nvml is not available: "),
            )
        }
    });
    let cuda_cause = suites
        .cuda_skipped
        .as_deref()
        .map(pitwall_reports::table::escape_controls);
    let on_cuda = suites.backend.name() == "cuda";
    Some(match (nvml_cause, cuda_cause) {
        (None, None) => return None,
        (Some(n), None) if on_cuda => {
            format!("no GPU monitoring ({n}): CUDA suites run without GPU state")
        }
        (Some(n), None) => format!("no GPU ({n}): GPU monitoring skipped, CPU suites only"),
        // No driver or no device: there is no GPU, whatever NVML was asked (clocks = "off").
        (None, Some(c)) if c == "no CUDA driver" || c == "no CUDA device" => {
            format!("no GPU ({c}): CUDA suites skipped, CPU suites only")
        }
        (None, Some(c)) => format!("no CUDA ({c}): CUDA suites skipped, CPU suites only"),
        (Some(n), Some(c)) => {
            // Without a driver both say so: name it once.
            let cause = if n == "no NVIDIA driver" && c == "no CUDA driver" {
                c
            } else {
                format!("{n}; {c}")
            };
            format!("no GPU ({cause}): GPU monitoring and CUDA suites skipped, CPU suites only")
        }
    })
}

#[cfg(test)]
mod tests;
