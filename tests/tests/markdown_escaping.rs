//! Untrusted text in the Markdown outputs end to end (issue 27, item 6): a commit subject with a
//! mention, a reference, HTML, a table pipe, a link and a bidirectional control, made in a real
//! git repository, reaches the write-up's headline and ledger through the repository, and the
//! same text reaches `compare --format markdown` as a benchmark name and in a side's file
//! name. Every output is escaped by the one Markdown escaper: no HTML entity, no live mention,
//! reference, tag or link, no bidirectional control, the text still readable.

use std::path::Path;
use std::process::Command;

use pitwall_e2e::{Sandbox, git};

/// The hostile subject.
const SUBJECT: &str = "fix @team #12 <b>x</b> | [y](http://z) \u{202E}gpj.exe";

/// How the one escaper writes it as free text: mentions, references and URLs in code spans,
/// punctuation backslash-escaped, the bidirectional control as `U+202E`.
const SUBJECT_ESCAPED: &str =
    "fix `@team` `#12` \\<b\\>x\\</b\\> \\| `[y](http://z)` U+202Egpj.exe";

/// A commit dated day `day` of January 2026; its sha.
fn commit(dir: &Path, day: usize, message: &str) -> String {
    std::fs::write(dir.join("sort.c"), format!("/* day {day} */\n")).unwrap();
    git(dir, &["add", "sort.c"]);
    let date = format!("2026-01-{day:02}T12:00:00+00:00");
    let out = Command::new("git")
        .args(["commit", "-q", "-m", message])
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    git(dir, &["rev-parse", "HEAD"])
}

/// A pitwall JSON result file: benchmark `name` with 9 samples within ±0.5% of `median_ms`.
fn result_file(sb: &Sandbox, file: &str, name: &str, median_ms: f64) -> String {
    let samples: Vec<f64> = (0..9)
        .map(|i| median_ms * 1e6 * (1.0 + 0.00125 * (i as f64 - 4.0)))
        .collect();
    pitwall_e2e::one_benchmark_file(sb, file, name, &samples)
}

/// What Markdown reads as markup in `md`: each code span replaced by `C`, each
/// backslash-escaped character by `E` (as `pitwall_reports::markdown::markup`).
fn markup(md: &str) -> String {
    let chars: Vec<char> = md.chars().collect();
    let run = |i: usize| chars[i..].iter().take_while(|&&c| c == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' && chars.get(i + 1).is_some_and(char::is_ascii_punctuation) {
            out.push('E');
            i += 2;
        } else if chars[i] == '`' {
            let n = run(i);
            let mut j = i + n;
            while j < chars.len() && !(chars[j] == '`' && run(j) == n) {
                j += if chars[j] == '`' { run(j) } else { 1 };
            }
            if j < chars.len() {
                out.push('C');
                i = j + n;
            } else {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// What no Markdown output may hold: HTML entities, the raw control, and outside code spans
/// and escapes a mention, tag, reference or link.
fn assert_inert(what: &str, md: &str) {
    for entity in ["&lt;", "&gt;", "&amp;", "&quot;", "&#"] {
        assert!(!md.contains(entity), "{what}: HTML entity {entity}:\n{md}");
    }
    assert!(
        !md.contains('\u{202E}'),
        "{what}: a raw bidi control:\n{md}"
    );
    let read = markup(md);
    for live in ["@team", "#12", "<b>", "[y]", "](http"] {
        assert!(!read.contains(live), "{what}: {live} is live:\n{md}");
    }
}

#[test]
fn a_hostile_commit_subject_is_inert_text_in_the_writeup_and_compare() {
    let sb = Sandbox::new();
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    // Six commits at 10 ms, then the hostile commit and five more at 12 ms: a clear step.
    let mut shas = Vec::new();
    for day in 1..=12 {
        let message = if day == 7 {
            SUBJECT.to_string()
        } else {
            format!("change {day}")
        };
        shas.push(commit(dir, day, &message));
    }
    for (i, sha) in shas.iter().enumerate() {
        let level = if i < 6 { 10.0 } else { 12.0 };
        let file = result_file(&sb, &format!("r{i}.json"), "sort", level);
        sb.run(&[
            "import", "--quiet", &file, "--commit", sha, "--branch", "main",
        ])
        .expect(0);
    }

    let md = sb
        .run(&["writeup", "--from", "2026-01-01", "--to", "2026-01-31"])
        .expect(0)
        .stdout();
    assert_inert("write-up", &md);
    let short = &shas[6][..10];
    // The ledger's heading: the subject as escaped text after the commit's code span.
    assert!(
        md.contains(&format!("### 2026-01-07 · `{short}`: {SUBJECT_ESCAPED}")),
        "{md}"
    );
    // The headline names the confirmed step with the subject, in the ledger's words.
    assert!(
        md.contains(&format!(
            "- `pitwall-json/sort/time` on `{}`: 20.0% slower at `{short}` ({SUBJECT_ESCAPED})",
            testbed_of(&md)
        )),
        "{md}"
    );
    assert!(md.contains("| `pitwall-json/sort/time` |"), "{md}");

    // compare --format markdown: the text as a benchmark name and in the candidate's file name.
    let name = format!("kernel/{SUBJECT}");
    let a = result_file(&sb, "base.json", &name, 10.0);
    let b = result_file(
        &sb,
        "cand @team #12 <b>x<b> | [y] \u{202E}.json",
        &name,
        12.0,
    );
    let out = sb.run(&[
        "compare",
        "--baseline",
        &a,
        "--candidate",
        &b,
        "--format",
        "markdown",
    ]);
    let md = out.stdout();
    assert_eq!(out.code(), 1, "a regression: {md}\n{}", out.stderr());
    assert_inert("compare", &md);
    assert!(
        md.contains("cand `@team` `#12` \\<b\\>x\\<b\\> \\| \\[y\\] U+202E.json"),
        "{md}"
    );
    // The benchmark name is one code span in its row, its pipe escaped for the table.
    assert!(
        md.contains("| `kernel/fix @team #12 <b>x</b> \\| [y](http://z) U+202Egpj.exe/time` |"),
        "{md}"
    );
}

/// The testbed the write-up names in its headline (the one a fingerprint implies here).
fn testbed_of(md: &str) -> String {
    let line = md
        .lines()
        .find(|l| l.starts_with("- `pitwall-json/sort/time` on `"))
        .unwrap_or_else(|| panic!("no headline step: {md}"));
    line["- `pitwall-json/sort/time` on `".len()..]
        .split('`')
        .next()
        .unwrap()
        .to_string()
}
