//! The store under stress: export → import round-trips byte for byte, bad imports store
//! nothing, a process killed with SIGKILL mid-write leaves a valid database with no half run,
//! and two `pitwall run` processes writing at once both succeed.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use pitwall_e2e::{Sandbox, big_export};

const TINY: &str = "[project]\nname = \"tiny\"\n\n[[suite]]\nname = \"t\"\nkind = \"command\"\nformat = \"wall-time\"\ncommand = \"true\"\nwarmup_s = 0\nmax_time_s = 0.05\nmin_samples = 5\n";

#[test]
fn export_import_round_trips_byte_for_byte() {
    let a = Sandbox::new();
    a.write("pitwall.toml", TINY);
    a.run(&["run", "--quiet", "--role", "history"]).expect(0);
    a.run(&["run", "--quiet", "--role", "history"]).expect(0);
    let first = a.run(&["export"]).expect(0).stdout();
    // A measured run records the contention sampled while it ran: pitwall/v8.
    assert!(
        first.starts_with("{\n  \"schema\": \"pitwall/v8\",\n"),
        "{first:.300}"
    );
    let file = a.write("export.json", &first);

    let b = Sandbox::new();
    let out = b.run(&["import", file.to_str().unwrap()]).expect(0);
    assert!(
        out.stderr().contains("imported 2 run(s), 0 already stored"),
        "{}",
        out.stderr()
    );
    let second = b.run(&["export", "-o", "again.json"]).expect(0);
    assert_eq!(second.stdout(), "");
    let again = std::fs::read_to_string(b.path().join("again.json")).unwrap();
    assert_eq!(
        again, first,
        "export → import → export must be byte-identical"
    );
    // Importing again is idempotent.
    let out = b.run(&["import", file.to_str().unwrap()]).expect(0);
    assert!(
        out.stderr().contains("imported 0 run(s), 2 already stored"),
        "{}",
        out.stderr()
    );
    assert_eq!(b.count("runs"), 2);
}

#[test]
fn garbage_imports_store_nothing() {
    let sb = Sandbox::new();
    let good = {
        let a = Sandbox::new();
        a.write("pitwall.toml", TINY);
        a.run(&["run", "--quiet"]).expect(0);
        a.run(&["export"]).expect(0).stdout()
    };
    let good_file = sb.write("good.json", &good);
    let truncated = sb.write("truncated.json", &good[..good.len() / 2]);
    let e = sb
        .run(&[
            "import",
            good_file.to_str().unwrap(),
            truncated.to_str().unwrap(),
        ])
        .expect(2)
        .stderr();
    assert!(
        e.contains("truncated.json: cannot read results: not a valid pitwall export")
            && e.contains("line"),
        "{e}"
    );
    assert!(
        !sb.db().exists() || sb.count("runs") == 0,
        "nothing stored when any file is bad"
    );
    let nan = sb.write(
        "nan.json",
        &good.replacen("\"samples\": [", "\"samples\": [-1e999, ", 1),
    );
    sb.run(&["import", nan.to_str().unwrap()]).expect(2);
    let wrong = sb.write("other.json", "{\"schema\": \"pitwall/v9\", \"runs\": []}");
    let e = sb
        .run(&["import", wrong.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(
        e.contains(
            "unsupported schema `pitwall/v9` (this pitwall reads `pitwall/v1`, `pitwall/v2`, `pitwall/v3`, `pitwall/v4`, `pitwall/v5`, `pitwall/v6`, `pitwall/v7` and `pitwall/v8`)"
        ),
        "{e}"
    );
    // Replicates are new in v2: a v1 document that has them is refused, naming the line.
    let v2 = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/export-v2.json"
    ))
    .unwrap();
    let v1_with_replicates = sb.write(
        "v1-replicates.json",
        &v2.replace("\"schema\": \"pitwall/v2\"", "\"schema\": \"pitwall/v1\""),
    );
    let e = sb
        .run(&["import", v1_with_replicates.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(
        e.contains("not valid JSON for schema pitwall/v1 at line 50, column ")
            && e.contains("unknown field `replicates` in schema pitwall/v1"),
        "{e}"
    );
    assert!(
        !sb.db().exists() || sb.count("runs") == 0,
        "nothing stored when any file is bad"
    );
}

/// An import that would fail part-way stores nothing: an id twice with different content in
/// the input, an id already stored with different content, a timestamp that is not RFC 3339
/// UTC, a status that contradicts the results.
#[test]
fn conflicting_or_inconsistent_imports_store_nothing() {
    let src = Sandbox::new();
    src.write("pitwall.toml", TINY);
    src.run(&["run", "--quiet"]).expect(0);
    src.run(&["run", "--quiet"]).expect(0);
    let export = src.run(&["export"]).expect(0).stdout();
    let doc: serde_json::Value = serde_json::from_str(&export).unwrap();
    let (id0, id1) = (
        doc["runs"][0]["id"].as_str().unwrap().to_string(),
        doc["runs"][1]["id"].as_str().unwrap().to_string(),
    );
    let sb = Sandbox::new();
    let runs_in = |sb: &Sandbox| -> usize {
        sb.run(&["runs", "--format", "json"])
            .expect(0)
            .json()
            .as_array()
            .map_or(0, Vec::len)
    };
    sb.write("pitwall.toml", TINY);
    sb.run(&["run", "--quiet"]).expect(0); // one run of its own, which must stay alone

    // The second run's id reused for a different run within one file.
    let clash = sb.write("clash.json", &export.replace(&id1, &id0));
    let e = sb
        .run(&["import", clash.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(
        e.contains("appears again with different content") && e.contains("clash.json"),
        "{e}"
    );
    assert_eq!(runs_in(&sb), 1, "nothing imported");

    // A good file first, then one whose run is already stored with other content.
    let good = sb.write("good.json", &export);
    sb.run(&["import", "--quiet", good.to_str().unwrap()])
        .expect(0);
    assert_eq!(runs_in(&sb), 3);
    let other = Sandbox::new();
    other.write("pitwall.toml", TINY);
    other.run(&["run", "--quiet"]).expect(0);
    let fresh = other.run(&["export"]).expect(0).stdout();
    let fresh_file = sb.write("fresh.json", &fresh);
    let changed = sb.write(
        "changed.json",
        &export.replacen("\"config_hash\": \"", "\"config_hash\": \"x", 1),
    );
    let e = sb
        .run(&[
            "import",
            fresh_file.to_str().unwrap(),
            changed.to_str().unwrap(),
        ])
        .expect(2)
        .stderr();
    assert!(
        e.contains("already stored in") && e.contains("changed.json"),
        "{e}"
    );
    assert_eq!(runs_in(&sb), 3, "fresh.json was not imported either");

    // Timestamps and statuses are checked.
    let yesterday = sb.write(
        "yesterday.json",
        &fresh.replacen("\"started_at\": \"", "\"started_at\": \"yesterday", 1),
    );
    let e = sb
        .run(&["import", yesterday.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(e.contains("is not an RFC 3339 UTC time"), "{e}");
    let lying = sb.write(
        "lying.json",
        &fresh.replacen("\"status\": \"complete\"", "\"status\": \"partial\"", 1),
    );
    let e = sb
        .run(&["import", lying.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(e.contains("does not match its results"), "{e}");
    assert_eq!(runs_in(&sb), 3);
}

#[test]
fn sigkill_mid_write_leaves_a_valid_store_without_half_runs() {
    let sb = Sandbox::new();
    // One run already stored must survive.
    sb.write("pitwall.toml", TINY);
    sb.run(&["run", "--quiet"]).expect(0);
    let file = sb.write(
        "big.json",
        &big_export("01900000-0000-7000-8000-00000000beef", 2, 200_000),
    );

    let mut child = sb
        .cmd(&["import", file.to_str().unwrap()])
        .env("PITWALL_FAULT_PAUSE_IN_TXN_MS", "30000")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines.next().expect("hook line").unwrap();
    assert!(
        line.contains("pausing 30000 ms inside the transaction"),
        "{line}"
    );
    // The process is now inside the write transaction with every row written but uncommitted.
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success());

    let conn = sb.sqlite();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    assert_eq!(sb.count("runs"), 1, "only the earlier run");
    let orphans: i64 = conn
        .query_row(
            "SELECT count(*) FROM samples WHERE result_id NOT IN (SELECT id FROM results)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
    drop(conn);
    let runs = sb.run(&["runs", "--format", "json"]).expect(0).json();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    // The same import now succeeds whole.
    sb.run(&["import", "--quiet", file.to_str().unwrap()])
        .expect(0);
    assert_eq!(sb.count("runs"), 2);
    assert_eq!(
        sb.count("samples") as usize,
        400_000
            + sb.run(&["export"]).expect(0).json()["runs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["project"] == "tiny")
                .map(|r| r["results"][0]["samples"].as_array().unwrap().len())
                .sum::<usize>()
    );
}

#[test]
fn two_concurrent_runs_are_both_stored() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", TINY);
    // Both processes start together and commit while the other holds the database.
    sb.run_concurrently(2, &["run", "--quiet"]);
    // And two imports of big runs at once (long write transactions) also both land.
    let f1 = sb.write(
        "a.json",
        &big_export("01900000-0000-7000-8000-0000000000a1", 2, 200_000),
    );
    let f2 = sb.write(
        "b.json",
        &big_export("01900000-0000-7000-8000-0000000000b2", 2, 200_000),
    );
    let imports: Vec<_> = [f1, f2]
        .iter()
        .map(|f| {
            sb.cmd(&["import", "--quiet", f.to_str().unwrap()])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in imports {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(sb.count("runs"), 4);
}
