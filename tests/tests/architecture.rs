//! The crate layout's rules, checked (docs/ARCHITECTURE.md): no crate holds more than 30% of
//! the non-test code, each crate depends only on the workspace crates its row of the table
//! allows, clap is a dependency of the binary crate only, `pitwall-reports` does not build the
//! CPU kernels, only the statistics and the analysis detect change points, and the CLI's
//! modules import each other without a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use pitwall_e2e::source_scan::{workspace_members, workspace_root};

fn root() -> PathBuf {
    workspace_root()
}

fn members() -> Vec<String> {
    workspace_members()
}

/// `.rs` files under `dir`, skipping what the counting rule leaves out.
fn counted_lines(dir: &Path, out: &mut usize) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            // A crate nested in another's folder (`stats/analysis`) is counted as itself.
            let nested_crate = path.join("Cargo.toml").exists();
            if !nested_crate
                && !["tests", "benches", "examples", "fuzz", "target"].contains(&name.as_str())
            {
                counted_lines(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            *out += std::fs::read_to_string(&path).unwrap().lines().count();
        }
    }
}

#[test]
fn no_crate_holds_more_than_30_percent_of_the_non_test_code() {
    let mut per_crate = BTreeMap::new();
    for m in members() {
        if m == "tests" {
            continue; // the end-to-end crate: all of it is under tests/
        }
        let mut n = 0;
        counted_lines(&root().join(&m), &mut n);
        per_crate.insert(m, n);
    }
    let total: usize = per_crate.values().sum();
    for (m, n) in &per_crate {
        let share = *n as f64 / total as f64;
        assert!(
            share <= 0.30,
            "{m}: {n} of {total} lines ({:.1}%)",
            share * 100.0
        );
    }
}

/// The workspace crates a member's `[dependencies]` name (`pitwall-…`).
fn workspace_dependencies(member: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join(member).join("Cargo.toml")).unwrap();
    let mut in_deps = false;
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps && line.starts_with("pitwall-") {
            let name: String = line
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-')
                .collect();
            out.insert(name);
        }
    }
    out
}

/// Each library crate depends only on the crates its row of docs/ARCHITECTURE.md allows: the
/// analysis on the schema and the statistics only, the renderers not on the use cases.
#[test]
fn crates_depend_only_on_the_crates_below_them() {
    let allowed: BTreeMap<&str, &[&str]> = BTreeMap::from([
        (
            "runner/pipeline",
            &[
                "pitwall-engine",
                "pitwall-store",
                "pitwall-host",
                "pitwall-forge",
                "pitwall-reports",
                "pitwall-analysis",
                "pitwall-formats",
                "pitwall-stats",
                "pitwall-schema",
            ][..],
        ),
        (
            "runner/engine",
            &[
                "pitwall-store",
                "pitwall-host",
                "pitwall-analysis",
                "pitwall-formats",
                "pitwall-stats",
                "pitwall-schema",
            ][..],
        ),
        (
            "runner/server",
            &[
                "pitwall-pipeline",
                "pitwall-reports",
                "pitwall-engine",
                "pitwall-store",
                "pitwall-host",
                "pitwall-analysis",
                "pitwall-stats",
                "pitwall-schema",
            ][..],
        ),
        ("runner/store", &["pitwall-schema", "pitwall-stats"][..]),
        ("runner/host", &["pitwall-schema"][..]),
        ("runner/forge", &["pitwall-store", "pitwall-schema"][..]),
        (
            "reports",
            &["pitwall-analysis", "pitwall-stats", "pitwall-schema"][..],
        ),
        ("suites/formats", &["pitwall-schema"][..]),
        ("suites/cpu", &["pitwall-rendezvous", "pitwall-schema"][..]),
        ("suites/cuda", &["pitwall-rendezvous", "pitwall-schema"][..]),
        ("suites/rendezvous", &[][..]),
        ("stats/analysis", &["pitwall-stats", "pitwall-schema"][..]),
        ("stats", &[][..]),
        ("suites/schema", &[][..]),
    ]);
    for m in members() {
        if m == "runner/cli" || m == "tests" {
            continue; // the binary may use everything; the end-to-end tests run the binary
        }
        let may = allowed
            .get(m.as_str())
            .unwrap_or_else(|| panic!("{m}: add its row to this test and to ARCHITECTURE.md"));
        for dep in workspace_dependencies(&m) {
            assert!(may.contains(&dep.as_str()), "{m} depends on {dep}");
        }
    }
}

/// Change points are found in `pitwall-stats` and turned into histories in `pitwall-analysis`
/// only: no other crate calls the detector, so `detect`, the report and the comment cannot
/// each build their own series.
#[test]
fn only_the_analysis_runs_change_point_detection() {
    fn calls_detect(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                calls_detect(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                if text.contains("changepoint")
                    && (text.contains("changepoint::detect") || text.contains("detect(&"))
                {
                    found.push(path);
                }
            }
        }
    }
    let mut found = Vec::new();
    for dir in ["runner/cli/src", "runner/pipeline/src", "reports/src"] {
        calls_detect(&root().join(dir), &mut found);
    }
    assert!(
        found.is_empty(),
        "change-point detection outside the analysis: {found:?}"
    );
}

#[test]
fn clap_is_a_dependency_of_the_binary_crate_only() {
    for m in members() {
        let text = std::fs::read_to_string(root().join(&m).join("Cargo.toml")).unwrap();
        let has = |dep: &str| text.lines().any(|l| l.trim_start().starts_with(dep));
        let binary = m == "runner/cli";
        for dep in ["clap", "indicatif", "anyhow"] {
            assert_eq!(has(dep), binary, "{m}/Cargo.toml and {dep}");
        }
    }
}

#[test]
fn reports_does_not_build_the_cpu_kernels() {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "pitwall-reports",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(root())
        .output()
        .expect("cargo tree");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    for banned in ["matrixmultiply", "pitwall-cpu", "pitwall-formats", "clap"] {
        assert!(
            !tree.contains(banned),
            "pitwall-reports depends on {banned}:\n{tree}"
        );
    }
}

#[test]
fn the_cli_modules_import_each_other_without_a_cycle() {
    let dir = root().join("runner/cli/src");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let modules: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for m in &modules {
        let text = std::fs::read_to_string(dir.join(format!("{m}.rs"))).unwrap();
        let mut to = BTreeSet::new();
        for part in text.split("super::").skip(1) {
            let names: Vec<&str> = if let Some(group) = part.strip_prefix('{') {
                group[..group.find('}').unwrap()].split(',').collect()
            } else {
                vec![part]
            };
            for n in names {
                let n: String = n
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if modules.contains(&n) {
                    to.insert(n);
                }
            }
        }
        edges.insert(m.clone(), to);
    }
    // Depth-first search for a back edge.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(m) {
            return;
        }
        assert!(
            !path.iter().any(|p| p == m),
            "module cycle: {path:?} -> {m}"
        );
        path.push(m.to_string());
        for n in &edges[m] {
            visit(n, edges, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in &modules {
        visit(m, &edges, &mut Vec::new(), &mut done);
    }
    // Commands never import each other.
    for (m, to) in &edges {
        if m.ends_with("_cmd") {
            let cmds: Vec<_> = to.iter().filter(|t| t.ends_with("_cmd")).collect();
            assert!(cmds.is_empty(), "{m} imports {cmds:?}");
        }
    }
}
