//! The environment fingerprint recorded with every run: what the results depend on besides
//! the code. Read from a root directory (normally `/`) so tests can use a fake tree.

use std::collections::BTreeMap;
use std::path::Path;

use pitwall_schema::Fingerprint;
use pitwall_schema::sections::{Clocks, GpuDetails, Toolchain};
use serde_json::Value;

/// Environment variables that change benchmark behaviour, recorded by prefix.
const ENV_PREFIXES: [&str; 7] = [
    "CUDA_",
    "NCCL_",
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "RAYON_",
    "NVIDIA_",
];

/// Collects the fingerprint of this machine, reading files under `root`.
pub fn collect(root: &Path, env: impl Iterator<Item = (String, String)>) -> Fingerprint {
    let read = |p: &str| {
        std::fs::read_to_string(root.join(p))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let cpuinfo = read("proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    let logical_cpus = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count() as u32;
    let memory_bytes = read("proc/meminfo")
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?.to_string();
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0);
    // A variable named like a secret is never recorded, whatever its prefix
    // (`CUDA_PASSWORD`, `NCCL_TOKEN`): the fingerprint is stored, exported and shown.
    let env: BTreeMap<String, String> = env
        .filter(|(k, _)| ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .filter(|(k, _)| !pitwall_schema::secrets::is_secret_name(k))
        .collect();
    Fingerprint {
        hostname: read("proc/sys/kernel/hostname").unwrap_or_default(),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        kernel: read("proc/sys/kernel/osrelease").unwrap_or_default(),
        cpu_model,
        logical_cpus,
        memory_bytes,
        cpu_governor: read("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        gpus: Vec::new(),
        pitwall_version: format!(
            "{} ({})",
            env!("CARGO_PKG_VERSION"),
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        ),
        env,
        extra: BTreeMap::new(),
    }
}

/// Compilers that shape the results: the one that built pitwall, and the C and CUDA
/// compilers a project build would use (first line of `--version`; absent when not installed).
pub fn toolchain() -> Toolchain {
    let first_line = |cmd: &str, last: bool| -> Option<String> {
        let out = std::process::Command::new(cmd)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = if last {
            text.lines().rev().find(|l| !l.trim().is_empty())
        } else {
            text.lines().next()
        };
        line.map(|l| l.trim().to_string())
    };
    Toolchain {
        rustc: Some(env!("PITWALL_RUSTC_VERSION").to_string()),
        cc: first_line("cc", false),
        nvcc: first_line("nvcc", true),
        other: Default::default(),
    }
}

/// One per-GPU fact compared between runs, as JSON text shows it.
type GpuField = fn(&GpuDetails) -> Option<Value>;

/// The fields that make two runs incomparable when they differ: hardware (CPU model and
/// count, GPU models and drivers), the clock policy, and pitwall's build profile (built-in
/// suites run at debug speed in a debug build). Hostnames, kernels and environment variables
/// are recorded but do not block a comparison. One line per difference: `what: a vs b`.
pub fn differences(a: &Fingerprint, b: &Fingerprint) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |what: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{what}: {x} vs {y}"));
        }
    };
    check("arch", a.arch.clone(), b.arch.clone());
    check("cpu model", a.cpu_model.clone(), b.cpu_model.clone());
    check(
        "logical cpus",
        a.logical_cpus.to_string(),
        b.logical_cpus.to_string(),
    );
    let gpus = |f: &Fingerprint| {
        let mut m: Vec<String> = f.gpus.iter().map(|g| g.model.clone()).collect();
        m.sort();
        if m.is_empty() {
            "none".to_string()
        } else {
            m.join(", ")
        }
    };
    check("gpu model", gpus(a), gpus(b));
    let drivers = |f: &Fingerprint| {
        let mut d: Vec<String> = f.gpus.iter().filter_map(|g| g.driver.clone()).collect();
        d.sort();
        d.dedup();
        d.join(", ")
    };
    check("gpu driver", drivers(a), drivers(b));
    let clocks = |f: &Fingerprint| {
        f.section::<Clocks>()
            .and_then(|c| c.mode)
            .unwrap_or_else(|| "unknown".to_string())
    };
    if !a.gpus.is_empty() || !b.gpus.is_empty() {
        check("gpu clock policy", clocks(a), clocks(b));
        // ECC costs memory bandwidth and a lower power limit caps clocks under load; either
        // moves results by more than a typical threshold. Unknown on either side: no claim.
        let per_gpu = |f: &Fingerprint, field: GpuField| {
            let vals: Option<Vec<String>> = f
                .gpus
                .iter()
                .map(|g| g.details().as_ref().and_then(field).map(|v| v.to_string()))
                .collect();
            vals.filter(|v| !v.is_empty()).map(|v| v.join(", "))
        };
        let fields: [(&str, GpuField); 2] = [
            ("gpu ecc", |d| d.ecc_enabled.map(Value::from)),
            ("gpu power limit W", |d| d.power_limit_w.map(Value::from)),
        ];
        for (what, field) in fields {
            if let (Some(x), Some(y)) = (per_gpu(a, field), per_gpu(b, field)) {
                check(what, x, y);
            }
        }
    }
    let profile = |f: &Fingerprint| {
        let v = &f.pitwall_version;
        if v.contains("(debug)") {
            "debug"
        } else if v.contains("(release)") {
            "release"
        } else {
            "unknown"
        }
        .to_string()
    };
    check("pitwall build", profile(a), profile(b));
    out
}

/// The fingerprint of the machine this process runs on.
pub fn current() -> Fingerprint {
    collect(Path::new("/"), std::env::vars())
}

#[cfg(test)]
mod tests;
