//! Which commands may create a store: `run`, `import` and `ci` create the SQLite file; the
//! commands that only read refuse a missing one (a mistyped `--store` is not an empty
//! history), every command refuses another program's SQLite file without touching it, and an
//! in-memory store is refused. `PITWALL_STORE` is named when the URL came from it.

use pitwall_e2e::Sandbox;

const TINY: &str = "[project]\nname = \"tiny\"\n\n[[suite]]\nname = \"t\"\nkind = \"command\"\nformat = \"wall-time\"\ncommand = \"true\"\nwarmup_s = 0\nmax_time_s = 0.05\nmin_samples = 5\n";

/// The read-only commands, with the arguments that make each read the store.
const READERS: &[&[&str]] = &[
    &["runs"],
    &["show", "latest"],
    &["export"],
    &["report"],
    &["compare", "--baseline", "latest", "--candidate", "latest"],
    &["compare"],
    &["detect", "--benchmark", "t"],
    &["comment", "--pr", "1", "--dry-run"],
];

#[test]
fn reading_commands_do_not_create_a_missing_store() {
    let sb = Sandbox::new();
    let missing = sb.path().join("nonexistent/dir/x.db");
    for args in READERS {
        let mut all = args.to_vec();
        all.extend(["--store", missing.to_str().unwrap()]);
        let e = sb.run(&all).expect(2).stderr();
        assert_eq!(e.lines().count(), 1, "{args:?}: one line: {e}");
        assert!(
            e.starts_with("error: ")
                && e.contains(&format!(
                    "store sqlite:{} does not exist (hint: check --store, PITWALL_STORE",
                    missing.display()
                )),
            "{args:?}: {e}"
        );
        assert!(e.contains("run `pitwall run` first"), "{args:?}: {e}");
        // The default store is not created either.
        let e = sb.run(args).expect(2).stderr();
        assert!(
            e.contains("sqlite:.pitwall/pitwall.db does not exist"),
            "{args:?}: {e}"
        );
    }
    assert!(
        !sb.path().join("nonexistent").exists(),
        "no directories made"
    );
    assert!(
        !sb.path().join(".pitwall").exists(),
        "no default store made"
    );
}

#[test]
fn writing_commands_create_the_store_and_readers_then_use_it() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", TINY);
    sb.run(&["run", "--quiet", "--no-report"]).expect(0);
    assert!(sb.db().exists());
    sb.run(&["runs"]).expect(0);
    sb.run(&["report"]).expect(0);
    let other = sb.path().join("deeper/dir/imported.db");
    let export = sb.write("runs.json", &sb.run(&["export"]).expect(0).stdout());
    sb.run(&[
        "import",
        "--quiet",
        "--store",
        other.to_str().unwrap(),
        export.to_str().unwrap(),
    ])
    .expect(0);
    assert!(other.exists(), "import creates the store it is given");
    // Two files need no store at all.
    let empty = Sandbox::new();
    let a = empty.write(
        "a.json",
        "{\"schema\":\"pitwall/v1\",\"benchmarks\":[{\"name\":\"x\",\"samples\":[1,2,3,4,5,6]}]}",
    );
    let a = a.to_str().unwrap();
    empty
        .run(&["compare", "--baseline", a, "--candidate", a])
        .expect(0);
    assert!(!empty.path().join(".pitwall").exists());
}

#[test]
fn another_programs_database_is_refused_unchanged() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", TINY);
    let foreign = sb.path().join("notes.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('keep me');")
        .unwrap();
    let before = std::fs::read(&foreign).unwrap();
    let store = foreign.to_str().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/export-v1.json");
    for args in [&["run", "--no-report"][..], &["runs"], &["import", fixture]] {
        let mut all = args.to_vec();
        all.extend(["--store", store]);
        let e = sb.run(&all).expect(2).stderr();
        assert!(
            e.contains(&format!("store sqlite:{store} is not a pitwall store"))
                && e.contains("no pitwall schema version")
                && e.contains("left unchanged"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(std::fs::read(&foreign).unwrap(), before, "not modified");
    assert!(!sb.path().join("notes.db-wal").exists());
}

#[test]
fn an_in_memory_store_is_refused() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", TINY);
    for url in [":memory:", "sqlite::memory:"] {
        let e = sb.run(&["run", "--store", url]).expect(2).stderr();
        assert!(
            e.starts_with("error: --store: invalid store url")
                && e.contains("in-memory database keeps nothing"),
            "{e}"
        );
    }
    assert!(!sb.db().exists(), "nothing measured or stored");
}

#[test]
fn pitwall_store_from_the_environment_is_named_and_empty_means_unset() {
    let sb = Sandbox::new();
    let out = sb
        .cmd(&["runs"])
        .env("PITWALL_STORE", "mysql://x")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.starts_with("error: PITWALL_STORE: invalid store url `mysql://x`: unknown scheme"),
        "{e}"
    );
    sb.write("pitwall.toml", TINY);
    let out = sb
        .cmd(&["run", "--quiet", "--no-report"])
        .env("PITWALL_STORE", "")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sb.count("runs"), 1, "stored in the default store");
}

#[test]
fn a_file_that_is_not_a_database_is_a_usage_error_and_left_unchanged() {
    let sb = Sandbox::new();
    let notes = sb.path().join("notes.txt");
    let text = "not a database\n".repeat(200);
    std::fs::write(&notes, &text).unwrap();
    let mut random = vec![0u8; 8192];
    for (i, b) in random.iter_mut().enumerate() {
        *b = (i.wrapping_mul(2_654_435_761) >> 13) as u8;
    }
    let noise = sb.path().join("noise.bin");
    std::fs::write(&noise, &random).unwrap();
    for file in [&notes, &noise] {
        for args in [&["runs"][..], &["run"][..]] {
            let mut all = args.to_vec();
            all.extend(["--store", file.to_str().unwrap()]);
            let e = sb.run(&all).expect(2).stderr();
            assert!(
                e.contains("is not a pitwall store (not a SQLite database file)"),
                "{e}"
            );
        }
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), text);
    assert_eq!(std::fs::read(&noise).unwrap(), random);
}

/// Runs `script` in a private mount namespace where `dir` is bind-mounted read-only, or `None`
/// when this machine does not allow that (not root, no user namespaces).
fn on_read_only_mount(dir: &std::path::Path, script: &str) -> Option<std::process::Output> {
    let d = dir.display();
    let full =
        format!("mount --bind '{d}' '{d}' && mount -o remount,ro,bind '{d}' || exit 97; {script}");
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &full])
        .output()
        .ok()?;
    (out.status.code() != Some(97) && !String::from_utf8_lossy(&out.stderr).contains("unshare:"))
        .then_some(out)
}

#[test]
fn reading_commands_work_on_a_read_only_store() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", TINY);
    sb.run(&["run", "--no-report"]).expect(0);
    sb.run(&["run", "--no-report"]).expect(0);
    let dir = sb.path().join(".pitwall");
    let bin = pitwall_e2e::pitwall_bin();
    let store = dir.join("pitwall.db");
    let script = format!(
        "cd '{root}' && for c in 'runs' 'show latest' 'export' 'compare --baseline latest --candidate latest' 'report --out /tmp/pw-ro-report-{pid}'; do '{bin}' --store '{store}' $c >/dev/null 2>/tmp/pw-ro-err-{pid} || {{ echo \"FAILED: $c: $(cat /tmp/pw-ro-err-{pid})\"; exit 1; }}; done; echo all-ok",
        root = sb.path().display(),
        bin = bin.display(),
        store = store.display(),
        pid = std::process::id(),
    );
    let Some(out) = on_read_only_mount(&dir, &script) else {
        println!("skipped: cannot make a read-only mount here");
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("all-ok"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing was created beside the store while it was read-only.
    let _ = std::fs::remove_dir_all(format!("/tmp/pw-ro-report-{}", std::process::id()));
}
