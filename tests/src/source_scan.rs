//! A small reader of the workspace's own Rust sources for tests/tests/architecture.rs: which
//! files are test code, the non-test functions and their lengths, the module graph of a crate
//! (`crate::`/`super::` paths), and what a crate root imports. Text-level on purpose: no
//! parser dependency, comments and literals blanked first so braces and paths are code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `text` with comments and the insides of string and character literals replaced by spaces
/// (newlines kept), so that line numbers, braces and paths that remain are code.
pub fn blank_comments_and_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if is_raw_string_start(b, i) => {
                let mut j = i + 1;
                let mut hashes = 0;
                while b[j] == b'#' {
                    hashes += 1;
                    j += 1;
                }
                let body = j + 1;
                let mut k = body;
                while k < b.len() {
                    if b[k] == b'"'
                        && b[k + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&c| c == b'#')
                            .count()
                            == hashes
                    {
                        break;
                    }
                    k += 1;
                }
                blank(&mut out, body, k.min(b.len()));
                i = (k + 1 + hashes).min(b.len());
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '\u{..}', '{'), not a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    std::str::from_utf8(&b[i + 1..])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .filter(|c| c.len_utf8() > 1 && b.get(i + 1 + c.len_utf8()) == Some(&b'\''))
                        .map(|c| i + 1 + c.len_utf8())
                };
                match end {
                    Some(e) => {
                        blank(&mut out, i + 1, e);
                        i = e + 1;
                    }
                    None => i += 1,
                }
            }
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                // Skip the rest of an identifier so `br"..."` or `letter'` is not misread.
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    if b[i] == b'r' && is_raw_string_start(b, i) {
                        break;
                    }
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_raw_string_start(b: &[u8], i: usize) -> bool {
    let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let prefix_ok =
        !prev_ident || (i > 0 && b[i - 1] == b'b' && (i < 2 || !b[i - 2].is_ascii_alphanumeric()));
    if !prefix_ok || b[i] != b'r' {
        return false;
    }
    let mut j = i + 1;
    while j < b.len() && b[j] == b'#' {
        j += 1;
    }
    j < b.len() && b[j] == b'"'
}

/// The workspace's root directory (the parent of the end-to-end crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Workspace member directories (relative), from the root Cargo.toml.
pub fn workspace_members() -> Vec<String> {
    let text = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
    let start = text.find("members = [").expect("members");
    let end = start + text[start..].find(']').expect("end of members");
    text[start..end]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Whether `file` (under a crate's `src/`) is a test module: named `tests.rs` or `*_tests.rs`
/// and declared by `#[cfg(test)] mod <stem>;` in some file of the same crate. A file with a
/// test-like name that is not declared so (a reader called `nccl_tests.rs`) is code.
pub fn is_test_module(file: &Path, crate_files: &BTreeMap<PathBuf, String>) -> bool {
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    if stem != "tests" && !stem.ends_with("_tests") {
        return false;
    }
    let decl = format!("mod {stem};");
    crate_files.values().any(|text| {
        text.match_indices(&decl).any(|(at, _)| {
            let before = text[..at].trim_end();
            let before = before
                .strip_suffix("pub(crate)")
                .or_else(|| before.strip_suffix("pub"))
                .unwrap_or(before)
                .trim_end();
            before.ends_with("#[cfg(test)]")
        })
    })
}

/// The code of `blanked` with every `#[cfg(test)]` item (an inline `mod tests { … }`, a test
/// helper function) blanked as well.
pub fn without_test_items(blanked: &str) -> String {
    let mut out = blanked.as_bytes().to_vec();
    let mut from = 0;
    while let Some(p) = blanked[from..].find("#[cfg(test)]") {
        let start = from + p;
        let rest = &blanked[start..];
        // The item ends at `;` before any `{`, or at the brace that closes its first `{`.
        let semi = rest.find(';');
        let open = rest.find('{');
        let end = match (semi, open) {
            (Some(s), Some(o)) if s < o => start + s + 1,
            (_, Some(o)) => start + o + matching_brace(&rest[o..]).unwrap_or(rest.len() - o),
            (Some(s), None) => start + s + 1,
            (None, None) => blanked.len(),
        };
        for c in &mut out[start..end.min(blanked.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end.min(blanked.len());
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Length in bytes up to and including the brace that closes `text`'s first `{`.
fn matching_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// A function with a body: its name, first line (1-based) and length in lines.
#[derive(Debug)]
pub struct FnSpan {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// The functions with bodies in `code` (blanked, test items removed).
pub fn functions(code: &str) -> Vec<FnSpan> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(p) = code[from..].find("fn ") {
        let at = from + p;
        from = at + 3;
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(` pointer types
        }
        let rest = &code[at..];
        let (Some(open), semi) = (rest.find('{'), rest.find(';')) else {
            continue;
        };
        if semi.is_some_and(|s| s < open) {
            continue; // a declaration in a trait
        }
        let Some(len) = matching_brace(&rest[open..]) else {
            continue;
        };
        let line = code[..at].matches('\n').count() + 1;
        let lines = rest[..open + len].matches('\n').count() + 1;
        out.push(FnSpan { name, line, lines });
    }
    out
}

/// A crate's non-test source: module path (`""` for the root, `engine::suite`) to code with
/// comments, literals and test items blanked.
pub fn crate_modules(src: &Path) -> BTreeMap<String, String> {
    let texts: BTreeMap<PathBuf, String> = rust_files(src)
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    let mut out = BTreeMap::new();
    for (path, text) in &texts {
        if is_test_module(path, &texts) {
            continue;
        }
        let rel = path.strip_prefix(src).unwrap().with_extension("");
        let mut segs: Vec<String> = rel
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if segs.last().is_some_and(|s| s == "mod") || segs == ["lib"] || segs == ["main"] {
            segs.pop();
        }
        if segs.first().is_some_and(|s| s == "bin") {
            continue; // other binaries' roots
        }
        out.insert(
            segs.join("::"),
            without_test_items(&blank_comments_and_literals(text)),
        );
    }
    out
}

/// Edges between modules of one crate from `crate::a::b` and `super::x` paths (also inside
/// `use crate::{a, b}` groups), each resolved to the longest module it names. Edges between a
/// module and its own ancestors or descendants are left out: a parent declaring a child and
/// the child naming the parent is nesting, not a cycle between peers.
pub fn module_edges(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, code) in modules {
        let parent = m.rsplit_once("::").map_or("", |(p, _)| p).to_string();
        let mut targets = BTreeSet::new();
        for kw in ["crate::", "super::"] {
            for (at, _) in code.match_indices(kw) {
                let before = &code[..at];
                if before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    || before.ends_with("::")
                {
                    continue; // an identifier ending in `super`, or the inner part of a chain
                }
                let mut rest = &code[at + kw.len()..];
                let mut base = if kw == "crate::" {
                    String::new()
                } else {
                    parent.clone()
                };
                while let Some(r) = rest.strip_prefix("super::") {
                    base = base
                        .rsplit_once("::")
                        .map_or(String::new(), |(p, _)| p.to_string());
                    rest = r;
                }
                resolve_tree(modules, &base, rest, &mut targets);
            }
        }
        let related = |t: &String| {
            t == m
                || m.starts_with(&format!("{t}::"))
                || t.starts_with(&format!("{m}::"))
                || t.is_empty()
        };
        targets.retain(|t| !related(t));
        edges.insert(m.clone(), targets);
    }
    edges
}

/// Adds the modules named by the path or `{…}` group at the start of `rest`, relative to `base`.
fn resolve_tree(
    modules: &BTreeMap<String, String>,
    base: &str,
    rest: &str,
    out: &mut BTreeSet<String>,
) {
    if let Some(group) = rest.strip_prefix('{') {
        for part in split_group(group) {
            resolve_tree(modules, base, part.trim(), out);
        }
        return;
    }
    let mut cur = base.to_string();
    let mut tail = rest;
    loop {
        let seg: String = tail
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let cand = if cur.is_empty() {
            seg.clone()
        } else {
            format!("{cur}::{seg}")
        };
        if seg.is_empty() || !modules.contains_key(&cand) {
            break;
        }
        cur = cand;
        tail = &tail[seg.len()..];
        match tail.strip_prefix("::") {
            Some(t) if t.starts_with('{') => {
                out.insert(cur.clone());
                return resolve_tree(modules, &cur, t, out);
            }
            Some(t) => tail = t,
            None => break,
        }
    }
    if cur != base {
        out.insert(cur);
    }
}

/// The top-level comma-separated parts of a `{…}` group's inside (up to its closing brace).
fn split_group(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut parts) = (0i32, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                parts.push(&group[start..i]);
                return parts;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&group[start..]);
    parts
}

/// The strongly connected groups of more than one module (Tarjan).
pub fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        for w in t.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.stack.contains(&w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut group = Vec::new();
            while let Some(w) = t.stack.pop() {
                group.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                t.out.push(group);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The `use` declarations at the top level of a crate root's `code` whose path starts with one
/// of `crates` (`pitwall_schema`), as written.
pub fn root_imports_of(code: &str, crates: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    for line in code.lines() {
        let t = line.trim();
        if depth == 0 {
            let path = t
                .strip_prefix("pub use ")
                .or_else(|| t.strip_prefix("use "));
            if let Some(p) = path {
                let first: String = p
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if crates.contains(&first) {
                    out.push(t.to_string());
                }
            }
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
    }
    out
}

/// The names a `use` declaration brings into scope (`use a::b as c;` → `c`, `use a::{X, y};` →
/// `X`, `y`; a glob brings none that can be named).
pub fn imported_names(decl: &str) -> Vec<String> {
    let body = decl
        .trim()
        .trim_start_matches("pub ")
        .trim_start_matches("use ")
        .trim_end_matches(';');
    let parts: Vec<&str> = match body.find('{') {
        Some(open) => split_group(&body[open + 1..]),
        None => vec![body],
    };
    parts
        .into_iter()
        .filter_map(|p| {
            let p = p.trim();
            let name = match p.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => p.rsplit("::").next().unwrap_or(p).trim(),
            };
            (!name.is_empty() && name != "*" && name != "self").then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests;
