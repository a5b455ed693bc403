//! Forge calls that never duplicate and never run long (issue 28, item 4), against the local
//! server standing in for GitHub: pitwall's sticky comment behind more than 10,000 others is
//! found (from the last page backwards, with no page cap) instead of a second one created; a
//! check run a 502 hid is found instead of created again; a server that never answers costs
//! at most the call's budget, retries included.

use std::time::{Duration, Instant};

use pitwall_e2e::github::{BOT, Fault, REPO, Server};
use pitwall_forge::github::{
    CheckRun, CommentOutcome, GithubApi, GithubConfig, HttpGithub, MARKER, Secret, publish_check,
    publish_comment, publish_comment_at,
};
use pitwall_reports::compare::ComparisonReport;
use pitwall_reports::github::forge_summary;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

fn client(url: &str, max_total: Duration) -> HttpGithub {
    let mut c = GithubConfig::new(url, REPO, Secret::new("ghp_notARealToken1234567890"));
    c.backoff_base = Duration::from_millis(10);
    c.max_total = max_total;
    HttpGithub::new(c).unwrap()
}

fn list_requests(server: &Server) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.contains("/comments?per_page"))
        .count()
}

#[test]
fn a_comment_behind_ten_thousand_others_is_updated_not_duplicated() {
    for with_link in [true, false] {
        let server = Server::start();
        server.state.lock().unwrap().no_link_header = !with_link;
        server.seed(5, 10_050);
        let ours = server.add_comment(5, &format!("{MARKER}\nold"));
        server.seed(5, 7);
        let gh = client(&server.url, Duration::from_secs(30));
        let outcome = publish_comment(&gh, 5, &format!("{MARKER}\nnew"), BOT).unwrap();
        assert_eq!(outcome, CommentOutcome::Updated(ours), "link: {with_link}");
        let pitwall: Vec<_> = server
            .comments_on(5)
            .into_iter()
            .filter(|c| c.body.starts_with(MARKER))
            .collect();
        assert_eq!(pitwall.len(), 1, "one sticky comment (link: {with_link})");
        assert_eq!(pitwall[0].body, format!("{MARKER}\nnew"));
        if with_link {
            // The last page, then the one before it holds the comment: two lists, not 102.
            assert!(list_requests(&server) <= 3, "{}", list_requests(&server));
        }
    }
}

/// The comment id stored for the pull request is used first: one GET and one PATCH, no list;
/// a stored id that is gone, someone else's or another pull request's is not edited, and the
/// comments are searched instead.
#[test]
fn a_stored_comment_id_is_used_first_and_checked() {
    let server = Server::start();
    server.seed(5, 250);
    let ours = server.add_comment(5, &format!("{MARKER}\nold"));
    let gh = client(&server.url, Duration::from_secs(30));
    let outcome = publish_comment_at(&gh, 5, &format!("{MARKER}\nnew"), BOT, Some(ours)).unwrap();
    assert_eq!(outcome, CommentOutcome::Updated(ours));
    assert_eq!(list_requests(&server), 0, "no search");
    // Someone else's comment with the marker, another pull request's, a deleted one.
    let spoof = server.add_comment_by(5, &format!("{MARKER}\nspoof"), "mallory");
    let other_pr = server.add_comment(6, &format!("{MARKER}\nsix"));
    for stored in [spoof, other_pr, 999_999] {
        let body = format!("{MARKER}\nfrom {stored}");
        let outcome = publish_comment_at(&gh, 5, &body, BOT, Some(stored)).unwrap();
        assert_eq!(outcome, CommentOutcome::Updated(ours), "stored {stored}");
    }
    assert!(
        server
            .comments_on(5)
            .iter()
            .any(|c| c.id == spoof && c.body.ends_with("spoof"))
    );
    assert!(
        server
            .comments_on(6)
            .iter()
            .all(|c| c.body.ends_with("six"))
    );
}

#[test]
fn a_check_run_created_behind_a_502_is_not_created_again() {
    let server = Server::start();
    let gh = client(&server.url, Duration::from_secs(10));
    server.fail_next("POST", Fault::BadGatewayAfter);
    let report = ComparisonReport {
        rounds: Some(3),
        sequential: None,
        replicates: 3,
        baseline: "a".into(),
        candidate: "b".into(),
        benchmarks: vec![],
        only_baseline: vec![],
        only_candidate: vec![],
        failed: vec![],
        skipped: vec![],
        incompatible: vec![],
        env_mismatch: vec![],
        implausible: vec![],
        incomparable: false,
        identical: vec![],
        time: None,
        contended: Vec::new(),
    };
    let run = CheckRun::for_summary(&forge_summary(&report), "body", None);
    publish_check(&gh, SHA, &run).unwrap();
    assert_eq!(server.check_runs().len(), 1, "one check run, not two");
}

#[test]
fn a_server_that_never_answers_costs_at_most_the_budget() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    // Accepts every connection and never answers.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming() {
            held.push(s);
        }
    });
    let gh = client(&url, Duration::from_secs(2));
    let start = Instant::now();
    let err = gh.authenticated_login().unwrap_err();
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(3500),
        "the 2 s budget holds, the 30 s request timeout included: {took:?} ({err})"
    );
}
