//! Whether CUDA can run here, decided without a panic: cudarc panics when a library it was
//! built to load is absent, so every library is looked for (`is_culib_present`) before cudarc
//! calls into it, and each missing piece becomes a short reason the runner prints.

use pitwall_schema::backend::BackendError;

/// The oldest driver API this binary's cudarc bindings (`cuda-13000`) speak: CUDA 13.0,
/// shipped with NVIDIA driver 580.
pub const MIN_DRIVER_API: i32 = 13_000;

/// What the probe found on a machine where CUDA can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaInfo {
    /// The driver's CUDA API version, as `cuDriverGetVersion` reports it (13000 is 13.0).
    pub driver_api: i32,
    /// Devices the driver sees.
    pub device_count: usize,
    /// NCCL could be loaded (`libnccl.so.2`, else `libnccl.so`…); needed by `collective` only.
    pub nccl: bool,
}

/// The steps of the probe, one method each, so the order and the reasons can be tested with a
/// fake machine; [`SystemCuda`] is the real one.
pub trait CudaSystem {
    /// `libcuda.so` can be loaded.
    fn driver_present(&self) -> bool;
    /// `cuInit(0)`; the error as the driver names it.
    fn init(&self) -> Result<(), String>;
    /// `cuDriverGetVersion`.
    fn driver_api(&self) -> Result<i32, String>;
    /// `cuDeviceGetCount`.
    fn device_count(&self) -> Result<usize, String>;
    /// The major version of the NVRTC cudarc loads (`libnvrtc.so.13`, or another name it
    /// tries, `.so.12` among them); `None` when none loads.
    fn nvrtc_major(&self) -> Option<i32>;
    /// The major version of cuBLAS when `libcublas` and `libcublasLt` both load.
    fn cublas_major(&self) -> Option<i32>;
    /// The major version of cuBLASLt (its own `cublasLtGetProperty`), when it loads.
    fn cublaslt_major(&self) -> Option<i32>;
    /// The file `libcuda.so` loads when it is not the driver's `libcuda.so.1` (a CUDA toolkit
    /// stub on `LD_LIBRARY_PATH`): cudarc tries the unversioned name first, so it would load it.
    fn driver_shadowed(&self) -> Option<String>;
    /// NCCL can be loaded (`crate::nccl::candidates`).
    fn nccl_present(&self) -> bool;
}

/// Why CUDA cannot run here, as one short line (`no CUDA driver`), with a hint where one helps.
fn unavailable(reason: impl Into<String>) -> BackendError {
    BackendError::Unavailable {
        backend: "cuda",
        reason: reason.into(),
    }
}

/// Runs the probe's steps in order and stops at the first that fails: driver library (and no
/// stub `libcuda.so` shadowing the driver's `libcuda.so.1`), cuInit, driver version, devices,
/// NVRTC, cuBLAS, cuBLASLt. NCCL is only recorded: its absence skips the
/// `collective` suite alone.
pub fn probe_with(system: &dyn CudaSystem) -> Result<CudaInfo, BackendError> {
    if !system.driver_present() {
        return Err(unavailable(
            "no CUDA driver; hint: CUDA needs the NVIDIA driver (libcuda.so.1); set [suites] backend = \"auto\" or \"cpu\" on machines without one",
        ));
    }
    if let Some(file) = system.driver_shadowed() {
        return Err(unavailable(format!(
            "libcuda.so is {file}, not the driver's libcuda.so.1, and would be loaded first (a CUDA toolkit stub on LD_LIBRARY_PATH?); hint: remove its directory from LD_LIBRARY_PATH"
        )));
    }
    system.init().map_err(|e| {
        if e == "CUDA_ERROR_STUB_LIBRARY" {
            unavailable(format!(
                "cuInit failed: {e}: the libcuda.so loaded is the CUDA toolkit's stub (for linking only), not the NVIDIA driver's libcuda.so.1; hint: remove the toolkit's lib64/stubs directory from LD_LIBRARY_PATH, or install the driver"
            ))
        } else {
            unavailable(format!("cuInit failed: {e}"))
        }
    })?;
    let driver_api = system
        .driver_api()
        .map_err(|e| unavailable(format!("cannot read the CUDA driver version: {e}")))?;
    if driver_api < MIN_DRIVER_API {
        return Err(unavailable(format!(
            "CUDA driver {}.{} is older than 13.0; hint: this pitwall is built for CUDA 13 (NVIDIA driver >= 580)",
            driver_api / 1000,
            (driver_api % 1000) / 10
        )));
    }
    let device_count = system
        .device_count()
        .map_err(|e| unavailable(format!("cannot count CUDA devices: {e}")))?;
    if device_count == 0 {
        return Err(unavailable(
            "no CUDA device; hint: check CUDA_VISIBLE_DEVICES and `nvidia-smi`",
        ));
    }
    let nvrtc_hint = "hint: install the CUDA 13 runtime compiler (libnvrtc.so.13, e.g. pip install nvidia-cuda-nvrtc) and put its lib directory on LD_LIBRARY_PATH";
    match system.nvrtc_major() {
        None => return Err(unavailable(format!("no NVRTC; {nvrtc_hint}"))),
        Some(major) if major < 13 => {
            return Err(unavailable(format!(
                "NVRTC {major} found, CUDA 13 needed; {nvrtc_hint}"
            )));
        }
        Some(_) => {}
    }
    let cublas_hint = "hint: install CUDA 13 cuBLAS (libcublas.so.13 and libcublasLt.so.13, e.g. pip install nvidia-cublas) and put its lib directory on LD_LIBRARY_PATH";
    match system.cublas_major() {
        None => return Err(unavailable(format!("no cuBLAS; {cublas_hint}"))),
        Some(major) if major < 13 => {
            return Err(unavailable(format!(
                "cuBLAS {major} found, CUDA 13 needed; {cublas_hint}"
            )));
        }
        Some(_) => {}
    }
    match system.cublaslt_major() {
        None => return Err(unavailable(format!("no cuBLASLt; {cublas_hint}"))),
        Some(major) if major < 13 => {
            return Err(unavailable(format!(
                "cuBLASLt {major} found, CUDA 13 needed; {cublas_hint}"
            )));
        }
        Some(_) => {}
    }
    Ok(CudaInfo {
        driver_api,
        device_count,
        nccl: system.nccl_present(),
    })
}

/// The reason the `collective` suite is skipped when NCCL is absent.
pub fn no_nccl() -> BackendError {
    unavailable(
        "no NCCL; hint: pitwall loads libnccl.so.2 (else libnccl.so): install NCCL 2 (e.g. pip install nvidia-nccl-cu13) and put its lib directory on LD_LIBRARY_PATH",
    )
}

/// The machine itself, through cudarc's loaders.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemCuda;

fn driver_error(e: cudarc::driver::DriverError) -> String {
    match e.error_name() {
        Ok(name) => name.to_string_lossy().into_owned(),
        Err(_) => format!("{:?}", e.0),
    }
}

impl CudaSystem for SystemCuda {
    fn driver_present(&self) -> bool {
        // SAFETY: only tries to dlopen the driver library's candidate names; nothing is called.
        unsafe { cudarc::driver::sys::is_culib_present() }
    }

    fn init(&self) -> Result<(), String> {
        cudarc::driver::result::init().map_err(driver_error)
    }

    fn driver_api(&self) -> Result<i32, String> {
        let mut version = 0;
        // SAFETY: the driver library is present (checked first) and writes one int.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
            .result()
            .map_err(driver_error)?;
        Ok(version)
    }

    fn device_count(&self) -> Result<usize, String> {
        let count = cudarc::driver::result::device::get_count().map_err(driver_error)?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    fn nvrtc_major(&self) -> Option<i32> {
        crate::kernels::nvrtc_version().map(|(major, _)| major)
    }

    fn cublas_major(&self) -> Option<i32> {
        use cudarc::cublas::sys;
        // SAFETY: only tries to dlopen the candidate names.
        let present =
            unsafe { sys::is_culib_present() && cudarc::cublaslt::sys::is_culib_present() };
        if !present {
            return None;
        }
        let mut major = 0;
        // SAFETY: the library is present; cublasGetProperty needs no handle and writes one int.
        let status =
            unsafe { sys::cublasGetProperty(sys::libraryPropertyType::MAJOR_VERSION, &mut major) };
        Some(if status == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            major
        } else {
            0
        })
    }

    fn cublaslt_major(&self) -> Option<i32> {
        use cudarc::cublaslt::sys;
        // SAFETY: only tries to dlopen the candidate names.
        if !unsafe { sys::is_culib_present() } {
            return None;
        }
        let mut major = 0;
        // SAFETY: the library is present; cublasLtGetProperty needs no handle, writes one int.
        let status = unsafe {
            sys::cublasLtGetProperty(sys::libraryPropertyType::MAJOR_VERSION, &mut major)
        };
        Some(if status == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            major
        } else {
            0
        })
    }

    fn driver_shadowed(&self) -> Option<String> {
        type Init = unsafe extern "C" fn(u32) -> i32;
        // SAFETY: dlopen of the driver's two names and one symbol's address each; nothing is
        // called. The handles are closed on return.
        unsafe {
            let unversioned = libloading::Library::new("libcuda.so").ok()?;
            let versioned = libloading::Library::new("libcuda.so.1").ok()?;
            let a = *unversioned.get::<Init>(b"cuInit\0").ok()? as usize;
            let b = *versioned.get::<Init>(b"cuInit\0").ok()? as usize;
            (a != b).then(|| mapped_file(a).unwrap_or_else(|| "libcuda.so".to_string()))
        }
    }

    fn nccl_present(&self) -> bool {
        // libnccl.so.2 first, then cudarc's names (`crate::nccl`).
        crate::nccl::library().is_ok()
    }
}

/// The file mapped at `address` in this process (`/proc/self/maps`), if any.
fn mapped_file(address: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (lo, hi) = fields.next()?.split_once('-')?;
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).ok()?,
            usize::from_str_radix(hi, 16).ok()?,
        );
        let path = fields.nth(4)?;
        (lo <= address && address < hi && path.starts_with('/')).then(|| path.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine described by its answers.
    #[derive(Clone)]
    struct Fake {
        driver: bool,
        init: Result<(), String>,
        api: i32,
        devices: usize,
        nvrtc: Option<i32>,
        cublas: Option<i32>,
        cublaslt: Option<i32>,
        shadowed: Option<String>,
        nccl: bool,
    }

    impl Default for Fake {
        fn default() -> Fake {
            Fake {
                driver: true,
                init: Ok(()),
                api: 13_000,
                devices: 8,
                nvrtc: Some(13),
                cublas: Some(13),
                cublaslt: Some(13),
                shadowed: None,
                nccl: true,
            }
        }
    }

    impl CudaSystem for Fake {
        fn driver_present(&self) -> bool {
            self.driver
        }
        fn init(&self) -> Result<(), String> {
            self.init.clone()
        }
        fn driver_api(&self) -> Result<i32, String> {
            Ok(self.api)
        }
        fn device_count(&self) -> Result<usize, String> {
            Ok(self.devices)
        }
        fn nvrtc_major(&self) -> Option<i32> {
            self.nvrtc
        }
        fn cublas_major(&self) -> Option<i32> {
            self.cublas
        }
        fn cublaslt_major(&self) -> Option<i32> {
            self.cublaslt
        }
        fn driver_shadowed(&self) -> Option<String> {
            self.shadowed.clone()
        }
        fn nccl_present(&self) -> bool {
            self.nccl
        }
    }

    fn reason(fake: Fake) -> String {
        match probe_with(&fake) {
            Err(BackendError::Unavailable { backend, reason }) => {
                assert_eq!(backend, "cuda");
                reason
            }
            other => panic!("expected unavailable, got {other:?}"),
        }
    }

    #[test]
    fn each_missing_piece_has_its_short_reason() {
        let none = Fake::default;
        assert_eq!(
            reason(Fake {
                driver: false,
                ..none()
            }),
            "no CUDA driver; hint: CUDA needs the NVIDIA driver (libcuda.so.1); set [suites] backend = \"auto\" or \"cpu\" on machines without one"
        );
        assert_eq!(
            reason(Fake {
                init: Err("CUDA_ERROR_NO_DEVICE".into()),
                ..none()
            }),
            "cuInit failed: CUDA_ERROR_NO_DEVICE"
        );
        assert!(
            reason(Fake {
                api: 12_080,
                ..none()
            })
            .starts_with("CUDA driver 12.8 is older than 13.0; hint:")
        );
        assert_eq!(
            reason(Fake {
                devices: 0,
                ..none()
            }),
            "no CUDA device; hint: check CUDA_VISIBLE_DEVICES and `nvidia-smi`"
        );
        for (nvrtc, cublas, want) in [
            (None, Some(13), "no NVRTC; hint:"),
            (Some(12), Some(13), "NVRTC 12 found, CUDA 13 needed; hint:"),
            (Some(13), None, "no cuBLAS; hint:"),
            (Some(13), Some(12), "cuBLAS 12 found, CUDA 13 needed; hint:"),
        ] {
            let got = reason(Fake {
                nvrtc,
                cublas,
                ..none()
            });
            assert!(got.starts_with(want), "{got}");
        }
    }

    /// Issue 23, defect 9: a toolkit stub shadowing the driver, and cuBLASLt's own version.
    #[test]
    fn a_stub_driver_and_an_old_cublaslt_are_explained_in_one_line() {
        let stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
        let got = reason(Fake {
            shadowed: Some(stub.into()),
            ..Fake::default()
        });
        assert!(
            got.starts_with(&format!(
                "libcuda.so is {stub}, not the driver's libcuda.so.1"
            )),
            "{got}"
        );
        assert!(got.contains("hint: remove"), "{got}");
        let got = reason(Fake {
            init: Err("CUDA_ERROR_STUB_LIBRARY".into()),
            ..Fake::default()
        });
        assert!(
            got.starts_with("cuInit failed: CUDA_ERROR_STUB_LIBRARY: the libcuda.so loaded is the CUDA toolkit's stub"),
            "{got}"
        );
        assert!(!got.contains('\n'));
        let got = reason(Fake {
            cublaslt: Some(12),
            ..Fake::default()
        });
        assert!(
            got.starts_with("cuBLASLt 12 found, CUDA 13 needed; hint:"),
            "{got}"
        );
        assert!(
            reason(Fake {
                cublaslt: None,
                ..Fake::default()
            })
            .starts_with("no cuBLASLt; hint:")
        );
    }

    #[test]
    fn the_driver_library_lookup_never_panics() {
        // Without a driver: nothing shadowed; with one, a path or nothing.
        let _ = SystemCuda.driver_shadowed();
        assert_eq!(mapped_file(0), None);
    }

    #[test]
    fn nccl_is_recorded_not_required() {
        let info = probe_with(&Fake {
            nccl: false,
            ..Fake::default()
        })
        .unwrap();
        assert_eq!(
            info,
            CudaInfo {
                driver_api: 13_000,
                device_count: 8,
                nccl: false
            }
        );
        assert!(no_nccl().to_string().contains("libnccl.so.2"));
    }

    #[test]
    fn the_real_probe_never_panics() {
        // On a machine without libcuda (CI, this crate's development box) the answer is the
        // first reason; on a GPU machine it is whatever the machine has, but never a panic.
        let driver = SystemCuda.driver_present();
        match probe_with(&SystemCuda) {
            Ok(info) => assert!(driver && info.device_count > 0),
            Err(BackendError::Unavailable { reason, .. }) if !driver => {
                assert!(reason.starts_with("no CUDA driver; hint:"), "{reason}")
            }
            Err(e) => assert!(driver, "{e}"),
        }
    }
}
