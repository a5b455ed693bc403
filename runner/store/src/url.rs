//! Store URLs: `sqlite:PATH`, `sqlite://PATH`, a bare path, or `postgres://…`.

use std::path::PathBuf;

use super::StoreError;

/// Default location of the embedded store, relative to the working directory.
pub const DEFAULT_SQLITE_PATH: &str = ".pitwall/pitwall.db";

/// Where runs are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    Sqlite(PathBuf),
    Postgres(String),
}

impl StoreUrl {
    /// Parses a store URL as given by `--store`, `PITWALL_STORE` or `[store] url`.
    pub fn parse(s: &str) -> Result<StoreUrl, StoreError> {
        let bad = |reason: &str| StoreError::BadUrl {
            url: StoreUrl::redact(s),
            reason: reason.into(),
        };
        let s = s.trim();
        if s.is_empty() {
            return Err(bad("empty"));
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(StoreUrl::Postgres(s.to_string()));
        }
        let path = if let Some(rest) = s.strip_prefix("sqlite://") {
            rest
        } else if let Some(rest) = s.strip_prefix("sqlite:") {
            rest
        } else if let Some((scheme, _)) = s.split_once("://") {
            return Err(bad(&format!(
                "unknown scheme `{scheme}` (hint: use sqlite:PATH or postgres://USER@HOST/DB)"
            )));
        } else {
            s
        };
        if path.is_empty() {
            return Err(bad("no database path"));
        }
        if path == ":memory:" {
            return Err(bad(
                "an in-memory database keeps nothing after pitwall exits (hint: use sqlite:PATH)",
            ));
        }
        Ok(StoreUrl::Sqlite(PathBuf::from(path)))
    }

    /// The built-in default, `sqlite:.pitwall/pitwall.db`.
    pub fn default_sqlite() -> StoreUrl {
        StoreUrl::Sqlite(PathBuf::from(DEFAULT_SQLITE_PATH))
    }

    /// The URL with any password replaced by `***`, safe to print.
    pub fn redact(s: &str) -> String {
        if let Some((scheme, rest)) = s.split_once("://") {
            if let Some((userinfo, host)) = rest.split_once('@') {
                if let Some((user, _)) = userinfo.split_once(':') {
                    return format!("{scheme}://{user}:***@{host}");
                }
            }
        }
        s.to_string()
    }

    /// Printable form.
    pub fn describe(&self) -> String {
        match self {
            StoreUrl::Sqlite(p) => format!("sqlite:{}", p.display()),
            StoreUrl::Postgres(u) => StoreUrl::redact(u),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms() {
        assert_eq!(
            StoreUrl::parse("a/b.db").unwrap(),
            StoreUrl::Sqlite("a/b.db".into())
        );
        assert_eq!(
            StoreUrl::parse("sqlite:x.db").unwrap(),
            StoreUrl::Sqlite("x.db".into())
        );
        assert_eq!(
            StoreUrl::parse("sqlite:///tmp/x.db").unwrap(),
            StoreUrl::Sqlite("/tmp/x.db".into())
        );
        assert!(matches!(
            StoreUrl::parse("postgres://u@h/db").unwrap(),
            StoreUrl::Postgres(_)
        ));
        assert!(
            StoreUrl::parse("mysql://x")
                .unwrap_err()
                .to_string()
                .contains("unknown scheme `mysql`")
        );
        assert!(StoreUrl::parse("sqlite:").is_err());
        for memory in [":memory:", "sqlite::memory:", "sqlite://:memory:"] {
            let e = StoreUrl::parse(memory).unwrap_err().to_string();
            assert!(e.contains("in-memory database keeps nothing"), "{e}");
        }
    }

    #[test]
    fn redacts_passwords() {
        let e = StoreUrl::parse("postgresql://bob:secret@db/pw")
            .unwrap()
            .describe();
        assert_eq!(e, "postgresql://bob:***@db/pw");
        assert!(!e.contains("secret"));
    }
}
