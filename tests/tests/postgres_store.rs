//! The PostgreSQL store through the real binary (`--store postgres://…` / `PITWALL_STORE`), on
//! a real server (`pitwall_e2e::pg_server`), one database per test: the main job, listing,
//! export → import into SQLite and back byte for byte, the report; a SIGKILL mid-write leaves
//! no half run; two processes writing at once both land; an unreachable server is one clear
//! line and exit 3.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use pitwall_e2e::{Sandbox, big_export, pg_server};
use serde_json::Value;

const FIXED: &str = r#"[project]
name = "shared"

[[suite]]
name = "s"
kind = "command"
command = '''printf '{"schema":"pitwall/v1","benchmarks":[{"name":"parse","params":{"n":64},"samples":[5.25,-0.0,6.5,5.75]}]}' '''
"#;

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn runs_are_stored_listed_exported_and_reported_from_postgres() {
    let Some(server) = pg_server() else {
        return;
    };
    let db = server.database();
    let sb = Sandbox::new();
    sb.write("pitwall.toml", FIXED);
    let with = |args: &[&str]| -> Vec<String> {
        ["--store", db.url.as_str()]
            .iter()
            .chain(args)
            .map(|s| s.to_string())
            .collect()
    };
    // A PostgreSQL store has no directory of its own for the report: one must be named,
    // and that is checked before measuring.
    let e = sb.run(&refs(&with(&["run"]))).expect(2).stderr();
    assert!(e.contains("has no directory for the HTML report"), "{e}");
    let out = sb
        .run(&refs(&with(&["run", "--report-dir", "pg-run-report"])))
        .expect(0);
    let stderr = out.stderr();
    assert!(
        stderr.contains("stored run ") && stderr.contains("postgres://postgres@127.0.0.1:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("report: pg-run-report/index.html"),
        "{stderr}"
    );
    assert!(
        !sb.path().join(".pitwall/pitwall.db").exists(),
        "nothing went to SQLite"
    );
    // PITWALL_STORE works as well as the flag.
    let second = sb
        .cmd(&["run", "--quiet", "--no-report"])
        .env("PITWALL_STORE", &db.url)
        .output()
        .unwrap();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let runs = sb
        .run(&refs(&with(&["runs", "--format", "json"])))
        .expect(0)
        .json();
    assert_eq!(runs.as_array().unwrap().len(), 2);
    let shown = sb.run(&refs(&with(&["show", "latest"]))).expect(0).stdout();
    assert!(shown.contains("parse[n=64]"), "{shown}");
    // Identical samples: unchanged, exit 0.
    let (a, b) = (
        runs[1]["id"].as_str().unwrap(),
        runs[0]["id"].as_str().unwrap(),
    );
    sb.run(&refs(&with(&[
        "compare",
        "--baseline",
        a,
        "--candidate",
        b,
    ])))
    .expect(0);

    // Export from PostgreSQL, import into SQLite, export again: byte for byte (-0.0 included).
    let exported = sb.run(&refs(&with(&["export"]))).expect(0).stdout();
    let doc: Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(
        doc["runs"][0]["results"][0]["samples"][1].to_string(),
        "-0.0"
    );
    let file = sb.write("from-pg.json", &exported);
    sb.run(&["import", "--quiet", file.to_str().unwrap()])
        .expect(0);
    assert_eq!(sb.run(&["export"]).expect(0).stdout(), exported);
    // …and into a second PostgreSQL database, and the report renders from it.
    let other = server.database();
    sb.run(&[
        "--store",
        &other.url,
        "import",
        "--quiet",
        file.to_str().unwrap(),
    ])
    .expect(0);
    assert_eq!(
        sb.run(&["--store", &other.url, "export"])
            .expect(0)
            .stdout(),
        exported
    );
    sb.run(&["--store", &other.url, "report", "--out", "pg-report"])
        .expect(0);
    assert!(sb.path().join("pg-report/index.html").exists());
}

/// Every sample stored: rows of before schema step 18 and the values of the sets since.
const SAMPLES_STORED: &str = "SELECT (SELECT count(*) FROM samples)
     + (SELECT coalesce(sum(cardinality(vals)), 0)::bigint FROM sample_sets)";

#[test]
fn sigkill_mid_write_leaves_no_half_run_in_postgres() {
    let Some(server) = pg_server() else {
        return;
    };
    let db = server.database();
    let sb = Sandbox::new();
    let doc = big_export("01900000-0000-7000-8000-00000000beef", 1, 50_000);
    let file = sb.write("big.json", &doc);
    let mut child = sb
        .cmd(&["--store", &db.url, "import", file.to_str().unwrap()])
        .env("PITWALL_FAULT_PAUSE_IN_TXN_MS", "30000")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let line = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .next()
        .expect("hook line")
        .unwrap();
    assert!(
        line.contains("pausing 30000 ms inside the transaction"),
        "{line}"
    );
    child.kill().unwrap(); // SIGKILL: the server sees the connection drop and rolls back
    assert!(!child.wait().unwrap().success());
    let mut c = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    // The backend notices the dead client shortly after; until then its rows are invisible.
    loop {
        let n: i64 = c.query_one(SAMPLES_STORED, &[]).unwrap().get(0);
        let runs: i64 = c
            .query_one("SELECT count(*) FROM runs", &[])
            .unwrap()
            .get(0);
        assert_eq!((runs, n), (0, 0), "no half run visible");
        let busy: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pitwall'",
                &[],
            )
            .unwrap()
            .get(0);
        if busy == 0 || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    sb.run(&[
        "--store",
        &db.url,
        "import",
        "--quiet",
        file.to_str().unwrap(),
    ])
    .expect(0);
    let n: i64 = c.query_one(SAMPLES_STORED, &[]).unwrap().get(0);
    assert_eq!(n, 50_000);
}

#[test]
fn two_processes_writing_at_once_both_land() {
    let Some(server) = pg_server() else {
        return;
    };
    let db = server.database();
    let sb = Sandbox::new();
    sb.write("pitwall.toml", FIXED);
    sb.run_concurrently(3, &["--store", &db.url, "run", "--quiet", "--no-report"]);
    let runs = sb
        .run(&["--store", &db.url, "runs", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(runs.as_array().unwrap().len(), 3);
}

#[test]
fn an_unreachable_server_is_one_clear_line_and_exit_3() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sb = Sandbox::new();
    let url = format!("postgres://bob:secret@127.0.0.1:{port}/pw");
    let out = sb.run(&["--store", &url, "runs"]).expect(3);
    let err = out.stderr();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("postgres://bob:***@127.0.0.1:{port}/pw")),
        "{err}"
    );
    assert!(!err.contains("secret"), "{err}");
}
