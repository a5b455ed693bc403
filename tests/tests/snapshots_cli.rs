//! Snapshots of what people read: `runs`, `show` (table and JSON) and `export` of a fixed,
//! imported history, so any change to the rendered output is reviewed.

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

#[test]
fn export_of_imported_fixture_is_canonical() {
    let sb = fixture_store();
    let out = sb.run(&["export"]).expect(0).stdout();
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/export-v1.json"
    ))
    .unwrap();
    // The fixture is written in canonical form, so import → export gives it back byte for byte.
    assert_eq!(out, fixture);
}

#[test]
fn ambiguous_and_missing_runs_are_usage_errors() {
    let sb = fixture_store();
    let e = sb.run(&["show", "0190"]).expect(2).stderr();
    assert!(e.contains("matches several runs"), "{e}");
    let e = sb.run(&["show", "ffffffff"]).expect(2).stderr();
    assert!(e.contains("no run matches `ffffffff`"), "{e}");
}
