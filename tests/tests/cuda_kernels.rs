//! A `kind = "cuda-kernels"` suite through the real binary on a machine without CUDA: `auto`
//! skips it with one line naming the suite and runs the rest (exit 0), `[suites] backend =
//! "cuda"` is an infrastructure failure (exit 3) before anything runs, and a broken manifest is
//! a one-line configuration error (exit 2) naming file:line, the suite and the kernel. And
//! `pitwall kernels`, the compile-only check, on the commits of a real repository.

use pitwall_e2e::{QUICK_BUILTINS, Sandbox, git};

fn cuda_possible() -> bool {
    std::path::Path::new("/dev/nvidiactl").exists()
}

const KERNELS: &str = r#"
[[suite]]
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
"#;

const SAXPY: &str = r#"extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"#;

fn sandbox(backend: &str) -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        &format!("[suites]\nbackend = \"{backend}\"\n{QUICK_BUILTINS}{KERNELS}"),
    );
    sb.write("kernels/saxpy.cu", SAXPY);
    sb
}

const ONE_GEMM: [&str; 4] = ["run", "--bench", "gemm_f32[n=64]", "--no-report"];

#[test]
fn auto_without_cuda_skips_the_users_kernels_in_one_line() {
    if cuda_possible() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    let sb = sandbox("auto");
    let out = sb.run(&ONE_GEMM).expect(0);
    assert!(out.stdout().contains("gemm_f32[n=64]"), "{}", out.stdout());
    let stderr = out.stderr();
    let skips: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("suite `mine` skipped"))
        .collect();
    assert_eq!(
        skips,
        vec![
            "suite `mine` skipped: cuda backend unavailable: a `cuda-kernels` suite runs on the CUDA backend only, and this run uses the CPU backend; hint: run on a machine with an NVIDIA GPU and CUDA 13, [suites] backend = \"auto\" or \"cuda\""
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains("CUDA suites skipped, CPU suites only"),
        "{stderr}"
    );
}

#[test]
fn cuda_without_cuda_fails_before_compiling_anything() {
    if cuda_possible() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    let sb = sandbox("cuda");
    let out = sb.run(&["run", "--suite", "mine", "--no-report"]).expect(3);
    let stderr = out.stderr();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("[suites] backend = \"cuda\": cuda backend unavailable"),
        "{stderr}"
    );
    assert_eq!(sb.count("runs"), 0);
}

#[test]
fn a_broken_manifest_is_one_line_naming_the_suite_and_the_kernel() {
    let sb = sandbox("auto");
    let text = format!(
        "{QUICK_BUILTINS}{}",
        KERNELS.replace("block = 256", "block = \"cdiv(n, 0\"")
    );
    sb.write("pitwall.toml", &text);
    let line = text.lines().position(|l| l.starts_with("block =")).unwrap() + 1;
    let out = sb.run(&["run", "--no-report"]).expect(2);
    let stderr = out.stderr();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].starts_with("error: ") && errors[0].contains(&format!("pitwall.toml:{line}:9: ")),
        "{stderr}"
    );
    assert!(
        errors[0].contains("suite `mine`: kernel `saxpy`: key `block`: cannot parse `cdiv(n, 0` at column 10: expected `)`"),
        "{stderr}"
    );
}

#[test]
fn the_cpu_backend_skips_it_and_runs_the_rest() {
    let sb = sandbox("cpu");
    let out = sb.run(&ONE_GEMM).expect(0);
    assert!(out.stdout().contains("gemm_f32[n=64]"), "{}", out.stdout());
    let stderr = out.stderr();
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("suite `mine` skipped: cuda backend unavailable: a `cuda-kernels` suite runs on the CUDA backend only"))
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(sb.count("runs"), 1);
}

#[test]
fn a_run_of_only_the_users_kernels_without_cuda_stores_nothing() {
    if cuda_possible() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    // Nothing can be measured: the run is refused as any run whose every suite was skipped
    // (exit 2), and the skip says why.
    let sb = sandbox("auto");
    sb.write("pitwall.toml", KERNELS);
    // The skip is said once, as it happens, or (under --quiet, which hides progress) once
    // before the error.
    for args in [
        &["run", "--no-report"][..],
        &["--quiet", "run", "--no-report"],
    ] {
        let out = sb.run(args).expect(2);
        let stderr = out.stderr();
        assert_eq!(
            stderr
                .matches("suite `mine` skipped: cuda backend unavailable")
                .count(),
            1,
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("error: no benchmark ran (every suite was skipped)"),
            "{stderr}"
        );
    }
    assert_eq!(sb.count("runs"), 0);
}

/// `pitwall kernels ARGS` in `sb`, or `None` (after saying why) when this machine has no
/// libnvrtc and the tests may skip.
fn kernels(sb: &Sandbox, args: &[&str]) -> Option<pitwall_e2e::Out> {
    let mut all = vec!["kernels"];
    all.extend_from_slice(args);
    let out = sb.run(&all);
    if out.code() == 3 && out.stderr().contains("no NVRTC") {
        assert!(
            std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "PITWALL_REQUIRE_NVRTC=1 but pitwall found no NVRTC: {}",
            out.stderr()
        );
        eprintln!("skipped: no libnvrtc (set LD_LIBRARY_PATH to a CUDA 13 NVRTC lib directory)");
        return None;
    }
    Some(out)
}

/// The fingerprint `pitwall kernels` prints for `kernel` at `sm`.
fn fingerprint(stdout: &str, kernel: &str, sm: u32) -> String {
    let prefix = format!("mine/{kernel}  sm_{sm}  ok  kernels/saxpy.cu  ");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line: {stdout}"));
    line.rsplit("fnv1a ").next().unwrap().to_string()
}

#[test]
fn nvrtc_kernels_command_compiles_each_commits_sources() {
    let sb = sandbox("auto");
    sb.write("pitwall.toml", KERNELS);
    git(sb.path(), &["init", "-q", "-b", "main"]);
    git(sb.path(), &["add", "-A"]);
    git(sb.path(), &["commit", "-qm", "saxpy"]);
    sb.write(
        "kernels/saxpy.cu",
        &SAXPY.replace("y[i] = a * x[i] + y[i];", "y[i] = fmaf(a, x[i], y[i]);"),
    );
    git(sb.path(), &["commit", "-qam", "saxpy: fma"]);
    // The working tree breaks it (line 3 loses its semicolon).
    sb.write("kernels/saxpy.cu", &SAXPY.replace("+ y[i];", "+ y[i]"));

    let Some(out) = kernels(&sb, &["--commit", "HEAD~1", "--sm", "90"]) else {
        return;
    };
    let base = fingerprint(&out.expect(0).stdout(), "saxpy", 90);
    let out = kernels(&sb, &["--commit", "HEAD", "--sm", "90"])
        .unwrap()
        .expect(0);
    let head = fingerprint(&out.stdout(), "saxpy", 90);
    assert_ne!(base, head, "two versions of the kernel, two cubins");
    assert!(
        out.stderr().contains("sources of commit "),
        "{}",
        out.stderr()
    );
    // Both default architectures.
    let out = kernels(&sb, &["--commit", "HEAD~1"]).unwrap().expect(0);
    assert_eq!(fingerprint(&out.stdout(), "saxpy", 90), base);
    fingerprint(&out.stdout(), "saxpy", 80);

    let out = kernels(&sb, &["--sm", "90"]).unwrap().expect(2);
    let stdout = out.stdout();
    assert!(
        stdout.starts_with(
            "mine/saxpy  sm_90  FAILED  kernel `saxpy`: kernels/saxpy.cu does not compile for sm_90"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n    kernels/saxpy.cu(4): error: expected a \";\""),
        "{stdout}"
    );
    assert!(
        out.stderr()
            .contains("error: 1 of 1 kernel compilations failed in the working tree"),
        "{}",
        out.stderr()
    );
}

#[test]
fn the_kernels_command_refuses_what_it_cannot_check() {
    let sb = sandbox("auto");
    sb.write("pitwall.toml", QUICK_BUILTINS);
    let out = sb.run(&["kernels"]).expect(2);
    assert!(
        out.stderr()
            .contains("error: the configuration has no kind = \"cuda-kernels\" suite"),
        "{}",
        out.stderr()
    );
    sb.write("pitwall.toml", KERNELS);
    let out = sb.run(&["kernels", "--suite", "theirs"]).expect(2);
    assert!(
        out.stderr().contains(
            "error: no cuda-kernels suite `theirs` (hint: the cuda-kernels suites are mine)"
        ),
        "{}",
        out.stderr()
    );
    let out = sb.run(&["kernels", "--sm", "7"]).expect(2);
    assert!(out.stderr().contains("--sm"), "{}", out.stderr());
}

#[test]
fn the_kernels_command_without_nvrtc_is_an_infrastructure_failure() {
    let sb = sandbox("auto");
    sb.write("pitwall.toml", KERNELS);
    // Without the test environment's NVRTC directory on the loader path.
    let out = pitwall_e2e::Out(
        sb.cmd(&["kernels"])
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .expect("spawn pitwall"),
    );
    if out.code() == 0 {
        eprintln!("skipped: this machine has a system-wide libnvrtc");
        return;
    }
    let out = out.expect(3);
    assert_eq!(
        out.stderr().lines().collect::<Vec<_>>(),
        vec![
            "error: pitwall kernels: cuda backend unavailable: no NVRTC; hint: install the CUDA 13 runtime compiler (libnvrtc.so.13, e.g. pip install nvidia-cuda-nvrtc) and put its lib directory on LD_LIBRARY_PATH"
        ]
    );
    assert!(out.stdout().is_empty(), "{}", out.stdout());
}
