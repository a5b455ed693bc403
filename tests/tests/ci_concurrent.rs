//! Two `pitwall ci` jobs for different pull requests at once on one PostgreSQL store, against
//! one stand-in GitHub server: each posts the comparison of the pair it measured to its own
//! pull request. Job A starts first and measures slowly; job B starts later and finishes
//! first, so B's pair is the store's newest when A is done (publishing the store's `latest`
//! pair instead of the one measured would put B's comparison on A's pull request).

use std::process::{Child, Stdio};
use std::time::Duration;

use pitwall_e2e::github::Server;
use pitwall_e2e::{Out, Sandbox, git, pg_server};

const TOKEN: &str = "ghp_concurrent_jobs";

/// A checkout whose head changes the benchmark from 100 to `head_level`; `sleep` seconds per
/// benchmark execution. Returns (base, head) commit ids.
fn checkout(sb: &Sandbox, pr: u64, head_level: u32, sleep: &str) -> (String, String) {
    sb.write("level.txt", "100\n");
    sb.write(
        "bench.sh",
        &format!(
            "# pull request {pr}\nsleep {sleep}\nl=$(cat level.txt)\nprintf '{{\"schema\":\"pitwall/v1\",\"benchmarks\":[{{\"name\":\"work\",\"samples\":[%s.1,%s.2,%s.3,%s.4,%s.5,%s.6,%s.7,%s.8]}}]}}' $l $l $l $l $l $l $l $l\n"
        ),
    );
    sb.write(
        "pitwall.toml",
        "[project]\nname = \"shared\"\n\n[github]\nrepo = \"octo/bench\"\n\n[ci]\nuntil_decided = false\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n",
    );
    git(sb.path(), &["init", "-q", "-b", "main"]);
    git(sb.path(), &["add", "-A"]);
    git(sb.path(), &["commit", "-q", "-m", "base"]);
    let base = git(sb.path(), &["rev-parse", "HEAD"]);
    sb.write("level.txt", &format!("{head_level}\n"));
    git(sb.path(), &["commit", "-q", "-am", "change"]);
    (base, git(sb.path(), &["rev-parse", "HEAD"]))
}

fn ci(sb: &Sandbox, server: &Server, store: &str, pr: u64, base: &str, head: &str) -> Child {
    let pr = pr.to_string();
    sb.cmd(&[
        "--store",
        store,
        "ci",
        "--base",
        base,
        "--head",
        head,
        "--pr",
        &pr,
        "--rounds",
        "2",
        "--report-dir",
        &format!("report-pr{pr}"),
        "--api-url",
        server.url.as_str(),
    ])
    .env("GITHUB_TOKEN", TOKEN)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn pitwall ci")
}

#[test]
fn two_ci_jobs_at_once_each_publish_their_own_pair_to_their_own_pull_request() {
    let Some(pg) = pg_server() else {
        return;
    };
    let db = pg.database();
    let server = Server::start();
    let (sb_a, sb_b) = (Sandbox::new(), Sandbox::new());
    // A: 40% slower, measured slowly; B: 40% faster, measured quickly.
    let (base_a, head_a) = checkout(&sb_a, 11, 140, "0.4");
    let (base_b, head_b) = checkout(&sb_b, 12, 60, "0");
    let job_a = ci(&sb_a, &server, &db.url, 11, &base_a, &head_a);
    std::thread::sleep(Duration::from_millis(1500));
    let job_b = ci(&sb_b, &server, &db.url, 12, &base_b, &head_b);
    let out_b = Out(job_b.wait_with_output().unwrap()).expect(0);
    let out_a = Out(job_a.wait_with_output().unwrap()).expect(1);
    assert!(
        out_a.stdout().contains("1 regression"),
        "{}",
        out_a.stdout()
    );
    assert!(
        out_b.stdout().contains("1 improvement"),
        "{}",
        out_b.stdout()
    );

    let (a, b) = (server.comments_on(11), server.comments_on(12));
    assert_eq!((a.len(), b.len()), (1, 1), "one comment per pull request");
    let cand = |sha: &str| format!("Candidate: head {}", &sha[..12]);
    assert!(a[0].body.contains(&cand(&head_a)), "{}", a[0].body);
    assert!(!a[0].body.contains(&cand(&head_b)), "{}", a[0].body);
    assert!(a[0].body.contains("regression"), "{}", a[0].body);
    assert!(b[0].body.contains(&cand(&head_b)), "{}", b[0].body);
    assert!(!b[0].body.contains(&cand(&head_a)), "{}", b[0].body);
    assert!(b[0].body.contains("improvement"), "{}", b[0].body);

    // Each head commit's own check run (the default [github] publish: check and comment).
    let checks = server.check_runs();
    let conclusion = |sha: &str| {
        checks
            .iter()
            .filter(|c| c.sha == sha)
            .map(|c| {
                c.body["conclusion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(conclusion(&head_a), ["failure"]);
    assert_eq!(conclusion(&head_b), ["success"]);
}
