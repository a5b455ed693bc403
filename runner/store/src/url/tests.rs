//! Store URLs: parsing, and redacting the password for messages.

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
fn directories_and_impossible_paths_are_bad_urls() {
    let dir = std::env::temp_dir();
    let e = StoreUrl::parse(dir.to_str().unwrap()).unwrap_err();
    assert!(e.to_string().contains("is a directory"), "{e}");
    let long = format!("sqlite:{}", "x".repeat(300));
    assert!(matches!(
        StoreUrl::parse(&long),
        Err(StoreError::BadUrl { .. })
    ));
    let deep = format!("sqlite:{}", "a/".repeat(2100));
    assert!(matches!(
        StoreUrl::parse(&deep),
        Err(StoreError::BadUrl { .. })
    ));
}

#[test]
fn redacts_passwords() {
    let e = StoreUrl::parse("postgresql://bob:secret@db/pw")
        .unwrap()
        .describe();
    assert_eq!(e, "postgresql://bob:***@db/pw");
    assert!(!e.contains("secret"));
}

#[test]
fn finds_and_hides_a_password_anywhere_in_the_url() {
    for (url, password, shown) in [
        (
            "postgres://bob:p@ss:w@db/pw",
            "p@ss:w",
            "postgres://bob:***@db/pw",
        ),
        (
            "postgres://bob@db/pw?sslmode=require&password=q-secret",
            "q-secret",
            "postgres://bob@db/pw?sslmode=require&password=***",
        ),
    ] {
        assert_eq!(StoreUrl::password(url).as_deref(), Some(password), "{url}");
        assert_eq!(StoreUrl::redact(url), shown);
    }
    for none in [
        "postgres://bob@db/pw",
        "postgres://bob:@db/pw",
        "sqlite:x.db",
    ] {
        assert_eq!(StoreUrl::password(none), None, "{none}");
    }
}

#[test]
fn server_urls_are_https_or_loopback_http_without_credentials() {
    for ok in [
        "https://pitwall.example",
        "https://pitwall.example:8443/",
        "http://127.0.0.1:8080",
        "http://localhost:8080/",
        "http://[::1]:8080",
    ] {
        let u = StoreUrl::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        assert!(u.is_http(), "{ok}");
        assert!(!u.describe().ends_with('/'), "{ok}");
    }
    for (bad, says) in [
        ("http://pitwall.example", "in clear"),
        ("http://10.0.0.5:8080", "in clear"),
        ("https://user:pw@pitwall.example", "no user or password"),
        ("https://pitwall.example/?token=x", "no query"),
        ("https://", "no host"),
    ] {
        let e = StoreUrl::parse(bad).unwrap_err().to_string();
        assert!(e.contains(says), "{bad}: {e}");
        assert!(!e.contains(":pw@"), "{e}");
    }
}
