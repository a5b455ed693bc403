//! Issue 22, items 3 and 4, end to end through the real binary: the store's URL never reaches
//! a benchmark command and its password is redacted; a secret that was stored in clear (by an
//! older pitwall, or by an `import` before the secret was known), or that is in a file given
//! to `compare`/`comment`, is redacted at every sink (`show`, `export`, `runs`, the HTML
//! report, `compare`, the comment body), whatever characters it holds; `pitwall env` shows
//! no variable named like a secret.

use std::path::Path;

use pitwall_e2e::Sandbox;

/// A secret JSON and HTML escape: `"`, `\`, `<`, `&`.
const QUOTED: &str = r#"dep"loy\pass<&>-2026"#;
/// A store password.
const PG_PASSWORD: &str = "pg-Passw0rd-for-the-store";

/// A pitwall JSON results file whose benchmark name and parameter quote `secret`.
fn results(sb: &Sandbox, file: &str, secret: &str, level: f64) -> String {
    let name = serde_json::Value::String(format!("bench {secret}"));
    let samples: Vec<String> = (0..10).map(|i| format!("{level}.{i}")).collect();
    sb.write(
        file,
        &format!(
            "{{\"schema\":\"pitwall/v1\",\"benchmarks\":[{{\"name\":{name},\"samples\":[{}]}}]}}",
            samples.join(",")
        ),
    );
    file.to_string()
}

fn assert_clean(what: &str, text: &str) {
    for leak in [
        "loy\\pass",
        "loy\\\\pass",
        "loy&quot;",
        "pass&lt;",
        PG_PASSWORD,
    ] {
        assert!(!text.contains(leak), "{what} leaks {leak:?}:\n{text}");
    }
}

fn assert_tree_clean(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            assert_tree_clean(&p);
        } else if let Ok(bytes) = std::fs::read(&p) {
            assert_clean(&p.display().to_string(), &String::from_utf8_lossy(&bytes));
        }
    }
}

#[test]
fn a_secret_stored_in_clear_is_redacted_at_every_sink() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", "[project]\nname = \"sec\"\n");
    let a = results(&sb, "a.json", QUOTED, 100.0);
    let b = results(&sb, "b.json", QUOTED, 140.0);
    // Imported while the secret is not known: stored as it is.
    for (f, c) in [(&a, "a"), (&b, "b")] {
        sb.run(&["import", f, "--commit", &c.repeat(40)]).expect(0);
    }
    // From here on the job holds the secret.
    let with_secret = |args: &[&str]| {
        let out = sb.cmd(args).env("DEPLOY_TOKEN", QUOTED).output().unwrap();
        pitwall_e2e::Out(out)
    };
    let runs = with_secret(&["runs", "--format", "json"]).expect(0).json();
    let id = runs[0]["id"].as_str().unwrap().to_string();
    for args in [
        vec!["show", id.as_str()],
        vec!["show", id.as_str(), "--format", "json"],
        vec!["export"],
        vec!["runs"],
        vec!["compare", "--baseline", &a, "--candidate", &b],
        vec![
            "compare",
            "--baseline",
            &a,
            "--candidate",
            &b,
            "--format",
            "json",
        ],
        vec!["comment", "--baseline", &a, "--candidate", &b, "--dry-run"],
    ] {
        let out = with_secret(&args);
        assert_clean(&format!("{args:?} stdout"), &out.stdout());
        assert_clean(&format!("{args:?} stderr"), &out.stderr());
        let shown = out.stdout().replace("\\*", "*");
        assert!(
            shown.contains("***") || args[0] == "runs",
            "{args:?}: {}",
            out.stdout()
        );
    }
    let html = sb.path().join("html");
    with_secret(&["report", "--out", html.to_str().unwrap()]).expect(0);
    assert_tree_clean(&html);
    // Imported while the secret is known: stored redacted.
    let c = results(&sb, "c.json", QUOTED, 100.0);
    with_secret(&["import", &c, "--commit", &"c".repeat(40)]).expect(0);
    let stored = sb.run(&["export"]).expect(0).stdout();
    let redacted_runs = stored.matches("bench ***").count();
    assert!(redacted_runs >= 1, "{stored}");
}

#[test]
fn the_store_url_never_reaches_a_benchmark_and_its_password_is_redacted() {
    let sb = Sandbox::new();
    // The benchmark prints what it sees of the store and echoes a password it found.
    sb.write(
        "bench.sh",
        "printf '%s\\n' \"store=[$PITWALL_STORE] dsn=[$MY_DSN]\" > seen.txt\n\
         printf '{\"schema\":\"pitwall/v1\",\"benchmarks\":[{\"name\":\"w-%s\",\"samples\":[1,2,3,4,5]}]}' \"$(cat pw.txt)\"\n",
    );
    sb.write("pw.txt", PG_PASSWORD);
    sb.write(
        "pitwall.toml",
        "[project]\nname = \"sec\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\n\
         command = \"sh bench.sh\"\nenv_pass = [\"PITWALL_STORE\", \"MY_DSN\"]\n",
    );
    let url = format!("postgres://bench:{PG_PASSWORD}@db.invalid/pw");
    let db = sb.path().join("store.db");
    let store = format!("sqlite:{}", db.display());
    let out = sb
        .cmd(&["--store", &store, "run", "--no-report"])
        .env("PITWALL_STORE", &url)
        .env("MY_DSN", &url)
        .output()
        .unwrap();
    let out = pitwall_e2e::Out(out).expect(0);
    assert_clean("run stdout", &out.stdout());
    assert_clean("run stderr", &out.stderr());
    let seen = std::fs::read_to_string(sb.path().join("seen.txt")).unwrap();
    assert_eq!(seen, "store=[] dsn=[]\n");
    // Stored redacted: read without the secret known, it is gone.
    let exported = sb.run(&["--store", &store, "export"]).expect(0).stdout();
    assert_clean("export", &exported);
    assert!(exported.contains("w-***"), "{exported}");
}

#[test]
fn env_shows_no_variable_named_like_a_secret() {
    let sb = Sandbox::new();
    let out = sb
        .cmd(&["env"])
        .env("CUDA_PASSWORD", "cuda-pass-value-1")
        .env("NCCL_TOKEN", "nccl-token-value-2")
        .env("CUDA_VISIBLE_DEVICES", "0")
        .output()
        .unwrap();
    let out = pitwall_e2e::Out(out).expect(0);
    let text = out.stdout() + &out.stderr();
    for leak in [
        "CUDA_PASSWORD",
        "cuda-pass-value",
        "NCCL_TOKEN",
        "nccl-token-value",
    ] {
        assert!(!text.contains(leak), "leaks {leak}:\n{text}");
    }
    assert!(text.contains("CUDA_VISIBLE_DEVICES"), "{text}");
}

/// A `cuda-kernels` suite of one kernel whose source is `kernels/k.cu`.
const KERNELS: &str = r#"[[suite]]
name = "mine"
kind = "cuda-kernels"

[[suite.kernel]]
name = "k"
source = "kernels/k.cu"
entry = "k"
sizes = [1024]
grid = "cdiv(n, 256)"
block = 256
args = [
  { name = "n", scalar = "i32", value = "n" },
  { name = "y", buffer = "f32", count = "n", access = "inout" },
]
reference = { host = "copy", x = "y", out = "y" }
"#;

/// Issue 22 item 2: `pitwall kernels` of a source that is a link to `/proc/self/environ`, or
/// that includes it, prints nothing of the environment: one line naming the file.
#[test]
fn kernels_never_print_the_environment() {
    for (how, setup) in [
        ("link", "link"),
        ("include", "#include \"/proc/self/environ\"\n"),
        (
            "parent",
            "#include \"../../../../../../../proc/self/environ\"\n",
        ),
    ] {
        let sb = Sandbox::new();
        sb.write("pitwall.toml", KERNELS);
        std::fs::create_dir_all(sb.path().join("kernels")).unwrap();
        if setup == "link" {
            std::os::unix::fs::symlink("/proc/self/environ", sb.path().join("kernels/k.cu"))
                .unwrap();
        } else {
            sb.write("kernels/k.cu", setup);
        }
        let out = sb
            .cmd(&["kernels", "--sm", "80"])
            .env("PLANTED_TOKEN", "planted-kernel-token-42")
            .output()
            .unwrap();
        let out = pitwall_e2e::Out(out);
        let text = out.stdout() + &out.stderr();
        if text.contains("no NVRTC") && std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1")
        {
            eprintln!("skipped: no libnvrtc");
            return;
        }
        assert!(!text.contains("planted-kernel-token"), "{how}: {text}");
        assert!(!text.contains("PATH="), "{how}: {text}");
        assert_eq!(out.code(), 2, "{how}: {text}");
        assert!(text.contains("mine/k  sm_80  FAILED"), "{how}: {text}");
        if how == "link" {
            assert!(text.contains("outside the checkout"), "{text}");
        }
    }
}
