//! Snapshots of what people read: `runs`, `show` (table and JSON) and `export` of a fixed,
//! imported history (the v1 and v2 export fixtures), so any change to the rendered output is
//! reviewed.

use pitwall_e2e::Sandbox;

fn fixture_store() -> Sandbox {
    let sb = Sandbox::new();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/export-v1.json");
    sb.run(&["import", "--quiet", fixture]).expect(0);
    sb
}

#[test]
fn runs_table() {
    let sb = fixture_store();
    insta::assert_snapshot!(sb.run(&["runs"]).expect(0).stdout());
}

#[test]
fn show_table_and_json() {
    let sb = fixture_store();
    insta::assert_snapshot!(
        "show_partial_table",
        sb.run(&["show", "01900000-0000-7000-8000-000000000002"])
            .expect(0)
            .stdout()
    );
    insta::assert_snapshot!(
        "show_first_table",
        sb.run(&["show", "01900000-0000-7000-8000-000000000001"])
            .expect(0)
            .stdout()
    );
    insta::assert_snapshot!(
        "show_latest_json",
        sb.run(&["show", "latest", "--format", "json"])
            .expect(0)
            .stdout()
    );
}

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// `doc` as this pitwall exports it after importing it: tagged `pitwall/v3`, each run with the
/// labels it implies (the fixtures' runs are no pairs, on a host `runner-1` without a GPU).
fn with_implied_labels(doc: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(doc).unwrap();
    v["schema"] = "pitwall/v3".into();
    for run in v["runs"].as_array_mut().unwrap() {
        assert_eq!(run["fingerprint"]["hostname"], "runner-1");
        assert!(run.get("pair").is_none() && run.get("testbed").is_none());
        run["testbed"] = "cpu-runner-1".into();
        run["role"] = "history".into();
    }
    v
}

#[test]
fn export_of_imported_fixture_is_canonical() {
    // The fixtures are written in canonical form, so import → export gives a v2 document back
    // as v3 with only the labels each run implies added, replicates included; and a v3
    // document comes back byte for byte.
    let sb = Sandbox::new();
    let v2 = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/export-v2.json");
    sb.run(&["import", "--quiet", v2]).expect(0);
    let out = sb.run(&["export"]).expect(0).stdout();
    assert!(out.contains("\"replicates\": ["), "{out}");
    assert!(
        out.starts_with("{\n  \"schema\": \"pitwall/v3\",\n"),
        "{out}"
    );
    let back: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(back, with_implied_labels(&fixture_text("export-v2.json")));
    let again = Sandbox::new();
    let v3 = again.write("v3.json", &out);
    again
        .run(&["import", "--quiet", v3.to_str().unwrap()])
        .expect(0);
    assert_eq!(again.run(&["export"]).expect(0).stdout(), out);
    // A v1 document (no replicates) comes back the same way.
    let out = fixture_store().run(&["export"]).expect(0).stdout();
    let v1 = fixture_text("export-v1.json");
    assert!(v1.contains("\"schema\": \"pitwall/v1\""));
    let back: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(back, with_implied_labels(&v1));
}

#[test]
fn ambiguous_and_missing_runs_are_usage_errors() {
    let sb = fixture_store();
    let e = sb.run(&["show", "0190"]).expect(2).stderr();
    assert!(e.contains("matches several runs"), "{e}");
    let e = sb.run(&["show", "ffffffff"]).expect(2).stderr();
    assert!(e.contains("no run matches `ffffffff`"), "{e}");
}
