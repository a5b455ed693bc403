//! Versions of the CUDA libraries a GPU benchmark links (runtime, cuBLAS, NVRTC, NCCL), read
//! by loading each library at run time and asking it, so the fingerprint records them on a GPU
//! machine and the binary still runs everywhere (an absent library is simply not listed).

use std::collections::BTreeMap;
use std::ffi::{CString, c_char, c_int, c_void};
use std::path::PathBuf;

/// A library handle from dlopen; closed on drop.
pub(super) struct Lib(*mut c_void);

impl Lib {
    /// The first of `names` that loads: by the loader's own search (LD_LIBRARY_PATH, the
    /// ld.so cache) first, then from each of `dirs`.
    pub(super) fn open(names: &[&str], dirs: &[PathBuf]) -> Option<(Lib, String)> {
        let candidates = names.iter().map(|n| n.to_string()).chain(
            dirs.iter()
                .flat_map(|d| names.iter().map(move |n| d.join(n)))
                .filter(|p| p.exists())
                .map(|p| p.display().to_string()),
        );
        candidates.into_iter().find_map(|name| {
            let c = CString::new(name.as_str()).ok()?;
            // SAFETY: dlopen with a valid C string; RTLD_LAZY | RTLD_LOCAL keeps it private.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
            // Never wrap a null handle: its drop would dlclose(NULL).
            if h.is_null() {
                None
            } else {
                Some((Lib(h), name))
            }
        })
    }

    pub(super) fn symbol(&self, name: &str) -> Option<*mut c_void> {
        let c = CString::new(name).ok()?;
        // SAFETY: dlsym on a live handle with a valid C string.
        let p = unsafe { libc::dlsym(self.0, c.as_ptr() as *const c_char) };
        (!p.is_null()).then_some(p)
    }
}

impl Drop for Lib {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen and is closed once.
        unsafe {
            libc::dlclose(self.0);
        }
    }
}

/// Where CUDA installs its libraries when they are not on the loader's path: `$CUDA_HOME/lib64`,
/// `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64`.
pub fn default_cuda_lib_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .filter(|v| !v.is_empty())
        .map(|v| PathBuf::from(v).join("lib64"))
        .collect();
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.dedup();
    dirs
}

/// `{"cuda_runtime": "12.4 (libcudart.so.12)", "cublas": "12.4.5 (…)", "nvrtc": …, "nccl": …}`
/// for the libraries found on the loader's path or in `default_cuda_lib_dirs()`.
pub fn cuda_library_versions() -> BTreeMap<String, String> {
    cuda_library_versions_in(&default_cuda_lib_dirs())
}

/// As `cuda_library_versions`, searching `dirs` after the loader's path. Each entry names the
/// file it came from.
pub fn cuda_library_versions_in(dirs: &[PathBuf]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some((lib, file)) = Lib::open(
        &[
            "libcudart.so",
            "libcudart.so.13",
            "libcudart.so.12",
            "libcudart.so.11.0",
        ],
        dirs,
    ) {
        if let Some(f) = lib.symbol("cudaRuntimeGetVersion") {
            // SAFETY: cudaError_t cudaRuntimeGetVersion(int*), documented CUDA runtime API.
            let f: extern "C" fn(*mut c_int) -> c_int = unsafe { std::mem::transmute(f) };
            let mut v: c_int = 0;
            if f(&mut v) == 0 {
                out.insert(
                    "cuda_runtime".into(),
                    format!("{}.{} ({file})", v / 1000, (v % 1000) / 10),
                );
            }
        }
    }
    if let Some((lib, file)) = Lib::open(
        &[
            "libcublas.so",
            "libcublas.so.13",
            "libcublas.so.12",
            "libcublas.so.11",
        ],
        dirs,
    ) {
        if let Some(f) = lib.symbol("cublasGetProperty") {
            // SAFETY: cublasStatus_t cublasGetProperty(libraryPropertyType, int*); 0/1/2 =
            // MAJOR_VERSION/MINOR_VERSION/PATCH_LEVEL.
            let f: extern "C" fn(c_int, *mut c_int) -> c_int = unsafe { std::mem::transmute(f) };
            let mut parts = [0 as c_int; 3];
            if (0..3).all(|i| f(i as c_int, &mut parts[i]) == 0) {
                out.insert(
                    "cublas".into(),
                    format!("{}.{}.{} ({file})", parts[0], parts[1], parts[2]),
                );
            }
        }
    }
    if let Some((lib, file)) = Lib::open(
        &[
            "libnvrtc.so",
            "libnvrtc.so.13",
            "libnvrtc.so.12",
            "libnvrtc.so.11.2",
        ],
        dirs,
    ) {
        if let Some(f) = lib.symbol("nvrtcVersion") {
            // SAFETY: nvrtcResult nvrtcVersion(int* major, int* minor).
            let f: extern "C" fn(*mut c_int, *mut c_int) -> c_int =
                unsafe { std::mem::transmute(f) };
            let (mut major, mut minor) = (0, 0);
            if f(&mut major, &mut minor) == 0 {
                out.insert("nvrtc".into(), format!("{major}.{minor} ({file})"));
            }
        }
    }
    if let Some((lib, file)) = Lib::open(&["libnccl.so.2", "libnccl.so"], dirs) {
        if let Some(f) = lib.symbol("ncclGetVersion") {
            // SAFETY: ncclResult_t ncclGetVersion(int*); code = major*10000 + minor*100 + patch
            // since NCCL 2.9 (major*1000 + minor*100 + patch before).
            let f: extern "C" fn(*mut c_int) -> c_int = unsafe { std::mem::transmute(f) };
            let mut v: c_int = 0;
            if f(&mut v) == 0 {
                let (major, minor, patch) = if v >= 10000 {
                    (v / 10000, (v % 10000) / 100, v % 100)
                } else {
                    (v / 1000, (v % 1000) / 100, v % 100)
                };
                out.insert("nccl".into(), format!("{major}.{minor}.{patch} ({file})"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
