//! `cargo test nvrtc` from the workspace root runs the binary crate's tests only (it is the
//! default member), so the NVRTC compile check of every built-in CUDA kernel is here too:
//! each kernel compiled for sm_80 and sm_90 with the real libnvrtc. Without the library it
//! says `skipped:` and passes, except under `PITWALL_REQUIRE_NVRTC=1` (`.ci/run`).

use pitwall_cuda::kernels::{ALL, compile, nvrtc_present};

#[test]
fn nvrtc_compiles_every_builtin_kernel() {
    if !nvrtc_present() {
        assert!(
            std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "PITWALL_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
        );
        eprintln!("skipped: no libnvrtc (set LD_LIBRARY_PATH to a CUDA 13 NVRTC lib directory)");
        return;
    }
    for kernel in ALL {
        for sm in [80, 90] {
            let cubin = compile(&kernel, sm).unwrap_or_else(|e| panic!("{e}"));
            assert!(cubin.starts_with(b"\x7fELF"), "{} sm_{sm}", kernel.file);
        }
    }
}
