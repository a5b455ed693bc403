//! Store URLs: `sqlite:PATH`, `sqlite://PATH`, a bare path, `postgres://…`, or the
//! `https://…` of a `pitwall serve` (plain `http://` on loopback only).

use std::path::PathBuf;

use super::StoreError;

/// Default location of the embedded store, relative to the working directory.
pub const DEFAULT_SQLITE_PATH: &str = ".pitwall/pitwall.db";

/// Where runs are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    Sqlite(PathBuf),
    Postgres(String),
    /// A `pitwall serve`'s base URL, without a trailing slash; runs go through its API with
    /// the token in `PITWALL_TOKEN` (the binary opens it: the client is in pitwall-forge).
    Http(String),
}

/// A server's URL (`whole`, `rest` after the scheme) checked: a host, no user or password
/// (the token comes from `PITWALL_TOKEN` only), no query or fragment, and plain http only to
/// a loopback address, since the token would otherwise cross the network in clear.
fn http_url(whole: &str, rest: &str) -> Result<StoreUrl, String> {
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() {
        return Err("no host".into());
    }
    if authority.contains('@') {
        return Err(
            "a server URL carries no user or password (hint: the token goes in PITWALL_TOKEN)"
                .into(),
        );
    }
    if rest.contains('?') || rest.contains('#') {
        return Err("a server URL has no query or fragment".into());
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if whole.starts_with("http://") && !loopback {
        return Err(format!(
            "plain http to `{host}` would send the token in clear (hint: use https://, or http:// on loopback only)"
        ));
    }
    Ok(StoreUrl::Http(whole.trim_end_matches('/').to_string()))
}

/// Linux's PATH_MAX and NAME_MAX: longer paths cannot be opened, whatever the store.
const MAX_PATH_BYTES: usize = 4095;
const MAX_NAME_BYTES: usize = 255;

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
        if let Some(rest) = s
            .strip_prefix("https://")
            .or_else(|| s.strip_prefix("http://"))
        {
            return http_url(s, rest).map_err(|r| bad(&r));
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
        let path = PathBuf::from(path);
        if path.is_dir() {
            return Err(bad(
                "is a directory (hint: name the database file in it, e.g. sqlite:DIR/pitwall.db)",
            ));
        }
        if path.as_os_str().len() > MAX_PATH_BYTES
            || path
                .components()
                .any(|c| c.as_os_str().len() > MAX_NAME_BYTES)
        {
            return Err(bad("path too long for the file system"));
        }
        Ok(StoreUrl::Sqlite(path))
    }

    /// Whether this is a server's URL (`https://`, or `http://` on loopback).
    pub fn is_http(&self) -> bool {
        matches!(self, StoreUrl::Http(_))
    }

    /// The built-in default, `sqlite:.pitwall/pitwall.db`.
    pub fn default_sqlite() -> StoreUrl {
        StoreUrl::Sqlite(PathBuf::from(DEFAULT_SQLITE_PATH))
    }

    /// The URL with any password (in its user part or a `password=` parameter) replaced by
    /// `***`, safe to print.
    pub fn redact(s: &str) -> String {
        let Some((userinfo, password, query)) = Self::parts(s) else {
            return s.to_string();
        };
        let mut out = s.to_string();
        if let Some(p) = password
            && let Some(user) = userinfo.and_then(|u| u.split_once(':')).map(|(u, _)| u)
        {
            out = out.replacen(&format!("{user}:{p}@"), &format!("{user}:***@"), 1);
        }
        if let Some(q) = query {
            let masked: Vec<String> = q
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => pair.to_string(),
                })
                .collect();
            out = out.replacen(&format!("?{q}"), &format!("?{}", masked.join("&")), 1);
        }
        out
    }

    /// The password a store URL holds, in its user part (`postgres://USER:PASSWORD@HOST`) or
    /// as a `password=` parameter, as written; `None` when it holds none. A password belongs
    /// in `PITWALL_STORE`, `--store`, `PGPASSWORD` or `~/.pgpass`, never in pitwall.toml.
    pub fn password(s: &str) -> Option<String> {
        let (_, password, query) = Self::parts(s)?;
        password.map(str::to_string).or_else(|| {
            query?.split('&').find_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                (k.eq_ignore_ascii_case("password") && !v.is_empty()).then(|| v.to_string())
            })
        })
    }

    /// The user part, its password (non-empty) and the query of a URL with a scheme.
    fn parts(s: &str) -> Option<(Option<&str>, Option<&str>, Option<&str>)> {
        let (_, rest) = s.split_once("://")?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let userinfo = authority.rsplit_once('@').map(|(u, _)| u);
        let password = userinfo
            .and_then(|u| u.split_once(':'))
            .map(|(_, p)| p)
            .filter(|p| !p.is_empty());
        let query = tail
            .split_once('?')
            .map(|(_, q)| q.split('#').next().unwrap_or(""));
        Some((userinfo, password, query))
    }

    /// Printable form.
    pub fn describe(&self) -> String {
        match self {
            StoreUrl::Sqlite(p) => format!("sqlite:{}", p.display()),
            StoreUrl::Postgres(u) => StoreUrl::redact(u),
            StoreUrl::Http(u) => u.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
