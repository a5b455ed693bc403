//! The pages people work in on `pitwall serve` (issue 30), end to end with the real binary:
//! signing in with a token (a session in an HttpOnly, SameSite=Strict cookie; the sign-in form
//! tied to a cookie of its own), the alerts page with a triage form per alert, a form without
//! its CSRF token refused and the store unchanged, a reader's session without forms, the
//! change recorded under the token's name and shown on the alert's page, signing out, a
//! revoked token ending its sessions, hostile names escaped, and headless Chromium signing in
//! and acking an alert through the form (`tests/browser/triage_alert.py`).

use std::time::Duration;

use pitwall_e2e::serve::{Reply, Server};
use pitwall_e2e::{Sandbox, git};
use serde_json::{Value, json};

const HOSTILE: &str = "<img src=x onerror=alert(1)>";

/// Twelve history runs of a benchmark with a hostile name in `server.db`, +20% from the
/// seventh commit: one alert. The store.
fn store_with_an_alert(sb: &Sandbox) -> String {
    store_with_history(sb, "[project]\nname = \"shop\"\n", &[("h200-a", 12)])
}

/// `store_with_an_alert` under `toml`, the first `n` commits measured on each testbed.
fn store_with_history(sb: &Sandbox, toml: &str, testbeds: &[(&str, usize)]) -> String {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    let store = format!("sqlite:{}", dir.join("server.db").display());
    sb.write("pitwall.toml", toml);
    for i in 0..12 {
        std::fs::write(dir.join("src.txt"), format!("change {i}\n")).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &format!("change {i}")]);
        let sha = git(dir, &["rev-parse", "HEAD"]);
        let level = if i < 6 { 1000.0 } else { 1200.0 };
        let samples: Vec<f64> = (0..15)
            .map(|k| level * (1.0 + 0.002 * (((i * 7 + k * 3) % 11) as f64 - 5.0) / 5.0))
            .collect();
        let doc =
            json!({"schema": "pitwall/v1", "benchmarks": [{"name": HOSTILE, "samples": samples}]});
        let f = sb.write(&format!("r{i}.json"), &doc.to_string());
        for (testbed, n) in testbeds {
            if i >= *n {
                continue;
            }
            sb.run(&[
                "--store",
                &store,
                "import",
                "--quiet",
                f.to_str().unwrap(),
                "--commit",
                &sha,
                "--branch",
                "main",
                "--testbed",
                testbed,
            ])
            .expect(0);
        }
    }
    store
}

fn token(sb: &Sandbox, store: &str, role: &str, name: &str) -> String {
    let out = sb
        .run(&[
            "--store", store, "token", "create", "--role", role, "--name", name,
        ])
        .expect(0)
        .stdout();
    out.trim().to_string()
}

/// Signs in with `secret`: the session cookie (`pitwall_session=…`) and the answer.
fn sign_in(s: &Server, secret: &str) -> (Option<String>, Reply) {
    let form = s.browse("/p/shop/signin", "");
    assert_eq!(form.status, 200, "{}", form.body);
    let nonce = form
        .cookie("pitwall_signin")
        .expect("the sign-in form's cookie");
    let csrf = form
        .input_value("csrf")
        .expect("the sign-in form's CSRF token");
    let r = s.form(
        "/p/shop/signin",
        &nonce,
        &[("csrf", &csrf), ("token", secret)],
    );
    (r.cookie("pitwall_session"), r)
}

fn alerts(s: &Server, secret: &str) -> Vec<Value> {
    let r = s.get("/api/v1/p/shop/alerts", Some(secret));
    assert_eq!(r.status, 200, "{}", r.body);
    r.json().as_array().unwrap().clone()
}

#[test]
fn people_sign_in_and_triage_alerts_in_the_browser() {
    let sb = Sandbox::new();
    let store = store_with_an_alert(&sb);
    let alice = token(&sb, &store, "triage", "alice");
    let bob = token(&sb, &store, "read", "bob");
    let s = Server::start(&sb, &["--store", &store]);
    let found = alerts(&s, &bob);
    assert_eq!(found.len(), 1, "{found:?}");
    let id = found[0]["id"].as_str().unwrap().to_string();
    assert_eq!(found[0]["status"], "active");

    // A hostile project name in the address is text on the page.
    let hostile = s.browse("/p/%3Cscript%3Ealert(1)%3C%2Fscript%3E/signin", "");
    assert_eq!(hostile.status, 200);
    assert!(
        !hostile.body.contains("<script>alert(1)"),
        "{}",
        hostile.body
    );
    assert!(
        hostile.body.contains("&lt;script&gt;alert(1)"),
        "{}",
        hostile.body
    );
    // Not signed in: the pages send the browser to the sign-in form; the API says 401.
    let r = s.browse("/p/shop/alerts", "");
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location").as_deref(), Some("/p/shop/signin"));
    assert_eq!(s.browse("/api/v1/p/shop/alerts", "").status, 401);

    // The sign-in form wants its own cookie and CSRF token, and a good token.
    let form = s.browse("/p/shop/signin", "");
    let signin_cookie = form.set_cookie("pitwall_signin").unwrap();
    assert!(
        signin_cookie.contains("HttpOnly; SameSite=Strict"),
        "{signin_cookie}"
    );
    let csrf = form.input_value("csrf").unwrap();
    let no_cookie = s.form("/p/shop/signin", "", &[("csrf", &csrf), ("token", &alice)]);
    assert_eq!(
        no_cookie.status, 403,
        "another site's form: {}",
        no_cookie.body
    );
    assert!(no_cookie.cookie("pitwall_session").is_none());
    let (none, wrong) = sign_in(&s, "pw_0000");
    assert_eq!((wrong.status, none), (401, None));
    assert!(
        wrong.body.contains("unknown or revoked token"),
        "{}",
        wrong.body
    );

    // Alice signs in: an HttpOnly, SameSite=Strict session cookie for 12 h, then the alerts.
    let (cookie, r) = sign_in(&s, &alice);
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.header("location").as_deref(), Some("/p/shop/alerts"));
    let line = r.set_cookie("pitwall_session").unwrap();
    assert!(
        line.contains("HttpOnly; SameSite=Strict; Path=/; Max-Age=43200"),
        "{line}"
    );
    let alice_cookie = cookie.unwrap();
    assert!(
        !alice_cookie.contains(&alice),
        "the cookie is not the token"
    );
    let page = s.browse("/p/shop/alerts", &alice_cookie);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("signed in as <strong>alice</strong>"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<img src=x"), "escaped: {}", page.body);
    assert!(page.body.contains("&lt;img src=x"), "{}", page.body);
    assert!(
        page.body.contains(r#"<form class="triage""#),
        "{}",
        page.body
    );
    let csrf = page.input_value("csrf").unwrap();
    let policy = page.header("content-security-policy").unwrap();
    assert!(policy.contains("form-action 'self'"), "{policy}");
    // A session reads the API too, but never writes through it.
    assert_eq!(s.browse("/api/v1/p/shop/alerts", &alice_cookie).status, 200);
    let api_write = s.send(
        "POST",
        &format!("/api/v1/p/shop/alerts/{id}"),
        &[
            ("Cookie", &alice_cookie),
            ("Content-Type", "application/json"),
        ],
        br#"{"status": "dismissed"}"#,
    );
    assert_eq!(api_write.status, 401, "{}", api_write.body);

    // A form without its CSRF token, or with another's, is refused and changes nothing.
    let path = format!("/p/shop/alerts/{id}");
    let forged = "a".repeat(64);
    for bad in ["", "0123", forged.as_str()] {
        let r = s.form(
            &path,
            &alice_cookie,
            &[("csrf", bad), ("status", "dismissed")],
        );
        assert_eq!(r.status, 403, "{}", r.body);
    }
    let r = s.form(&path, "", &[("csrf", &csrf), ("status", "dismissed")]);
    assert_eq!(r.status, 401, "no session: {}", r.body);
    assert_eq!(alerts(&s, &bob)[0]["status"], "active", "nothing changed");

    // Bob's session (role read) reads, with no forms, and his form posts are refused.
    let (bob_cookie, _) = sign_in(&s, &bob);
    let bob_cookie = bob_cookie.unwrap();
    let page = s.browse("/p/shop/alerts", &bob_cookie);
    assert_eq!(page.status, 200);
    assert!(
        !page.body.contains(r#"<form class="triage""#),
        "{}",
        page.body
    );
    let bob_csrf = page.input_value("csrf").unwrap();
    let r = s.form(
        &path,
        &bob_cookie,
        &[("csrf", &bob_csrf), ("status", "dismissed")],
    );
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body.contains("needs role triage"), "{}", r.body);

    // Alice acks with a note: recorded under her token's name, shown on the alert's page.
    let r = s.form(
        &path,
        &alice_cookie,
        &[
            ("csrf", &csrf),
            ("status", "acknowledged"),
            ("note", "on it <b>"),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.header("location").as_deref(), Some(path.as_str()));
    let stored = s
        .get(&format!("/api/v1/p/shop/alerts/{id}"), Some(&bob))
        .json();
    assert_eq!(stored["alert"]["status"], "acknowledged");
    assert_eq!(stored["alert"]["note"], "on it <b>");
    let change = stored["changes"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (change["by"].clone(), change["to"].clone()),
        (json!("alice"), json!("acknowledged"))
    );
    let page = s.browse(&path, &alice_cookie);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("active → acknowledged"), "{}", page.body);
    assert!(page.body.contains("on it &lt;b&gt;"), "{}", page.body);
    assert!(
        page.body.contains(&format!("pitwall alert bisect {id}")),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<img src=x"), "{}", page.body);
    // `pitwall alert fix` rules hold in the form too: an unknown status is refused.
    let r = s.form(
        &path,
        &alice_cookie,
        &[("csrf", &csrf), ("status", "active")],
    );
    assert_eq!(r.status, 400, "{}", r.body);

    // Signing out needs the CSRF token, ends the session and clears the cookie.
    let r = s.form("/p/shop/signout", &bob_cookie, &[("csrf", "")]);
    assert_eq!(r.status, 403, "{}", r.body);
    let r = s.form("/p/shop/signout", &bob_cookie, &[("csrf", &bob_csrf)]);
    assert_eq!(r.status, 303, "{}", r.body);
    assert!(
        r.set_cookie("pitwall_session")
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(s.browse("/p/shop/alerts", &bob_cookie).status, 303);

    // Revoking alice's token ends her session (within the token cache's second).
    sb.run(&["--store", &store, "token", "revoke", "alice"])
        .expect(0);
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(s.browse("/p/shop/alerts", &alice_cookie).status, 303);
    let r = s.form(
        &path,
        &alice_cookie,
        &[("csrf", &csrf), ("status", "dismissed")],
    );
    assert_eq!(r.status, 401, "{}", r.body);
    // The access log names tokens, never a secret or a session id.
    let log = s.lines().join("\n");
    let session_id = alice_cookie.split_once('=').unwrap().1;
    assert!(!log.contains(&alice) && !log.contains(session_id), "{log}");
}

#[test]
fn headless_chromium_signs_in_and_acks_an_alert_through_the_form() {
    if !pitwall_e2e::chromium_installed() {
        eprintln!("SKIPPED the triage in headless Chromium: chromium is not installed");
        return;
    }
    let sb = Sandbox::new();
    let store = store_with_an_alert(&sb);
    let alice = token(&sb, &store, "triage", "alice");
    let s = Server::start(&sb, &["--store", &store]);
    let id = alerts(&s, &alice)[0]["id"].as_str().unwrap().to_string();
    let (ok, text) = pitwall_e2e::browser_check(
        "triage_alert.py",
        &[&s.base, "shop", &id, "alice"],
        &[("PITWALL_TOKEN", &alice)],
    );
    assert!(ok, "triage in Chromium failed:\n{text}");
    let stored = s
        .get(&format!("/api/v1/p/shop/alerts/{id}"), Some(&alice))
        .json();
    assert_eq!(stored["alert"]["status"], "acknowledged", "{stored}");
    assert_eq!(stored["alert"]["note"], "looking into it <b>now</b>");
    assert_eq!(
        stored["changes"].as_array().unwrap().last().unwrap()["by"],
        "alice"
    );
}

/// The history page of a benchmark, live: the report's template with its interactive chart,
/// the other testbed's series to overlay, the chart's script and uPlot from the server under a
/// policy that lets only the server's own scripts run; the hostile name stays text; headless
/// Chromium zooms, pans, resets and overlays the other testbed.
#[test]
fn a_benchmark_has_a_live_history_page_with_the_interactive_chart() {
    let sb = Sandbox::new();
    let toml = "[project]\nname = \"shop\"\n\n[serve]\npublic_read = true\n";
    let store = store_with_history(&sb, toml, &[("h200-a", 12), ("h100-b", 8)]);
    // Three runs of a release branch on the same testbed.
    for i in 0..3 {
        let sha = git(sb.path(), &["rev-parse", &format!("HEAD~{i}")]);
        sb.run(&[
            "--store",
            &store,
            "import",
            "--quiet",
            "r11.json",
            "--commit",
            &sha,
            "--branch",
            "release",
            "--testbed",
            "h200-a",
        ])
        .expect(0);
    }
    let s = Server::start(&sb, &["--store", &store]);
    let found = s.get("/api/v1/p/shop/alerts", None).json();
    let key = found[0]["key"]
        .as_str()
        .unwrap_or_else(|| panic!("{found}"))
        .to_string();
    let path = format!(
        "/p/shop/bench?key={}&testbed=h200-a",
        pitwall_e2e::serve::urlencode(&key)
    );
    let page = s.browse(&path, "");
    assert_eq!(page.status, 200, "{}", page.body);
    let policy = page.header("content-security-policy").unwrap();
    assert!(
        policy.starts_with("default-src 'none'; script-src 'self';"),
        "{policy}"
    );
    assert!(!page.body.contains("<img src=x"), "escaped: {}", page.body);
    assert!(
        page.body
            .contains(r#"<script src="assets/history.js" defer></script>"#)
    );
    assert!(
        page.body
            .contains(r#""overlays":[{"label":"testbed h100-b""#),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Testbed <strong>h200-a</strong>"),
        "{}",
        page.body
    );
    for (asset, kind) in [
        ("history.js", "text/javascript"),
        ("vendor/uplot/uPlot.iife.min.js", "text/javascript"),
        ("vendor/uplot/uPlot.min.css", "text/css"),
        ("style.css", "text/css"),
    ] {
        let r = s.browse(&format!("/p/shop/assets/{asset}"), "");
        assert_eq!(r.status, 200, "{asset}");
        assert!(
            r.header("content-type").unwrap().starts_with(kind),
            "{asset}"
        );
    }
    for missing in ["/p/shop/assets/../../etc/passwd", "/p/shop/assets/nope.js"] {
        assert_eq!(s.browse(missing, "").status, 404, "{missing}");
    }
    assert_eq!(s.browse("/p/shop/bench?key=nope", "").status, 404);
    // Another branch's history, overlaid when asked for.
    let with = s.browse(&format!("{path}&with=release"), "");
    assert_eq!(with.status, 200);
    assert!(
        with.body.contains(r#"{"label":"branch release""#),
        "{}",
        with.body
    );
    assert!(
        !page.body.contains(r#""label":"branch release""#),
        "only when asked"
    );
    let many = (0..9)
        .map(|i| format!("b{i}"))
        .collect::<Vec<_>>()
        .join(",");
    assert_eq!(s.browse(&format!("{path}&with={many}"), "").status, 400);
    // The index, from the series' summaries: a row per testbed, each linked to its page.
    let r = s.browse("/p/shop", "");
    assert_eq!(
        (r.status, r.header("location").as_deref()),
        (303, Some("/p/shop/"))
    );
    let index = s.browse("/p/shop/", "");
    assert_eq!(index.status, 200, "{}", index.body);
    assert!(
        !index.body.contains("<img src=x"),
        "escaped: {}",
        index.body
    );
    for testbed in ["h200-a", "h100-b"] {
        assert!(
            index
                .body
                .contains(&format!("&amp;testbed={testbed}&amp;branch=main")),
            "{testbed}: {}",
            index.body
        );
    }
    assert!(
        index
            .body
            .contains(r#"<script src="assets/filter.js" defer></script>"#)
    );
    assert!(index.body.contains("+20% worse"), "{}", index.body);
    assert_eq!(s.browse("/p/shop/assets/filter.js", "").status, 200);
    let elsewhere = format!("/p/other/bench?key={}", pitwall_e2e::serve::urlencode(&key));
    assert_eq!(
        s.browse(&elsewhere, "").status,
        404,
        "another project's page"
    );

    if !pitwall_e2e::chromium_installed() {
        eprintln!("SKIPPED the chart in headless Chromium: chromium is not installed");
        return;
    }
    let index_url = format!("{}/p/shop/", s.base);
    let (ok, text) = pitwall_e2e::browser_check("index_filters.py", &[&index_url], &[]);
    assert!(ok, "index check failed:\n{text}");
    assert!(text.contains("ok: testbed "), "{text}");
    let url = format!("{}{path}", s.base);
    let (ok, text) = pitwall_e2e::browser_check("drag_chart.py", &[&url], &[]);
    assert!(ok, "chart check failed:\n{text}");
    assert!(text.contains("ok: dragging zoomed the x range"), "{text}");
    assert!(text.contains("ok: overlaid testbed h100-b"), "{text}");
}
