//! Which kernels of a `cuda-kernels` suite are identical on two checkouts (issue 26): each
//! kernel's digest is the SHA-256 of its manifest entry and of the cubins NVRTC compiles from
//! the checkout for one architecture. Needs libnvrtc, no GPU. The same commit checked out in
//! two directories gives the same digests: NVRTC is handed each file under its path in the
//! repository (`sources`), never the checkout's directory.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::compile::check;
use crate::kernels::nvrtc_present;
use pitwall_schema::manifest::KernelManifest;

/// Each kernel of `manifest` (in order) with the hex SHA-256 of its manifest entry and its
/// cubins compiled from `root` for `sm_<sm>`; `None` for a kernel that cannot run (a compile
/// error, a missing source or entry). `Err` when libnvrtc cannot be loaded here.
pub fn kernel_digests(
    root: &Path,
    manifest: &KernelManifest,
    sm: u32,
) -> Result<Vec<(String, Option<String>)>, String> {
    if !nvrtc_present() {
        return Err("no libnvrtc".to_string());
    }
    Ok(check(root, manifest, sm)
        .into_iter()
        .zip(&manifest.kernels)
        .map(|((name, cubins), spec)| {
            let digest = cubins.ok().map(|cubins| {
                let mut h = Sha256::new();
                let entry = serde_json::to_vec(spec).expect("a manifest entry serializes");
                h.update((entry.len() as u64).to_le_bytes());
                h.update(&entry);
                for c in &cubins {
                    h.update((c.file.len() as u64).to_le_bytes());
                    h.update(c.file.as_bytes());
                    h.update((c.bytes.len() as u64).to_le_bytes());
                    h.update(c.bytes.as_slice());
                }
                h.finalize().iter().map(|b| format!("{b:02x}")).collect()
            });
            (name, digest)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::compile::tests::kernel;

    const SCALE: &str = "#include \"common.cuh\"\nextern \"C\" __global__ void scale(float* y) { y[index()] *= 2.0f; }\n";
    const COPY: &str =
        "extern \"C\" __global__ void copy(float* y) { y[threadIdx.x] = y[threadIdx.x]; }\n";

    /// One commit's files in a directory: a kernel with a header, another kernel.
    fn checkout(root: &Path, scale: &str) {
        std::fs::create_dir_all(root.join("kernels")).unwrap();
        std::fs::write(
            root.join("kernels/common.cuh"),
            "__device__ inline int index() { return blockIdx.x * blockDim.x + threadIdx.x; }\n",
        )
        .unwrap();
        std::fs::write(root.join("kernels/scale.cu"), scale).unwrap();
        std::fs::write(root.join("kernels/copy.cu"), COPY).unwrap();
        std::fs::write(root.join("README.md"), "# kernels\n").unwrap();
    }

    /// Issue 26 item 5: two checkouts of one commit in different directories give the same
    /// cubins, so every kernel is identical; a changed kernel's digest differs.
    #[test]
    fn two_checkouts_of_one_commit_give_identical_cubins() {
        if !nvrtc_present() {
            assert!(
                std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
                "PITWALL_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
            );
            eprintln!("skipped: no libnvrtc");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("one/checkout"),
            dir.path().join("elsewhere/other-name"),
            dir.path().join("changed"),
        );
        checkout(&a, SCALE);
        checkout(&b, SCALE);
        checkout(&c, &SCALE.replace("2.0f", "3.0f"));
        std::fs::write(b.join("README.md"), "# only the readme changed\n").unwrap();
        let manifest = KernelManifest {
            kernels: vec![
                kernel("scale", "kernels/scale.cu", "scale"),
                kernel("copy", "kernels/copy.cu", "copy"),
                kernel("broken", "kernels/none.cu", "none"),
            ],
        };
        let da = kernel_digests(&a, &manifest, 90).unwrap();
        let db = kernel_digests(&b, &manifest, 90).unwrap();
        let dc = kernel_digests(&c, &manifest, 90).unwrap();
        assert_eq!(da, db, "same commit, other directory");
        assert!(da[0].1.is_some() && da[1].1.is_some());
        assert_eq!(da[2], ("broken".to_string(), None));
        assert_ne!(da[0].1, dc[0].1, "scale changed");
        assert_eq!(da[1].1, dc[1].1, "copy did not");
        // The manifest entry is part of the digest: another size is another measurement.
        let mut resized = manifest.clone();
        resized.kernels[1].sizes = vec![2048];
        let dr = kernel_digests(&a, &resized, 90).unwrap();
        assert_ne!(da[1].1, dr[1].1);
    }
}
