//! A command suite's `artifacts`: the build outputs hashed after the build, so a pair whose
//! two sides built the same bytes knows the suite's code is identical and need not measure it.
//! Every path is a regular file inside the checkout: patterns are relative, never climb out with
//! `..`, and a symbolic link is followed only to a file inside the checkout.

use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::command::escape_controls;

/// Why a suite's artifacts could not be hashed; each message names the suite and the pattern.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error(
        "suite `{suite}`: artifact `{pattern}` matches no file in the checkout; hint: check that the build writes it, or fix the pattern"
    )]
    NoMatch { suite: String, pattern: String },
    #[error("suite `{suite}`: artifact `{pattern}`: {path} {why}")]
    NotAFile {
        suite: String,
        pattern: String,
        path: String,
        why: &'static str,
    },
    #[error("suite `{suite}`: artifact `{pattern}` {why}")]
    Pattern {
        suite: String,
        pattern: String,
        why: &'static str,
    },
    #[error("suite `{suite}`: cannot read artifact {path}: {cause}")]
    Read {
        suite: String,
        path: String,
        #[source]
        cause: std::io::Error,
    },
}

/// Whether `pattern` can name files inside a checkout: relative, without `..`, `*` and `?`
/// only inside one path segment. `Err` says why not, to follow the pattern in a message.
pub fn check_pattern(pattern: &str) -> Result<(), &'static str> {
    if pattern.trim().is_empty() {
        return Err("is empty");
    }
    let path = Path::new(pattern);
    if path.is_absolute() || pattern.starts_with('~') {
        return Err("is an absolute path (artifacts are relative to the checkout)");
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err("leaves the checkout (`..`)");
    }
    if pattern.contains("**") {
        return Err("uses `**` (only `*` and `?` within one path segment)");
    }
    Ok(())
}

/// Whether `name` matches the one-segment `pattern` (`*` any run of characters, `?` one).
fn matches(pattern: &[char], name: &[char]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some('*'), _) => {
            matches(&pattern[1..], name) || (!name.is_empty() && matches(pattern, &name[1..]))
        }
        (Some('?'), Some(_)) => matches(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => matches(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// The paths under `root` that `pattern` names, sorted (not yet checked to be files).
fn expand(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::new()];
    for segment in Path::new(pattern).components() {
        let Component::Normal(segment) = segment else {
            continue;
        };
        let segment = segment.to_string_lossy();
        let mut next = Vec::new();
        for rel in &found {
            if !segment.contains(['*', '?']) {
                next.push(rel.join(&*segment));
                continue;
            }
            let pat: Vec<char> = segment.chars().collect();
            let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| matches(&pat, &n.chars().collect::<Vec<_>>()))
                .collect();
            names.sort();
            next.extend(names.into_iter().map(|n| rel.join(n)));
        }
        found = next;
    }
    found.retain(|rel| root.join(rel).symlink_metadata().is_ok());
    found
}

/// The SHA-256 (hex) of every file `patterns` name in `checkout`, each with its path relative
/// to the checkout, in sorted order; the same bytes at the same paths give the same hash
/// whichever directory the checkout is in.
pub fn hash_artifacts(
    checkout: &Path,
    suite: &str,
    patterns: &[String],
) -> Result<String, ArtifactError> {
    let root = checkout
        .canonicalize()
        .unwrap_or_else(|_| checkout.to_path_buf());
    let named = |pattern: &str| (suite.to_string(), escape_controls(pattern));
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for pattern in patterns {
        let (suite, shown) = named(pattern);
        if let Err(why) = check_pattern(pattern) {
            return Err(ArtifactError::Pattern {
                suite,
                pattern: shown,
                why,
            });
        }
        let found = expand(&root, pattern);
        if found.is_empty() {
            return Err(ArtifactError::NoMatch {
                suite,
                pattern: shown,
            });
        }
        for rel in found {
            let path = root.join(&rel);
            let shown_path = escape_controls(&rel.to_string_lossy());
            let not_a_file = |why| ArtifactError::NotAFile {
                suite: suite.clone(),
                pattern: shown.clone(),
                path: shown_path.clone(),
                why,
            };
            // A link (or a directory of the pattern that is one) must end inside the checkout.
            let real = path
                .canonicalize()
                .map_err(|_| not_a_file("is a broken link"))?;
            if !real.starts_with(&root) {
                return Err(not_a_file("is a link leading outside the checkout"));
            }
            if !real.is_file() {
                return Err(not_a_file("is not a regular file"));
            }
            files.push((rel.to_string_lossy().into_owned(), real));
        }
    }
    files.sort();
    files.dedup_by(|a, b| a.0 == b.0);
    let mut hash = Sha256::new();
    for (rel, real) in &files {
        let bytes = std::fs::read(real).map_err(|cause| ArtifactError::Read {
            suite: suite.to_string(),
            path: escape_controls(rel),
            cause,
        })?;
        hash.update((rel.len() as u64).to_le_bytes());
        hash.update(rel.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests;
