//! `pitwall serve` end to end (issue 29): the real binary serving a real store, runners
//! uploading history runs with a token, alerts detected by the server in the background,
//! reads and triage through the API, tokens made, refused and revoked with `pitwall token`,
//! the limits (413, 429), `[serve] public_read`, the access log (no secret in it), a
//! graceful SIGTERM (also while an upload is being stored), and imports that go up in batch
//! uploads. On SQLite, and on PostgreSQL where a server is available.

use std::path::Path;
use std::time::{Duration, Instant};

use pitwall_e2e::serve::Server;
use pitwall_e2e::{Sandbox, git, pg_server};
use serde_json::{Value, json};

/// Deterministic noise in [-1, 1).
fn noise(i: usize, salt: usize) -> f64 {
    let x = ((i * 7919 + salt * 104_729) % 1000) as f64 / 500.0;
    x - 1.0
}

fn result_file(sb: &Sandbox, name: &str, level: f64, salt: usize) -> String {
    let samples: Vec<f64> = (0..15)
        .map(|i| level * (1.0 + 0.01 * noise(i, salt)))
        .collect();
    let doc =
        json!({"schema": "pitwall/v1", "benchmarks": [{"name": "parse", "samples": samples}]});
    sb.write(name, &doc.to_string())
        .to_str()
        .unwrap()
        .to_string()
}

fn commit(dir: &Path, n: usize) -> String {
    std::fs::write(dir.join("src.txt"), format!("change {n}\n")).unwrap();
    git(dir, &["add", "src.txt"]);
    git(dir, &["commit", "-q", "-m", &format!("change {n}")]);
    git(dir, &["rev-parse", "HEAD"])
}

/// `pitwall token create` against `store`: the secret.
fn token(sb: &Sandbox, store: &str, role: &str, name: &str) -> String {
    let out = sb
        .run(&[
            "--store", store, "token", "create", "--role", role, "--name", name,
        ])
        .expect(0)
        .stdout();
    let secret = out.trim().to_string();
    assert!(secret.starts_with("pw_") && secret.len() == 67, "{out}");
    secret
}

/// Twelve history runs of `parse` on main, a +8% step at the seventh commit, measured into
/// the runner's own store and exported: what a runner uploads. The commits, and the runs.
fn runner_history(sb: &Sandbox) -> (Vec<String>, Vec<Value>) {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let shas: Vec<String> = (0..12).map(|n| commit(dir, n)).collect();
    let local = "sqlite:runner.db";
    for (i, sha) in shas.iter().enumerate() {
        let level = if i < 6 { 1000.0 } else { 1080.0 };
        let f = result_file(sb, &format!("r{i}.json"), level, i);
        sb.run(&[
            "--store",
            local,
            "import",
            "--quiet",
            &f,
            "--commit",
            sha,
            "--branch",
            "main",
            "--testbed",
            "h200-a",
        ])
        .expect(0);
    }
    let out = sb.run(&["--store", local, "export"]).expect(0).stdout();
    let doc: Value = serde_json::from_str(&out).unwrap();
    (shas, doc["runs"].as_array().unwrap().clone())
}

fn upload(run: &Value) -> String {
    json!({"run": run, "alerts": {"threshold_pct": 2.0, "history_branch": "main"}}).to_string()
}

/// Polls the alerts until `pred` holds (detection runs in the background), at most 60 s.
fn alerts_until(s: &Server, token: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let r = s.get("/api/v1/p/shop/alerts", Some(token));
        assert_eq!(r.status, 200, "{}", r.body);
        let all = r.json().as_array().unwrap().clone();
        if pred(&all) || Instant::now() > until {
            return all;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Uploads, reads, detection and triage against the store `store` names.
fn scenario(sb: &Sandbox, store: &str) {
    // The runner's project is named after its directory; the server serves it as `shop`.
    let (shas, runs) = runner_history(sb);
    let runs: Vec<Value> = runs
        .into_iter()
        .map(|mut r| {
            r["project"] = json!("shop");
            r
        })
        .collect();
    let runner = token(sb, store, "runner", "gpu-runner-07");
    let reader = token(sb, store, "read", "dashboard");
    let triager = token(sb, store, "triage", "alice");
    let s = Server::start(sb, &["--store", store]);

    // Uploads: 201 stored, 200 for the same run again (idempotent), 400 for the wrong
    // project, 403 for a reader.
    for run in &runs {
        let r = s.post("/api/v1/p/shop/runs", Some(&runner), &upload(run));
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.json()["stored"], true);
    }
    let again = s.post("/api/v1/p/shop/runs", Some(&runner), &upload(&runs[0]));
    assert_eq!(
        (again.status, again.json()["stored"].clone()),
        (200, json!(false))
    );
    let elsewhere = s.post("/api/v1/p/other/runs", Some(&runner), &upload(&runs[0]));
    assert_eq!(elsewhere.status, 400, "{}", elsewhere.body);
    assert!(
        elsewhere.body.contains("is of project `shop`"),
        "{}",
        elsewhere.body
    );
    let by_reader = s.post("/api/v1/p/shop/runs", Some(&reader), &upload(&runs[0]));
    assert_eq!(by_reader.status, 403, "{}", by_reader.body);
    let mut changed = runs[1].clone();
    changed["results"][0]["samples"][0] = json!(1.0);
    let conflict = s.post("/api/v1/p/shop/runs", Some(&runner), &upload(&changed));
    assert_eq!(conflict.status, 409, "{}", conflict.body);

    // Reads.
    let listed = s.get("/api/v1/p/shop/runs?limit=5", Some(&reader));
    assert_eq!(listed.status, 200);
    assert_eq!(listed.json().as_array().unwrap().len(), 5);
    let all = s.get("/api/v1/p/shop/runs", Some(&reader)).json();
    assert_eq!(all.as_array().unwrap().len(), 12);
    assert_eq!(
        s.get("/api/v1/p/other/runs", Some(&reader)).json(),
        json!([])
    );
    let id = runs[3]["id"].as_str().unwrap();
    let one = s.get(&format!("/api/v1/p/shop/runs/{id}"), Some(&reader));
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(one.json()["results"], runs[3]["results"]);
    assert_eq!(
        s.get(&format!("/api/v1/p/other/runs/{id}"), Some(&reader))
            .status,
        404
    );
    assert_eq!(
        s.get("/api/v1/p/shop/runs/latest", Some(&reader)).status,
        404
    );

    // The series: one point per commit in commit order, the step at the seventh commit.
    let key = runs[0]["results"][0]["suite"].as_str().unwrap().to_string() + "/parse";
    let series = s.get(
        &format!("/api/v1/p/shop/series?key={key}/time"),
        Some(&reader),
    );
    assert_eq!(series.status, 200, "{}", series.body);
    let series = series.json();
    let one = &series.as_array().unwrap()[0];
    let commits: Vec<&str> = one["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["commit"].as_str().unwrap())
        .collect();
    assert_eq!(commits, shas.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(one["changes"][0]["commit"], shas[6].as_str(), "{one}");

    // Detection ran on the server: exactly one alert, at the step.
    let alerts = alerts_until(&s, &reader, |a| !a.is_empty());
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let a = &alerts[0];
    assert_eq!(
        (a["first_bad"].as_str(), a["status"].as_str()),
        (Some(shas[6].as_str()), Some("active")),
        "{a}"
    );
    let alert = format!("/api/v1/p/shop/alerts/{}", a["id"].as_str().unwrap());

    // Triage: a triager may, a runner may not; a bad status is 400.
    let ack = json!({"status": "acknowledged", "note": "known: bigger input"}).to_string();
    assert_eq!(s.post(&alert, Some(&runner), &ack).status, 403);
    let bad = s.post(&alert, Some(&triager), r#"{"status": "gone"}"#);
    assert_eq!(bad.status, 400, "{}", bad.body);
    let done = s.post(&alert, Some(&triager), &ack);
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.json()["status"], "acknowledged");
    let kept = s.get("/api/v1/p/shop/alerts?status=acknowledged", Some(&reader));
    assert_eq!(kept.json()[0]["note"], "known: bigger input");
    // The change is recorded with the token's name, whatever the body claims.
    let claim = json!({"status": "fixed", "by": "mallory"}).to_string();
    assert_eq!(
        s.post(&alert, Some(&triager), &claim).status,
        400,
        "unknown field"
    );
    let one = s.get(&alert, Some(&reader)).json();
    assert_eq!(one["alert"]["status"], "acknowledged", "{one}");
    let changes = one["changes"].as_array().unwrap();
    // Detection promoted it from suspected as runs arrived; then alice acknowledged it.
    let person = changes.last().unwrap();
    assert_eq!(
        (
            &person["by"],
            &person["from"],
            &person["to"],
            &person["note"]
        ),
        (
            &json!("alice"),
            &json!("active"),
            &json!("acknowledged"),
            &json!("known: bigger input")
        ),
        "{one}"
    );
    assert!(
        changes[..changes.len() - 1]
            .iter()
            .all(|c| c["by"] == "detection"),
        "{one}"
    );
    assert_eq!(
        s.get("/api/v1/p/shop/alerts/nope", Some(&reader)).status,
        404
    );

    // The access log: one JSON line per request, named by token, never a secret.
    let lines = s.lines();
    let requests: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == "request")
        .collect();
    assert!(requests.len() >= 20, "{lines:?}");
    assert!(
        requests
            .iter()
            .any(|v| v["token"] == "gpu-runner-07" && v["status"] == 201)
    );
    assert!(
        requests
            .iter()
            .any(|v| v["token"] == "dashboard" && v["status"] == 403)
    );
    for secret in [&runner, &reader, &triager] {
        assert!(
            lines.iter().all(|l| !l.contains(secret.as_str())),
            "a secret was logged"
        );
    }
}

#[test]
fn runners_upload_the_server_detects_and_people_read_and_triage() {
    let sb = Sandbox::new();
    let store = format!("sqlite:{}", sb.path().join("server.db").display());
    scenario(&sb, &store);
}

#[test]
fn the_same_on_postgresql() {
    let Some(server) = pg_server() else {
        return;
    };
    let db = server.database();
    let sb = Sandbox::new();
    scenario(&sb, &db.url);
}

#[test]
fn tokens_are_refused_when_missing_unknown_or_revoked_and_reads_can_be_public() {
    let sb = Sandbox::new();
    let store = format!("sqlite:{}", sb.path().join("server.db").display());
    let reader = token(&sb, &store, "read", "dashboard");
    let s = Server::start(&sb, &["--store", &store]);
    assert_eq!(s.get("/healthz", None).status, 200);
    let none = s.get("/api/v1/p/shop/runs", None);
    assert_eq!(none.status, 401, "{}", none.body);
    assert!(none.json()["error"].as_str().unwrap().contains("token"));
    assert_eq!(
        s.get("/api/v1/p/shop/runs", Some("pw_nonsense")).status,
        401
    );
    assert_eq!(s.get("/api/v1/p/shop/runs", Some(&reader)).status, 200);
    assert_eq!(s.get("/api/v1/p/shop/nothing", Some(&reader)).status, 404);
    // Revoked: refused once the server's token cache (one second) has expired.
    sb.run(&["--store", &store, "token", "revoke", "dashboard"])
        .expect(0);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(s.get("/api/v1/p/shop/runs", Some(&reader)).status, 401);
    let listed = sb
        .run(&["--store", &store, "token", "list", "--format", "json"])
        .expect(0)
        .stdout();
    assert!(
        !listed.contains(&reader) && !listed.contains("secret"),
        "{listed}"
    );
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["state"], "revoked");
    drop(s);

    // `[serve] public_read`: reads need no token, but a bad token is still refused and
    // uploads still need a runner's.
    sb.write("pitwall.toml", "[serve]\npublic_read = true\n");
    let s = Server::start(&sb, &["--store", &store]);
    assert_eq!(s.get("/api/v1/p/shop/runs", None).status, 200);
    assert_eq!(
        s.get("/api/v1/p/shop/runs", Some("pw_nonsense")).status,
        401
    );
    assert_eq!(s.post("/api/v1/p/shop/runs", None, "{}").status, 401);
}

#[test]
fn bodies_over_the_limit_are_413_and_a_token_uploading_too_often_429() {
    let sb = Sandbox::new();
    let store = format!("sqlite:{}", sb.path().join("server.db").display());
    let runner = token(&sb, &store, "runner", "busy");
    let s = Server::start(&sb, &["--store", &store]);
    let huge = vec![b' '; (64 << 20) + 1];
    // Without a token the body is not read: 401. With one, 413.
    let r = s.request("POST", "/api/v1/p/shop/runs", None, &huge);
    assert_eq!(r.status, 401, "{}", r.body);
    let r = s.request("POST", "/api/v1/p/shop/runs", Some(&runner), &huge);
    assert_eq!(r.status, 413, "{}", r.body);
    // 60 uploads a minute per token (the one above counted): bad bodies count too.
    let mut statuses = Vec::new();
    for _ in 0..60 {
        statuses.push(s.post("/api/v1/p/shop/runs", Some(&runner), "{}").status);
    }
    assert!(statuses[..59].iter().all(|&c| c == 400), "{statuses:?}");
    assert_eq!(statuses[59], 429, "{statuses:?}");
    assert!(
        s.post("/api/v1/p/shop/runs", Some(&runner), "{}")
            .body
            .contains("last minute")
    );
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let sb = Sandbox::new();
    let store = format!("sqlite:{}", sb.path().join("server.db").display());
    let mut s = Server::start(&sb, &["--store", &store]);
    assert_eq!(s.get("/healthz", None).status, 200);
    let status = s
        .terminate(Duration::from_secs(20))
        .expect("exits after SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(
        s.lines()
            .iter()
            .any(|l| l.contains(r#""event":"shutdown""#)),
        "{:?}",
        s.lines()
    );
}

/// SIGTERM while an upload is in its transaction: the upload finishes and is answered, the
/// run is stored whole, and the server exits 0 without taking new requests.
#[test]
fn sigterm_during_an_upload_lets_it_finish_whole() {
    let sb = Sandbox::new();
    let (_, runs) = runner_history(&sb);
    let db = sb.path().join("server.db");
    let store = format!("sqlite:{}", db.display());
    let secret = token(&sb, &store, "runner", "late");
    let mut s = Server::start_with_env(
        &sb,
        &["--store", &store],
        &[("PITWALL_FAULT_PAUSE_IN_TXN_MS", "1500")],
    );
    let mut run = runs[0].clone();
    run["project"] = json!("shop");
    let body = upload(&run);
    let answer = std::thread::scope(|scope| {
        let sent = scope.spawn(|| s.post("/api/v1/p/shop/runs", Some(&secret), &body));
        // The upload is inside its transaction (paused 1.5 s) when the signal comes.
        std::thread::sleep(Duration::from_millis(600));
        // SAFETY: kill(2) on the server child this test started and has not reaped.
        unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
        sent.join().unwrap()
    });
    assert_eq!(answer.status, 201, "{}", answer.body);
    let status = s.terminate(Duration::from_secs(30)).expect("exits");
    assert!(status.success(), "{status:?}");
    let id = run["id"].as_str().unwrap();
    let shown = sb
        .run(&["--store", &store, "export", id])
        .expect(0)
        .stdout();
    let doc: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        doc["runs"][0]["results"], run["results"],
        "stored whole: {shown}"
    );
    // The signal came while the run was being stored, not after.
    let lines = s.lines();
    let at = |event: &str| lines.iter().position(|l| l.contains(event));
    let (shutdown, stored) = (at(r#""event":"shutdown""#), at(r#""event":"stored""#));
    assert!(
        shutdown.is_some() && stored.is_some() && shutdown < stored,
        "{lines:?}"
    );
}

#[test]
fn a_port_in_use_is_a_usage_error_naming_it() {
    let sb = Sandbox::new();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap().to_string();
    let out = sb
        .run(&["--store", "sqlite:s.db", "serve", "--listen", &addr])
        .expect(2);
    let err = out.stderr();
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
}

#[test]
fn run_and_import_upload_through_the_server_with_the_token_kept_from_everything() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let server_db = format!("sqlite:{}", dir.join("server.db").display());
    let secret = token(&sb, &server_db, "runner", "gpu-runner-07");
    let s = Server::start(&sb, &["--store", &server_db]);
    // The benchmark writes its environment: the token must not be in it.
    sb.write(
        "pitwall.toml",
        "[project]\nname = \"shop\"\n\n[[suite]]\nname = \"sh\"\nkind = \"command\"\ncommand = \"env > bench-env.txt\"\nformat = \"wall-time\"\nmax_samples = 10\n",
    );
    let sha = commit(dir, 1);
    let with_token = |args: &[&str]| {
        let mut c = sb.cmd(args);
        c.env("PITWALL_TOKEN", &secret);
        c.output().unwrap()
    };
    let out = with_token(&["--store", &s.base, "run", "--commit", &sha, "--no-report"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("in {}", s.base)), "{stderr}");
    let f = result_file(&sb, "r.json", 1000.0, 1);
    let out = with_token(&["--store", &s.base, "import", &f, "--commit", &sha]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The push job: the pushed commit as history, no local report (the server has the
    // history).
    let push = with_token(&["--store", &s.base, "ci", "--push", "--head", &sha]);
    assert_eq!(
        push.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&push.stderr)
    );
    let runs = s.get("/api/v1/p/shop/runs", Some(&secret)).json();
    assert_eq!(runs.as_array().unwrap().len(), 3, "{runs}");
    assert!(!dir.join(".pitwall/report").exists());
    let out = with_token(&["--store", &s.base, "runs", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    // The token reached neither the benchmark nor any output.
    let mut seen = format!("{stdout}{stderr}{}", String::from_utf8_lossy(&out.stdout));
    for entry in walk(dir) {
        if entry.file_name().is_some_and(|n| n == "bench-env.txt") {
            seen.push_str(&std::fs::read_to_string(&entry).unwrap());
        }
    }
    assert!(
        seen.contains("PATH="),
        "the benchmark's environment was read"
    );
    assert!(!seen.contains(&secret), "the token leaked");
    assert!(s.lines().iter().all(|l| !l.contains(&secret)));

    // What needs the database, a missing token, a repository that names the server, and
    // plain http off loopback: each a usage error naming the cause.
    let prune = with_token(&["--store", &s.base, "prune", "--older-than", "1"]);
    assert_eq!(prune.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&prune.stderr).contains("needs the store's database"));
    let none = sb.run(&["--store", &s.base, "runs"]).expect(2).stderr();
    assert!(none.contains("PITWALL_TOKEN"), "{none}");
    sb.write(
        "pitwall.toml",
        "[store]\nurl = \"https://pitwall.example\"\n",
    );
    let named = with_token(&["runs"]);
    assert_eq!(named.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&named.stderr).contains("never from pitwall.toml"));
    let clear = with_token(&["--store", "http://pitwall.example:8080", "runs"]);
    assert_eq!(clear.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&clear.stderr).contains("in clear"));
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// An import of more runs than the rate limit allows a minute goes up in batch uploads: one
/// request and one transaction per batch, all or none; importing it again stores nothing, and
/// a batch with a conflicting run is refused whole.
#[test]
fn an_import_of_many_runs_goes_up_in_batches_all_or_none() {
    let sb = Sandbox::new();
    let (_, runs) = runner_history(&sb);
    let server_db = format!("sqlite:{}", sb.path().join("server.db").display());
    let secret = token(&sb, &server_db, "runner", "importer");
    let s = Server::start(&sb, &["--store", &server_db]);
    // 72 runs: the 12 of the history six times, each copy with ids of its own.
    let many: Vec<Value> = (0..6)
        .flat_map(|copy| {
            runs.iter().map(move |r| {
                let mut r = r.clone();
                let id = r["id"].as_str().unwrap().to_string();
                r["id"] = json!(format!("{}{copy:x}", &id[..id.len() - 1]));
                r["project"] = json!("shop");
                r
            })
        })
        .collect();
    let doc = json!({"schema": "pitwall/v8", "runs": many});
    let f = sb.write("many.json", &doc.to_string());
    let import = |file: &Path| {
        let mut c = sb.cmd(&["--store", &s.base, "import", file.to_str().unwrap()]);
        c.env("PITWALL_TOKEN", &secret);
        c.output().unwrap()
    };
    let out = import(&f);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{err}");
    let listed = s.get("/api/v1/p/shop/runs", Some(&secret)).json();
    assert_eq!(listed.as_array().unwrap().len(), 72, "{err}");
    let posts = |path: &str| {
        s.lines()
            .iter()
            .filter(|l| l.contains(r#""method":"POST""#) && l.contains(path))
            .count()
    };
    assert_eq!(posts(r#"/runs/batch""#), 1, "{:?}", s.lines());
    assert_eq!(posts(r#"/runs""#), 0);
    assert!(
        s.lines()
            .iter()
            .any(|l| l.contains(r#""event":"stored""#) && l.contains(r#""runs":72"#)),
        "one transaction: {:?}",
        s.lines()
    );
    // Again: nothing new.
    let again = import(&f);
    assert_eq!(again.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("72 already")
            || String::from_utf8_lossy(&again.stderr).contains("72 already"),
        "{}{}",
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr)
    );
    // A batch holding a new run and one that conflicts with a stored run: refused whole.
    let mut fresh = many[0].clone();
    fresh["id"] = json!("0190000a-0000-7000-8000-00000000beef");
    let mut clash = many[3].clone();
    clash["commit"] = json!("f".repeat(40));
    let body = json!({"runs": [fresh, clash]}).to_string();
    let r = s.post("/api/v1/p/shop/runs/batch", Some(&secret), &body);
    assert_eq!(r.status, 409, "{}", r.body);
    let listed = s.get("/api/v1/p/shop/runs", Some(&secret)).json();
    assert_eq!(
        listed.as_array().unwrap().len(),
        72,
        "the new run was not stored"
    );
}

/// A pair measured on a runner and uploaded has a comparison page at a stable address on the
/// server, rendered with the report's template (escaped, self-contained, under a policy that
/// allows no script or remote load); the pull request's comment links to it when `[serve] url`
/// is set.
#[test]
fn a_pair_has_a_comparison_page_that_the_comment_links_to() {
    let sb = Sandbox::new();
    let dir = sb.path();
    sb.write("level.txt", "100\n");
    sb.write(
        "bench.sh",
        "l=$(cat level.txt)\nprintf '{\"schema\":\"pitwall/v1\",\"benchmarks\":[{\"name\":\"<img src=x onerror=alert(1)>\",\"samples\":[%s.1,%s.2,%s.3,%s.4,%s.5,%s.6]}]}' $l $l $l $l $l $l\n",
    );
    sb.write(
        "pitwall.toml",
        "[project]\nname = \"shop\"\n\n[serve]\npublic_read = true\nurl = \"https://pitwall.example/\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n",
    );
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    sb.write("level.txt", "140\n");
    git(dir, &["commit", "-q", "-am", "slower"]);
    let head = git(dir, &["rev-parse", "HEAD"]);
    let local = "sqlite:runner.db";
    sb.run(&[
        "--store",
        local,
        "run",
        "--base",
        &base,
        "--head",
        &head,
        "--rounds",
        "2",
        "--no-report",
    ])
    .expect(1);
    // The comment links to the pair's page on the team's server.
    let comment = sb
        .run(&["--store", local, "comment", "--pr", "1", "--dry-run"])
        .expect(1)
        .stdout();
    let doc: Value =
        serde_json::from_str(&sb.run(&["--store", local, "export"]).expect(0).stdout()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    let pair = runs[0]["pair"]["id"].as_str().unwrap().to_string();
    let link = format!("https://pitwall.example/p/shop/compare/{pair}");
    assert!(
        comment.contains(&format!("[Full report]({link})")),
        "{comment}"
    );

    // Uploaded to the server, the page is there, readable without a token (public_read).
    let server_db = format!("sqlite:{}", dir.join("server.db").display());
    let secret = token(&sb, &server_db, "runner", "ci");
    let s = Server::start(&sb, &["--store", &server_db]);
    let mut up = sb.cmd(&["--store", &s.base, "import", "--quiet", "export.json"]);
    std::fs::write(dir.join("export.json"), doc.to_string()).unwrap();
    up.env("PITWALL_TOKEN", &secret);
    assert_eq!(up.output().unwrap().status.code(), Some(0));
    let page = s.get(&format!("/p/shop/compare/{pair}"), None);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<!DOCTYPE html>"), "{}", page.body);
    assert!(page.body.contains("regression"), "{}", page.body);
    assert!(!page.body.contains("<img src=x"), "escaped: {}", page.body);
    assert!(page.body.contains("&lt;img src=x"), "{}", page.body);
    assert!(!page.body.contains("<script"), "{}", page.body);
    let head_of = |path: &str| {
        let r = s.request("GET", path, None, b"");
        (r.status, r.headers.to_ascii_lowercase())
    };
    let (_, headers) = head_of(&format!("/p/shop/compare/{pair}"));
    assert!(headers.contains("content-type: text/html"), "{headers}");
    assert!(
        headers.contains("content-security-policy: default-src 'none'"),
        "{headers}"
    );
    let (status, headers) = head_of("/p/shop/assets/style.css");
    assert_eq!(status, 200);
    assert!(headers.contains("content-type: text/css"), "{headers}");
    // Only the exact id, only in its project.
    assert_eq!(
        s.get(&format!("/p/shop/compare/{}", &pair[..8]), None)
            .status,
        404
    );
    assert_eq!(s.get(&format!("/p/other/compare/{pair}"), None).status, 404);
}
