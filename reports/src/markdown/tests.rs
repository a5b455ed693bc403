use super::*;

#[test]
fn a_code_span_survives_any_backticks() {
    assert_eq!(code_span("main"), "`main`");
    assert_eq!(code_span("a`b"), "``a`b``");
    assert_eq!(code_span("``x"), "``` ``x ```");
    assert_eq!(code_span("x`"), "`` x` ``");
    assert_eq!(code_span("a```b``c"), "````a```b``c````");
    assert_eq!(code_span("`"), "`` ` ``");
    assert_eq!(code_span(""), "` `");
}

#[test]
fn a_code_span_keeps_its_edge_spaces() {
    // CommonMark strips one space each side when both are spaces: the padding is what goes.
    assert_eq!(code_span(" a "), "`  a  `");
    assert_eq!(code_span(" a"), "`  a `");
    assert_eq!(code_span("   "), "`   `");
}

#[test]
fn a_code_cell_cannot_split_its_row() {
    assert_eq!(code_cell("a|b"), "`a\\|b`");
    assert_eq!(code_cell("a\\|b"), "`a\\\\\\|b`");
    assert_eq!(code_cell("a\\b"), "`a\\b`");
    assert_eq!(code_cell("|`"), "`` \\|` ``");
}

#[test]
fn hidden_characters_are_shown() {
    assert_eq!(code_span("a\nb"), "`aU+000Ab`");
    assert_eq!(code_span("evil\u{202E}txt"), "`evilU+202Etxt`");
    assert_eq!(text("zero\u{200B}width"), "zeroU+200Bwidth");
    assert_eq!(show_hidden("\u{1b}[31m"), "U+001B[31m");
    for c in [
        '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{200B}', '\u{200C}',
        '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{7}', '\u{7f}', '\u{85}',
    ] {
        let shown = format!("U+{:04X}", c as u32);
        let s = format!("a{c}b");
        assert_eq!(text(&s), format!("a{shown}b"));
        assert_eq!(code_span(&s), format!("`a{shown}b`"));
        assert_eq!(code_cell(&s), format!("`a{shown}b`"));
        // Inside a mention's span too.
        assert_eq!(text(&format!("@x{c}")), format!("`@x{shown}`"));
    }
}

#[test]
fn prose_pings_links_and_formats_nothing() {
    assert_eq!(text("@channel look"), "`@channel` look");
    assert_eq!(text("cc @team."), "cc `@team.`");
    assert_eq!(
        text("fixes #12 see https://x.io/a_b"),
        "fixes `#12` see `https://x.io/a_b`"
    );
    assert_eq!(
        text("org/repo#34 and www.x.com"),
        "`org/repo#34` and `www.x.com`"
    );
    assert_eq!(text("!12 on gitlab"), "`!12` on gitlab");
    assert_eq!(text("a#b c# #"), "a\\#b c\\# \\#");
    assert_eq!(text("*bold* [l](u) <b>"), "\\*bold\\* \\[l\\](u) \\<b\\>");
    assert_eq!(text("a & b_c"), "a \\& b\\_c");
    // `&#91;` holds a reference (`#91`): a code span, where no entity is read either.
    assert_eq!(text("&amp; &#91;"), "\\&amp; `&#91;`");
    assert_eq!(
        text("plain words, 3.5% faster."),
        "plain words, 3.5% faster."
    );
    assert_eq!(
        text("~~x~~ $y$ !x ^z {w} +-"),
        "\\~\\~x\\~\\~ \\$y\\$ \\!x \\^z \\{w\\} \\+\\-"
    );
    assert_eq!(
        text("back\\slash `tick` ``two``"),
        "back\\\\slash \\`tick\\` \\`\\`two\\`\\`"
    );
}

#[test]
fn prose_stays_on_one_line_and_in_its_cell() {
    assert_eq!(text("a\nb\r\nc\td"), "a b  c d");
    assert_eq!(text("a|b"), "a\\|b");
    assert_eq!(text("a\\|b"), "a\\\\\\|b");
    // A pipe ends a mention's span, so no span holds a bare `|`.
    assert_eq!(text("@a|b"), "`@a`\\|b");
    assert_eq!(
        text("<script>alert(1)</script>"),
        "\\<script\\>alert(1)\\</script\\>"
    );
}

#[test]
fn no_html_entity_is_ever_written() {
    let nasty = "<b>&\"'</b> @x #1 | [y](http://z) \u{202E} `a``b` \\ &lt;";
    for out in [text(nasty), code_span(nasty), code_cell(nasty)] {
        assert!(
            !out.contains("&lt;") || out.contains("\\&lt;") || out.starts_with('`'),
            "{out}"
        );
        assert!(!out.contains("&#"), "{out}");
        assert!(!out.contains('\u{202E}'), "{out}");
    }
}

#[test]
fn cut_marks_what_it_cuts() {
    assert_eq!(cut("abc", 3), "abc");
    assert_eq!(cut("abcd", 3), "ab…");
    assert_eq!(cut("ééé", 2), "é…");
}

/// The Redactor's Markdown form of a secret is what [`text`] writes of it in prose.
#[test]
fn the_redactor_escapes_free_text_as_text_does() {
    for s in [
        "ab_c*d[e]",
        "tok-3n.with/slash=and%pct",
        "x\\y`z~w!q#r$s&t(u)v{w}x<y>z+a^b",
        "plain0123456789",
        "a'b\"c;d:e?f,g",
    ] {
        assert_eq!(text(s), pitwall_schema::secrets::markdown_escape(s), "{s}");
    }
    for c in (0x21u8..0x7f)
        .map(char::from)
        .filter(char::is_ascii_punctuation)
    {
        let s = format!("k{c}k");
        if c == '@' {
            continue; // a word with `@` is a code span: the secret's raw form is in the text
        }
        assert_eq!(
            text(&s),
            pitwall_schema::secrets::markdown_escape(&s),
            "{s}"
        );
    }
}
