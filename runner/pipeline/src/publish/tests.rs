//! What publishing refuses before it builds a client or sends anything: no pull or merge
//! request to comment on (said with a hint when publishing, without one when `ci` checks),
//! a token host only pitwall.toml names; and which report link wins.

use pitwall_forge::ci::CiVars;

use super::{PublishError, PublishRequest, Publisher, check};
use pitwall_engine::config::{Config, Publish};

fn vars(pairs: &[(&str, &str)]) -> CiVars {
    CiVars::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn config() -> Config {
    let mut c = Config::builtin_default("toy");
    c.github.publish = vec![Publish::Comment];
    c.github.repo = Some("octo/bench".into());
    c
}

fn refusal(r: Result<Publisher, PublishError>) -> String {
    match r {
        Err(e @ (PublishError::Refused(_) | PublishError::NoRequest { .. })) => e.to_string(),
        Err(e) => panic!("not a refusal: {e}"),
        Ok(_) => panic!("not refused"),
    }
}

#[test]
fn no_pull_or_merge_request_is_refused_before_any_client() {
    let req = PublishRequest::default();
    let github = vars(&[
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_REF", "refs/heads/main"),
    ]);
    assert_eq!(
        refusal(Publisher::connect(&config(), &req, &github)),
        "no pull request to comment on (hint: --pr N, run in a pull_request job, or leave \"comment\" out of [github] publish)"
    );
    assert_eq!(
        refusal(check(&config(), &req, &github)),
        "no pull request to comment on (--pr N, a pull_request job, or leave \"comment\" out of [github] publish)"
    );
    let gitlab = vars(&[("GITLAB_CI", "true")]);
    assert_eq!(
        refusal(Publisher::connect(&config(), &req, &gitlab)),
        "no merge request to comment on (hint: --mr N, or run in a merge-request pipeline)"
    );
    assert_eq!(
        refusal(check(&config(), &req, &gitlab)),
        "no merge request to comment on (--mr N, or run in a merge-request pipeline)"
    );
}

#[test]
fn a_host_only_pitwall_toml_names_never_gets_the_token() {
    let mut c = config();
    c.github.api_url = "https://evil.example/api".into();
    let req = PublishRequest {
        pr: Some(7),
        ..PublishRequest::default()
    };
    let e = refusal(Publisher::connect(&c, &req, &vars(&[])));
    assert!(e.contains("never chooses the host"), "{e}");
}

#[test]
fn the_report_link_flag_wins_over_pitwall_toml_which_wins_over_the_servers_page() {
    let mut c = config();
    c.project.name = "shop floor".into();
    c.serve.url = Some("https://pitwall.example/team".into());
    let mut req = PublishRequest::default();
    assert_eq!(
        req.report_url(&c, Some("01a2/b")).as_deref(),
        Some("https://pitwall.example/team/p/shop%20floor/compare/01a2%2Fb"),
        "the pair's page on the team's server"
    );
    assert_eq!(req.report_url(&c, None), None, "no pair, no page");
    c.github.report_url = Some("https://ci.example/from-config".into());
    assert_eq!(
        req.report_url(&c, Some("p")).as_deref(),
        Some("https://ci.example/from-config")
    );
    req.report_url = Some("https://ci.example/flag".into());
    assert_eq!(
        req.report_url(&c, Some("p")).as_deref(),
        Some("https://ci.example/flag")
    );
}
