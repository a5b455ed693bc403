//! A `cuda-kernels` suite compiled from the commits of a real git repository, the way `pitwall
//! run --commit` and `ci` see them: each commit checked out into pitwall's worktree cache
//! (`pitwall_pipeline::git`), its `pitwall.toml` loaded (`pitwall_engine::config`), and its
//! kernels compiled with the real libnvrtc (`pitwall_cuda::user::check`). Two commits that
//! differ in a kernel give different cubins, the same commit the same one, and a syntax error
//! in a third is NVRTC's file:line log under the benchmark's name. Without libnvrtc it says
//! `skipped:` and passes, except under `PITWALL_REQUIRE_NVRTC=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

use pitwall_cuda::kernels::nvrtc_present;
use pitwall_cuda::user::{KernelCubins, check};
use pitwall_engine::config::{SuiteSpec, load_file};
use pitwall_pipeline::git::Repo;

const CONFIG: &str = r#"[[suite]]
name = "mine"
kind = "cuda-kernels"

[[suite.kernel]]
name = "saxpy"
source = "kernels/saxpy.cu"
entry = "saxpy"
sizes = [1048576]
grid = "cdiv(n, 256)"
block = 256
args = [
  { name = "n", scalar = "i32", value = "n" },
  { name = "a", scalar = "f32", value = 2.0 },
  { name = "x", buffer = "f32", count = "n" },
  { name = "y", buffer = "f32", count = "n", access = "inout" },
]
reference = { host = "axpy", a = "a", x = "x", y = "y", out = "y" }
bytes = "3 * n * 4"
"#;

/// The first version: one element per thread.
const SAXPY_V1: &str = r#"// saxpy, one element per thread
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"#;

/// The pull request: a grid-stride loop with an explicit fma.
const SAXPY_V2: &str = r#"// saxpy, grid-stride
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = fmaf(a, x[i], y[i]);
  }
}
"#;

/// A commit that breaks it: a missing semicolon on line 4.
const SAXPY_BROKEN: &str = r#"// saxpy, grid-stride
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = fmaf(a, x[i], y[i])
  }
}
"#;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn commit(dir: &Path, saxpy: &str, message: &str) -> String {
    std::fs::write(dir.join("kernels/saxpy.cu"), saxpy).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
    git(dir, &["rev-parse", "HEAD"])
}

/// The suite's kernels as commit `sha` compiles them for sm_90, its checkout's path with them.
fn compile_commit(repo: &Repo, cache: &Path, sha: &str) -> (PathBuf, Vec<(String, KernelCubins)>) {
    let commit = repo.resolve(sha).unwrap();
    let checkout = repo.checkout(&commit, cache, false).unwrap();
    let config = load_file(&checkout.path.join("pitwall.toml"), "toy").unwrap();
    let SuiteSpec::Builtin {
        kernels: Some(manifest),
        ..
    } = &config.suites[0].spec
    else {
        panic!("a cuda-kernels suite");
    };
    let results = check(&checkout.path, manifest, 90);
    (checkout.path, results)
}

#[test]
fn nvrtc_compiles_each_commits_own_kernels() {
    if !nvrtc_present() {
        assert!(
            std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "PITWALL_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
        );
        eprintln!("skipped: no libnvrtc (set LD_LIBRARY_PATH to a CUDA 13 NVRTC lib directory)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("pitwall-user-kernels-git-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("kernels")).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("pitwall.toml"), CONFIG).unwrap();
    let base = commit(&dir, SAXPY_V1, "saxpy");
    let head = commit(&dir, SAXPY_V2, "saxpy: grid-stride loop");
    let broken = commit(&dir, SAXPY_BROKEN, "saxpy: oops");
    // The working tree is at the broken commit: what is compiled is each commit's own file.
    let repo = Repo::discover(&dir).unwrap();
    let cache = dir.join(".pitwall/worktrees");

    let (base_path, base_results) = compile_commit(&repo, &cache, &base);
    let (head_path, head_results) = compile_commit(&repo, &cache, &head);
    assert_ne!(base_path, head_path);
    assert_eq!(base_results[0].0, "saxpy");
    let base_cubin = &base_results[0].1.as_ref().unwrap()[0];
    let head_cubin = &head_results[0].1.as_ref().unwrap()[0];
    assert_eq!(base_cubin.file, "kernels/saxpy.cu");
    assert!(base_cubin.bytes.starts_with(b"\x7fELF"));
    assert_ne!(
        base_cubin.bytes, head_cubin.bytes,
        "two versions of the kernel compile to different cubins"
    );
    // The same commit, checked out again (the worktree reused), compiles to the same cubin.
    let (_, again) = compile_commit(&repo, &cache, &base);
    assert_eq!(again[0].1.as_ref().unwrap()[0].bytes, base_cubin.bytes);

    let (_, broken_results) = compile_commit(&repo, &cache, &broken);
    let err = broken_results[0].1.as_ref().unwrap_err().to_string();
    assert!(
        err.starts_with("kernel `saxpy`: kernels/saxpy.cu does not compile for sm_90"),
        "{err}"
    );
    assert!(err.contains("kernels/saxpy.cu(5): error"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `docs/examples/cuda-kernels`, the example of docs/SUITES.md.
fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/cuda-kernels")
}

#[test]
fn the_documented_example_is_the_one_in_the_docs() {
    let docs = std::fs::read_to_string(example_dir().join("../../SUITES.md")).unwrap();
    for file in [
        "pitwall.toml",
        "kernels/common.cuh",
        "kernels/saxpy.cu",
        "kernels/reduce.cu",
    ] {
        let text = std::fs::read_to_string(example_dir().join(file)).unwrap();
        assert!(
            docs.contains(text.trim_end()),
            "docs/SUITES.md does not show {file} as it is"
        );
    }
}

#[test]
fn nvrtc_compiles_the_documented_example() {
    if !nvrtc_present() {
        assert!(
            std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "PITWALL_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
        );
        eprintln!("skipped: no libnvrtc (set LD_LIBRARY_PATH to a CUDA 13 NVRTC lib directory)");
        return;
    }
    let config = load_file(&example_dir().join("pitwall.toml"), "example").unwrap();
    let SuiteSpec::Builtin {
        kernels: Some(manifest),
        ..
    } = &config.suites[0].spec
    else {
        panic!("a cuda-kernels suite");
    };
    for sm in [80, 90] {
        let results = check(&example_dir(), manifest, sm);
        let names: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(names, ["saxpy", "row_sum"]);
        for (name, result) in &results {
            let cubins = result
                .as_ref()
                .unwrap_or_else(|e| panic!("{name} for sm_{sm}: {e}"));
            assert!(cubins[0].bytes.starts_with(b"\x7fELF"), "{name}");
        }
    }
}
