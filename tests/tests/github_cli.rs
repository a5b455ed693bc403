//! `pitwall comment` and `pitwall ci` against a real local HTTP server standing in for the
//! GitHub API: one sticky comment updated in place, the check run (and a commit status when
//! `[github] publish` asks for one), retries that post exactly one comment, and a rejected
//! token that exits 3 without the token appearing anywhere.

use pitwall_e2e::github::{Fault, REPO, Server};
use pitwall_e2e::{Out, Sandbox, git};

const TOKEN: &str = "ghp_s3cr3t_t0k3n_value";

/// A repository whose head commit makes the benchmark 40% slower.
fn repo(sb: &Sandbox) -> (String, String) {
    sb.write("level.txt", "100\n");
    sb.write(
        "bench.sh",
        "l=$(cat level.txt)\nprintf '{\"schema\":\"pitwall/v1\",\"benchmarks\":[{\"name\":\"work\",\"samples\":[%s.1,%s.2,%s.3,%s.4,%s.5,%s.6,%s.7,%s.8]}]}' $l $l $l $l $l $l $l $l\n",
    );
    sb.write("pitwall.toml", "[project]\nname = \"pr\"\n\n[github]\nrepo = \"octo/bench\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n");
    git(sb.path(), &["init", "-q", "-b", "main"]);
    git(sb.path(), &["add", "-A"]);
    git(sb.path(), &["commit", "-q", "-m", "base"]);
    let base = git(sb.path(), &["rev-parse", "HEAD"]);
    sb.write("level.txt", "140\n");
    git(sb.path(), &["commit", "-q", "-am", "slower"]);
    (base, git(sb.path(), &["rev-parse", "HEAD"]))
}

fn gh(sb: &Sandbox, server: &Server, args: &[&str]) -> Out {
    let mut all = args.to_vec();
    all.extend(["--api-url", server.url.as_str()]);
    Out(sb.cmd(&all).env("GITHUB_TOKEN", TOKEN).output().unwrap())
}

#[test]
fn ci_measures_comments_once_and_sets_the_status() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    let server = Server::start();
    let out = gh(
        &sb,
        &server,
        &[
            "ci", "--base", &base, "--head", &head, "--pr", "7", "--rounds", "2",
        ],
    )
    .expect(1);
    assert!(out.stdout().contains("1 regression"), "{}", out.stdout());
    // Progress on stderr (no terminal here): each side checked out, each round and look; none
    // of it on stdout.
    let err = out.stderr();
    for line in [
        format!("] base: {} base", &base[..12]),
        format!("] round 1/15: head commit {}", &head[..12]),
        "] suite toy: `sh bench.sh`".to_string(),
        " given up, ".to_string(),
    ] {
        assert!(err.contains(&line), "{line}: {err}");
    }
    assert!(!out.stdout().contains("round 1/"), "{}", out.stdout());
    // The summary once (the table's last line), not a second time after publishing.
    assert_eq!(
        out.stdout().matches("1 regression").count(),
        1,
        "{}",
        out.stdout()
    );
    assert!(
        sb.path().join(".pitwall/report/index.html").exists(),
        "report written"
    );
    let comments = server.comments_on(7);
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].body.starts_with("<!-- pitwall:comparison -->"),
        "{}",
        comments[0].body
    );
    assert!(comments[0].body.contains("regression"));
    // What is published is what was printed (issue 24: `ci` hands the pair's own comparison
    // to the publish use case): the same summary, change and interval.
    let stdout = out.stdout();
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("summary: "))
        .expect("a summary line");
    // The comment writes it as Markdown prose: backslash-escaped, the same text once read.
    assert!(
        comments[0]
            .body
            .replace('\\', "")
            .contains(&format!("**{summary}**")),
        "{summary}: {}",
        comments[0].body
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("toy/work/time"))
        .expect("the benchmark's row");
    let interval = &row[row.find('[').unwrap()..=row.find(']').unwrap()];
    assert!(comments[0].body.contains(interval), "{interval}");
    let checks = server.check_runs();
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].sha, head);
    assert_eq!(checks[0].name, "pitwall");
    assert_eq!(checks[0].body["conclusion"], "failure");
    {
        let state = server.state.lock().unwrap();
        assert!(
            state.statuses.is_empty(),
            "no status unless [github] publish names it"
        );
        let auth = state
            .requests
            .iter()
            .filter_map(|r| r.authorization.clone())
            .next()
            .unwrap();
        assert_eq!(auth, format!("Bearer {TOKEN}"));
    }
    let id = comments[0].id;
    assert!(
        out.stderr().contains(&format!(
            "pull request 7: comment {id} created; check run {} created (failure)",
            checks[0].id
        )),
        "{}",
        out.stderr()
    );
    // A second publication updates the same comment (sticky), never a second one.
    let again = gh(&sb, &server, &["comment", "--pr", "7"])
        .expect(1)
        .stderr();
    assert!(again.contains(&format!("comment {id} updated")), "{again}");
    assert!(
        !again.contains("Updated(") && !again.contains("Created("),
        "{again}"
    );
    assert_eq!(server.comments_on(7).len(), 1);
    assert_eq!(server.comments_on(7)[0].id, comments[0].id);
    assert_eq!(server.check_runs().len(), 1, "the same check run, updated");
    assert_eq!(server.check_runs()[0].updates, 1);

    // With the status asked for (and the comment left out), only the status and the check.
    let toml = std::fs::read_to_string(sb.path().join("pitwall.toml")).unwrap();
    sb.write(
        "pitwall.toml",
        &toml.replace(
            "[github]\n",
            "[github]\npublish = [\"check\", \"status\"]\n",
        ),
    );
    let out = gh(&sb, &server, &["comment", "--sha", &head]).expect(1);
    assert!(out.stderr().contains("status set"), "{}", out.stderr());
    let state = server.state.lock().unwrap();
    assert_eq!(state.statuses.len(), 1);
    assert_eq!(state.statuses[0].0, head);
    assert_eq!(state.statuses[0].1["state"], "failure");
    assert_eq!(state.comments.len(), 1, "no comment published");
}

#[test]
fn retries_on_502_and_429_post_exactly_one_comment() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    sb.run(&[
        "run", "--quiet", "--base", &base, "--head", &head, "--rounds", "1",
    ])
    .expect(1);
    let server = Server::start();
    server.fail_next("POST", Fault::BadGatewayAfter);
    server.fail_next("POST", Fault::TooManyRequests { retry_after: 1 });
    gh(&sb, &server, &["comment", "--pr", "9"]).expect(1);
    assert_eq!(
        server.comments_on(9).len(),
        1,
        "exactly one comment after retries"
    );
}

#[test]
fn rejected_token_exits_3_without_leaking_it() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    sb.run(&[
        "run", "--quiet", "--base", &base, "--head", &head, "--rounds", "1",
    ])
    .expect(1);
    let server = Server::start();
    server.state.lock().unwrap().always_401 = true;
    let out = gh(&sb, &server, &["comment", "--pr", "3"]).expect(3);
    let (stdout, stderr) = (out.stdout(), out.stderr());
    assert!(stderr.contains("GITHUB_TOKEN"), "{stderr}");
    assert!(
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        "token leaked: {stdout}{stderr}"
    );
    assert!(server.comments_on(3).is_empty());
    // No token at all is a usage error naming the variable.
    let out = Out(sb
        .cmd(&["comment", "--pr", "3", "--api-url", &server.url])
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap());
    let e = out.stderr();
    assert_eq!(out.code(), 2, "{e}");
    assert!(e.contains("GITHUB_TOKEN"), "{e}");
    let _ = REPO;
}

/// Issue 28, item 1: `pitwall ci` checks what it publishes with (pull request, repository,
/// token: one authenticated GET of the repository) before it builds or measures anything; a
/// missing, refused or misdirected token is exit 2 naming the variable and `pitwall comment`.
#[test]
fn ci_checks_its_publishing_prerequisites_before_measuring() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    let server = Server::start();
    let ci = |extra: &[&str]| {
        let mut args = vec![
            "ci",
            "--base",
            &base,
            "--head",
            &head,
            "--rounds",
            "1",
            "--api-url",
            &server.url,
        ];
        args.extend_from_slice(extra);
        sb.cmd(&args)
    };
    let check = |out: Out, says: &str| {
        let e = out.stderr();
        assert_eq!(out.code(), 2, "{e}");
        assert!(e.contains(says), "{says}: {e}");
        assert!(
            e.contains("nothing was measured") && e.contains("pitwall comment"),
            "{e}"
        );
        assert!(!e.contains("round 1") && !e.contains(TOKEN), "{e}");
    };
    // No token.
    check(
        Out(ci(&["--pr", "7"])
            .env_remove("GITHUB_TOKEN")
            .output()
            .unwrap()),
        "GITHUB_TOKEN",
    );
    // No pull request to comment on.
    check(
        Out(ci(&[]).env("GITHUB_TOKEN", TOKEN).output().unwrap()),
        "no pull request to comment on",
    );
    // A repository the token cannot see.
    check(
        Out(ci(&["--pr", "7", "--repo", "octo/other"])
            .env("GITHUB_TOKEN", TOKEN)
            .output()
            .unwrap()),
        "octo/other",
    );
    // A token GitHub refuses.
    server.state.lock().unwrap().always_401 = true;
    check(
        Out(ci(&["--pr", "7"])
            .env("GITHUB_TOKEN", TOKEN)
            .output()
            .unwrap()),
        "GITHUB_TOKEN",
    );
    assert!(!sb.db().exists() || sb.count("runs") == 0, "nothing stored");
    // With --dry-run nothing is asked of GitHub: it measures.
    server.state.lock().unwrap().always_401 = false;
    let before = server.requests().len();
    let out = Out(ci(&["--dry-run"])
        .env_remove("GITHUB_TOKEN")
        .output()
        .unwrap());
    assert_eq!(out.code(), 1, "{}", out.stderr());
    assert_eq!(server.requests().len(), before);
}

/// Issue 28, item 4: the comment id is kept in the store, so the next `comment` on the same
/// pull request edits it without listing the comments.
#[test]
fn the_stored_comment_id_is_used_next_time() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    sb.run(&[
        "run", "--quiet", "--base", &base, "--head", &head, "--rounds", "1",
    ])
    .expect(1);
    let server = Server::start();
    server.seed(4, 120);
    gh(&sb, &server, &["comment", "--pr", "4"]).expect(1);
    let lists = || {
        server
            .requests()
            .iter()
            .filter(|r| r.method == "GET" && r.path.contains("/comments?per_page"))
            .count()
    };
    let before = lists();
    assert!(before > 0, "the first publish searched");
    gh(&sb, &server, &["comment", "--pr", "4"]).expect(1);
    assert_eq!(lists(), before, "the second used the stored id");
    assert_eq!(
        server
            .comments_on(4)
            .iter()
            .filter(|c| c.body.starts_with("<!-- pitwall"))
            .count(),
        1
    );
}

#[test]
fn dry_run_prints_the_comment() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    sb.run(&[
        "run", "--quiet", "--base", &base, "--head", &head, "--rounds", "1",
    ])
    .expect(1);
    let out = Out(sb
        .cmd(&["comment", "--pr", "1", "--dry-run"])
        .output()
        .unwrap())
    .expect(1);
    assert!(
        out.stdout().starts_with("<!-- pitwall:comparison -->"),
        "{}",
        out.stdout()
    );
}

#[test]
fn ci_with_its_own_store_writes_the_report_beside_it() {
    let sb = Sandbox::new();
    let (base, head) = repo(&sb);
    let server = Server::start();
    let shared = sb.path().join("shared");
    let store = format!("sqlite:{}", shared.join("pr.db").display());
    gh(
        &sb,
        &server,
        &[
            "ci", "--base", &base, "--head", &head, "--pr", "8", "--rounds", "2", "--store", &store,
        ],
    )
    .expect(1);
    // Before: it replaced the default store's report in .pitwall/report.
    assert!(shared.join("pr-report/index.html").exists());
    assert!(!sb.path().join(".pitwall/report").exists());
    // --report-dir wins.
    let out = sb.path().join("elsewhere");
    gh(
        &sb,
        &server,
        &[
            "ci",
            "--base",
            &base,
            "--head",
            &head,
            "--pr",
            "8",
            "--rounds",
            "2",
            "--store",
            &store,
            "--report-dir",
            out.to_str().unwrap(),
        ],
    )
    .expect(1);
    assert!(out.join("index.html").exists());
}
