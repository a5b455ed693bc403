//! How a secret appears in Markdown prose: the per-character rule of the reports' one Markdown
//! escaper (`pitwall_reports::markdown::text`), kept here because the reports depend on this
//! crate and not the other way; a test in the reports keeps the two equal.

/// `value` as Markdown prose writes it: every ASCII punctuation character but `. , : ; ? ' " /
/// % = ( )` after a backslash. (A word holding `@`, or a `#` before a digit, is written as a code
/// span instead, where the value appears as it is.)
pub fn markdown_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 4);
    for c in value.chars() {
        let inert = matches!(
            c,
            '.' | ',' | ':' | ';' | '?' | '\'' | '"' | '/' | '%' | '=' | '(' | ')'
        );
        if c.is_ascii_punctuation() && !inert {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
