//! A real PostgreSQL server for tests of the PostgreSQL store: the server named by
//! `PITWALL_TEST_POSTGRES_URL` (an admin URL), or else a private one started once per test
//! process from the installed binaries (`initdb` and `postgres` from `PITWALL_PG_BIN`,
//! `/usr/lib/postgresql/<newest>/bin` or the PATH) on a free localhost port, trust auth, no
//! fsync. Each test gets a database of its own, dropped afterwards. The private server dies
//! with the test process (parent-death signal), and its directory is removed by the next run.
//!
//! Without PostgreSQL the tests say so and pass, unless `PITWALL_REQUIRE_POSTGRES=1` (set by
//! `.ci/run`), which makes a missing server a failure.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The server tests connect to.
#[derive(Debug)]
pub struct PgServer {
    /// Superuser URL of the maintenance database (`…/postgres`).
    admin_url: String,
}

/// A database created for one test; dropped (connections and all) when this is.
#[derive(Debug)]
pub struct TestDb {
    pub url: String,
    name: String,
    admin_url: String,
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

impl PgServer {
    /// A fresh, empty database.
    pub fn database(&self) -> TestDb {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "pitwall_test_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let mut c = postgres::Client::connect(&self.admin_url, postgres::NoTls)
            .expect("connect to the test server");
        c.batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create a test database");
        let base = self
            .admin_url
            .rsplit_once('/')
            .expect("url with a database")
            .0;
        TestDb {
            url: format!("{base}/{name}"),
            name,
            admin_url: self.admin_url.clone(),
        }
    }
}

/// The test server, or `None` (after saying why) when there is none and none is required.
pub fn pg_server() -> Option<&'static PgServer> {
    static SERVER: OnceLock<Result<PgServer, String>> = OnceLock::new();
    match SERVER.get_or_init(start) {
        Ok(s) => Some(s),
        Err(why) if std::env::var("PITWALL_REQUIRE_POSTGRES").is_ok_and(|v| v == "1") => {
            panic!("PITWALL_REQUIRE_POSTGRES=1 but no PostgreSQL server: {why}")
        }
        Err(why) => {
            eprintln!(
                "skipped: no PostgreSQL server for this test ({why}); install postgresql or set PITWALL_TEST_POSTGRES_URL"
            );
            None
        }
    }
}

fn start() -> Result<PgServer, String> {
    if let Ok(url) = std::env::var("PITWALL_TEST_POSTGRES_URL") {
        return Ok(PgServer { admin_url: url });
    }
    let bin = bin_dir().ok_or("no initdb found")?;
    // PostgreSQL refuses to run as root: as root, run it as `postgres` (or `nobody`).
    let user = unsafe { libc::geteuid() == 0 }
        .then(|| user_ids("postgres").or_else(|| user_ids("nobody")))
        .flatten();
    let dir = std::env::temp_dir().join(format!("pitwall-pg-{}", std::process::id()));
    remove_stale_dirs();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Some((uid, gid)) = user {
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: chown on a path we just created.
        if unsafe { libc::chown(c.as_ptr(), uid, gid) } != 0 {
            return Err(format!(
                "chown {}: {}",
                dir.display(),
                std::io::Error::last_os_error()
            ));
        }
    }
    let data = dir.join("data");
    let mut initdb = Command::new(bin.join("initdb"));
    let out = as_user(&mut initdb, user, false)
        .args([
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
            "-D",
        ])
        .arg(&data)
        .output()
        .map_err(|e| format!("initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let log = std::fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin.join("postgres"));
    cmd.arg("-D").arg(&data).arg("-k").arg(&dir);
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string(), "-F"])
        .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    as_user(&mut cmd, user, true);
    // Spawned from a thread that never ends: the parent-death signal follows the spawning
    // thread, and a test thread ends with its test.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(
            cmd.spawn()
                .map(|_| ())
                .map_err(|e| format!("postgres: {e}")),
        );
        loop {
            std::thread::park();
        }
    });
    rx.recv().map_err(|e| e.to_string())??;
    let admin_url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match postgres::Client::connect(&admin_url, postgres::NoTls) {
            Ok(_) => return Ok(PgServer { admin_url }),
            Err(e) if Instant::now() > deadline => {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                return Err(format!("server did not start: {e}; log: {log}"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Runs `cmd` as `user` (uid, gid) when given; with `die_with_parent`, it gets SIGQUIT
/// (PostgreSQL's immediate shutdown) when the spawning thread ends.
fn as_user(cmd: &mut Command, user: Option<(u32, u32)>, die_with_parent: bool) -> &mut Command {
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if let Some((uid, gid)) = user {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // After setuid: changing credentials clears the parent-death signal.
            if die_with_parent && libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns a pointer to static storage or null; read at once.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    (!pw.is_null()).then(|| unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

/// Where `initdb` and `postgres` are.
fn bin_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PITWALL_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|d| d.join("initdb").exists() && d.join("postgres").exists())
    })
}

/// Removes the directories of private servers whose test process is gone.
fn remove_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("pitwall-pg-")) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
