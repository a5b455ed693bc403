//! Publishing to a real local HTTP server that emulates GitHub: the sticky comment, paging,
//! retries without duplicates, clear errors that never show the token, commit statuses.

use std::collections::BTreeMap;
use std::error::Error as _;
use std::time::{Duration, Instant};

use pitwall_e2e::github::{BOT, Fault, REPO, Server};
use pitwall_forge::github::{
    CommentOutcome, GithubApi, GithubConfig, GithubError, HttpGithub, MARKER, STATUS_CONTEXT,
    Secret, publish_comment, publish_status,
};
use pitwall_reports::compare::{ComparedBenchmark, ComparisonReport};
use pitwall_reports::github::{CommentOptions, forge_summary, render_pr_comment};
use pitwall_stats::ab::{AbConfig, PairInput, compare_all};

const TOKEN: &str = "ghp_s3cretTOKENvalue1234567890";

fn config(server: &Server) -> GithubConfig {
    let mut c = GithubConfig::new(&server.url, REPO, Secret::new(TOKEN));
    c.backoff_base = Duration::from_millis(10);
    c.max_total = Duration::from_secs(5);
    c
}

fn client(server: &Server) -> HttpGithub {
    HttpGithub::new(config(server)).unwrap()
}

/// One benchmark per (name, base level, candidate level).
fn report(levels: &[(&str, f64, f64)]) -> ComparisonReport {
    let data: Vec<(Vec<f64>, Vec<f64>)> = levels
        .iter()
        .map(|&(_, b, c)| {
            let s = |l: f64, salt: u64| -> Vec<f64> {
                (0..20u64)
                    .map(|i| l * (1.0 + 0.01 * (((i * 7919 + salt) % 1000) as f64 / 500.0 - 1.0)))
                    .collect()
            };
            (s(b, 11), s(c, 29))
        })
        .collect();
    let pairs: Vec<PairInput<'_>> = data
        .iter()
        .map(|(b, c)| PairInput {
            base: b,
            cand: c,
            higher_is_better: false,
            threshold: None,
        })
        .collect();
    let benchmarks = levels
        .iter()
        .zip(compare_all(&pairs, &AbConfig::default()))
        .map(|(l, comparison)| ComparedBenchmark {
            suite: "toy".into(),
            name: l.0.into(),
            params: BTreeMap::new(),
            measure: "time".into(),
            unit: "ns".into(),
            higher_is_better: false,
            comparison,
            cycles_verdict: None,
            threshold_raised_from_pct: None,
        })
        .collect();
    ComparisonReport {
        rounds: Some(3),
        sequential: None,
        replicates: 3,
        baseline: "main".into(),
        candidate: "pr".into(),
        benchmarks,
        only_baseline: vec![],
        only_candidate: vec![],
        failed: vec![],
        skipped: vec![],
        implausible: vec![],
        incompatible: vec![],
        env_mismatch: vec![],
        incomparable: false,
        identical: vec![],
        time: None,
        contended: Vec::new(),
    }
}

fn body(text: &str) -> String {
    format!("{MARKER}\n{text}")
}

#[test]
fn first_publish_creates_second_updates_the_same_comment() {
    let server = Server::start();
    server.seed(7, 3);
    let gh = client(&server);
    let r = report(&[("parse", 100.0, 130.0), ("steady", 50.0, 50.0)]);
    let first = render_pr_comment(&r, &CommentOptions::default());
    let created = publish_comment(&gh, 7, &first, BOT).unwrap();
    let CommentOutcome::Created(id) = created else {
        panic!("{created:?}")
    };
    let updated = publish_comment(&gh, 7, &body("second run"), BOT).unwrap();
    assert_eq!(updated, CommentOutcome::Updated(id));
    let ours: Vec<_> = server
        .comments_on(7)
        .into_iter()
        .filter(|c| c.body.starts_with(MARKER))
        .collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert_eq!(ours[0].body, body("second run"));
    assert_eq!(server.comments_on(7).len(), 4);
}

#[test]
fn a_body_without_the_marker_gets_it_and_stays_sticky() {
    let server = Server::start();
    let gh = client(&server);
    publish_comment(&gh, 3, "plain", BOT).unwrap();
    publish_comment(&gh, 3, "plain again", BOT).unwrap();
    let all = server.comments_on(3);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].body, body("plain again"));
}

#[test]
fn marker_on_page_two_is_found_and_updated() {
    let server = Server::start();
    server.seed(9, 120);
    let id = server.add_comment(9, &body("old"));
    server.seed(9, 29);
    let gh = client(&server);
    assert_eq!(gh.list_issue_comments(9, 1).unwrap().len(), 100);
    assert_eq!(gh.list_issue_comments(9, 2).unwrap().len(), 50);
    let outcome = publish_comment(&gh, 9, &body("new"), BOT).unwrap();
    assert_eq!(outcome, CommentOutcome::Updated(id));
    assert_eq!(server.comments_on(9).len(), 150);
    let pages: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET")
        .map(|r| r.path.clone())
        .collect();
    assert!(
        pages.iter().all(|p| p.contains("per_page=100")),
        "{pages:?}"
    );
}

#[test]
fn retry_after_502_with_the_comment_already_made_creates_one() {
    let server = Server::start();
    server.fail_next("POST", Fault::BadGatewayAfter);
    let gh = client(&server);
    let outcome = publish_comment(&gh, 5, &body("x"), BOT).unwrap();
    let all = server.comments_on(5);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(outcome, CommentOutcome::Created(all[0].id));
    let posts = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(
        posts, 1,
        "the create must not be sent again once it is found"
    );
}

#[test]
fn retry_after_502_before_anything_happened_creates_one() {
    let server = Server::start();
    server.fail_next("POST", Fault::BadGatewayBefore);
    let gh = client(&server);
    publish_comment(&gh, 5, &body("x"), BOT).unwrap();
    assert_eq!(server.comments_on(5).len(), 1);
}

#[test]
fn retry_after_429_waits_and_creates_one() {
    let server = Server::start();
    server.fail_next("POST", Fault::TooManyRequests { retry_after: 1 });
    let gh = client(&server);
    let t = Instant::now();
    publish_comment(&gh, 6, &body("x"), BOT).unwrap();
    assert!(t.elapsed() >= Duration::from_secs(1), "{:?}", t.elapsed());
    assert_eq!(server.comments_on(6).len(), 1);
}

#[test]
fn rate_limit_reset_within_the_budget_is_waited_out() {
    let server = Server::start();
    server.fail_next("GET", Fault::RateLimitReset { secs: 1 });
    let gh = client(&server);
    let t = Instant::now();
    assert!(gh.list_issue_comments(1, 1).unwrap().is_empty());
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn rate_limit_reset_beyond_the_budget_fails_fast() {
    let server = Server::start();
    server.fail_next("GET", Fault::RateLimitReset { secs: 3600 });
    let mut c = config(&server);
    c.max_total = Duration::from_secs(2);
    let gh = HttpGithub::new(c).unwrap();
    let t = Instant::now();
    let err = gh.list_issue_comments(1, 1).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2));
    assert!(matches!(err, GithubError::RateLimited { .. }), "{err:?}");
    assert!(err.to_string().contains("rate limit"), "{err}");
}

#[test]
fn persistent_server_errors_give_up_within_the_budget_keeping_the_cause() {
    let server = Server::start();
    for _ in 0..50 {
        server.fail_next("PATCH", Fault::BadGatewayBefore);
    }
    let mut c = config(&server);
    c.max_total = Duration::from_millis(300);
    let gh = HttpGithub::new(c).unwrap();
    let err = gh.update_issue_comment(1, "x").unwrap_err();
    assert!(
        matches!(err, GithubError::RetriesExhausted { .. }),
        "{err:?}"
    );
    let cause = err.source().unwrap().to_string();
    assert!(cause.contains("502"), "{cause}");
}

fn assert_no_token(text: &str) {
    assert!(!text.contains(TOKEN), "token leaked: {text}");
    assert!(!text.contains("s3cret"), "token leaked: {text}");
}

#[test]
fn unauthorized_names_the_variable_and_never_the_token() {
    let server = Server::start();
    server.state.lock().unwrap().always_401 = true;
    let mut c = config(&server);
    c.token_var = "PITWALL_GH_TOKEN".into();
    assert_no_token(&format!("{c:?}"));
    let gh = HttpGithub::new(c).unwrap();
    assert_no_token(&format!("{gh:?}"));
    let err = publish_comment(&gh, 1, "x", BOT).unwrap_err();
    let shown = format!("{err}");
    assert!(shown.contains("token rejected"), "{shown}");
    assert!(shown.contains("hint: check PITWALL_GH_TOKEN"), "{shown}");
    assert_no_token(&shown);
    assert_no_token(&format!("{err:?}"));
    assert_eq!(server.requests().len(), 1, "401 is not retried");
}

#[test]
fn forbidden_names_the_permissions_and_redacts_an_echoed_token() {
    let server = Server::start();
    server.state.lock().unwrap().echo = Some(format!("(token {TOKEN})"));
    server.fail_next("POST", Fault::Forbidden);
    let gh = client(&server);
    let err = gh.create_issue_comment(2, "x").unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("pull-requests: write"), "{shown}");
    assert!(shown.contains("statuses: write"), "{shown}");
    assert_no_token(&shown);
    assert_no_token(&format!("{err:?}"));
}

#[test]
fn not_found_names_repository_and_pull_request() {
    let server = Server::start();
    let mut c = config(&server);
    c.repo = "octo/missing".into();
    let gh = HttpGithub::new(c).unwrap();
    let err = publish_comment(&gh, 42, "x", BOT).unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.contains("repository octo/missing or pull request 42 not found"),
        "{shown}"
    );
}

#[test]
fn bad_configuration_is_refused_before_any_request() {
    let server = Server::start();
    for (url, repo) in [("ftp://x", REPO), (server.url.as_str(), "no-slash")] {
        let mut c = config(&server);
        c.api_url = url.into();
        c.repo = repo.into();
        let err = HttpGithub::new(c).unwrap_err();
        assert!(matches!(err, GithubError::Config { .. }), "{err:?}");
    }
    let mut c = config(&server);
    c.token = Secret::new(" ");
    let err = HttpGithub::new(c).unwrap_err();
    assert!(err.to_string().contains("GITHUB_TOKEN is not set"), "{err}");
    assert_eq!(format!("{}", Secret::new(TOKEN)), "***");
}

#[test]
fn headers_carry_bearer_token_accept_version_and_user_agent() {
    let server = Server::start();
    let gh = client(&server);
    gh.list_issue_comments(1, 1).unwrap();
    let r = &server.requests()[0];
    assert_eq!(
        r.authorization.as_deref(),
        Some(&*format!("Bearer {TOKEN}"))
    );
    assert_eq!(r.accept.as_deref(), Some("application/vnd.github+json"));
    assert_eq!(r.api_version.as_deref(), Some("2022-11-28"));
    assert!(r.user_agent.as_deref().unwrap().starts_with("pitwall/"));
}

#[test]
fn statuses_carry_state_and_summary() {
    let server = Server::start();
    let gh = client(&server);
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let regressed = report(&[("parse", 100.0, 130.0), ("steady", 50.0, 50.0)]);
    publish_status(
        &gh,
        sha,
        &forge_summary(&regressed),
        Some("https://ci.example/r/1"),
    )
    .unwrap();
    let fine = report(&[("steady", 50.0, 50.0)]);
    publish_status(&gh, sha, &forge_summary(&fine), None).unwrap();
    let mut incomparable = fine.clone();
    incomparable.env_mismatch = vec!["gpu model: A vs B".into()];
    incomparable.incomparable = true;
    publish_status(&gh, sha, &forge_summary(&incomparable), None).unwrap();

    let st = server.state.lock().unwrap().statuses.clone();
    assert_eq!(st.len(), 3);
    assert!(
        st.iter()
            .all(|(s, b)| s == sha && b["context"] == STATUS_CONTEXT)
    );
    assert_eq!(st[0].1["state"], "failure");
    assert_eq!(st[0].1["target_url"], "https://ci.example/r/1");
    let d0 = st[0].1["description"].as_str().unwrap();
    assert!(
        d0.starts_with(
            "1 regression, 0 improvements, 1 unchanged, 0 inconclusive; worst: toy/parse/time +30%"
        ),
        "{d0}"
    );
    assert!(d0.chars().count() <= 140);
    assert_eq!(st[1].1["state"], "success");
    assert!(st[1].1.get("target_url").is_none());
    assert_eq!(st[2].1["state"], "success");
    let d2 = st[2].1["description"].as_str().unwrap();
    assert!(d2.starts_with("incomparable: environments differ"), "{d2}");
}

#[test]
fn status_for_a_bad_sha_is_refused() {
    let server = Server::start();
    let gh = client(&server);
    let fine = report(&[("steady", 50.0, 50.0)]);
    let err = publish_status(&gh, "../../x", &forge_summary(&fine), None).unwrap_err();
    assert!(err.to_string().contains("not a hexadecimal sha"), "{err}");
    assert!(server.requests().is_empty());
}

/// The last sink redacts: a comment body that quotes a known secret (a stored run from before
/// it was known, an imported file) reaches GitHub with `***`, whatever characters it holds.
#[test]
fn a_comment_body_never_carries_a_known_secret() {
    let server = Server::start();
    let mut cfg = config(&server);
    let quoted = r#"db"pass\word-4711"#;
    cfg.redactor.add(quoted);
    let gh = HttpGithub::new(cfg).unwrap();
    let text = body(&format!("stderr: {TOKEN} and {quoted}"));
    publish_comment(&gh, 5, &text, BOT).unwrap();
    let sent = &server.comments_on(5)[0].body;
    assert_eq!(sent, &body("stderr: *** and ***"));
}
