//! `[history] code_paths`: which paths of the repository count as code, so an alert whose
//! first bad commit touches none of them can say "no code changed" (issue 27). Glob patterns
//! with a small matcher of their own (no glob crate is in the workspace).
//!
//! A pattern is matched against a path relative to the repository root, `/`-separated: `*`
//! matches any characters but `/`, `?` one character but `/`, and a whole component `**`
//! matches any number of components (none included). A pattern without `/` matches the last
//! component (the file name) at any depth, as in `.gitignore`; one with `/` matches from the
//! root. The include list (`CODE_PATHS_INCLUDE`, every path, unless `code_paths` gives its own)
//! is applied first, then `CODE_PATHS_EXCLUDE` (documentation, licences, the changelog) always.

use toml::Spanned;

use super::error::{ConfigError, Ctx};
use crate::defaults::{CODE_PATHS_EXCLUDE, CODE_PATHS_INCLUDE};

/// The paths that count as code: those some include pattern matches and no exclude pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodePaths {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl Default for CodePaths {
    fn default() -> CodePaths {
        let own = |p: &[&str]| p.iter().map(|s| s.to_string()).collect();
        CodePaths {
            include: own(CODE_PATHS_INCLUDE),
            exclude: own(CODE_PATHS_EXCLUDE),
        }
    }
}

impl CodePaths {
    /// Whether `path` (relative to the repository root, `/`-separated) is code.
    pub fn is_code(&self, path: &str) -> bool {
        self.include.iter().any(|p| glob_match(p, path))
            && !self.exclude.iter().any(|p| glob_match(p, path))
    }
}

/// Whether `pattern` matches `path` (see the module's description).
pub fn glob_match(pattern: &str, path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    if !pattern.contains('/') {
        return parts.last().is_some_and(|name| component(pattern, name));
    }
    let pat: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    components(&pat, &parts)
}

fn components(pat: &[&str], path: &[&str]) -> bool {
    match pat.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| components(rest, &path[skip..])),
        Some((p, rest)) => path
            .split_first()
            .is_some_and(|(c, tail)| component(p, c) && components(rest, tail)),
    }
}

/// One component against one pattern component of `*`, `?` and literal characters.
fn component(pat: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pat.chars().collect(), name.chars().collect());
    // `ok[j]`: the pattern read so far matches `n[..j]`.
    let mut ok = vec![false; n.len() + 1];
    ok[0] = true;
    for &pc in &p {
        let mut next = vec![false; n.len() + 1];
        for j in 0..=n.len() {
            next[j] = match pc {
                '*' => ok[j] || (j > 0 && next[j - 1]),
                '?' => j > 0 && ok[j - 1],
                c => j > 0 && ok[j - 1] && n[j - 1] == c,
            };
        }
        ok = next;
    }
    ok[n.len()]
}

impl Ctx<'_> {
    /// `[history] code_paths`: a list of non-empty patterns, relative to the repository root.
    pub(super) fn code_paths(
        &self,
        raw: Option<Spanned<Vec<String>>>,
    ) -> Result<CodePaths, ConfigError> {
        let Some(raw) = raw else {
            return Ok(CodePaths::default());
        };
        let span = raw.span();
        let include = raw.into_inner();
        if let Some(bad) = include
            .iter()
            .find(|p| p.trim().is_empty() || p.starts_with('/') || p.contains('\\'))
        {
            return Err(self.at(
                span,
                format!("[history] code_paths: `{bad}` is not a pattern of repository paths"),
                Some(
                    "write paths relative to the repository root with `/`, e.g. \"src/**\"".into(),
                ),
            ));
        }
        Ok(CodePaths {
            include,
            ..CodePaths::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_components_names_and_any_depth() {
        for (pat, path) in [
            ("**/*.md", "README.md"),
            ("**/*.md", "a/b/notes.md"),
            ("docs/**", "docs/x/y.txt"),
            ("LICENSE*", "LICENSE"),
            ("LICENSE*", "vendor/LICENSE-MIT"),
            ("src/*.c", "src/sort.c"),
            ("src/**/*.c", "src/sort.c"),
            ("src/**/*.c", "src/a/b/sort.c"),
            ("?.c", "x/a.c"),
            ("**", "anything/at/all"),
        ] {
            assert!(glob_match(pat, path), "{pat} should match {path}");
        }
        for (pat, path) in [
            ("**/*.md", "README.mdx"),
            ("docs/**", "src/docs.c"),
            ("src/*.c", "src/a/sort.c"),
            ("CHANGELOG*", "src/changelog.c"),
            ("?.c", "ab.c"),
        ] {
            assert!(!glob_match(pat, path), "{pat} should not match {path}");
        }
    }

    #[test]
    fn by_default_everything_but_documentation_is_code() {
        let c = CodePaths::default();
        for code in ["sort.c", "src/bench.py", "Makefile", "docs.c"] {
            assert!(c.is_code(code), "{code}");
        }
        for doc in [
            "README.md",
            "doc/intro.rst",
            "docs/index.html",
            "LICENSE",
            "COPYING.LESSER",
            "CHANGELOG",
            "AUTHORS.txt",
        ] {
            assert!(!c.is_code(doc), "{doc}");
        }
        // A user's list replaces the include part; the exclusions stay.
        let own = CodePaths {
            include: vec!["src/**".into()],
            ..CodePaths::default()
        };
        assert!(own.is_code("src/sort.c") && !own.is_code("Makefile"));
        assert!(!own.is_code("src/README.md"));
    }

    #[test]
    fn history_code_paths_parse_and_stay_out_of_the_hash() {
        let parse = |t: &str| super::super::parse_str(t, "pitwall.toml", "dir");
        let c = parse("").unwrap();
        assert_eq!(c.code_paths, CodePaths::default());
        let c = parse("[history]\nbranch = \"trunk\"\ncode_paths = [\"src/**\", \"Makefile\"]\n")
            .unwrap();
        assert_eq!(c.history_branch, "trunk");
        assert_eq!(c.code_paths.include, ["src/**", "Makefile"]);
        assert_eq!(c.code_paths.exclude, CodePaths::default().exclude);
        assert_eq!(c.hash(), parse("").unwrap().hash());
        let e = parse("[history]\ncode_paths = [\"src/**\", \" \"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("pitwall.toml:2:14: [history] code_paths: ` ` is not a pattern"),
            "{e}"
        );
        let e = parse("[history]\ncode_paths = \"src\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("code_paths"), "{e}");
        let e = parse("[history]\npaths = []\n").unwrap_err().to_string();
        assert!(e.contains("branch, code_paths"), "{e}");
    }
}
