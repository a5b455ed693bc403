//! Secrets kept away from measured code and out of everything pitwall prints, stores or
//! publishes: which environment variables look like secrets ([`is_secret_name`]), and the
//! [`Redactor`] that replaces known secret values, raw or base64/URL/JSON/HTML/Markdown-escaped, with
//! `***`, and the secrets the process learns besides its environment ([`remember`]: a store
//! URL's password given by a flag), so every sink redacts against every secret known.
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
    /// The same forms, ready to search for.
    search: scan::Needles,
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
    /// token variables of the configuration), and every value the process [`remember`]ed.
    pub fn from_vars<'a>(
        vars: impl IntoIterator<Item = (String, String)>,
        also: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Self {
        let mut r = Self::new(
            vars.into_iter()
                .filter(|(k, _)| is_secret_name(k) || also.clone().into_iter().any(|a| a == k))
                .map(|(_, v)| v),
        );
        for v in remembered() {
            r.add(&v);
        }
        r
    }

    /// Adds one secret value.
    pub fn add(&mut self, value: &str) {
        let value = value.trim();
        if value.len() < MIN_SECRET_LEN {
            return;
        }
        let mut forms = vec![
            value.to_string(),
            percent_encode(value),
            json_escape(value),
            html_escape(value),
            markdown_escape(value),
        ];
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
        self.search = scan::Needles::new(&self.needles);
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
        if self.search.in_text(text) {
            *text = self.redact(text);
        }
    }

    /// Redacts bytes, UTF-8 or not (a command's output): every known form is replaced
    /// wherever its bytes occur.
    pub fn redact_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        let mut out = bytes;
        for n in &self.needles {
            out = replace_bytes(&out, n.as_bytes(), REDACTED.as_bytes());
        }
        out
    }

    /// As [`Redactor::redact_bytes`], for text that was cut from a longer one: `cut_before`
    /// when its start was cut off (a tail), `cut_after` when its end was (a head). A secret
    /// cut in two leaves a piece at the cut; any piece of at least [`MIN_SECRET_LEN`] bytes
    /// there (the end of a secret at the start, its beginning at the end) is redacted too.
    pub fn redact_cut(&self, bytes: Vec<u8>, cut_before: bool, cut_after: bool) -> Vec<u8> {
        let mut out = self.redact_bytes(bytes);
        if cut_before {
            let piece = self
                .needles
                .iter()
                .map(|n| longest_overlap(n.as_bytes(), &out, true))
                .max()
                .unwrap_or(0);
            if piece >= MIN_SECRET_LEN {
                out.splice(..piece, REDACTED.bytes());
            }
        }
        if cut_after {
            let piece = self
                .needles
                .iter()
                .map(|n| longest_overlap(n.as_bytes(), &out, false))
                .max()
                .unwrap_or(0);
            if piece >= MIN_SECRET_LEN {
                let at = out.len() - piece;
                out.splice(at.., REDACTED.bytes());
            }
        }
        out
    }

    /// As [`Redactor::redact_cut`] for text: `text` is what is kept of a longer text.
    pub fn redact_cut_text(&self, text: &str, cut_before: bool, cut_after: bool) -> String {
        let bytes = self.redact_cut(text.as_bytes().to_vec(), cut_before, cut_after);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Redacts every string (and object key) of a JSON value, whatever characters the secret
    /// holds (`"` and `\` included: the strings are compared unescaped).
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(s) => self.redact_in_place(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (mut k, mut v) in entries {
                    self.redact_in_place(&mut k);
                    self.redact_json(&mut v);
                    map.insert(k, v);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// A copy of `value` with every string redacted ([`Redactor::redact_json`]).
    pub fn redacted_json(&self, value: &serde_json::Value) -> serde_json::Value {
        let mut copy = value.clone();
        self.redact_json(&mut copy);
        copy
    }

    /// Redacts every string of a value that serializes (a run, an alert): a secret found
    /// anywhere in its JSON is replaced in each string holding it. `Err` when the redacted
    /// value no longer reads back as a `T` (a secret that was a whole enum tag or time):
    /// the caller must then not show the value.
    pub fn redact_serde<T>(&self, value: &mut T) -> Result<(), serde_json::Error>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        if self.is_empty() {
            return Ok(());
        }
        // Most values hold no secret: their strings are looked at without writing them out.
        if !scan::holds_any(&*value, &self.search) {
            return Ok(());
        }
        let json = serde_json::to_string(&*value)?;
        let mut tree: serde_json::Value = serde_json::from_str(&json)?;
        self.redact_json(&mut tree);
        *value = serde_json::from_value(tree)?;
        Ok(())
    }
}

/// Secrets the process learned besides its environment's secret-named variables: a store
/// URL's password given by `--store`, a token read for one request. Every redactor built
/// by [`Redactor::from_vars`] includes them.
static REMEMBERED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Remembers `value` as a secret of this process, for every redactor built after.
pub fn remember(value: &str) {
    let value = value.trim();
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    let mut known = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner());
    if !known.iter().any(|k| k == value) {
        known.push(value.to_string());
    }
}

/// What [`remember`] was given so far.
pub fn remembered() -> Vec<String> {
    REMEMBERED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The store's credentials among what was remembered: no command gets a variable holding
/// one, whatever `env_pass` says (they grant write access to a shared store).
static STORE_CREDENTIALS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Remembers a store URL's credential (its password, `user:password`): as [`remember`], and
/// listed by [`store_credentials`].
pub fn remember_store_credential(value: &str) {
    remember(value);
    let value = value.trim();
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    let mut known = STORE_CREDENTIALS.lock().unwrap_or_else(|e| e.into_inner());
    if !known.iter().any(|k| k == value) {
        known.push(value.to_string());
    }
}

/// What [`remember_store_credential`] was given so far.
pub fn store_credentials() -> Vec<String> {
    STORE_CREDENTIALS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// The secrets in a URL: its password and `user:password`; with `secret_whole` (a webhook's
/// URL, whose every part is a credential; a store URL's user name is not) its user name, path
/// and query too (whole, and each value). Percent-decoded and as written; values shorter than
/// [`MIN_SECRET_LEN`] left out. Nothing for text that is no URL.
pub fn url_secrets(url: &str, secret_whole: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Some((_, rest)) = url.trim().split_once("://") else {
        return out;
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        for raw in [password, userinfo] {
            out.push(raw.to_string());
            out.push(percent_decode(raw));
        }
        if secret_whole {
            out.push(user.to_string());
            out.push(percent_decode(user));
        }
    }
    if secret_whole {
        let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
        out.push(path.split('#').next().unwrap_or("").to_string());
        let query = query.split('#').next().unwrap_or("");
        out.push(query.to_string());
        for pair in query.split('&') {
            let value = pair.split_once('=').map_or(pair, |(_, v)| v);
            out.push(value.to_string());
            out.push(percent_decode(value));
        }
    }
    out.retain(|s| s.trim().len() >= MIN_SECRET_LEN);
    out.dedup();
    out
}

/// `%XX` sequences decoded (bytes that are no UTF-8 become U+FFFD); `+` kept.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `haystack` with every occurrence of `needle` replaced by `with`.
fn replace_bytes(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return haystack.to_vec();
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

/// The longest piece of `secret` at an edge of `text`: with `at_start`, the longest end of
/// `secret` that `text` starts with; otherwise the longest beginning of it that `text` ends
/// with. Whole occurrences are not counted (already redacted).
fn longest_overlap(secret: &[u8], text: &[u8], at_start: bool) -> usize {
    let most = secret.len().saturating_sub(1).min(text.len());
    (MIN_SECRET_LEN..=most)
        .rev()
        .find(|&k| {
            if at_start {
                text.starts_with(&secret[secret.len() - k..])
            } else {
                text.ends_with(&secret[..k])
            }
        })
        .unwrap_or(0)
}

/// How a string appears inside a JSON string literal (without the quotes).
fn json_escape(value: &str) -> String {
    let quoted = serde_json::Value::String(value.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// How a string appears in HTML text or an attribute (`&`, `<`, `>`, `"`, `'` escaped).
fn html_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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

mod markdown;
mod scan;
pub use markdown::markdown_escape;

#[cfg(test)]
mod tests;
