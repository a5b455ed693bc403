//! Tests of the secret-name rule and the `Redactor`: every form a secret is echoed in, the
//! pieces left at a cut, JSON values, URLs' secrets.

use super::*;

#[test]
fn base64_matches_rfc_4648() {
    // RFC 4648 §10 test vectors.
    for (plain, encoded) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(base64_standard(plain.as_bytes()), encoded);
    }
}

fn b64(bytes: &[u8]) -> String {
    base64_standard(bytes)
}

const TOKEN: &str = "ghp_Zx9/q+T0k3n-value_42";

#[test]
fn names_that_look_like_secrets() {
    for n in [
        "GITHUB_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "CI_JOB_TOKEN",
        "hf_token",
        "DB_PASSWORD",
        "MY_SECRET_THING",
        "WANDB_API_KEY",
        "SIGNING_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_REGION",
        "CI_JOB_JWT_V2",
        "SSH_AUTH_SOCK",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ] {
        assert!(is_secret_name(n), "{n}");
    }
    for n in [
        "PATH",
        "HOME",
        "OMP_NUM_THREADS",
        "CUDA_VISIBLE_DEVICES",
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD",
        "GITHUB_SHA",
    ] {
        assert!(!is_secret_name(n), "{n}");
    }
}

#[test]
fn raw_percent_and_base64_forms_are_redacted_at_every_offset() {
    let r = Redactor::new([TOKEN]);
    assert_eq!(r.redact(&format!("a {TOKEN} b")), "a *** b");
    let pct = percent_encode(TOKEN);
    assert_ne!(pct, TOKEN, "the token has characters that get encoded");
    assert!(!r.redact(&format!("?t={pct}")).contains(&pct));
    for prefix in ["", "x", "xy", "x-access-token:", "user:"] {
        let encoded = b64(format!("{prefix}{TOKEN}").as_bytes());
        let shown = r.redact(&format!("Authorization: Basic {encoded}"));
        assert!(shown.contains(REDACTED), "{prefix:?}: {shown}");
        // Nothing of the token's own characters is left beyond the edge characters.
        let core0 = base64_core(TOKEN.as_bytes(), 0);
        assert!(!shown.contains(&core0[..12]), "{prefix:?}: {shown}");
        let url_safe = encoded.replace('+', "-").replace('/', "_");
        assert!(r.redact(&url_safe).contains(REDACTED), "{prefix:?}");
    }
}

#[test]
fn short_values_and_unrelated_text_are_left_alone() {
    let r = Redactor::new(["1", "true", ""]);
    assert!(r.is_empty());
    assert_eq!(r.redact("1 true"), "1 true");
    let r = Redactor::from_vars(
        [
            ("PATH".to_string(), "/usr/local/bin:/usr/bin".to_string()),
            ("MY_TOKEN_VAR".to_string(), TOKEN.to_string()),
            ("CUSTOM".to_string(), "custom-secret-value".to_string()),
        ],
        ["CUSTOM"],
    );
    assert_eq!(
        r.redact("/usr/bin custom-secret-value ghp"),
        "/usr/bin *** ghp"
    );
    assert_eq!(r.redact(TOKEN), REDACTED);
    assert!(!format!("{r:?}").contains("custom"));
    let mut bytes = format!("x{TOKEN}").into_bytes();
    bytes = r.redact_bytes(bytes);
    assert_eq!(bytes, b"x***");
    let binary = vec![0xff, 0xfe, b'a'];
    assert_eq!(r.redact_bytes(binary.clone()), binary);
}

/// A secret with the characters JSON and HTML escape.
const QUOTED: &str = r#"pa"ss\word<&>'42"#;

#[test]
fn a_secret_with_quotes_or_backslashes_is_redacted_in_json_and_html() {
    let r = Redactor::new([QUOTED]);
    let json = serde_json::json!({ "error": format!("echo {QUOTED}") }).to_string();
    let shown = r.redact(&json);
    assert!(!shown.contains("ss\\\\word"), "{shown}");
    assert!(shown.contains(REDACTED), "{shown}");
    let html = "pa&quot;ss\\word&lt;&amp;&gt;&#39;42";
    assert_eq!(r.redact(&format!("<td>{html}</td>")), "<td>***</td>");
}

#[test]
fn a_secret_with_markdown_punctuation_is_redacted_backslash_escaped() {
    let secret = "ab_c*d[e]-tok";
    let r = Redactor::new([secret]);
    let escaped = r"ab\_c\*d\[e\]\-tok";
    assert_eq!(crate::secrets::markdown_escape(secret), escaped);
    assert_eq!(
        r.redact(&format!("| fix {escaped} leak |")),
        "| fix *** leak |"
    );
    // Inert punctuation is written as it is.
    assert_eq!(
        crate::secrets::markdown_escape("a.b,c:d/e=f%(g)"),
        "a.b,c:d/e=f%(g)"
    );
}

#[test]
fn every_string_of_a_value_is_redacted_whatever_it_holds() {
    let r = Redactor::new([QUOTED, TOKEN]);
    let mut value = serde_json::json!({
        "name": format!("bench {QUOTED}"),
        format!("key{TOKEN}"): [format!("{TOKEN}!"), 3, null],
    });
    r.redact_json(&mut value);
    let text = value.to_string();
    assert!(
        !text.contains("ss\\\\word") && !text.contains("ghp_"),
        "{text}"
    );
    let mut list = vec![format!("x{QUOTED}y"), "plain".to_string()];
    r.redact_serde(&mut list).unwrap();
    assert_eq!(list, ["x***y", "plain"]);
}

#[test]
fn output_that_is_not_utf8_is_redacted_too() {
    let r = Redactor::new([TOKEN]);
    let mut bytes = vec![0xff, b' '];
    bytes.extend_from_slice(TOKEN.as_bytes());
    bytes.push(0xfe);
    assert_eq!(r.redact_bytes(bytes), b"\xff ***\xfe");
}

#[test]
fn a_piece_of_a_secret_left_at_a_cut_is_redacted() {
    let r = Redactor::new([TOKEN]);
    // The tail of a longer text starts inside the token: its last 12 bytes are left.
    let tail = format!("{} and more", &TOKEN[TOKEN.len() - 12..]);
    let shown = r.redact_cut_text(&tail, true, false);
    assert_eq!(shown, "*** and more");
    // The head of a longer text ends inside it.
    let head = format!("start {}", &TOKEN[..9]);
    assert_eq!(r.redact_cut_text(&head, false, true), "start ***");
    // Fewer than 8 bytes are not a secret's piece; uncut text is never trimmed.
    let short = format!("{} x", &TOKEN[TOKEN.len() - 7..]);
    assert_eq!(r.redact_cut_text(&short, true, false), short);
    assert_eq!(r.redact_cut_text(&tail, false, false), tail);
}

#[test]
fn remembered_values_are_in_every_redactor_from_the_environment() {
    remember("store-password-remembered-1");
    let r = Redactor::from_vars(Vec::<(String, String)>::new(), []);
    assert_eq!(r.redact("x store-password-remembered-1"), "x ***");
}

#[test]
fn the_secrets_of_a_url() {
    let store = url_secrets("postgres://pitwall:s3cr%40t-pass@db.example:5432/pw", false);
    assert!(store.contains(&"s3cr@t-pass".to_string()), "{store:?}");
    assert!(store.contains(&"s3cr%40t-pass".to_string()), "{store:?}");
    assert!(
        store.contains(&"pitwall:s3cr%40t-pass".to_string()),
        "{store:?}"
    );
    assert!(!store.contains(&"pitwall".to_string()));
    let hook = url_secrets(
        "https://hookuser-1:hookpass-1@hooks.example/x?token=query-secret-1&a=b",
        true,
    );
    for s in [
        "hookuser-1",
        "hookpass-1",
        "query-secret-1",
        "token=query-secret-1&a=b",
    ] {
        assert!(hook.contains(&s.to_string()), "{s}: {hook:?}");
    }
    assert!(url_secrets("sqlite:.pitwall/pitwall.db", true).is_empty());
}
