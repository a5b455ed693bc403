//! Pages `pitwall serve` renders one at a time, live from the store (issue 30), from the same
//! templates and with the same escaping as the static report: the comparison page of a pair at
//! a stable address (`/p/<project>/compare/<pair-id>`, which a pull request's comment links
//! to), and the stylesheet every page links to (`/p/<project>/assets/style.css`).

use minijinja::context;
use minijinja::value::Serde;
use pitwall_schema::Run;

use super::model::PageComparison;
use super::site::{HtmlError, STYLE_CSS, render_template};

/// The stylesheet of every page, as `pitwall report` writes it to `assets/style.css`.
pub const STYLE: &str = STYLE_CSS;

/// The comparison page of `c`, as `pitwall report` writes it at `compare/<id>.html`: the
/// verdict table, box plots of the samples of `runs` (the pair's two runs) and the
/// environment differences. Its links are relative, as the report's are: the stylesheet at
/// `../assets/style.css`. Benchmarks are not linked to pages of their own here.
pub fn compare_page(
    project: &str,
    c: &PageComparison,
    runs: &[Run],
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
        let html = compare_page("shop\"><img src=x>", &c, &runs, "2026-12-05T10:00:00Z").unwrap();
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
        assert!(STYLE.contains('{'));
    }
}
