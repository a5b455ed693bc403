//! Compiling a `cuda-kernels` suite's sources from the measured checkout with NVRTC: each
//! `.cu` file once per architecture, named by its path in the repository so NVRTC's log reads
//! `kernels/saxpy.cu(3): error …`, its headers found from the file's directory and the
//! repository root and handed to NVRTC by pitwall (`sources`: NVRTC reads nothing outside the
//! checkout); then each kernel's entry points looked for in the cubin. Needs libnvrtc but no
//! GPU, so the same check runs on a CPU-only machine (`check`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::kernels::{self, KernelError};
use pitwall_schema::manifest::{KernelManifest, KernelSpec, Reference};

/// Why one kernel of the manifest cannot run; every message names the kernel (the benchmark).
#[derive(Debug, Clone, thiserror::Error)]
pub enum UserKernelError {
    #[error(
        "kernel `{kernel}`: cannot read {file} in {root}: {cause}; hint: `source` is relative to the repository root of the measured commit"
    )]
    Read {
        kernel: String,
        file: String,
        root: String,
        cause: Arc<std::io::Error>,
    },
    #[error("kernel `{kernel}`: {cause}")]
    Compile {
        kernel: String,
        #[source]
        cause: Arc<KernelError>,
    },
    #[error(
        "kernel `{kernel}`: {file} compiled for sm_{sm} has no kernel `{entry}`; hint: declare it extern \"C\" __global__ (C++ names are mangled)"
    )]
    NoEntry {
        kernel: String,
        file: String,
        entry: String,
        sm: u32,
    },
}

/// One compiled `.cu` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cubin {
    pub file: String,
    pub sm: u32,
    pub bytes: Arc<Vec<u8>>,
}

/// One kernel's cubins (its own file's first), or why it cannot run.
pub type KernelCubins = Result<Vec<Cubin>, UserKernelError>;

/// What a source file gave: its cubin, or why not (shared by every kernel that uses it).
type Compiled = Result<Cubin, SourceError>;

#[derive(Debug, Clone)]
enum SourceError {
    Read(Arc<std::io::Error>),
    Compile(Arc<KernelError>),
}

/// Every source of `manifest`, compiled once each for `sm_<sm>`, by file name.
fn compile_all(root: &Path, manifest: &KernelManifest, sm: u32) -> BTreeMap<String, Compiled> {
    let mut out = BTreeMap::new();
    for spec in &manifest.kernels {
        for file in spec.sources() {
            if out.contains_key(file) {
                continue;
            }
            let compiled = super::sources::load(root, file)
                .map_err(|e| SourceError::Read(Arc::new(e)))
                .and_then(|src| {
                    kernels::compile_with(file, &src.text, sm, &src.headers)
                        .map_err(|e| SourceError::Compile(Arc::new(e)))
                })
                .map(|bytes| Cubin {
                    file: file.to_string(),
                    sm,
                    bytes: Arc::new(bytes),
                });
            out.insert(file.to_string(), compiled);
        }
    }
    out
}

/// Whether an ELF cubin defines the symbol `name`: its string table holds `name` followed by
/// a NUL (preceded by a NUL or the table's start), which the byte search below finds.
pub fn defines(cubin: &[u8], name: &str) -> bool {
    let mut needle = Vec::with_capacity(name.len() + 2);
    needle.push(0);
    needle.extend_from_slice(name.as_bytes());
    needle.push(0);
    cubin.windows(needle.len()).any(|w| w == needle)
}

/// The entry points a kernel needs, each with the file that must define it.
fn entries(spec: &KernelSpec) -> Vec<(&str, &str)> {
    let mut out = vec![(spec.source.as_str(), spec.entry.as_str())];
    if let Reference::Kernel { entry, source, .. } = &spec.reference {
        out.push((source.as_deref().unwrap_or(&spec.source), entry.as_str()));
    }
    out
}

/// One kernel's cubins (its own file's first), or why it cannot run.
fn kernel_cubins(
    spec: &KernelSpec,
    root: &Path,
    compiled: &BTreeMap<String, Compiled>,
) -> KernelCubins {
    let mut cubins: Vec<Cubin> = Vec::new();
    for (file, entry) in entries(spec) {
        let cubin = match compiled.get(file).expect("every source compiled") {
            Ok(c) => c,
            Err(SourceError::Read(cause)) => {
                return Err(UserKernelError::Read {
                    kernel: spec.name.clone(),
                    file: file.to_string(),
                    root: root.display().to_string(),
                    cause: cause.clone(),
                });
            }
            Err(SourceError::Compile(cause)) => {
                return Err(UserKernelError::Compile {
                    kernel: spec.name.clone(),
                    cause: cause.clone(),
                });
            }
        };
        if !defines(&cubin.bytes, entry) {
            return Err(UserKernelError::NoEntry {
                kernel: spec.name.clone(),
                file: file.to_string(),
                entry: entry.to_string(),
                sm: cubin.sm,
            });
        }
        if !cubins.iter().any(|c| c.file == cubin.file) {
            cubins.push(cubin.clone());
        }
    }
    Ok(cubins)
}

/// Each kernel of `manifest` (in order) with its cubins for `sm_<sm>` or why it cannot run:
/// its source missing from the checkout, NVRTC's error with its log, or an entry point the
/// cubin does not define. Needs libnvrtc ([`kernels::nvrtc_present`]), no GPU.
pub fn check(root: &Path, manifest: &KernelManifest, sm: u32) -> Vec<(String, KernelCubins)> {
    let compiled = compile_all(root, manifest, sm);
    manifest
        .kernels
        .iter()
        .map(|spec| (spec.name.clone(), kernel_cubins(spec, root, &compiled)))
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use pitwall_schema::expr::Expr;
    use pitwall_schema::manifest::{Access, ElemType, HostOp, HostRef, Init, KernelArg};

    /// A one-buffer kernel of `source` at size 1024 (also for `super::identity`'s tests).
    pub(in crate::user) fn kernel(name: &str, source: &str, entry: &str) -> KernelSpec {
        KernelSpec {
            name: name.into(),
            source: source.into(),
            entry: entry.into(),
            sizes: vec![1024],
            grid: [
                Expr::parse("cdiv(n, 256)").unwrap(),
                Expr::constant(1),
                Expr::constant(1),
            ],
            block: [Expr::constant(256), Expr::constant(1), Expr::constant(1)],
            shared_mem_bytes: Expr::constant(0),
            args: vec![KernelArg::Buffer {
                name: "y".into(),
                elem: ElemType::F32,
                count: Expr::parse("n").unwrap(),
                init: Init::Zeros,
                access: Access::InOut,
            }],
            reference: Reference::Host(HostRef {
                op: HostOp::Copy,
                a: None,
                x: "y".into(),
                y: None,
                out: "y".into(),
            }),
            bytes: None,
            flops: None,
        }
    }

    const SAXPY: &str = "#include \"common.cuh\"\n#include \"include/scale.cuh\"\nextern \"C\" __global__ void saxpy(int n, float a, const float* x, float* y) {\n  int i = index();\n  if (i < n) y[i] = scale(a, x[i]) + y[i];\n}\nextern \"C\" __global__ void saxpy_ref(int n, float a, const float* x, float* y) {\n  for (int i = index(); i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];\n}\n";

    #[test]
    fn nvrtc_compiles_a_checkouts_sources_and_names_each_broken_kernel() {
        if !kernels::nvrtc_present() {
            assert!(
                std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
                "PITWALL_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
            );
            eprintln!(
                "skipped: no libnvrtc (set LD_LIBRARY_PATH to a CUDA 13 NVRTC lib directory)"
            );
            return;
        }
        let root =
            std::env::temp_dir().join(format!("pitwall-user-kernels-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("kernels")).unwrap();
        std::fs::create_dir_all(root.join("include")).unwrap();
        // One header beside the source, one under the repository root.
        std::fs::write(
            root.join("kernels/common.cuh"),
            "__device__ inline int index() { return blockIdx.x * blockDim.x + threadIdx.x; }\n",
        )
        .unwrap();
        std::fs::write(
            root.join("include/scale.cuh"),
            "__device__ inline float scale(float a, float x) { return a * x; }\n",
        )
        .unwrap();
        std::fs::write(root.join("kernels/saxpy.cu"), SAXPY).unwrap();
        std::fs::write(
            root.join("kernels/broken.cu"),
            "extern \"C\" __global__ void broken(float* y) {\n  y[0] = 1.0f\n}\n",
        )
        .unwrap();
        let mut with_ref = kernel("saxpy_vs_ref", "kernels/saxpy.cu", "saxpy");
        with_ref.reference = Reference::Kernel {
            entry: "saxpy_ref".into(),
            source: None,
            terms: Expr::constant(1),
        };
        let manifest = KernelManifest {
            kernels: vec![
                kernel("saxpy", "kernels/saxpy.cu", "saxpy"),
                with_ref,
                kernel("broken", "kernels/broken.cu", "broken"),
                kernel("missing", "kernels/none.cu", "none"),
                kernel("misnamed", "kernels/saxpy.cu", "saxpy_v2"),
            ],
        };
        for sm in [80, 90] {
            let results = check(&root, &manifest, sm);
            let names: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
            assert_eq!(
                names,
                ["saxpy", "saxpy_vs_ref", "broken", "missing", "misnamed"]
            );
            let cubins = results[0].1.as_ref().unwrap();
            assert_eq!(cubins.len(), 1);
            assert!(cubins[0].bytes.starts_with(b"\x7fELF"));
            assert_eq!(
                (cubins[0].file.as_str(), cubins[0].sm),
                ("kernels/saxpy.cu", sm)
            );
            assert!(defines(&cubins[0].bytes, "saxpy_ref"));
            assert!(results[1].1.is_ok());
            let broken = results[2].1.as_ref().unwrap_err().to_string();
            assert!(
                broken.starts_with(&format!(
                    "kernel `broken`: kernels/broken.cu does not compile for sm_{sm}"
                )),
                "{broken}"
            );
            assert!(
                broken.contains("kernels/broken.cu(3): error: expected a \";\""),
                "{broken}"
            );
            let missing = results[3].1.as_ref().unwrap_err().to_string();
            assert!(
                missing.starts_with("kernel `missing`: cannot read kernels/none.cu in "),
                "{missing}"
            );
            let misnamed = results[4].1.as_ref().unwrap_err().to_string();
            assert_eq!(
                misnamed,
                format!(
                    "kernel `misnamed`: kernels/saxpy.cu compiled for sm_{sm} has no kernel `saxpy_v2`; hint: declare it extern \"C\" __global__ (C++ names are mangled)"
                )
            );
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Issue 22 item 2: a source linked to, or including, a file outside the checkout gets
    /// nothing of it into NVRTC's log (the test process's environment holds a planted value).
    #[test]
    fn nothing_outside_the_checkout_reaches_nvrtc() {
        if !kernels::nvrtc_present() {
            assert!(
                std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
                "PITWALL_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
            );
            eprintln!("skipped: no libnvrtc");
            return;
        }
        let root = std::env::temp_dir().join(format!("pitwall-leak-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("kernels/sub")).unwrap();
        std::os::unix::fs::symlink("/proc/self/environ", root.join("kernels/environ.cu")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("kernels/passwd.cu")).unwrap();
        let includes = [
            ("abs.cu", "#include \"/proc/self/environ\"\n"),
            ("up.cu", "#include \"../../../../../../../../etc/passwd\"\n"),
            ("hidden.cu", "#/**/include \\\n\"/etc/passwd\"\n"),
            ("sub/nested.cu", "#include \"../h.cuh\"\n"),
        ];
        std::fs::write(root.join("kernels/h.cuh"), "#include \"/etc/passwd\"\n").unwrap();
        for (file, text) in includes {
            std::fs::write(root.join("kernels").join(file), text).unwrap();
        }
        let mut manifest = KernelManifest {
            kernels: vec![
                kernel("environ", "kernels/environ.cu", "k"),
                kernel("passwd", "kernels/passwd.cu", "k"),
            ],
        };
        for (file, _) in includes {
            let path = format!("kernels/{file}");
            manifest.kernels.push(kernel(file, &path, "k"));
        }
        let results = check(&root, &manifest, 80);
        for (name, result) in &results {
            let e = result.as_ref().unwrap_err().to_string();
            assert!(
                !e.contains("root:x:0:0") && !e.contains("PATH="),
                "{name}: {e}"
            );
        }
        let environ = results[0].1.as_ref().unwrap_err().to_string();
        assert!(
            environ.starts_with("kernel `environ`: cannot read kernels/environ.cu in ")
                && environ.contains("outside the checkout"),
            "{environ}"
        );
        let abs = results[2].1.as_ref().unwrap_err().to_string();
        assert!(abs.contains("is not a file in the checkout"), "{abs}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_symbol_is_a_whole_string_of_the_table() {
        let table = b"\x7fELF\0.text.saxpy\0saxpy\0saxpy_ref\0";
        assert!(defines(table, "saxpy"));
        assert!(defines(table, "saxpy_ref"));
        assert!(!defines(table, "axpy"));
        assert!(!defines(table, "saxpy_r"));
    }
}
