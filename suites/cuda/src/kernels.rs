//! The CUDA C++ kernels of the CUDA suites, embedded from `kernels/*.cu` and compiled at run
//! time with NVRTC for the device's own architecture (a cubin), so no CUDA toolkit is needed to
//! build pitwall. The tests compile every kernel for sm_80 and sm_90 with the real libnvrtc.

use std::ffi::CString;

use cudarc::nvrtc::result::{self, NvrtcError};
use cudarc::nvrtc::sys;

/// One `.cu` file and the `extern "C"` kernels it defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSource {
    /// File name under `suites/cuda/kernels/`.
    pub file: &'static str,
    pub source: &'static str,
    /// The entry points, as `CudaModule::load_function` names them.
    pub entries: &'static [&'static str],
}

pub const COPY: KernelSource = KernelSource {
    file: "copy.cu",
    source: include_str!("../kernels/copy.cu"),
    entries: &["copy_u128"],
};

pub const TRIAD: KernelSource = KernelSource {
    file: "triad.cu",
    source: include_str!("../kernels/triad.cu"),
    entries: &["triad_f64"],
};

pub const ROWS: KernelSource = KernelSource {
    file: "rows.cu",
    source: include_str!("../kernels/rows.cu"),
    entries: &["reduce_rows_f32", "softmax_rows_f32", "layernorm_rows_f32"],
};

pub const L2_FLUSH: KernelSource = KernelSource {
    file: "l2_flush.cu",
    source: include_str!("../kernels/l2_flush.cu"),
    entries: &["l2_flush", "l2_read_sweep"],
};

pub const BLOCKING: KernelSource = KernelSource {
    file: "blocking.cu",
    source: include_str!("../kernels/blocking.cu"),
    entries: &["block_stream"],
};

pub const RANDOM_INIT: KernelSource = KernelSource {
    file: "random_init.cu",
    source: include_str!("../kernels/random_init.cu"),
    entries: &[
        "random_uniform_f32",
        "random_uniform_f64",
        "random_uniform_f16",
        "random_uniform_bf16",
        "random_uniform_fp8_e4m3",
    ],
};

pub const INFERENCE: KernelSource = KernelSource {
    file: "inference.cu",
    source: include_str!("../kernels/inference.cu"),
    entries: &[
        "rmsnorm_bf16",
        "bias_gelu_bf16",
        "bias_residual_bf16",
        "attention_causal_bf16",
    ],
};

/// Every kernel file.
pub const ALL: [KernelSource; 7] = [
    COPY,
    TRIAD,
    ROWS,
    L2_FLUSH,
    BLOCKING,
    RANDOM_INIT,
    INFERENCE,
];

/// Why a kernel could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error(
        "NVRTC is not available; hint: install the CUDA 13 runtime compiler (libnvrtc.so.13, e.g. pip install nvidia-cuda-nvrtc) and put its lib directory on LD_LIBRARY_PATH"
    )]
    NoNvrtc,
    #[error("nvrtc cannot create a program from {file}: {cause}")]
    Create {
        file: String,
        #[source]
        cause: NvrtcError,
    },
    #[error("{file} does not compile for sm_{sm}: {cause}\n{log}")]
    Compile {
        file: String,
        sm: u32,
        /// NVRTC's log: the compiler's messages with file and line.
        log: String,
        #[source]
        cause: NvrtcError,
    },
    #[error("nvrtc compiled {file} for sm_{sm} but gave no cubin: {cause}")]
    Output {
        file: String,
        sm: u32,
        #[source]
        cause: NvrtcError,
    },
}

/// Whether libnvrtc can be loaded (cudarc would panic calling into it otherwise).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the candidate names.
    unsafe { sys::is_culib_present() }
}

/// The options every kernel is compiled with for `sm_<sm>` (80 for sm_80).
pub fn options(sm: u32) -> Vec<String> {
    vec![
        format!("--gpu-architecture=sm_{sm}"),
        "--std=c++17".to_string(),
        // Benchmarks must not depend on debug information or lineinfo being on.
        "--dopt=on".to_string(),
    ]
}

/// An NVRTC program, destroyed on drop.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by create_program and destroyed only here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn c_text(bytes: Vec<std::ffi::c_char>) -> String {
    let bytes: Vec<u8> = bytes
        .into_iter()
        .map(|c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles `kernel` for `sm_<sm>` and returns the cubin, ready for `cuModuleLoadData`.
pub fn compile(kernel: &KernelSource, sm: u32) -> Result<Vec<u8>, KernelError> {
    compile_source(kernel.file, kernel.source, sm)
}

/// Compiles CUDA C++ `source` (named `file` in messages) for `sm_<sm>`.
pub fn compile_source(file: &str, source: &str, sm: u32) -> Result<Vec<u8>, KernelError> {
    compile_with(file, source, sm, &[])
}

/// Compiles `source` for `sm_<sm>` with [`options`]; `headers` are the only files its
/// `#include`s get, each `(name as included, text)` (no include path is given: a header
/// missing from the list is looked for on the file system, `user::sources` sees that none
/// is). `file` names the program: NVRTC's log says `file(line): error …`.
pub fn compile_with(
    file: &str,
    source: &str,
    sm: u32,
    headers: &[(String, String)],
) -> Result<Vec<u8>, KernelError> {
    if !nvrtc_present() {
        return Err(KernelError::NoNvrtc);
    }
    let file_name = || file.to_string();
    // A NUL byte would cut the text short: NVRTC reports it like any other compile error.
    let src = CString::new(source.replace('\0', " ")).expect("NUL bytes replaced");
    let name = CString::new(file.replace('\0', " ")).expect("NUL bytes replaced");
    let c = |t: &str| CString::new(t.replace('\0', " ")).expect("NUL bytes replaced");
    let header_texts: Vec<CString> = headers.iter().map(|(_, t)| c(t)).collect();
    let header_names: Vec<CString> = headers.iter().map(|(n, _)| c(n)).collect();
    let text_ptrs: Vec<*const std::ffi::c_char> = header_texts.iter().map(|t| t.as_ptr()).collect();
    let name_ptrs: Vec<*const std::ffi::c_char> = header_names.iter().map(|n| n.as_ptr()).collect();
    let mut raw = std::mem::MaybeUninit::uninit();
    // SAFETY: every pointer is to a NUL-terminated string alive for the call; the two
    // arrays hold `headers.len()` entries each; NVRTC copies what it keeps.
    unsafe {
        sys::nvrtcCreateProgram(
            raw.as_mut_ptr(),
            src.as_ptr(),
            name.as_ptr(),
            headers.len() as std::ffi::c_int,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    }
    .result()
    .map_err(|cause| KernelError::Create {
        file: file_name(),
        cause,
    })?;
    // SAFETY: nvrtcCreateProgram succeeded, so it wrote the program.
    let prog = Program(unsafe { raw.assume_init() });
    let opts = options(sm);
    // SAFETY: `prog` is a live program; the options are plain strings.
    if let Err(cause) = unsafe { result::compile_program(prog.0, &opts) } {
        // SAFETY: as above; the log exists after a failed compile.
        let log = unsafe { result::get_program_log(prog.0) }
            .map(c_text)
            .unwrap_or_else(|e| format!("(no log: {e})"));
        return Err(KernelError::Compile {
            file: file_name(),
            sm,
            log,
            cause,
        });
    }
    let mut size = 0usize;
    // SAFETY: `prog` compiled; NVRTC writes the size, then that many bytes.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|cause| KernelError::Output {
            file: file_name(),
            sm,
            cause,
        })?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds `size` bytes, as NVRTC asked for.
    unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|cause| KernelError::Output {
            file: file_name(),
            sm,
            cause,
        })?;
    Ok(cubin)
}

/// NVRTC's version, `(major, minor)`.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present; NVRTC writes two ints.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `None` (after saying why) when the tests must skip: no libnvrtc and not required.
    fn nvrtc_or_skip() -> Option<()> {
        if nvrtc_present() {
            return Some(());
        }
        assert!(
            std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "PITWALL_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded: {}",
            KernelError::NoNvrtc
        );
        eprintln!("skipped: no libnvrtc (set LD_LIBRARY_PATH to a CUDA 13 NVRTC lib directory)");
        None
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    #[test]
    fn nvrtc_compiles_every_kernel_for_sm80_and_sm90() {
        if nvrtc_or_skip().is_none() {
            return;
        }
        let (major, minor) = nvrtc_version().unwrap();
        eprintln!("nvrtc {major}.{minor}");
        assert!(
            major >= 13,
            "nvrtc {major}.{minor}: this pitwall is built for CUDA 13"
        );
        for kernel in ALL {
            for sm in [80, 90] {
                let cubin = compile(&kernel, sm).unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    cubin.starts_with(b"\x7fELF"),
                    "{} sm_{sm}: not an ELF cubin",
                    kernel.file
                );
                for entry in kernel.entries {
                    assert!(
                        contains(&cubin, entry.as_bytes()),
                        "{} sm_{sm}: no kernel `{entry}` in the cubin",
                        kernel.file
                    );
                }
            }
        }
    }

    #[test]
    fn nvrtc_reports_a_syntax_error_with_its_log() {
        if nvrtc_or_skip().is_none() {
            return;
        }
        let broken = "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f }\n";
        let err = compile_source("broken.cu", broken, 90).unwrap_err();
        let KernelError::Compile { file, sm, log, .. } = &err else {
            panic!("expected a compile error, got {err}");
        };
        assert_eq!((file.as_str(), *sm), ("broken.cu", 90));
        assert!(
            log.contains("broken.cu(1)") && log.contains("error"),
            "{log}"
        );
        assert!(
            err.to_string()
                .starts_with("broken.cu does not compile for sm_90")
        );
    }

    #[test]
    fn nvrtc_kernels_name_their_entries_as_extern_c() {
        // Without the library: every declared entry is an `extern "C" __global__` of its file.
        for kernel in ALL {
            assert!(kernel.source.starts_with("// pitwall: "), "{}", kernel.file);
            for entry in kernel.entries {
                let decl = format!("extern \"C\" __global__ void {entry}(");
                assert!(kernel.source.contains(&decl), "{}: {decl}", kernel.file);
            }
        }
        assert_eq!(options(80)[0], "--gpu-architecture=sm_80");
    }
}
