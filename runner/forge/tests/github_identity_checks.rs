//! Who owns the sticky comment, the `pitwall` check run, and secrets a server echoes back,
//! against the local server standing in for GitHub: a comment with pitwall's marker written
//! by anyone else is never edited; the check run concludes failure, neutral or success and is
//! updated in place; a token echoed in base64 (a `Basic` header) never reaches a message
//! (issue 15, item 9).

use std::collections::BTreeMap;
use std::time::Duration;

use pitwall_e2e::github::{BOT, Fault, REPO, Server};
use pitwall_forge::github::{
    ACTIONS_BOT, CheckConclusion, CheckOutcome, CheckRun, CommentOutcome, GithubApi, GithubConfig,
    GithubError, HttpGithub, MARKER, Secret, identity, publish_check, publish_comment,
};
use pitwall_reports::compare::{ComparedBenchmark, ComparisonReport};
use pitwall_reports::github::forge_summary;
use pitwall_stats::ab::{AbConfig, PairInput, compare_all};

const TOKEN: &str = "ghs_4ct10nsT0kenValue987654321";
const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

fn client(server: &Server) -> HttpGithub {
    let mut c = GithubConfig::new(&server.url, REPO, Secret::new(TOKEN));
    c.backoff_base = Duration::from_millis(10);
    c.max_total = Duration::from_secs(5);
    HttpGithub::new(c).unwrap()
}

/// One benchmark per (name, base level, candidate level), 20 samples each with 1% noise.
fn report(levels: &[(&str, f64, f64)]) -> ComparisonReport {
    let noisy = |l: f64, salt: u64| -> Vec<f64> {
        (0..20u64)
            .map(|i| l * (1.0 + 0.01 * (((i * 7919 + salt) % 1000) as f64 / 500.0 - 1.0)))
            .collect()
    };
    let data: Vec<(Vec<f64>, Vec<f64>)> = levels
        .iter()
        .map(|&(_, b, c)| (noisy(b, 11), noisy(c, 29)))
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

#[test]
fn a_spoofed_marker_comment_is_never_edited() {
    let server = Server::start();
    let spoofed = format!("{MARKER}\nall benchmarks improved, merge away");
    let spoof_id = server.add_comment_by(4, &spoofed, "mallory");
    let gh = client(&server);
    let login = identity(&gh, false).unwrap();
    assert_eq!(login, BOT);
    let first = publish_comment(&gh, 4, "1 regression", &login).unwrap();
    let CommentOutcome::Created(ours) = first else {
        panic!("the spoofed comment was taken for pitwall's: {first:?}")
    };
    assert_ne!(ours, spoof_id);
    // The next publication updates pitwall's own comment, still not mallory's.
    let second = publish_comment(&gh, 4, "2 regressions", &login).unwrap();
    assert_eq!(second, CommentOutcome::Updated(ours));
    let all = server.comments_on(4);
    assert_eq!(all.len(), 2);
    let theirs = all.iter().find(|c| c.id == spoof_id).unwrap();
    assert_eq!(theirs.body, spoofed, "mallory's comment untouched");
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !(r.method == "PATCH" && r.path.contains(&spoof_id.to_string()))),
        "no edit of the spoofed comment was even tried"
    );
}

#[test]
fn an_actions_token_that_cannot_ask_who_it_is_publishes_as_the_actions_bot() {
    let server = Server::start();
    server.state.lock().unwrap().user_login = None;
    let gh = client(&server);
    // Any other token that GitHub refuses to name is an error, not a guess.
    let err = identity(&gh, false).unwrap_err();
    assert!(matches!(err, GithubError::Forbidden { .. }), "{err:?}");
    let login = identity(&gh, true).unwrap();
    assert_eq!(login, ACTIONS_BOT);
    server.add_comment_by(5, &format!("{MARKER}\nspoof"), "mallory");
    let created = publish_comment(&gh, 5, "x", &login).unwrap();
    let again = publish_comment(&gh, 5, "y", &login).unwrap();
    let CommentOutcome::Created(id) = created else {
        panic!("{created:?}")
    };
    assert_eq!(again, CommentOutcome::Updated(id));
    assert_eq!(server.comments_on(5).len(), 2);
}

#[test]
fn the_check_run_concludes_failure_neutral_or_success_and_is_updated_in_place() {
    let server = Server::start();
    let gh = client(&server);
    let regressed = report(&[("parse", 100.0, 130.0), ("steady", 50.0, 50.0)]);
    let fine = report(&[("steady", 50.0, 50.0)]);
    let mut incomparable = fine.clone();
    incomparable.env_mismatch = vec!["gpu model: A vs B".into()];
    incomparable.incomparable = true;

    let md = |r: &ComparisonReport| format!("{MARKER}\n{}\n\n| a | b |\n", r.summary_line());
    let run = CheckRun::for_summary(
        &forge_summary(&regressed),
        &md(&regressed),
        Some("https://ci.example/r"),
    );
    assert_eq!(run.conclusion, CheckConclusion::Failure);
    let outcome = publish_check(&gh, SHA, &run).unwrap();
    let CheckOutcome::Created(id, CheckConclusion::Failure) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(
        outcome.to_string(),
        format!("check run {id} created (failure)")
    );
    let runs = server.check_runs();
    assert_eq!(runs.len(), 1);
    let b = &runs[0].body;
    assert_eq!(runs[0].name, "pitwall");
    assert_eq!(runs[0].sha, SHA);
    assert_eq!(b["status"], "completed");
    assert_eq!(b["conclusion"], "failure");
    assert_eq!(b["details_url"], "https://ci.example/r");
    let title = b["output"]["title"].as_str().unwrap();
    assert!(title.starts_with("1 regression"), "{title}");
    let summary = b["output"]["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("1 regression"),
        "marker dropped: {summary}"
    );
    assert!(summary.contains("| a | b |"), "the table: {summary}");

    for (r, want) in [(&incomparable, "neutral"), (&fine, "success")] {
        let run = CheckRun::for_summary(&forge_summary(r), &md(r), None);
        let outcome = publish_check(&gh, SHA, &run).unwrap();
        assert!(
            matches!(outcome, CheckOutcome::Updated(u, _) if u == id),
            "{outcome:?}"
        );
        let runs = server.check_runs();
        assert_eq!(runs.len(), 1, "one check run per commit");
        assert_eq!(runs[0].body["conclusion"], want);
    }
    assert_eq!(server.check_runs()[0].updates, 2);
    // An inconclusive comparison is neutral too.
    let mut inconclusive = fine.clone();
    inconclusive.benchmarks[0].comparison.verdict = pitwall_stats::ab::Verdict::Inconclusive;
    assert_eq!(
        CheckRun::for_summary(&forge_summary(&inconclusive), "", None).conclusion,
        CheckConclusion::Neutral
    );
}

#[test]
fn a_check_run_for_a_bad_sha_is_refused_before_any_request() {
    let server = Server::start();
    let gh = client(&server);
    let run = CheckRun::for_summary(&forge_summary(&report(&[("s", 1.0, 1.0)])), "x", None);
    let err = publish_check(&gh, "../../x", &run).unwrap_err();
    assert!(err.to_string().contains("not a full sha"), "{err}");
    assert!(server.requests().is_empty());
}

fn b64(bytes: &[u8]) -> String {
    pitwall_schema::secrets::base64_standard(bytes)
}

#[test]
fn credentials_echoed_in_base64_at_any_alignment_are_redacted() {
    // "user:" is 5 bytes: the token starts mid-group, so its base64 is not b64(TOKEN).
    let basic = b64(format!("user:{TOKEN}").as_bytes());
    let plain = b64(TOKEN.as_bytes());
    assert!(!basic.contains(&plain[..12]));
    for echo in [
        format!("got Authorization: Basic {basic}"),
        format!("got Authorization: Basic {plain}"),
    ] {
        let server = Server::start();
        server.state.lock().unwrap().echo = Some(echo.clone());
        server.fail_next("POST", Fault::Forbidden);
        let gh = client(&server);
        let err = gh.create_issue_comment(2, "x").unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(
            shown.contains("got"),
            "the echo is shown, redacted: {shown}"
        );
        assert!(shown.contains("***"), "{shown}");
        assert!(!shown.contains(&basic[8..20]), "base64 leaked: {shown}");
        assert!(!shown.contains(&plain[..12]), "base64 leaked: {shown}");
    }
}
