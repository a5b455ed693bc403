//! The one Markdown escaper of every Markdown sink (the PR comment, `compare --format
//! markdown`, the write-up, an alert's issue body, chat messages): untrusted text made safe
//! either as an identifier (benchmark keys, commit ids, branches, testbeds, suites, projects)
//! in a code span whose fence no backtick inside can close ([`code_span`], [`code_cell`] in a
//! table), or as free text (commit subjects, notes, reasons, error text) whose Markdown
//! punctuation is backslash-escaped and whose `@mentions`, `#refs` and URLs sit in code spans so
//! they ping and link nobody ([`text`]). Control, bidirectional and zero-width characters are
//! shown as `U+XXXX` in both, so nothing hides or reorders what a reader sees (Boucher &
//! Anderson, "Trojan Source", 2021). No HTML entities: CommonMark's backslash escapes cover every
//! ASCII punctuation character (CommonMark 0.31, §2.4). The secret `Redactor` mirrors the
//! per-character rule of [`text`] (`pitwall_schema::secrets::markdown_escape`), so a secret that
//! reached a commit subject is found in its escaped form too; a test here keeps the two equal.

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
        push_shown(&mut out, c);
    }
    out
}

fn push_shown(out: &mut String, c: char) {
    if is_hidden(c) {
        out.push_str(&format!("U+{:04X}", c as u32));
    } else {
        out.push(c);
    }
}

/// `s` as one inline code span: fenced by one backtick more than its longest run of backticks,
/// padded with a space when it starts or ends with a backtick or a space (CommonMark 0.31,
/// §6.1 strips one space each side), hidden characters shown. Outside a table only: a `|`
/// inside would split a table cell ([`code_cell`]).
pub fn code_span(s: &str) -> String {
    fence(&show_hidden(s))
}

/// `s` as a code span inside a GFM table cell: [`code_span`] with every `|` written `\|`, which
/// the table reads as part of the cell and shows as `|` (a `\` right before a `|` is doubled,
/// so the pair cannot end the cell; it then shows doubled).
pub fn code_cell(s: &str) -> String {
    let shown = show_hidden(s);
    let mut out = String::with_capacity(shown.len() + 2);
    let mut chars = shown.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '|' => out.push_str("\\|"),
            '\\' if chars.peek() == Some(&'|') => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    fence(&out)
}

/// `s` (hidden characters already shown) between fences no backtick run inside can close.
fn fence(s: &str) -> String {
    if s.is_empty() {
        return "` `".to_string();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let edge = |c: Option<char>| matches!(c, Some('`' | ' '));
    let all_spaces = s.chars().all(|c| c == ' ');
    let pad = if !all_spaces && (edge(s.chars().next()) || edge(s.chars().last())) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Whether `word` (a run without white space or `|`) must not be left as prose: a mention
/// (`@team`), an issue or pull-request reference (`#12`, `org/repo#12`, `!12` on GitLab), or a
/// URL.
fn needs_span(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let reference = word
        .split('#')
        .skip(1)
        .any(|after| after.starts_with(|c: char| c.is_ascii_digit()));
    word.contains('@')
        || reference
        || word.starts_with('#') && word.len() > 1
        || word.starts_with('!') && word[1..].starts_with(|c: char| c.is_ascii_digit())
        || lower.contains("://")
        || lower.starts_with("www.")
}

/// Whether `c` is ASCII punctuation that prose leaves as it is: it starts no Markdown construct
/// in the middle of a line (parentheses make a link only after a `]`, which is escaped). `pitwall_schema::secrets::markdown_escape` lists the same.
pub fn inert(c: char) -> bool {
    matches!(
        c,
        '.' | ',' | ':' | ';' | '?' | '\'' | '"' | '/' | '%' | '=' | '(' | ')'
    )
}

/// `s` as Markdown prose on one line, safe in a paragraph, a list item, a heading and a table
/// cell: line breaks and tabs become spaces; words that could mention, reference or link in code
/// spans; every other ASCII punctuation character but the [`inert`] ones backslash-escaped
/// (`|` included, and it ends a word, so no code span holds one); hidden characters shown.
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
                push_shown(out, c);
            }
        }
        word.clear();
    };
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' => {
                flush(&mut word, &mut out);
                out.push(' ');
            }
            '|' => {
                flush(&mut word, &mut out);
                out.push_str("\\|");
            }
            c if c.is_whitespace() && !is_hidden(c) => {
                flush(&mut word, &mut out);
                out.push(' ');
            }
            c => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

/// `s` cut to at most `max` characters, `…` marking a cut (before escaping: an escape is never
/// cut in half).
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// What Markdown reads as markup in `md`: each code span replaced by `C`, each
/// backslash-escaped character by `E` (CommonMark 0.31, §2.4 and §6.1). Tests check with it that
/// no mention, link, tag or emphasis of untrusted text is left outside the two.
pub fn markup(md: &str) -> String {
    let chars: Vec<char> = md.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let run = |i: usize| chars[i..].iter().take_while(|&&c| c == '`').count();
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() && chars[i + 1].is_ascii_punctuation() => {
                out.push('E');
                i += 2;
            }
            '`' => {
                let n = run(i);
                let mut j = i + n;
                let close = loop {
                    if j >= chars.len() {
                        break None;
                    }
                    if chars[j] == '`' {
                        let m = run(j);
                        if m == n {
                            break Some(j + m);
                        }
                        j += m;
                    } else {
                        j += 1;
                    }
                };
                match close {
                    Some(end) => {
                        out.push('C');
                        i = end;
                    }
                    None => {
                        out.extend(&chars[i..i + n]);
                        i += n;
                    }
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
