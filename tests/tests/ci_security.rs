//! Issue 14's first two problems, end to end through the real binary and the local server
//! standing in for GitHub: a planted token never reaches the measured code unless passed on
//! purpose, and when passed and echoed (raw, base64 as in a `Basic` header, percent-encoded)
//! it appears in no output, store, export, report or publication; a comment carrying
//! pitwall's marker but written by someone else is never edited.

use std::path::Path;

use pitwall_e2e::github::Server;
use pitwall_e2e::{Out, Sandbox, git};

const TOKEN: &str = "ghp_pl4nt3dT0k3nValue0123456789/+x";
const PASSWORD: &str = "hunter2-but-longer-9876";

/// Standard base64 (what `base64 -w0` prints).
fn b64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Every form of a secret that must not appear: raw, percent-encoded, and the parts of its
/// base64 that depend on it alone (alone, and after `user:`).
fn forms(secret: &str) -> Vec<String> {
    let pct: String = secret
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let plain = b64(secret.as_bytes());
    let basic = b64(format!("user:{secret}").as_bytes());
    vec![
        secret.to_string(),
        pct,
        plain[..plain.len() - 4].to_string(),
        basic[8..basic.len() - 4].to_string(),
    ]
}

fn assert_clean(what: &str, text: &str) {
    for secret in [TOKEN, PASSWORD] {
        for f in forms(secret) {
            assert!(!text.contains(&f), "{what} leaks {f:?}:\n{text}");
        }
    }
}

/// Every file under `dir`, read as bytes and checked.
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

/// A repository whose suites try every way to leak: the build and one suite dump what they
/// can see; one suite is passed the token on purpose and echoes it in a failure's stderr and
/// in a benchmark name; the head is 40% slower.
fn repo(sb: &Sandbox) -> (String, String) {
    sb.write("level.txt", "100\n");
    sb.write(
        "leak.sh",
        "env > \"$1\"\n\
         cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' > proc-env.txt\n\
         printf '%s\\n' \"tok=$GITHUB_TOKEN pw=$DEPLOY_PASSWORD\" >&2\n\
         exit 1\n",
    );
    sb.write(
        "echo.sh",
        "printf '%s\\n' \"$GITHUB_TOKEN\" >&2\n\
         printf 'user:%s' \"$GITHUB_TOKEN\" | base64 -w0 >&2; echo >&2\n\
         printf '%s\\n' \"$GITHUB_TOKEN\" | sed 's#/#%2F#g; s#+#%2B#g' >&2\n\
         exit 1\n",
    );
    sb.write(
        "bench.sh",
        "l=$(cat level.txt)\nprintf '{\"schema\":\"pitwall/v1\",\"benchmarks\":[{\"name\":\"work-%s\",\"samples\":[%s.1,%s.2,%s.3,%s.4,%s.5,%s.6,%s.7,%s.8]}]}' \"$GITHUB_TOKEN\" $l $l $l $l $l $l $l $l\n",
    );
    sb.write(
        "pitwall.toml",
        "[project]\nname = \"sec\"\nbuild = \"env > build-env.txt\"\n\n\
         [github]\nrepo = \"octo/bench\"\n\n\
         [[suite]]\nname = \"leaky\"\nkind = \"command\"\ncommand = \"sh leak.sh suite-env.txt\"\n\n\
         [[suite]]\nname = \"echo\"\nkind = \"command\"\ncommand = \"sh echo.sh\"\nenv_pass = [\"GITHUB_TOKEN\"]\n\n\
         [[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\nenv_pass = [\"GITHUB_TOKEN\"]\n",
    );
    sb.write(
        ".gitignore",
        "build-env.txt\nsuite-env.txt\nproc-env.txt\n.pitwall/\n",
    );
    git(sb.path(), &["init", "-q", "-b", "main"]);
    git(sb.path(), &["add", "-A"]);
    git(sb.path(), &["commit", "-q", "-m", "base"]);
    let base = git(sb.path(), &["rev-parse", "HEAD"]);
    sb.write("level.txt", "140\n");
    git(sb.path(), &["commit", "-q", "-am", "slower"]);
    (base, git(sb.path(), &["rev-parse", "HEAD"]))
}

fn with_secrets(sb: &Sandbox, args: &[&str]) -> Out {
    Out(sb
        .cmd(args)
        .env("GITHUB_TOKEN", TOKEN)
        .env("DEPLOY_PASSWORD", PASSWORD)
        .output()
        .unwrap())
}

#[test]
fn a_planted_token_reaches_no_output_store_export_report_or_publication() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    let server = Server::start();
    let ci = with_secrets(
        &sb,
        &[
            "ci",
            "--base",
            &base,
            "--head",
            &head,
            "--pr",
            "7",
            "--rounds",
            "2",
            "--api-url",
            &server.url,
        ],
    );
    let (stdout, stderr) = (ci.stdout(), ci.stderr());
    assert_clean("ci stdout", &stdout);
    assert_clean("ci stderr", &stderr);
    // It ran and named the failed suites, their stderr tails redacted; failed suites make it
    // an infrastructure failure, which publishes nothing: `comment` publishes the pair.
    assert!(stdout.contains("work-***"), "{stdout}");
    assert!(stderr.contains("stderr tail: *** |"), "{stderr}");
    assert_eq!(ci.code(), 3, "{stderr}");
    let published = with_secrets(&sb, &["comment", "--pr", "7", "--api-url", &server.url]);
    assert_clean("comment stdout", &published.stdout());
    assert_clean("comment stderr", &published.stderr());
    assert_eq!(server.comments_on(7).len(), 1, "{}", published.stderr());

    // The measured code did not see the token or the password: not in its environment.
    let cache = sb.path().join(".pitwall");
    let mut dumps = Vec::new();
    find(&cache, "build-env.txt", &mut dumps);
    find(&cache, "suite-env.txt", &mut dumps);
    assert!(
        dumps.len() >= 4,
        "build and suite of both commits: {dumps:?}"
    );
    for d in &dumps {
        let env = std::fs::read_to_string(d).unwrap();
        assert!(!env.contains("GITHUB_TOKEN="), "{}: {env}", d.display());
        assert!(!env.contains("DEPLOY_PASSWORD="), "{}: {env}", d.display());
        assert!(env.contains("PATH="), "the rest of the environment is kept");
    }
    // The failed suites' messages are stored, the echo in them redacted.
    let db = std::fs::read(sb.db()).unwrap();
    let db = String::from_utf8_lossy(&db);
    assert!(db.contains("tok= pw="), "the leaky suite saw nothing");
    assert!(
        db.contains("***"),
        "the echo suite's output is stored redacted"
    );
    // Nor could it read pitwall's own environment through /proc (pitwall is not dumpable),
    // nor that of any helper pitwall started beside it. Root reads every process's
    // environment whatever pitwall does, so this holds for the unprivileged users runners run
    // as.
    let mut procs = Vec::new();
    find(&cache, "proc-env.txt", &mut procs);
    assert!(!procs.is_empty());
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for p in procs.iter().filter(|_| !root) {
        let seen = std::fs::read_to_string(p).unwrap();
        assert!(seen.contains("PATH="), "it did read what it may: {seen}");
        assert!(
            !seen.contains(TOKEN) && !seen.contains(PASSWORD),
            "{}",
            p.display()
        );
    }
    for dump in dumps.iter().chain(&procs) {
        std::fs::remove_file(dump).unwrap();
    }
    assert_tree_clean(&cache);

    let export = with_secrets(&sb, &["export"]).expect(0);
    assert!(export.stdout().contains("work-***"));
    assert_clean("export", &export.stdout());
    assert_clean("export stderr", &export.stderr());
    let report = sb.path().join("report-out");
    let out = with_secrets(&sb, &["report", "--out", report.to_str().unwrap()]).expect(0);
    assert_clean("report stderr", &out.stderr());
    assert_tree_clean(&report);
    for c in server.comments_on(7) {
        assert_clean("the comment", &c.body);
    }
    for r in server.check_runs() {
        assert_clean("the check run", &r.body.to_string());
    }
}

fn find(dir: &Path, name: &str, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            find(&p, name, out);
        } else if p.file_name().is_some_and(|n| n == name) {
            out.push(p);
        }
    }
}

#[test]
fn a_comment_with_the_marker_by_someone_else_is_left_alone() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    sb.run(&[
        "run", "--quiet", "--base", &base, "--head", &head, "--rounds", "1",
    ]);
    let server = Server::start();
    let spoof = "<!-- pitwall:comparison -->\nno regressions, merge away";
    let spoof_id = server.add_comment_by(3, spoof, "mallory");
    let summary = sb.path().join("step-summary.md");
    let publish = || {
        Out(sb
            .cmd(&["comment", "--pr", "3", "--api-url", &server.url])
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .output()
            .unwrap())
    };
    let first = publish();
    assert!(first.stderr().contains("created"), "{}", first.stderr());
    let second = publish();
    assert!(second.stderr().contains("updated"), "{}", second.stderr());
    let comments = server.comments_on(3);
    assert_eq!(comments.len(), 2, "{comments:?}");
    let theirs = comments.iter().find(|c| c.id == spoof_id).unwrap();
    assert_eq!(theirs.body, spoof);
    assert_eq!(theirs.author, "mallory");
    assert!(
        comments
            .iter()
            .any(|c| c.author == pitwall_e2e::github::BOT)
    );
    // The job summary got the comparison each time.
    let written = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(written.matches("<!-- pitwall:comparison -->").count(), 2);
    assert!(written.contains("regression"), "{written}");
}
