//! The `cuda-kernels` suite: the user's own kernels from the measured commit, compiled with
//! NVRTC for the device (`compile`), each measured at the sizes of its manifest entry with the
//! built-in suites' harness after its reference check (`bench`, `reference`). Which benchmarks
//! run is a plan that needs no GPU (sizes and the `max_bytes` cap), so it is tested anywhere.

pub mod bench;
pub mod compile;
pub mod identity;
pub mod reference;
pub mod sources;

pub use bench::UserKernelBench;
pub use compile::{Cubin, KernelCubins, UserKernelError, check};

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use cudarc::driver::CudaModule;
use cudarc::nvrtc::Ptx;

use crate::device::Device;
use crate::memory::SETS;
use crate::timing::Cache;
use pitwall_schema::benchmark::Benchmark;
use pitwall_schema::manifest::{KernelManifest, KernelSpec, Reference};

/// Device bytes a kernel needs at `n`: its buffer sets, and one more set while a reference
/// kernel is checked against it. `None` when the size cannot be launched (the configuration
/// refuses such manifests).
pub fn footprint_bytes(spec: &KernelSpec, n: u64) -> Option<u64> {
    let shape = spec.at(n).ok()?;
    let sets = SETS as u64 + u64::from(matches!(spec.reference, Reference::Kernel { .. }));
    Some(shape.buffer_bytes(spec).saturating_mul(sets))
}

/// The (kernel, size) pairs measured: every size of every kernel whose footprint is within
/// `max_bytes`, in manifest order.
pub fn plan(manifest: &KernelManifest, max_bytes: Option<u64>) -> Vec<(usize, u64)> {
    let mut out = Vec::new();
    for (k, spec) in manifest.kernels.iter().enumerate() {
        for &n in &spec.sizes {
            if footprint_bytes(spec, n).is_some_and(|b| max_bytes.is_none_or(|cap| b <= cap)) {
                out.push((k, n));
            }
        }
    }
    out
}

/// Loads a kernel's cubins into the device's context and looks its functions up.
fn load(
    dev: &Device,
    spec: &KernelSpec,
    cubins: &[Cubin],
    modules: &mut HashMap<String, Arc<CudaModule>>,
) -> bench::Functions {
    let mut module = |file: &str| -> Result<Arc<CudaModule>, String> {
        if let Some(m) = modules.get(file) {
            return Ok(m.clone());
        }
        let cubin = cubins
            .iter()
            .find(|c| c.file == file)
            .ok_or_else(|| format!("kernel `{}`: {file} was not compiled", spec.name))?;
        let m = dev
            .ctx
            .load_module(Ptx::from_binary(cubin.bytes.to_vec()))
            .map_err(|e| format!("kernel `{}`: cannot load {file}: {e}", spec.name))?;
        modules.insert(file.to_string(), m.clone());
        Ok(m)
    };
    let function = |m: Arc<CudaModule>, entry: &str| {
        m.load_function(entry)
            .map_err(|e| format!("kernel `{}`: no function `{entry}`: {e}", spec.name))
    };
    let main = function(module(&spec.source)?, &spec.entry)?;
    let reference = match &spec.reference {
        Reference::Kernel { entry, source, .. } => Some(function(
            module(source.as_deref().unwrap_or(&spec.source))?,
            entry,
        )?),
        Reference::Host(_) => None,
    };
    Ok((main, reference))
}

/// The planned benchmarks of `manifest`, sources read from `root` (the measured checkout) and
/// compiled for `dev`'s architecture once each. A kernel that cannot run (a compile error,
/// with NVRTC's log) is kept as benchmarks that fail with that reason, so every other kernel
/// still runs and the failure is stored under the kernel's own name.
pub fn build(
    dev: &Arc<Device>,
    manifest: &KernelManifest,
    root: &Path,
    max_bytes: Option<u64>,
    cache: Cache,
) -> Vec<Box<dyn Benchmark>> {
    let mut modules = HashMap::new();
    let functions: Vec<bench::Functions> = check(root, manifest, dev.sm)
        .into_iter()
        .zip(&manifest.kernels)
        .map(|((_, cubins), spec)| match cubins {
            Ok(cubins) => load(dev, spec, &cubins, &mut modules),
            Err(e) => Err(e.to_string()),
        })
        .collect();
    plan(manifest, max_bytes)
        .into_iter()
        .map(|(k, n)| -> Box<dyn Benchmark> {
            Box::new(UserKernelBench::new(
                dev.clone(),
                Arc::new(manifest.kernels[k].clone()),
                n,
                cache,
                functions[k].clone(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::expr::Expr;
    use pitwall_schema::manifest::{Access, ElemType, HostOp, HostRef, Init, KernelArg};

    fn copy_kernel(sizes: Vec<u64>) -> KernelSpec {
        let buffer = |name: &str, access| KernelArg::Buffer {
            name: name.into(),
            elem: ElemType::F32,
            count: Expr::parse("n").unwrap(),
            init: Init::Random,
            access,
        };
        KernelSpec {
            name: "copy".into(),
            source: "k.cu".into(),
            entry: "copy".into(),
            sizes,
            grid: [
                Expr::parse("cdiv(n, 256)").unwrap(),
                Expr::constant(1),
                Expr::constant(1),
            ],
            block: [Expr::constant(256), Expr::constant(1), Expr::constant(1)],
            shared_mem_bytes: Expr::constant(0),
            args: vec![buffer("x", Access::In), buffer("y", Access::Out)],
            reference: Reference::Host(HostRef {
                op: HostOp::Copy,
                a: None,
                x: "x".into(),
                y: None,
                out: "y".into(),
            }),
            bytes: None,
            flops: None,
        }
    }

    #[test]
    fn the_plan_keeps_sizes_within_max_bytes() {
        let spec = copy_kernel(vec![1024, 1 << 20]);
        // Two sets of two f32 buffers of n elements.
        assert_eq!(footprint_bytes(&spec, 1024), Some(2 * 2 * 4 * 1024));
        let mut with_ref = spec.clone();
        with_ref.reference = Reference::Kernel {
            entry: "copy_ref".into(),
            source: None,
            terms: Expr::constant(1),
        };
        assert_eq!(footprint_bytes(&with_ref, 1024), Some(3 * 2 * 4 * 1024));
        let manifest = KernelManifest {
            kernels: vec![spec, with_ref],
        };
        assert_eq!(plan(&manifest, None).len(), 4);
        assert_eq!(plan(&manifest, Some(1 << 20)), vec![(0, 1024), (1, 1024)]);
        // 16 MiB for the copy at n = 2^20, 24 MiB with its reference set.
        assert_eq!(
            plan(&manifest, Some(16 << 20)),
            vec![(0, 1024), (0, 1 << 20), (1, 1024)]
        );
    }
}
