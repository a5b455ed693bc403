//! `[suites] backend` through the real binary on a machine without CUDA: `auto` falls back to
//! the CPU suites with one short line on stderr and exits 0, `cuda` is an infrastructure
//! failure (exit 3) with a one-line error, `cpu` never mentions CUDA.

use pitwall_e2e::{QUICK_BUILTINS, Sandbox};

/// A machine where the NVIDIA driver is loaded has this device node; without it CUDA cannot run
/// and every test here knows what pitwall must do.
fn cuda_possible() -> bool {
    std::path::Path::new("/dev/nvidiactl").exists()
}

fn config(backend: &str) -> String {
    format!("[suites]\nbackend = \"{backend}\"\n{QUICK_BUILTINS}")
}

const ONE_GEMM: [&str; 6] = [
    "run",
    "--suite",
    "kernel",
    "--bench",
    "gemm_f32[n=64]",
    "--no-report",
];

#[test]
fn auto_without_cuda_runs_the_cpu_suites_saying_so_once() {
    if cuda_possible() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    let sb = Sandbox::new();
    sb.write("pitwall.toml", &config("auto"));
    let out = sb.run(&ONE_GEMM).expect(0);
    assert!(out.stdout().contains("gemm_f32[n=64]"), "{}", out.stdout());
    let stderr = out.stderr();
    let gpu_lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("GPU") || l.contains("CUDA"))
        .collect();
    assert_eq!(gpu_lines.len(), 1, "{stderr}");
    let line = gpu_lines[0];
    assert!(
        line.starts_with("no GPU (")
            && line.ends_with("CUDA suites skipped, CPU suites only")
            && line.len() < 120,
        "{line}"
    );
    // The default is auto: the same without the key.
    sb.write("pitwall.toml", QUICK_BUILTINS);
    let out = sb.run(&ONE_GEMM).expect(0);
    assert!(
        out.stderr()
            .contains("CUDA suites skipped, CPU suites only")
    );
}

/// Issue 24: `-q` hides progress, never warnings. On a GPU runner whose driver broke, the
/// no-GPU line is the one that matters; the host checks' `warning:` lines stay too.
#[test]
fn quiet_still_says_the_cuda_suites_were_skipped_and_keeps_every_warning() {
    if cuda_possible() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    let sb = Sandbox::new();
    sb.write("pitwall.toml", &config("auto"));
    let loud = sb.run(&ONE_GEMM).expect(0);
    let mut quiet_args = ONE_GEMM.to_vec();
    quiet_args.insert(1, "-q");
    let quiet = sb.run(&quiet_args).expect(0);
    let stderr = &quiet.stderr();
    assert!(
        stderr.contains("CUDA suites skipped, CPU suites only"),
        "{stderr}"
    );
    // What a warning is about (`warning: host: aslr on …` is about `host`); its details may
    // differ between the two runs (a core busy in one of them).
    let warnings = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix("warning: "))
            .map(|w| w.split(':').next().unwrap_or(w).to_string())
            .collect()
    };
    assert_eq!(warnings(stderr), warnings(&loud.stderr()), "{stderr}");
    // Every line `-q` keeps is a warning, an error or the no-GPU line: no progress.
    for line in stderr.lines() {
        assert!(
            line.starts_with("warning:") || line.starts_with("  ") || line.starts_with("no GPU ("),
            "{line}"
        );
    }
}

#[test]
fn cuda_without_cuda_is_an_infrastructure_failure_in_one_line() {
    if cuda_possible() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    let sb = Sandbox::new();
    sb.write("pitwall.toml", &config("cuda"));
    let out = sb.run(&ONE_GEMM).expect(3);
    let stderr = out.stderr();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("[suites] backend = \"cuda\"")
            && errors[0].contains("cuda backend unavailable: no CUDA driver"),
        "{stderr}"
    );
    assert!(
        out.stdout().is_empty(),
        "nothing measured: {}",
        out.stdout()
    );
    assert_eq!(sb.count("runs"), 0, "nothing stored");
}

#[test]
fn cpu_is_the_cpu_without_a_word_about_cuda() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", &config("cpu"));
    let out = sb.run(&ONE_GEMM).expect(0);
    assert!(out.stdout().contains("gemm_f32[n=64]"), "{}", out.stdout());
    assert!(!out.stderr().contains("CUDA"), "{}", out.stderr());
}
