//! The store conformance checks against a real `pitwall serve` (the binary, on SQLite, and on
//! PostgreSQL where a server is available), through [`HttpStore`]: the checks that do not need
//! what a server store refuses by design (exclusions, pruning, reading histories, writing
//! alerts, tokens), each on a fresh server.

use pitwall_e2e::serve::Server;
use pitwall_e2e::{Sandbox, pg_server};
use pitwall_schema::UploadAlertRules;
use pitwall_store::conformance as check;
use pitwall_store::{Store, StoreError};

use super::HttpStore;

/// A named conformance check.
type Check = (&'static str, fn(&mut dyn Store));

/// A fresh server on `store_url` (`None`: a SQLite file in the sandbox) and a runner token.
fn fresh(store_url: Option<&str>) -> (Sandbox, Server, Box<dyn Store>) {
    let sb = Sandbox::new();
    let store = store_url
        .map(str::to_string)
        .unwrap_or_else(|| format!("sqlite:{}", sb.path().join("server.db").display()));
    let out = sb
        .run(&[
            "--store", &store, "token", "create", "--role", "runner", "--name", "conf",
        ])
        .expect(0)
        .stdout();
    let server = Server::start(&sb, &["--store", &store]);
    // The conformance fixtures are of project `toy`.
    let client =
        HttpStore::connect(&server.base, "toy", out.trim(), UploadAlertRules::default()).unwrap();
    (sb, server, Box::new(client))
}

fn every_check_on_sqlite() {
    let checks: [Check; 10] = [
        ("pair runs", check::lists_pair_runs_by_testbed),
        ("prefix and latest", check::finds_runs_by_prefix_and_latest),
        ("ambiguity", check::ambiguity_lists_at_most_five_candidates),
        (
            "round_trips_a_run_exactly",
            check::round_trips_a_run_exactly,
        ),
        ("round_trips_replicates", check::round_trips_replicates),
        (
            "empty metadata",
            check::result_with_all_empty_metadata_keeps_it,
        ),
        (
            "latest on empty",
            check::latest_on_an_empty_store_is_not_found,
        ),
        (
            "idempotent and conflicts",
            check::duplicate_inserts_are_idempotent_and_conflicts_change_nothing,
        ),
        ("newest first", check::lists_newest_first_with_counts),
        (
            "invalid runs",
            check::invalid_runs_are_refused_before_writing,
        ),
    ];
    for (name, f) in checks {
        let (_sb, _server, mut store) = fresh(None);
        eprintln!("conformance over HTTP: {name}");
        f(store.as_mut());
    }
    let (_sb, _server, mut store) = fresh(None);
    check::stores_a_hundred_thousand_samples_in_one_run(store.as_mut());
}

#[test]
fn the_http_store_passes_the_conformance_checks_on_sqlite() {
    every_check_on_sqlite();
}

#[test]
fn the_http_store_passes_the_conformance_checks_on_postgresql() {
    let Some(pg) = pg_server() else {
        return;
    };
    // One database per check: each server starts from an empty store.
    let check_db = || pg.database();
    let dbs: Vec<_> = (0..11).map(|_| check_db()).collect();
    let mut urls = dbs.iter().map(|d| d.url.clone());
    let checks: [fn(&mut dyn Store); 11] = [
        check::lists_pair_runs_by_testbed,
        check::finds_runs_by_prefix_and_latest,
        check::ambiguity_lists_at_most_five_candidates,
        check::round_trips_a_run_exactly,
        check::round_trips_replicates,
        check::result_with_all_empty_metadata_keeps_it,
        check::latest_on_an_empty_store_is_not_found,
        check::duplicate_inserts_are_idempotent_and_conflicts_change_nothing,
        check::lists_newest_first_with_counts,
        check::invalid_runs_are_refused_before_writing,
        check::stores_a_hundred_thousand_samples_in_one_run,
    ];
    for f in checks {
        let url = urls.next().unwrap();
        let (_sb, _server, mut store) = fresh(Some(&url));
        f(store.as_mut());
    }
}

#[test]
fn what_needs_the_database_is_refused_by_name() {
    let (_sb, _server, mut store) = fresh(None);
    let e = store.delete_run("x").unwrap_err();
    assert!(matches!(e, StoreError::NotOverHttp { .. }), "{e:?}");
    assert!(e.to_string().contains("deleting runs"), "{e}");
    assert!(store.detects_alerts());
    assert!(store.list_alerts().unwrap().is_empty());
}

#[test]
fn a_bad_token_is_refused_with_a_hint() {
    let sb = Sandbox::new();
    let store = format!("sqlite:{}", sb.path().join("server.db").display());
    let server = Server::start(&sb, &["--store", &store]);
    let client =
        HttpStore::connect(&server.base, "toy", "pw_wrong", UploadAlertRules::default()).unwrap();
    let e = client.list_runs(None).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, StoreError::Refused { status: 401, .. }),
        "{e:?}"
    );
    assert!(
        text.contains("PITWALL_TOKEN") && !text.contains("pw_wrong"),
        "{text}"
    );
}
