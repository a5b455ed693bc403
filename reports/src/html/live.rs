//! Pages `pitwall serve` renders one at a time, live from the store (issue 30), from the same
//! templates and with the same escaping as the static report: the comparison page of a pair at
//! a stable address (`/p/<project>/compare/<pair-id>`, which a pull request's comment links
//! to), the stylesheet every page links to (`/p/<project>/assets/style.css`), and the pages
//! people work in: the alerts with their triage forms (the index's alerts table, from the same
//! template), one alert with its recorded changes, and signing in.

use minijinja::context;
use minijinja::value::Serde;
use pitwall_schema::{Alert, AlertChange, Run};
use serde::Serialize;

use super::model::PageComparison;
use super::site::{HtmlError, render_template};

/// A file the pages load from `assets/` (the stylesheet, the index's filters, the chart script,
/// the vendored uPlot and its licence): its text and content type.
pub fn asset(path: &str) -> Option<(&'static str, &'static str)> {
    let text = super::site::asset(path)?;
    let kind = match path.rsplit('.').next() {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    };
    Some((text, kind))
}

/// Which series a live benchmark page shows.
#[derive(Debug, Clone)]
pub struct SeriesWanted<'a> {
    pub key: &'a str,
    pub testbed: Option<&'a str>,
    pub branch: &'a str,
}

/// `/p/<project>/bench?key=…`: a benchmark page as `pitwall report` writes it, from
/// `histories` (the key's series on every testbed, and on other branches to overlay) over
/// `runs`: the interactive chart, its change points and alerts, the other testbeds' and
/// branches' series to overlay. `None` when no series is the one wanted (the testbed defaults
/// to the first with that key on the branch).
pub fn bench_page(
    project: &str,
    histories: Vec<pitwall_analysis::Series>,
    runs: &[Run],
    alerts: &[Alert],
    wanted: &SeriesWanted<'_>,
    viewer: &Viewer,
    generated_at: &str,
) -> Result<Option<String>, HtmlError> {
    let series = super::model::with_slugs(histories, wanted.branch);
    let Some(s) = series.iter().find(|s| {
        s.key == wanted.key
            && s.branch == wanted.branch
            && wanted.testbed.is_none_or(|t| s.testbed == t)
    }) else {
        return Ok(None);
    };
    let groups = super::pages::sweep_groups(&series);
    let group = &groups[&(s.suite.as_str(), s.name.as_str(), s.measure.as_str())];
    let bench = super::pages::bench(s, &series, group, runs, alerts, false);
    render_template(
        "bench.html",
        context! {
            page => Serde(&bench),
            project => project,
            generated_at => generated_at,
            root => "",
            title => &s.key,
            live => true,
            viewer => Serde(viewer),
        },
    )
    .map(Some)
}

/// The comparison page of `c`, as `pitwall report` writes it at `compare/<id>.html`: the
/// verdict table, box plots of the samples of `runs` (the pair's two runs) and the
/// environment differences. Its links are relative, as the report's are: the stylesheet at
/// `../assets/style.css`. Benchmarks are not linked to pages of their own here.
pub fn compare_page(
    project: &str,
    c: &PageComparison,
    runs: &[Run],
    viewer: &Viewer,
    generated_at: &str,
) -> Result<String, HtmlError> {
    let page = super::compare_page::compare(&c.title, &c.report, &[], runs);
    render_template(
        "compare.html",
        context! {
            page => Serde(&page),
            project => project,
            generated_at => generated_at,
            root => "../",
            title => &c.title,
            live => true,
            viewer => Serde(viewer),
        },
    )
}

/// Who is looking at a live page: the signed-in token's name and role and the session's CSRF
/// token for its forms, or nobody (a public read, or a bearer token, which has no session).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Viewer {
    pub name: Option<String>,
    pub role: Option<&'static str>,
    /// Set only for a session: forms are offered only then.
    pub csrf: Option<String>,
    /// Whether the viewer may triage (a session of a token of role triage).
    pub can_triage: bool,
    /// The longest note the triage forms accept (`pitwall alert`'s limit).
    pub note_max_chars: usize,
}

/// `text` as one component of a URL's path or query string: RFC 3986's unreserved characters
/// kept, every other byte percent-encoded.
pub fn url_component(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The table's rows, each linked to its series' page (`bench?key=…&testbed=…&branch=…`).
fn linked_rows(alerts: &[Alert]) -> Vec<super::alert_list::AlertRow> {
    let mut rows = super::alert_list::rows(alerts);
    link_alert_rows(&mut rows);
    rows
}

/// Links each alert row to its series' page.
pub(crate) fn link_alert_rows(rows: &mut [super::alert_list::AlertRow]) {
    for r in rows {
        r.bench = Some(format!(
            "bench?key={}&testbed={}&branch={}",
            url_component(&r.key),
            url_component(&r.testbed),
            url_component(&r.branch)
        ));
    }
}

/// `/p/<project>/alerts`: every alert of the project, open ones first (the index's table),
/// each linked to its page, with triage forms when the viewer may triage. Links are relative
/// to `/p/<project>/`.
pub fn alerts_page(
    project: &str,
    alerts: &[Alert],
    viewer: &Viewer,
    generated_at: &str,
) -> Result<String, HtmlError> {
    render_template(
        "alerts.html",
        context! {
            project => project,
            generated_at => generated_at,
            root => "",
            title => "alerts",
            live => true,
            alerts => Serde(linked_rows(alerts)),
            triage => viewer.can_triage,
            csrf => viewer.csrf.as_deref().unwrap_or(""),
            note_max => viewer.note_max_chars,
            viewer => Serde(viewer),
        },
    )
}

/// What one alert's page shows besides its table row.
#[derive(Debug, Serialize)]
pub struct AlertDetail {
    pub first_bad: String,
    pub last_good: String,
    pub culprit: Option<String>,
    pub first_bad_run: String,
}

/// Where one alert's page links to: the forge's pages of its commits (`[serve] commit_url`)
/// and the first bad run.
#[derive(Debug, Default)]
pub struct AlertLinks {
    pub first_bad: Option<String>,
    pub culprit: Option<String>,
    pub run: String,
}

/// `/p/<project>/alerts/<id>`: the alert, links to its commits, its first bad run and the
/// `pitwall alert bisect` command, its triage form, and every recorded change, oldest first.
pub fn alert_page(
    project: &str,
    alert: &Alert,
    changes: &[AlertChange],
    links: &AlertLinks,
    viewer: &Viewer,
    generated_at: &str,
) -> Result<String, HtmlError> {
    let row = linked_rows(std::slice::from_ref(alert));
    let detail = AlertDetail {
        first_bad: alert.first_bad.clone(),
        last_good: alert.last_good.clone(),
        culprit: alert.culprit.clone(),
        first_bad_run: alert.first_bad_run.clone(),
    };
    render_template(
        "alert.html",
        context! {
            project => project,
            generated_at => generated_at,
            root => "../",
            title => format!("alert {}", alert.id),
            live => true,
            alert => Serde(&row[0]),
            detail => Serde(&detail),
            changes => Serde(changes),
            commit_url => links.first_bad.as_deref(),
            culprit_url => links.culprit.as_deref(),
            run_url => &links.run,
            triage => viewer.can_triage,
            csrf => viewer.csrf.as_deref().unwrap_or(""),
            note_max => viewer.note_max_chars,
            viewer => Serde(viewer),
        },
    )
}

/// `/p/<project>/signin`: the form that trades a token for a session, with the sign-in CSRF
/// token (`csrf`) and the refusal of the last try, if any.
pub fn signin_page(
    project: &str,
    csrf: &str,
    error: Option<&str>,
    session_hours: i64,
    generated_at: &str,
) -> Result<String, HtmlError> {
    render_template(
        "signin.html",
        context! {
            project => project,
            generated_at => generated_at,
            root => "",
            title => "sign in",
            live => true,
            csrf => csrf,
            error => error,
            hours => session_hours,
            viewer => Serde(Viewer::default()),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::synthetic;

    /// A hostile title and project are escaped on the live page as on the static one, and the
    /// page asks for nothing but its own stylesheet.
    #[test]
    fn the_page_is_the_report_template_escaped_and_self_contained() {
        let mut runs = synthetic::runs(4, 2, 8);
        runs[1].results[0].name = "<img src=x onerror=alert(2)>".into();
        let report = synthetic::comparison(&runs[0], &runs[1]);
        let c = PageComparison::new("pair-1", "pair <script>alert(1)</script>", report);
        let html = compare_page(
            "shop\"><img src=x>",
            &c,
            &runs,
            &Viewer::default(),
            "2026-12-05T10:00:00Z",
        )
        .unwrap();
        assert!(!html.contains("<img src=x onerror"), "{html}");
        assert!(html.contains("<svg"), "box plots drawn: {html}");
        assert!(!html.contains("<script>alert(1)"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("<img src=x>"), "{html}");
        assert!(
            html.contains(r#"href="..&#x2f;assets/style.css""#),
            "{html}"
        );
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "{html}"
        );
        assert!(asset("style.css").unwrap().0.contains('{'));
    }

    fn hostile_alert() -> Alert {
        use pitwall_schema::{AlertKind, AlertSeries, AlertStatus};
        Alert {
            id: "a1b2c3d4e5f6".into(),
            status: AlertStatus::Active,
            kind: AlertKind::Regression,
            series: AlertSeries {
                project: "demo".into(),
                testbed: "<b>bed</b>".into(),
                branch: "main".into(),
                key: "kernel/<script>alert(1)</script>/time".into(),
                measure: "time".into(),
            },
            last_good: "a".repeat(40),
            first_bad: "b".repeat(40),
            first_bad_run: "run\"><img src=x>".into(),
            before: 100.0,
            after: 110.0,
            rel_change: 0.1,
            ci: Some((0.08, 0.12)),
            note: Some("see <a href=//evil>#4</a>".into()),
            culprit: None,
            more_points: None,
            label: None,
            created_at: "2026-12-06T00:00:00Z".into(),
            updated_at: "2026-12-06T00:00:00Z".into(),
        }
    }

    fn triager() -> Viewer {
        Viewer {
            name: Some("alice<i>".into()),
            role: Some("triage"),
            csrf: Some("c5rf".into()),
            can_triage: true,
            note_max_chars: 1000,
        }
    }

    /// The alerts page is the index's table with a link and a form per alert, every form
    /// with the session's CSRF token; hostile names stay text.
    #[test]
    fn the_alerts_page_offers_a_form_per_alert_with_its_csrf_token() {
        let html = alerts_page("p<x>", &[hostile_alert()], &triager(), "now").unwrap();
        for bad in [
            "<script>alert(1)",
            "<b>bed",
            "<a href=//evil>",
            "<i>",
            "<x>",
        ] {
            assert!(!html.contains(bad), "{bad}: {html}");
        }
        assert!(html.contains(r#"<a href="alerts/a1b2c3d4e5f6">"#), "{html}");
        assert!(
            html.contains(r#"<a href="bench?key=kernel%2F%3Cscript%3Ealert%281%29%3C%2Fscript%3E%2Ftime&amp;testbed=%3Cb%3Ebed%3C%2Fb%3E&amp;branch=main">"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<form class="triage" method="post" action="alerts/a1b2c3d4e5f6"><input type="hidden" name="csrf" value="c5rf">"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<form class="signout" method="post""#),
            "{html}"
        );
        assert_eq!(html.matches(r#"name="csrf" value="c5rf""#).count(), 2);
        assert!(!html.contains("http://") && !html.contains("https://"));
        // A reader without a session gets no form, and is told why.
        let reader = Viewer {
            note_max_chars: 1000,
            ..Viewer::default()
        };
        let html = alerts_page("p", &[hostile_alert()], &reader, "now").unwrap();
        assert!(!html.contains("<form"), "{html}");
        assert!(html.contains(r#"<a href="signin">Sign in</a>"#), "{html}");
    }

    /// The alert's page links its commit, its run and the bisect command, and lists its
    /// changes with who made them.
    #[test]
    fn the_alert_page_links_and_lists_changes() {
        use pitwall_schema::AlertStatus;
        let change = AlertChange {
            at: "2026-12-06T01:00:00Z".into(),
            by: Some("bob<script>".into()),
            from: Some(AlertStatus::Active),
            to: Some(AlertStatus::Acknowledged),
            note: Some("on it <img>".into()),
            culprit: None,
        };
        let links = AlertLinks {
            first_bad: Some(format!("https://forge.example/c/{}", "b".repeat(40))),
            culprit: None,
            run: "/api/v1/p/demo/runs/run%22%3E".into(),
        };
        let a = hostile_alert();
        let html = alert_page("demo", &a, &[change], &links, &triager(), "now").unwrap();
        assert!(html.contains("pitwall alert bisect a1b2c3d4e5f6"), "{html}");
        assert!(
            html.contains("https:&#x2f;&#x2f;forge.example&#x2f;c&#x2f;bbbb"),
            "{html}"
        );
        assert!(
            html.contains("&#x2f;api&#x2f;v1&#x2f;p&#x2f;demo&#x2f;runs&#x2f;run%22%3E"),
            "{html}"
        );
        assert!(html.contains("active → acknowledged"), "{html}");
        for bad in ["bob<script>", "<img>", "<img src=x>", "<script>alert(1)"] {
            assert!(!html.contains(bad), "{bad}: {html}");
        }
        assert!(
            html.contains(r#"action="..&#x2f;alerts/a1b2c3d4e5f6""#),
            "{html}"
        );
    }

    #[test]
    fn the_signin_page_is_a_form_with_its_csrf_token() {
        let html = signin_page("p", "tok3n", Some("bad <token>"), 12, "now").unwrap();
        assert!(
            html.contains(r#"<form class="signin" method="post" action="signin">"#),
            "{html}"
        );
        assert!(html.contains(r#"name="csrf" value="tok3n""#), "{html}");
        assert!(html.contains(r#"type="password" name="token""#), "{html}");
        assert!(html.contains("bad &lt;token&gt;"), "{html}");
        assert!(html.contains("12 hours"), "{html}");
    }
}
