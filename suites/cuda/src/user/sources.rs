//! What NVRTC may read of the measured checkout, and nothing else. The checkout is a pull
//! request's: a `.cu` that is a symlink to `/proc/self/environ`, or that `#include`s it or
//! `../../etc/passwd`, would otherwise put the runner's environment (its tokens) in the
//! compiler's log. So pitwall reads every file itself, NVRTC none:
//!
//! - a source must be a regular file inside the checkout once symlinks are resolved, at most
//!   [`MAX_SOURCE_BYTES`] (a link to `/dev/zero` is refused before it is read);
//! - every `#include "NAME"` or `#include <NAME>` is resolved as the include path did before
//!   (the including file's directory, then the checkout's root) under the same rules, and
//!   handed to NVRTC as a header by its name; a name that is not such a file gets a header
//!   holding only an `#error` naming it, so NVRTC never looks for it on the file system (a
//!   commented-out include costs nothing); no `--include-path` is given;
//! - an `#include` whose operand is no literal name (`#include MACRO`) is refused: its file
//!   cannot be known before NVRTC reads it.
//!
//! The scan is deliberately blunt: every `#include` in the text counts, in a comment or a
//! string too, so no way of hiding one from the scan (comments, line splices, `%:`) hides it
//! from the compiler.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest source or header read, in bytes.
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// The most headers one source may pull in, all levels together.
pub const MAX_HEADERS: usize = 512;

/// A source file and the headers it includes, each by the name its `#include` gives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    pub text: String,
    pub headers: Vec<(String, String)>,
}

/// Why a file of the checkout cannot be compiled; the message names the file.
fn refused(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, what)
}

/// Reads `file` (relative to `root`) under the rules above.
pub fn read_checked(root: &Path, file: &Path) -> std::io::Result<String> {
    let root = root.canonicalize()?;
    let path = root.join(file).canonicalize()?;
    if !path.starts_with(&root) {
        return Err(refused(format!(
            "{} resolves to {}, outside the checkout",
            file.display(),
            path.display()
        )));
    }
    let meta = std::fs::metadata(&path)?;
    if !meta.is_file() {
        return Err(refused(format!("{} is not a regular file", file.display())));
    }
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(refused(format!(
            "{} is larger than {} MiB",
            file.display(),
            MAX_SOURCE_BYTES >> 20
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&path)?
        .take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(refused(format!(
            "{} grew past {} MiB while read",
            file.display(),
            MAX_SOURCE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|_| refused(format!("{} is not UTF-8 text", file.display())))
}

/// `file` (relative to `root`) and every header it includes, transitively.
pub fn load(root: &Path, file: &str) -> std::io::Result<Sources> {
    let text = read_checked(root, Path::new(file))?;
    let mut headers: Vec<(String, String)> = Vec::new();
    // (text, its directory relative to the root, its name for messages)
    let mut pending: Vec<(String, PathBuf, String)> = vec![(
        text.clone(),
        Path::new(file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        file.to_string(),
    )];
    while let Some((text, dir, name)) = pending.pop() {
        for include in includes(&text) {
            let Some(wanted) = include else {
                return Err(refused(format!(
                    "{name}: an #include names no file literally (a macro); name the header as \"file.cuh\""
                )));
            };
            if headers.iter().any(|(n, _)| *n == wanted) {
                continue;
            }
            if headers.len() >= MAX_HEADERS {
                return Err(refused(format!(
                    "{file} includes more than {MAX_HEADERS} headers"
                )));
            }
            match resolve(root, &dir, &wanted) {
                Some(rel) => {
                    let body = read_checked(root, &rel)?;
                    let sub = rel.parent().map(Path::to_path_buf).unwrap_or_default();
                    pending.push((body.clone(), sub, rel.display().to_string()));
                    headers.push((wanted, body));
                }
                None => {
                    let shown = wanted.replace(['"', '\\'], "?");
                    headers.push((
                        wanted,
                        format!(
                            "#error \"pitwall: #include \\\"{shown}\\\" is not a file in the checkout (only the file's directory and the repository root are searched)\"\n"
                        ),
                    ));
                }
            }
        }
    }
    Ok(Sources { text, headers })
}

/// Where `name`, included from a file in `dir`, is in the checkout: `dir/name`, else
/// `name` from the root; only a relative name, and only a regular file inside the checkout
/// once symlinks are resolved (whether it is small enough is [`read_checked`]'s to say).
fn resolve(root: &Path, dir: &Path, name: &str) -> Option<PathBuf> {
    let wanted = Path::new(name);
    if wanted.is_absolute() || name.is_empty() {
        return None;
    }
    let canon_root = root.canonicalize().ok()?;
    [dir.join(wanted), wanted.to_path_buf()]
        .into_iter()
        .find_map(|rel| {
            let real = root.join(&rel).canonicalize().ok()?;
            let inside = real.starts_with(&canon_root) && real.is_file();
            inside.then(|| real.strip_prefix(&canon_root).ok().map(Path::to_path_buf))?
        })
}

/// Every `#include` of `text`: its literal name, or `None` when it names none (a macro).
/// Counts `#` and `%:`, any blanks, comments and line splices between it and `include`
/// (`include_next` and `import` too), wherever they stand.
fn includes(text: &str) -> Vec<Option<String>> {
    // Line splices go first, as in the compiler's second phase.
    let text = text.replace("\\\r\n", "").replace("\\\n", "");
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let hash = match (b[i], b.get(i + 1)) {
            (b'#', _) => 1,
            (b'%', Some(b':')) => 2,
            _ => {
                i += 1;
                continue;
            }
        };
        i += hash;
        let mut j = skip_blanks(b, i);
        let word_end = (j..b.len())
            .find(|&k| !(b[k].is_ascii_alphanumeric() || b[k] == b'_'))
            .unwrap_or(b.len());
        if !matches!(&text[j..word_end], "include" | "include_next" | "import") {
            continue;
        }
        j = skip_blanks(b, word_end);
        let close = match b.get(j) {
            Some(b'"') => Some(b'"'),
            Some(b'<') => Some(b'>'),
            _ => None,
        };
        let name = close.and_then(|c| {
            let end = (j + 1..b.len()).find(|&k| b[k] == c || b[k] == b'\n')?;
            (b[end] == c).then(|| text[j + 1..end].to_string())
        });
        out.push(name);
        i = j;
    }
    out
}

/// The index of the first byte at or after `i` that is neither a blank (space, tab, form
/// feed, vertical tab) nor inside a `/* */` comment.
fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    loop {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\x0b' | b'\x0c' | b'\r') {
            i += 1;
        }
        if b.get(i) == Some(&b'/') && b.get(i + 1) == Some(&b'*') {
            i = match b[i + 2..].windows(2).position(|w| w == b"*/") {
                Some(p) => i + 2 + p + 2,
                None => b.len(),
            };
            continue;
        }
        return i;
    }
}

#[cfg(test)]
mod tests;
