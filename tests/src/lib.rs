//! Helpers for end-to-end tests: find the real `pitwall` binary and run it in a scratch
//! directory with its own store, as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub mod github;
pub mod http;
mod pg;
pub mod serve;
pub mod source_scan;
pub use pg::{PgServer, TestDb, pg_server};

/// Path of the `pitwall` binary of this build (target/<profile>/pitwall), brought up to date
/// once per test process: `cargo test -p pitwall-e2e` alone would otherwise run a stale one.
pub fn pitwall_bin() -> PathBuf {
    static BUILD: std::sync::Once = std::sync::Once::new();
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    BUILD.call_once(|| {
        let mut cmd = Command::new(env!("CARGO"));
        // With the fakes and fault hooks the tests drive (PITWALL_FAKE_NVML, …): a release
        // build has none of them.
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "pitwall",
            "--bin",
            "pitwall",
            "--features",
            "test-hooks",
        ]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo build");
        assert!(status.success(), "building pitwall failed");
    });
    dir.join("pitwall")
}

/// `pitwall detect --benchmark PATTERN --format json` in `sb`, which must print one series:
/// its JSON line.
pub fn detect_one(sb: &Sandbox, pattern: &str) -> serde_json::Value {
    let out = sb
        .run(&["detect", "--benchmark", pattern, "--format", "json"])
        .expect(0)
        .stdout();
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    lines.into_iter().next().unwrap()
}

/// Runs `git ARGS` in `dir` as a fixed author; its trimmed stdout. Panics (naming the
/// command and git's stderr) when git fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `pitwall runs --format json` in `sb`: every stored run, newest first.
pub fn listed_runs(sb: &Sandbox) -> Vec<serde_json::Value> {
    sb.run(&["runs", "--format", "json"])
        .expect(0)
        .json()
        .as_array()
        .unwrap()
        .clone()
}

/// One commit of everything in `dir`, message `msg`, with author and committer date `date`
/// (scripted commits share one to the second), as the fixed author of [`git`]; its sha.
pub fn commit_dated(dir: &Path, msg: &str, date: &str) -> String {
    git(dir, &["add", "-A"]);
    let out = Command::new("git")
        .args(["commit", "-q", "-m", msg])
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    git(dir, &["rev-parse", "HEAD"])
}

/// Writes `name` in `sb`: a pitwall JSON result file with one benchmark, `bench`, and its
/// `samples`. Returns its path as text, for `pitwall import`.
pub fn one_benchmark_file(sb: &Sandbox, name: &str, bench: &str, samples: &[f64]) -> String {
    let doc = serde_json::json!({
        "schema": "pitwall/v1",
        "benchmarks": [{"name": bench, "samples": samples}]
    });
    sb.write(name, &doc.to_string())
        .to_str()
        .unwrap()
        .to_string()
}

/// `count` deterministic samples around `level`, within ±`spread` of it (relative), in a
/// pattern that `salt` varies: result files that differ by salt, not by chance.
pub fn spread_samples(level: f64, spread: f64, salt: usize, count: usize) -> Vec<f64> {
    (0..count)
        .map(|i| {
            let x = ((i * 7919 + salt * 104_729) % 1000) as f64 / 500.0 - 1.0;
            level * (1.0 + spread * x)
        })
        .collect()
}

/// A large export document: one run `id` with `results` results of `samples` samples each, so
/// storing it takes a while (for tests that kill or race a writer).
pub fn big_export(id: &str, results: usize, samples: usize) -> String {
    let values: Vec<String> = (0..samples).map(|i| format!("{}.5", i % 977)).collect();
    let result = |name: char| {
        format!(
            r#"{{"suite":"s","name":"{name}","measure":"time","unit":"ns","direction":"lower_is_better","status":"ok","samples":[{}]}}"#,
            values.join(",")
        )
    };
    let all: Vec<String> = ('a'..='z').take(results).map(result).collect();
    format!(
        r#"{{"schema":"pitwall/v1","runs":[{{"id":"{id}","project":"big","commit":"working tree","started_at":"2026-12-02T10:00:00Z","finished_at":"2026-12-02T10:00:01Z","config_hash":"x","fingerprint":{{"hostname":"h","os":"linux","arch":"x86_64"}},"status":"complete","results":[{}]}}]}}"#,
        all.join(",")
    )
}

/// A scratch project directory with its own store.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::Builder::new()
                .prefix("pitwall-e2e")
                .tempdir()
                .expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file relative to the sandbox.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, text).expect("write");
        p
    }

    /// `pitwall ARGS` in the sandbox with a clean environment for pitwall's variables.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(pitwall_bin());
        c.args(args)
            .current_dir(self.path())
            .env_remove("PITWALL_STORE")
            .env_remove("PITWALL_FAULT_PAUSE_IN_TXN_MS")
            // The tests running beside this one load the machine: without the fake every run
            // would be contended and left out of its history (tests/tests/contention_load.rs
            // measures the real contention).
            .env("PITWALL_FAKE_CONTENTION", "0");
        // A test run inside a CI job must not publish to, or read the change from, that job.
        for ci in [
            "GITHUB_ACTIONS",
            "GITHUB_REF",
            "GITHUB_REPOSITORY",
            "GITHUB_API_URL",
            "PITWALL_GITHUB_API_URL",
            "PITWALL_GITLAB_API_URL",
            "GITHUB_STEP_SUMMARY",
            "GITLAB_CI",
            "CI_API_V4_URL",
            "CI_MERGE_REQUEST_IID",
            "CI_MERGE_REQUEST_PROJECT_ID",
            "CI_PROJECT_ID",
            // Branch names a stored run would take from the job (docs/CONFIG.md).
            "GITHUB_HEAD_REF",
            "GITHUB_REF_NAME",
            "GITHUB_BASE_REF",
            "CI_COMMIT_REF_NAME",
            "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME",
            "GITHUB_REF_TYPE",
            "CI_COMMIT_TAG",
            "GITHUB_SHA",
        ] {
            c.env_remove(ci);
        }
        c
    }

    /// Starts `n` `pitwall ARGS` processes at once and expects every one to succeed.
    pub fn run_concurrently(&self, n: usize, args: &[&str]) {
        let children: Vec<_> = (0..n)
            .map(|_| {
                self.cmd(args)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn pitwall")
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().expect("wait for pitwall");
            assert!(
                out.status.success(),
                "pitwall {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// `pitwall compare --baseline BASE --candidate CAND EXTRA… --format json`, expecting exit
    /// `code`; the JSON document it printed.
    pub fn compare_json(
        &self,
        base: impl AsRef<Path>,
        cand: impl AsRef<Path>,
        extra: &[&str],
        code: i32,
    ) -> serde_json::Value {
        let (base, cand) = (
            base.as_ref().to_str().unwrap(),
            cand.as_ref().to_str().unwrap(),
        );
        let mut args = vec!["compare", "--baseline", base, "--candidate", cand];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--format", "json"]);
        self.run(&args).expect(code).json()
    }

    pub fn run(&self, args: &[&str]) -> Out {
        Out(self.cmd(args).output().expect("spawn pitwall"))
    }

    /// The default store file of this sandbox.
    pub fn db(&self) -> PathBuf {
        self.path().join(".pitwall/pitwall.db")
    }

    /// Opens the store file directly (read-only checks).
    pub fn sqlite(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.db()).expect("open db")
    }

    pub fn count(&self, table: &str) -> i64 {
        self.sqlite()
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .expect("count")
    }
}

/// Output of one invocation, with readable assertions.
pub struct Out(pub Output);

impl Out {
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.0.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout()))
    }
    /// Asserts the exit code, showing both streams when it differs.
    pub fn expect(self, code: i32) -> Out {
        assert_eq!(
            self.code(),
            code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout(),
            self.stderr()
        );
        self
    }
}

/// A command benchmark (`sh bench.sh`) for tests over real commits: it prints pitwall JSON with
/// one benchmark, `work`, whose ten samples are the value in `level.txt` with a fractional part
/// of 0.0–0.9, so a commit sets its level and nothing depends on timing.
pub const LEVEL_BENCH: &str = r#"level=$(cat level.txt)
printf '{"schema":"pitwall/v1","benchmarks":[{"name":"work","samples":['
i=0; sep=""
while [ $i -lt 10 ]; do printf '%s%s.%s' "$sep" "$level" "$i"; sep=","; i=$((i+1)); done
printf ']}]}'
"#;

/// A small, fast configuration of the three built-in suites (tiny sizes and budgets).
pub const QUICK_BUILTINS: &str = r#"
[project]
name = "quick"

[sampling]
warmup_s = 0.0
max_time_s = 0.05
min_samples = 5

[[suite]]
kind = "kernel"
max_bytes = 65536

[[suite]]
kind = "inference"
min_samples = 20

[[suite]]
kind = "collective"
ranks = 2
max_bytes = 4096
"#;

/// Asserts that a stored run (as exported JSON) recorded a locked SM clock and that its first
/// result has one GPU state per sample, every one at that clock.
pub fn assert_samples_at_locked_clock(run: &serde_json::Value) {
    let locked = run["fingerprint"]["extra"]["clocks"]["locked_sm_mhz"]
        .as_u64()
        .expect("locked clock recorded");
    let r = &run["results"][0];
    let meta = r["sample_meta"].as_array().unwrap();
    assert_eq!(
        meta.len(),
        r["samples"].as_array().unwrap().len(),
        "one state per sample"
    );
    assert!(
        meta.iter()
            .all(|m| m["sm_clock_mhz"].as_u64() == Some(locked)),
        "{meta:?}"
    );
}

/// Whether a headless Chromium is there for the browser checks (`$CHROMIUM`, else one on
/// `PATH`); a test without one says it skipped that part.
pub fn chromium_installed() -> bool {
    std::env::var_os("CHROMIUM").is_some()
        || ["chromium", "chromium-browser", "google-chrome-stable"]
            .iter()
            .any(|c| {
                Command::new("sh")
                    .args(["-c", &format!("command -v {c} >/dev/null 2>&1")])
                    .status()
                    .is_ok_and(|s| s.success())
            })
}

/// Runs the browser check `tests/browser/<script>` with `args` and `env`: whether it passed,
/// and everything it printed.
pub fn browser_check(script: &str, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new("python3")
        .arg(root.join("tests/browser").join(script))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}
