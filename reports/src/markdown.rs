//! Untrusted text (benchmark, branch, testbed and project names; commit subjects) made safe for
//! a Markdown sink: as a code span whose fence no backtick inside can close, or as prose whose
//! Markdown punctuation is backslash-escaped and whose `@mentions`, `#refs` and URLs sit in code
//! spans so they ping and link nobody. Control, bidirectional and zero-width characters are shown
//! as `U+XXXX`, so nothing hides or reorders what a reader sees (Boucher & Anderson, "Trojan
//! Source", 2021). No HTML entities: CommonMark's backslash escapes cover every ASCII
//! punctuation character (CommonMark 0.31, §2.4).

/// Whether `c` is shown as `U+XXXX` rather than written: control characters (line breaks
/// included: a span or a list item stays on one line), the bidirectional controls, and the
/// zero-width and invisible formatting characters.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// `s` with every hidden character (see [`is_hidden`]) written as `U+XXXX`.
pub fn show_hidden(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_hidden(c) {
            out.push_str(&format!("U+{:04X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` as one inline code span: fenced by one backtick more than its longest run of backticks,
/// padded with a space when it starts or ends with a backtick (CommonMark 0.31, §6.1).
pub fn code_span(s: &str) -> String {
    if s.is_empty() {
        return "` `".to_string();
    }
    let s = show_hidden(s);
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Whether `word` (a run without white space) must not be left as prose: a mention (`@team`),
/// an issue or pull-request reference (`#12`, `!12` on GitLab), or a URL.
fn needs_span(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    word.contains('@')
        || word.starts_with('#') && word.len() > 1
        || word.starts_with('!') && word[1..].starts_with(|c: char| c.is_ascii_digit())
        || lower.contains("://")
        || lower.starts_with("www.")
}

/// Whether `c` is ASCII punctuation that prose leaves as it is: it starts no Markdown construct
/// in the middle of a line.
fn inert(c: char) -> bool {
    matches!(
        c,
        '.' | ',' | ':' | ';' | '?' | '\'' | '"' | '/' | '%' | '='
    )
}

/// `s` as Markdown prose on one line: words that could mention, reference or link in code
/// spans, every other ASCII punctuation character backslash-escaped, hidden characters shown.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if needs_span(word) {
            out.push_str(&code_span(word));
        } else {
            for c in word.chars() {
                if c.is_ascii_punctuation() && !inert(c) {
                    out.push('\\');
                }
                out.push_str(&show_hidden(c.encode_utf8(&mut [0; 4])));
            }
        }
        word.clear();
    };
    for c in s.chars() {
        if c.is_whitespace() && !is_hidden(c) {
            flush(&mut word, &mut out);
            out.push(' ');
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_span_survives_any_backticks() {
        assert_eq!(code_span("main"), "`main`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("``x"), "``` ``x ```");
        assert_eq!(code_span("x`"), "`` x` ``");
        assert_eq!(code_span(""), "` `");
    }

    #[test]
    fn hidden_characters_are_shown() {
        assert_eq!(code_span("a\nb"), "`aU+000Ab`");
        assert_eq!(code_span("evil\u{202E}txt"), "`evilU+202Etxt`");
        assert_eq!(text("zero\u{200B}width"), "zeroU+200Bwidth");
        assert_eq!(show_hidden("\u{1b}[31m"), "U+001B[31m");
    }

    #[test]
    fn prose_pings_links_and_formats_nothing() {
        assert_eq!(text("@channel look"), "`@channel` look");
        assert_eq!(
            text("fixes #12 see https://x.io/a_b"),
            "fixes `#12` see `https://x.io/a_b`"
        );
        assert_eq!(
            text("*bold* [l](u) <b>"),
            "\\*bold\\* \\[l\\]\\(u\\) \\<b\\>"
        );
        assert_eq!(text("a & b_c"), "a \\& b\\_c");
        assert!(!text("<script>&amp;").contains("&amp;amp;"));
        assert_eq!(
            text("plain words, 3.5% faster."),
            "plain words, 3.5% faster."
        );
    }
}
