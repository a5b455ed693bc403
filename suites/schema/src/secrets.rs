//! Secrets kept away from measured code and out of everything pitwall prints, stores or
//! publishes: which environment variables look like secrets ([`is_secret_name`]), and the
//! [`Redactor`] that replaces known secret values, raw or base64/URL-encoded, with `***`.
//!
//! It lives here, beside the result schema, because both the pipeline (the environment of
//! build and benchmark commands, their output) and the reports (text a server echoes back)
//! need the same rule, and neither may depend on the other.

/// What a redacted value is replaced with.
pub const REDACTED: &str = "***";

/// Values shorter than this are not redacted: a short value (`1`, `true`) would blank out
/// ordinary text and is not a credential anyway. Its variable is still removed.
pub const MIN_SECRET_LEN: usize = 8;

/// Variables that hold credentials by name, beyond the patterns of [`is_secret_name`].
const SECRET_NAMES: &[&str] = &["SSH_AUTH_SOCK", "NETRC", "GIT_ASKPASS", "SSH_ASKPASS"];

/// Variables that match a pattern but are known settings, not credentials (Hugging Face's
/// `TOKENIZERS_PARALLELISM` changes what a benchmark measures; removing it would too).
const NOT_SECRET: &[&str] = &["TOKENIZERS_PARALLELISM"];

/// Whether a variable named `name` looks like it holds a secret: its name contains `TOKEN`,
/// `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`, `JWT` or `PRIVATE`; ends in `_KEY` or `_KEYS`,
/// or contains `API_KEY`/`APIKEY`; starts with `AWS_`, `AZURE_` or `GOOGLE_APPLICATION_`; or is
/// one of a few credential helpers (`SSH_AUTH_SOCK`, `GIT_ASKPASS`, ...). Case-insensitive.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    if NOT_SECRET.contains(&n.as_str()) {
        return false;
    }
    SECRET_NAMES.contains(&n.as_str())
        || [
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "JWT",
            "PRIVATE",
            "API_KEY",
            "APIKEY",
        ]
        .iter()
        .any(|p| n.contains(p))
        || n.ends_with("_KEY")
        || n.ends_with("_KEYS")
        || n == "KEY"
        || ["AWS_", "AZURE_", "GOOGLE_APPLICATION_"]
            .iter()
            .any(|p| n.starts_with(p))
}

/// Replaces every known secret value in text, in the forms it is likely to be echoed in: as
/// is, base64 (standard and URL-safe, at any alignment, so `Basic base64(user:token)` is
/// caught too) and percent-encoded.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Every form of every secret, longest first so a longer form is replaced whole.
    needles: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    /// Never the values: how many forms are known.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} forms)", self.needles.len())
    }
}

impl Redactor {
    /// Redacts nothing.
    pub fn none() -> Self {
        Self::default()
    }

    /// Redacts each of `values` that is at least [`MIN_SECRET_LEN`] long (surrounding
    /// whitespace ignored).
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut r = Self::default();
        for v in values {
            r.add(v.as_ref());
        }
        r
    }

    /// The values of every variable in `vars` named like a secret or named in `also` (the
    /// token variables of the configuration).
    pub fn from_vars<'a>(
        vars: impl IntoIterator<Item = (String, String)>,
        also: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Self {
        Self::new(
            vars.into_iter()
                .filter(|(k, _)| is_secret_name(k) || also.clone().into_iter().any(|a| a == k))
                .map(|(_, v)| v),
        )
    }

    /// Adds one secret value.
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        if value.len() < MIN_SECRET_LEN {
            return;
        }
        let mut forms = vec![value.to_string(), percent_encode(value)];
        for shift in 0..3 {
            let core = base64_core(value.as_bytes(), shift);
            forms.push(core.replace('+', "-").replace('/', "_"));
            forms.push(core);
        }
        for f in forms {
            if f.len() >= MIN_SECRET_LEN && !self.needles.contains(&f) {
                self.needles.push(f);
            }
        }
        self.needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
    }

    /// Whether no secret is known.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every known secret form replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for n in &self.needles {
            if out.contains(n.as_str()) {
                out = out.replace(n.as_str(), REDACTED);
            }
        }
        out
    }

    /// Redacts `text` in place, allocating only when something is found.
    pub fn redact_in_place(&self, text: &mut String) {
        if self.needles.iter().any(|n| text.contains(n.as_str())) {
            *text = self.redact(text);
        }
    }

    /// Redacts bytes that are UTF-8 (a command's output); other bytes are left as they are.
    pub fn redact_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        match String::from_utf8(bytes) {
            Ok(mut s) => {
                self.redact_in_place(&mut s);
                s.into_bytes()
            }
            Err(e) => e.into_bytes(),
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The base64 characters that depend only on `value`'s bytes when it follows `shift` (0–2)
/// other bytes and is followed by anything: the characters mixing in neighbouring bytes are
/// dropped at both ends. So `base64("x-access-token:" + value)` contains the shift-0, 1 or 2
/// core of `value`, whichever its offset gives.
fn base64_core(value: &[u8], shift: usize) -> String {
    let mut bytes = vec![0u8; shift];
    bytes.extend_from_slice(value);
    // Characters whose 6 bits all come from `bytes`.
    let whole = bytes.len() * 8 / 6;
    // The first characters covering the `shift` leading bytes (or part of them).
    let skip = (shift * 8).div_ceil(6);
    base64_standard(&bytes)
        .chars()
        .take(whole)
        .skip(skip)
        .collect()
}

/// Standard padded base64 (RFC 4648 §4, what `base64 -w0` prints): the encoding a server's
/// echo of `user:token` uses, and what tests build such echoes with.
pub fn base64_standard(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `value` with every byte outside RFC 3986's unreserved set as `%XX` (upper case hex).
fn percent_encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
}
