//! API tokens of `pitwall serve` (issue 29): making one (a random secret, shown once, of which
//! only the SHA-256 is stored), listing and revoking them, and checking a presented secret
//! against the stored ones. `pitwall token …` and the server both use this; neither sees how
//! the other does it.

use pitwall_schema::UnixTime;
use pitwall_store::{Store, StoreError};
pub use pitwall_store::{StoredToken, TokenRole};
use sha2::{Digest, Sha256};

/// A token's lifetime when `--expires` is not given.
pub const DEFAULT_TOKEN_DAYS: u32 = 90;

/// Every secret starts with this, so a leaked one is recognisable (and secret scanners can
/// be taught it).
pub const SECRET_PREFIX: &str = "pw_";

/// Random bytes in a secret (256 bits).
const SECRET_BYTES: usize = 32;

/// Longest token name.
const MAX_NAME_CHARS: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "token name `{0}`: use 1-64 letters, digits, `.`, `_` or `-` (hint: name it after the runner or person, e.g. `gpu-runner-07`)"
    )]
    BadName(String),
    #[error("--expires `{0}`: expected a number of days such as `90d`, or `never`")]
    BadExpiry(String),
    #[error("no random source: {0}")]
    Random(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no unrevoked token named `{0}` (hint: `pitwall token list` shows them)")]
    NotFound(String),
}

/// How long a new token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    Days(u32),
    Never,
}

impl Expiry {
    /// `90d`, `1d`, or `never`.
    pub fn parse(text: &str) -> Result<Expiry, TokenError> {
        let t = text.trim();
        if t == "never" {
            return Ok(Expiry::Never);
        }
        t.strip_suffix('d')
            .and_then(|d| d.parse::<u32>().ok())
            .filter(|d| (1..=36_500).contains(d))
            .map(Expiry::Days)
            .ok_or_else(|| TokenError::BadExpiry(text.to_string()))
    }
}

/// A token just made: what is stored, and the secret, which is shown once and nowhere kept.
#[derive(Debug, Clone)]
pub struct NewToken {
    pub token: StoredToken,
    pub secret: String,
}

/// The lowercase hex SHA-256 of a secret: what the store keeps.
pub fn hash_secret(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// `prefix` and 256 random bits in hex.
pub(crate) fn random_secret(prefix: &str) -> Result<String, TokenError> {
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{prefix}{hex}"))
}

/// A new random secret.
fn new_secret() -> Result<String, TokenError> {
    random_secret(SECRET_PREFIX)
}

/// Makes and stores token `name` with `role`, valid from `now` for `expiry`.
pub fn create(
    store: &mut dyn Store,
    name: &str,
    role: TokenRole,
    expiry: Expiry,
    now: UnixTime,
) -> Result<NewToken, TokenError> {
    if !valid_name(name) {
        return Err(TokenError::BadName(name.to_string()));
    }
    let secret = new_secret()?;
    let at = |t: UnixTime| t.to_rfc3339(0).unwrap_or_default();
    let expires_at = match expiry {
        Expiry::Never => None,
        Expiry::Days(d) => Some(at(UnixTime {
            secs: now.secs + i64::from(d) * 86_400,
            nanos: 0,
        })),
    };
    let token = StoredToken {
        name: name.to_string(),
        role,
        secret_sha256: hash_secret(&secret),
        created_at: at(UnixTime { nanos: 0, ..now }),
        expires_at,
        revoked_at: None,
    };
    store.create_token(&token)?;
    Ok(NewToken { token, secret })
}

/// Revokes token `name`.
pub fn revoke(store: &mut dyn Store, name: &str, now: UnixTime) -> Result<(), TokenError> {
    let at = now.to_rfc3339(0).unwrap_or_default();
    if store.revoke_token(name, &at)? {
        Ok(())
    } else {
        Err(TokenError::NotFound(name.to_string()))
    }
}

/// Why a presented secret does not authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No token has that secret (or it was revoked).
    Unknown,
    /// Its token expired.
    Expired,
}

/// Whether a token is shown as counting, expired or revoked at `now`.
pub fn state(token: &StoredToken, now: UnixTime) -> &'static str {
    if token.revoked_at.is_some() {
        "revoked"
    } else if expired(token, now) {
        "expired"
    } else {
        "active"
    }
}

pub(crate) fn expired(token: &StoredToken, now: UnixTime) -> bool {
    match token.expires_at.as_deref() {
        None => false,
        // An expiry that cannot be read counts as passed: fail closed.
        Some(text) => UnixTime::parse(text).is_none_or(|e| e.secs <= now.secs),
    }
}

/// Equal without an early exit: how long the comparison takes says nothing of where two
/// hashes differ.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The unrevoked token whose secret `secret` is, if it has not expired at `now`.
pub fn authenticate<'a>(
    tokens: &'a [StoredToken],
    secret: &str,
    now: UnixTime,
) -> Result<&'a StoredToken, Refusal> {
    let hash = hash_secret(secret);
    let found = tokens
        .iter()
        .filter(|t| t.revoked_at.is_none())
        .fold(None, |hit, t| {
            if same(&t.secret_sha256, &hash) {
                Some(t)
            } else {
                hit
            }
        })
        .ok_or(Refusal::Unknown)?;
    if expired(found, now) {
        Err(Refusal::Expired)
    } else {
        Ok(found)
    }
}

/// Whether `role` may do what `needed` may: a runner and a triager read too; only a runner
/// uploads, only a triager changes alerts.
pub fn allows(role: TokenRole, needed: TokenRole) -> bool {
    role == needed || needed == TokenRole::Read
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> UnixTime {
        UnixTime::parse(text).unwrap()
    }

    fn stored(name: &str, secret: &str, expires: Option<&str>) -> StoredToken {
        StoredToken {
            name: name.into(),
            role: TokenRole::Runner,
            secret_sha256: hash_secret(secret),
            created_at: "2026-12-05T00:00:00Z".into(),
            expires_at: expires.map(str::to_string),
            revoked_at: None,
        }
    }

    #[test]
    fn expiry_parses_days_and_never_and_nothing_else() {
        assert_eq!(Expiry::parse("90d").unwrap(), Expiry::Days(90));
        assert_eq!(Expiry::parse("never").unwrap(), Expiry::Never);
        for bad in ["", "90", "0d", "-1d", "3w", "never!"] {
            assert!(Expiry::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_hash_is_sha256_hex() {
        // FIPS 180-2's "abc" vector.
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_secret_authenticates_its_token_until_it_expires_or_is_revoked() {
        let now = at("2026-12-05T12:00:00Z");
        let mut tokens = vec![
            stored("a", "pw_one", Some("2027-03-05T00:00:00Z")),
            stored("b", "pw_two", Some("2026-12-01T00:00:00Z")),
            stored("c", "pw_three", None),
        ];
        assert_eq!(authenticate(&tokens, "pw_one", now).unwrap().name, "a");
        assert_eq!(authenticate(&tokens, "pw_two", now), Err(Refusal::Expired));
        assert_eq!(authenticate(&tokens, "pw_three", now).unwrap().name, "c");
        assert_eq!(authenticate(&tokens, "pw_four", now), Err(Refusal::Unknown));
        assert_eq!(authenticate(&tokens, "", now), Err(Refusal::Unknown));
        tokens[0].revoked_at = Some("2026-12-05T11:00:00Z".into());
        assert_eq!(authenticate(&tokens, "pw_one", now), Err(Refusal::Unknown));
        assert_eq!(state(&tokens[0], now), "revoked");
        assert_eq!(state(&tokens[1], now), "expired");
        assert_eq!(state(&tokens[2], now), "active");
        // An expiry that cannot be read fails closed.
        tokens.push(stored("d", "pw_five", Some("soon")));
        assert_eq!(authenticate(&tokens, "pw_five", now), Err(Refusal::Expired));
    }

    #[test]
    fn roles_read_and_each_does_its_own_work() {
        use TokenRole::*;
        for r in [Runner, Triage, Read] {
            assert!(allows(r, Read));
        }
        assert!(allows(Runner, Runner) && !allows(Triage, Runner) && !allows(Read, Runner));
        assert!(allows(Triage, Triage) && !allows(Runner, Triage) && !allows(Read, Triage));
    }

    #[test]
    fn names_are_checked_and_secrets_are_random() {
        assert!(valid_name("gpu-runner_07.a"));
        for bad in ["", "a b", "a/b", "é", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with(SECRET_PREFIX) && a.len() == SECRET_PREFIX.len() + 64);
    }
}
