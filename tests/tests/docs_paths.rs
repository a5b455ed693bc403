//! The docs name real places: every repository path in a code span of README.md and docs/*.md
//! exists, so a file that moves takes its docs along (issue 28, item 8).
//!
//! A path counts when its first component is a top-level entry of the repository (`suites/`,
//! `runner/`, `docs/`, `.ci/` …). What follows a placeholder (`<pair-id>`), a glob (`*`), an
//! ellipsis or a `:line`/`::item` suffix is not checked, only the part before it.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The Markdown files whose paths are checked: the README and every doc.
fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The text of every inline code span of `markdown` (fenced blocks left out: they hold
/// commands and output, not references).
fn code_spans(markdown: &str) -> Vec<(usize, String)> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for (i, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let parts: Vec<&str> = line.split('`').collect();
        for (k, part) in parts.iter().enumerate() {
            if k % 2 == 1 && k + 1 < parts.len() {
                spans.push((i + 1, part.to_string()));
            }
        }
    }
    spans
}

/// The part of a candidate path that can be checked: up to a placeholder, glob, ellipsis or
/// item suffix, without a trailing slash.
fn checkable_prefix(span: &str) -> &str {
    let cut = span
        .find(['<', '*', '…', '{', '$', ' ', '#', '('])
        .unwrap_or(span.len());
    let mut prefix = &span[..cut];
    if let Some(colon) = prefix.find(':') {
        prefix = &prefix[..colon];
    }
    prefix.trim_end_matches('/')
}

/// Whether `span` names a repository path: its first component is a top-level entry.
fn repository_path(span: &str, top_level: &[String]) -> Option<String> {
    if span.starts_with('/') || span.contains("://") {
        return None;
    }
    let first = span.split('/').next()?;
    if !span.contains('/') || !top_level.iter().any(|t| t == first) {
        return None;
    }
    let prefix = checkable_prefix(span);
    (!prefix.is_empty()).then(|| prefix.to_string())
}

fn top_level_entries() -> Vec<String> {
    std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "target" && n != ".git")
        .collect()
}

#[test]
fn every_repository_path_named_in_the_docs_exists() {
    let top = top_level_entries();
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, span) in code_spans(&text) {
            let Some(path) = repository_path(&span, &top) else {
                continue;
            };
            checked += 1;
            if !root().join(&path).exists() {
                let name = file.strip_prefix(root()).unwrap().display().to_string();
                missing.push(format!("{name}:{line}: `{span}` ({path} does not exist)"));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} paths found: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "docs name paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_scan_finds_paths_and_leaves_out_what_is_not_one() {
    let top = vec!["suites".to_string(), "docs".to_string()];
    let spans = code_spans(
        "see `suites/cuda/src/lib.rs` and `suites/src/formats/…`\n```\n`docs/x`\n```\n`a/b` `/etc/passwd` `docs/SUITES.md:12` `suites/*/Cargo.toml`",
    );
    let found: Vec<String> = spans
        .iter()
        .filter_map(|(_, s)| repository_path(s, &top))
        .collect();
    assert_eq!(
        found,
        [
            "suites/cuda/src/lib.rs",
            "suites/src/formats",
            "docs/SUITES.md",
            "suites"
        ]
    );
}
