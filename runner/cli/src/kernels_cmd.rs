//! `pitwall kernels`: the compile-only check of the `cuda-kernels` suites, for a machine
//! without a GPU (a CI job, a laptop) — each kernel's sources from the working tree or a
//! commit's worktree compiled with NVRTC for each architecture asked, one line per kernel and
//! architecture, NVRTC's log under a kernel that does not compile. Needs libnvrtc only.

use std::path::PathBuf;

use pitwall_cuda::kernels::{nvrtc_present, nvrtc_version};
use pitwall_cuda::user::{Cubin, check};
use pitwall_engine::config::{Config, SuiteSpec};
use pitwall_engine::escape_controls;
use pitwall_pipeline::git::Repo;
use pitwall_schema::SuiteKind;
use pitwall_schema::backend::BackendError;
use pitwall_schema::manifest::KernelManifest;

use super::args::{Global, KernelsArgs};
use super::context::{current_dir, load_config};
use super::exit::{ExitClass, Failure};

/// FNV-1a (64-bit) over the cubins: a short fingerprint that tells two builds of a kernel
/// apart on screen (not a security hash).
fn fnv1a(cubins: &[Cubin]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in cubins {
        for &b in c.bytes.iter() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The `cuda-kernels` suites of `config` that `names` selects (all when empty); an unknown
/// name or none at all is refused.
fn suites<'c>(
    config: &'c Config,
    names: &[String],
) -> Result<Vec<(&'c str, &'c KernelManifest)>, Failure> {
    let all: Vec<(&str, &KernelManifest)> = config
        .suites
        .iter()
        .filter_map(|s| match &s.spec {
            SuiteSpec::Builtin {
                kind: SuiteKind::CudaKernels,
                kernels: Some(m),
                ..
            } => Some((s.name.as_str(), m)),
            _ => None,
        })
        .collect();
    if all.is_empty() {
        return Err(Failure::rejected(
            "the configuration has no kind = \"cuda-kernels\" suite (hint: docs/SUITES.md shows one)"
                .into(),
        ));
    }
    for n in names {
        if !all.iter().any(|(name, _)| name == n) {
            let known: Vec<&str> = all.iter().map(|(name, _)| *name).collect();
            return Err(Failure::rejected(format!(
                "no cuda-kernels suite `{n}` (hint: the cuda-kernels suites are {})",
                known.join(", ")
            )));
        }
    }
    Ok(all
        .into_iter()
        .filter(|(name, _)| names.is_empty() || names.iter().any(|n| n == name))
        .collect())
}

/// Where the sources are: the working directory, or `rev` checked out in the repository's
/// worktree cache (`.pitwall/worktrees/<sha>`, shared with `run --commit`).
fn source_root(rev: Option<&str>) -> Result<(PathBuf, String), Failure> {
    let cwd = current_dir()?;
    let Some(rev) = rev else {
        return Ok((cwd, "the working tree".into()));
    };
    let repo = Repo::discover(&cwd).map_err(Failure::of_git)?;
    let commit = repo.resolve(rev).map_err(Failure::of_git)?;
    let cache = repo.root().join(".pitwall").join("worktrees");
    let checkout = repo
        .checkout(&commit, &cache, false)
        .map_err(Failure::of_git)?;
    Ok((
        checkout.path,
        format!("commit {}", &commit.sha[..12.min(commit.sha.len())]),
    ))
}

pub(super) fn cmd_kernels(g: &Global, a: &KernelsArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let selected = suites(&config, &a.suites)?;
    if !nvrtc_present() {
        return Err(Failure::of_backend(
            "pitwall kernels",
            BackendError::Unavailable {
                backend: "cuda",
                reason: "no NVRTC; hint: install the CUDA 13 runtime compiler (libnvrtc.so.13, e.g. pip install nvidia-cuda-nvrtc) and put its lib directory on LD_LIBRARY_PATH".into(),
            },
        ));
    }
    let (root, what) = source_root(a.commit.as_deref())?;
    if !g.quiet {
        let (major, minor) = nvrtc_version().unwrap_or((0, 0));
        eprintln!(
            "compiling the cuda-kernels sources of {what} ({}) with NVRTC {major}.{minor}",
            root.display()
        );
    }
    let (mut failed, mut total) = (0usize, 0usize);
    let redactor = super::context::redactor();
    for (suite, manifest) in selected {
        for sm in a.sms() {
            for (kernel, result) in check(&root, manifest, sm) {
                total += 1;
                match result {
                    Ok(cubins) => {
                        let files: Vec<&str> = cubins.iter().map(|c| c.file.as_str()).collect();
                        let bytes: usize = cubins.iter().map(|c| c.bytes.len()).sum();
                        println!(
                            "{suite}/{kernel}  sm_{sm}  ok  {}  {bytes} bytes  fnv1a {:016x}",
                            files.join(" "),
                            fnv1a(&cubins)
                        );
                    }
                    Err(e) => {
                        failed += 1;
                        // NVRTC's log, one line each, escaped (it quotes the user's source)
                        // and redacted like any other output.
                        let text = redactor.redact(&e.to_string());
                        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
                        println!(
                            "{suite}/{kernel}  sm_{sm}  FAILED  {}",
                            escape_controls(lines.next().unwrap_or(""))
                        );
                        for line in lines {
                            println!("    {}", escape_controls(line));
                        }
                    }
                }
            }
        }
    }
    if failed > 0 {
        return Err(Failure::rejected(format!(
            "{failed} of {total} kernel compilations failed in {what}"
        )));
    }
    Ok(ExitClass::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_fingerprint_tells_cubins_apart() {
        let cubin = |bytes: &[u8]| Cubin {
            file: "k.cu".into(),
            sm: 90,
            bytes: Arc::new(bytes.to_vec()),
        };
        // FNV-1a's published test value for the empty input.
        assert_eq!(fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(&[cubin(b"a")]), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv1a(&[cubin(b"ab")]), fnv1a(&[cubin(b"ba")]));
    }
}
