//! The source-level rules of docs/ARCHITECTURE.md, checked on every crate of the workspace
//! (tests/tests/architecture.rs checks the crate graph): no module cycle in any crate, no
//! crate-root alias that makes `crate::x` name another crate, reqwest as the one HTTP client
//! and only in the forge, no non-test file over 500 lines, no non-test function over 100
//! lines, and no `#[path]` module tricks. Each rule reads the sources through
//! `pitwall_e2e::source_scan` (comments, literals and `#[cfg(test)]` items left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pitwall_e2e::source_scan::{
    blank_comments_and_literals, crate_modules, cycles, functions, imported_names, is_test_module,
    module_edges, root_imports_of, rust_files, without_test_items, workspace_members,
    workspace_root,
};

/// The longest a non-test source file may be, in lines.
const MAX_FILE_LINES: usize = 500;

/// The longest a non-test function may be, in lines.
const MAX_FN_LINES: usize = 100;

/// HTTP clients other than reqwest: none may appear in a manifest or in Cargo.lock.
const OTHER_HTTP_CLIENTS: [&str; 6] = ["ureq", "curl", "isahc", "attohttpc", "minreq", "surf"];

fn root() -> PathBuf {
    workspace_root()
}

fn members() -> Vec<String> {
    workspace_members()
}

/// The members whose `src/` is product code (the end-to-end crate is all tests).
fn product_members() -> Vec<String> {
    members().into_iter().filter(|m| m != "tests").collect()
}

/// Every file of a member's `src/` with its text, and whether it is a test module.
fn sources(member: &str) -> Vec<(PathBuf, String, bool)> {
    let src = root().join(member).join("src");
    let texts: BTreeMap<PathBuf, String> = rust_files(&src)
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    texts
        .iter()
        .map(|(p, t)| (p.clone(), t.clone(), is_test_module(p, &texts)))
        .collect()
}

/// Fails listing every violation of `rule`.
fn none(rule: &str, found: &[String]) {
    assert!(found.is_empty(), "{rule}:\n{}", found.join("\n"));
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[test]
fn no_crate_has_a_module_cycle() {
    let mut found = Vec::new();
    for m in members() {
        let modules = crate_modules(&root().join(&m).join("src"));
        for group in cycles(&module_edges(&modules)) {
            found.push(format!("{m}: {}", group.join(" <-> ")));
        }
    }
    none(
        "module cycles (move what both sides need into a lower module)",
        &found,
    );
}

/// `use pitwall_store as store;` at a crate root makes `crate::store::…` look like a module of
/// this crate: a reader cannot tell where the code lives.
#[test]
fn no_crate_path_is_an_alias_of_another_crate() {
    let crates: BTreeSet<String> = members()
        .iter()
        .filter_map(|m| package_name(m))
        .map(|p| p.replace('-', "_"))
        .collect();
    let mut found = Vec::new();
    for m in members() {
        let src = root().join(&m).join("src");
        let modules = crate_modules(&src);
        for root_file in ["lib.rs", "main.rs"] {
            let Ok(text) = std::fs::read_to_string(src.join(root_file)) else {
                continue;
            };
            let code = without_test_items(&blank_comments_and_literals(&text));
            for decl in root_imports_of(&code, &crates) {
                for name in imported_names(&decl) {
                    let used = modules.values().any(|c| names_crate_path(c, &name));
                    if used {
                        found.push(format!("{m}/src/{root_file} crate::{name}"));
                    }
                }
            }
        }
    }
    none(
        "crate-root aliases of other crates (write the other crate's path)",
        &found,
    );
}

/// Whether `code` names `crate::<name>` as a path segment.
fn names_crate_path(code: &str, name: &str) -> bool {
    let needle = format!("crate::{name}");
    code.match_indices(&needle).any(|(at, _)| {
        let after = code[at + needle.len()..].chars().next();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn package_name(member: &str) -> Option<String> {
    let text = std::fs::read_to_string(root().join(member).join("Cargo.toml")).ok()?;
    let line = text.lines().find(|l| l.trim_start().starts_with("name"))?;
    Some(line.split('"').nth(1)?.to_string())
}

#[test]
fn reqwest_is_the_one_http_client_and_only_the_forge_uses_it() {
    let mut manifests = vec![root().join("Cargo.toml")];
    manifests.extend(members().iter().map(|m| root().join(m).join("Cargo.toml")));
    for path in &manifests {
        let text = std::fs::read_to_string(path).unwrap();
        let deps: Vec<&str> = text
            .lines()
            .map(str::trim_start)
            .filter(|l| !l.starts_with('#'))
            .collect();
        for client in OTHER_HTTP_CLIENTS {
            let named = deps.iter().any(|l| {
                l.starts_with(&format!("{client} ")) || l.starts_with(&format!("{client}="))
            });
            assert!(!named, "{}: {client} (use reqwest)", relative(path));
        }
        let member = path.parent().unwrap();
        let uses_reqwest = deps.iter().any(|l| l.starts_with("reqwest"));
        let allowed = member == root() || member.ends_with("runner/forge");
        assert!(
            !uses_reqwest || allowed,
            "{}: reqwest outside runner/forge",
            relative(path)
        );
    }
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    for client in OTHER_HTTP_CLIENTS {
        assert!(
            !lock.contains(&format!("name = \"{client}\"")),
            "Cargo.lock holds {client}"
        );
    }
}

#[test]
fn no_non_test_file_is_over_500_lines() {
    let mut found = Vec::new();
    for m in product_members() {
        for (path, text, is_test) in sources(&m) {
            let lines = text.lines().count();
            if !is_test && lines > MAX_FILE_LINES {
                found.push(relative(&path));
            }
        }
    }
    none(
        "files over 500 lines (split by concern, or move the tests to x/tests.rs)",
        &found,
    );
}

#[test]
fn no_non_test_function_is_over_100_lines() {
    let mut found = Vec::new();
    for m in product_members() {
        for (path, text, is_test) in sources(&m) {
            if is_test {
                continue;
            }
            let code = without_test_items(&blank_comments_and_literals(&text));
            for f in functions(&code) {
                if f.lines > MAX_FN_LINES {
                    found.push(format!("{} {}", relative(&path), f.name));
                }
            }
        }
    }
    none("functions over 100 lines (split into named steps)", &found);
}

/// `#[path = "…"]` hides where a module lives; test modules go in `x/tests.rs`, shared test
/// support in a crate (`pitwall_e2e`).
#[test]
fn no_module_is_included_by_path() {
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = members().iter().map(|m| root().join(m)).collect();
    dirs.push(root().join("benches"));
    for dir in dirs {
        for path in rust_files(&dir) {
            if path.components().any(|c| c.as_os_str() == "target") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = blank_comments_and_literals(&text);
            if code.contains("#[path") {
                found.push(relative(&path));
            }
        }
    }
    found.sort();
    found.dedup();
    none("#[path] module includes", &found);
}
