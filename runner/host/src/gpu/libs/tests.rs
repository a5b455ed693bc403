//! Finding the GPU libraries.

use super::*;

#[test]
fn absent_libraries_are_not_listed_and_nothing_panics() {
    // This machine has no CUDA: the probe must come back empty, not fail.
    let v = cuda_library_versions();
    for (k, v) in &v {
        assert!(v.contains(".so"), "{k} = {v} names its file");
    }
}

/// Builds tests/fixtures/fake_cuda/fake_cuda.c into stand-ins for the four libraries with
/// `cc` (which every Rust build on Linux has: it is the linker).
fn build_fake_cuda_libs(dir: &std::path::Path) -> bool {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fake_cuda/fake_cuda.c");
    [
        "libcudart.so.12",
        "libcublas.so.12",
        "libnvrtc.so.12",
        "libnccl.so.2",
    ]
    .iter()
    .all(|name| {
        std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(dir.join(name))
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
fn versions_are_read_from_libraries_in_a_search_dir() {
    let dir = tempfile::tempdir().unwrap();
    assert!(build_fake_cuda_libs(dir.path()), "cc builds the stand-ins");
    let v = cuda_library_versions_in(&[dir.path().to_path_buf()]);
    let file = |n: &str| dir.path().join(n).display().to_string();
    let want = |ver: &str, n: &str| format!("{ver} ({})", file(n));
    // A real library on the loader's path is found first, each library on its own (CI
    // puts a real libnvrtc.so.13 on LD_LIBRARY_PATH for the CUDA kernel tests, docs/SUITES.md).
    for (key, ver, name) in [
        ("cuda_runtime", "12.4", "libcudart.so.12"),
        ("cublas", "12.4.5", "libcublas.so.12"),
        ("nvrtc", "12.4", "libnvrtc.so.12"),
        ("nccl", "2.21.5", "libnccl.so.2"),
    ] {
        let got = v.get(key).unwrap_or_else(|| panic!("no {key}: {v:?}"));
        if got.contains(&file(name)) {
            assert_eq!(*got, want(ver, name));
        } else {
            assert!(!got.contains(&file("")), "{key}: {got}");
        }
    }
    // Not searched: nothing from that directory.
    let none = cuda_library_versions_in(&[]);
    assert!(none.values().all(|s| !s.contains(&file(""))), "{none:?}");
}

#[test]
fn a_present_library_without_the_symbol_is_skipped() {
    let (lib, _) = Lib::open(&["libc.so.6"], &[]).expect("libc loads");
    assert!(lib.symbol("cudaRuntimeGetVersion").is_none());
    assert!(lib.symbol("strlen").is_some());
}
