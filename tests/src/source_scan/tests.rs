//! The source reader on small made-up crates: what each architecture rule sees.

use super::*;

fn modules(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(m, code)| {
            (
                m.to_string(),
                without_test_items(&blank_comments_and_literals(code)),
            )
        })
        .collect()
}

#[test]
fn comments_and_literals_are_blanked_but_lines_kept() {
    let code =
        "let a = \"crate::x { \"; // crate::y {\nlet c = '{'; /* crate::z\n */ let r = r#\"}\"#;\n";
    let out = blank_comments_and_literals(code);
    assert_eq!(out.lines().count(), code.lines().count());
    assert!(
        !out.contains("crate::") && !out.contains('{') && !out.contains('}'),
        "{out}"
    );
    assert!(out.contains("let a =") && out.contains("let r ="));
    // A lifetime is not a character literal.
    let out = blank_comments_and_literals("fn f<'a>(x: &'a str) -> &'a str { x }");
    assert!(out.contains("{ x }"), "{out}");
}

#[test]
fn test_items_are_left_out() {
    let code = "fn kept() {}\n#[cfg(test)]\nmod tests {\n    fn gone() { crate::a::b(); }\n}\n#[cfg(test)]\nmod more;\n";
    let out = without_test_items(&blank_comments_and_literals(code));
    assert!(
        out.contains("fn kept") && !out.contains("gone") && !out.contains("more"),
        "{out}"
    );
}

#[test]
fn a_test_like_name_is_test_code_only_when_declared_so() {
    let root = PathBuf::from("src");
    let files = BTreeMap::from([
        (
            root.join("lib.rs"),
            "mod nccl_tests;\n#[cfg(test)]\nmod lib_tests;\n".to_string(),
        ),
        (root.join("nccl_tests.rs"), String::new()),
        (root.join("lib_tests.rs"), String::new()),
        (root.join("a/tests.rs"), String::new()),
        (root.join("a.rs"), "#[cfg(test)] mod tests;".to_string()),
    ]);
    assert!(!is_test_module(&root.join("nccl_tests.rs"), &files));
    assert!(is_test_module(&root.join("lib_tests.rs"), &files));
    assert!(is_test_module(&root.join("a/tests.rs"), &files));
    assert!(!is_test_module(&root.join("a.rs"), &files));
}

#[test]
fn functions_are_measured_from_fn_to_their_closing_brace() {
    let code = "trait T { fn decl(&self); }\nfn short() { 1; }\n\npub fn long(\n    x: u8,\n) -> u8 {\n    let f: fn(u8) = drop;\n    x\n}\n";
    let fns = functions(&blank_comments_and_literals(code));
    let got: Vec<(&str, usize, usize)> = fns
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines))
        .collect();
    assert_eq!(got, [("short", 2, 1), ("long", 4, 6)]);
}

#[test]
fn cycles_between_peers_are_found_and_nesting_is_not_a_cycle() {
    let m = modules(&[
        ("", "mod a; mod b; mod c; mod d;"),
        ("a", "use crate::b::Thing; mod inner;"),
        ("a::inner", "use super::super::c; use crate::a::X;"),
        ("b", "use crate::{c::Y, d};"),
        ("c", "fn f() { crate::a::inner::g(); }"),
        ("d", "use super::a; // crate::b\n"),
    ]);
    let edges = module_edges(&m);
    assert_eq!(edges["a::inner"], BTreeSet::from(["c".to_string()]));
    assert_eq!(
        edges["b"],
        BTreeSet::from(["c".to_string(), "d".to_string()])
    );
    assert_eq!(edges["d"], BTreeSet::from(["a".to_string()]));
    let mut found = cycles(&edges);
    found.sort();
    // c -> a::inner -> c between peers; a -> b -> d -> a as well. `a::inner` naming `crate::a`
    // is nesting, not an edge.
    assert_eq!(
        found,
        vec![
            vec!["a".to_string(), "b".to_string(), "d".to_string()],
            vec!["a::inner".to_string(), "c".to_string()],
        ]
    );
    let acyclic = modules(&[("", ""), ("a", "use crate::b;"), ("b", "")]);
    assert!(cycles(&module_edges(&acyclic)).is_empty());
}

#[test]
fn root_imports_of_workspace_crates_are_listed() {
    let crates = BTreeSet::from(["pitwall_schema".to_string(), "pitwall_store".to_string()]);
    let code = "use pitwall_schema as schema;\npub use pitwall_store::{Store, rows};\nuse std::fmt;\nmod m {\n    use pitwall_schema::X;\n}\n";
    assert_eq!(
        root_imports_of(code, &crates),
        [
            "use pitwall_schema as schema;",
            "pub use pitwall_store::{Store, rows};"
        ]
    );
    assert_eq!(imported_names("use pitwall_schema as schema;"), ["schema"]);
    assert_eq!(
        imported_names("pub use pitwall_store::{Store, rows as r};"),
        ["Store", "r"]
    );
    assert_eq!(imported_names("use pitwall_store::prune;"), ["prune"]);
}
