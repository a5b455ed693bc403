//! Browser sessions of `pitwall serve` (issue 30): a person signs in with a token, and the
//! browser gets a random session id in an HttpOnly cookie instead of keeping the token. The
//! store keeps only the id's SHA-256 and the SHA-256 of the token's secret, so a session ends
//! when its 12 hours are up, when it signs out, and when its token is revoked, expires, or is
//! replaced by a new token of that name.
//!
//! Forms are protected against cross-site requests by a token derived from the session id
//! (the "HMAC-based token" pattern of OWASP's CSRF Prevention Cheat Sheet, keyed by the
//! session secret itself): only a page the server rendered for that session carries it, and
//! the browser's scripts never see the id it is derived from.

use pitwall_engine::defaults::SERVE_SESSION_HOURS;
use pitwall_schema::UnixTime;
use pitwall_store::{Store, StoreError, StoredSession, StoredToken};
use sha2::{Digest, Sha256};

use crate::tokens::{self, Refusal, TokenError};

/// Every session id starts with this (a leaked cookie is recognisable).
pub const SESSION_PREFIX: &str = "pws_";

/// A session just made: what is stored, and the id for the cookie, which nothing keeps.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub session: StoredSession,
    pub id: String,
}

/// A session that counts, with the token behind it.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub token: StoredToken,
    /// The CSRF token of the session's forms.
    pub csrf: String,
}

fn whole_seconds(t: UnixTime) -> String {
    UnixTime { nanos: 0, ..t }.to_rfc3339(0).unwrap_or_default()
}

/// Signs in with token secret `secret` at `now`: a new session of its token, stored.
/// `Err(Refusal)` inside `Ok` when the secret does not authenticate.
pub fn sign_in(
    store: &mut dyn Store,
    stored: &[StoredToken],
    secret: &str,
    now: UnixTime,
) -> Result<Result<NewSession, Refusal>, TokenError> {
    let token = match tokens::authenticate(stored, secret, now) {
        Ok(t) => t,
        Err(r) => return Ok(Err(r)),
    };
    let id = tokens::random_secret(SESSION_PREFIX)?;
    let ends = UnixTime {
        secs: now.secs + SERVE_SESSION_HOURS * 3600,
        nanos: 0,
    };
    let session = StoredSession {
        id_sha256: tokens::hash_secret(&id),
        token_sha256: token.secret_sha256.clone(),
        token_name: token.name.clone(),
        created_at: whole_seconds(now),
        expires_at: whole_seconds(ends),
    };
    store.create_session(&session)?;
    Ok(Ok(NewSession { session, id }))
}

/// The signed-in token of session id `id` at `now`, if the session counts: stored, not ended,
/// and its token (by secret, not by name) neither revoked nor expired.
pub fn session_of(
    store: &dyn Store,
    stored: &[StoredToken],
    id: &str,
    now: UnixTime,
) -> Result<Option<SignedIn>, StoreError> {
    if !id.starts_with(SESSION_PREFIX) {
        return Ok(None);
    }
    let Some(session) = store.session(&tokens::hash_secret(id))? else {
        return Ok(None);
    };
    // An end that cannot be read counts as passed: fail closed.
    let ended = UnixTime::parse(&session.expires_at).is_none_or(|e| e.secs <= now.secs);
    if ended {
        return Ok(None);
    }
    let token = stored.iter().find(|t| {
        t.revoked_at.is_none()
            && tokens::same(&t.secret_sha256, &session.token_sha256)
            && !tokens::expired(t, now)
    });
    Ok(token.map(|t| SignedIn {
        token: t.clone(),
        csrf: csrf_of(id),
    }))
}

/// A random value for a sign-in form's cookie (its CSRF token is [`csrf_of`] it).
pub fn new_nonce() -> Result<String, String> {
    tokens::random_secret("pwn_").map_err(|e| e.to_string())
}

/// Ends session `id`; false when there was none.
pub fn sign_out(store: &mut dyn Store, id: &str) -> Result<bool, StoreError> {
    store.delete_session(&tokens::hash_secret(id))
}

/// The CSRF token of session `id`'s forms.
pub fn csrf_of(id: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"pitwall-csrf\0");
    h.update(id.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `presented` is session `id`'s CSRF token (compared without an early exit).
pub fn csrf_ok(id: &str, presented: &str) -> bool {
    tokens::same(&csrf_of(id), presented)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_store::{SqliteStore, TokenRole};

    fn at(text: &str) -> UnixTime {
        UnixTime::parse(text).unwrap()
    }

    fn made(store: &mut dyn Store, name: &str) -> (StoredToken, String) {
        let t = tokens::create(
            store,
            name,
            TokenRole::Triage,
            tokens::Expiry::Days(90),
            at("2026-12-06T00:00:00Z"),
        )
        .unwrap();
        (t.token, t.secret)
    }

    #[test]
    fn a_session_counts_for_12_hours_while_its_token_does() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("s.db")).unwrap();
        let (_, secret) = made(&mut store, "alice");
        let now = at("2026-12-06T08:00:00Z");
        let list = store.list_tokens().unwrap();
        assert_eq!(
            sign_in(&mut store, &list, "pw_wrong", now)
                .unwrap()
                .unwrap_err(),
            Refusal::Unknown
        );
        let s = sign_in(&mut store, &list, &secret, now).unwrap().unwrap();
        assert!(s.id.starts_with(SESSION_PREFIX));
        assert_eq!(s.session.expires_at, "2026-12-06T20:00:00Z");
        assert_ne!(s.session.id_sha256, s.id, "only the hash is stored");
        let who = session_of(&store, &list, &s.id, now).unwrap().unwrap();
        assert_eq!(who.token.name, "alice");
        assert!(csrf_ok(&s.id, &who.csrf));
        assert!(!csrf_ok(&s.id, ""));
        assert!(!csrf_ok("pws_other", &who.csrf));
        // Ends after 12 hours.
        let late = at("2026-12-06T20:00:00Z");
        assert!(session_of(&store, &list, &s.id, late).unwrap().is_none());
        // Ends with its token, and a new token of that name does not bring it back.
        tokens::revoke(&mut store, "alice", now).unwrap();
        let list = store.list_tokens().unwrap();
        assert!(session_of(&store, &list, &s.id, now).unwrap().is_none());
        made(&mut store, "alice");
        let list = store.list_tokens().unwrap();
        assert!(session_of(&store, &list, &s.id, now).unwrap().is_none());
        // Signing out deletes it.
        let (_, bob) = made(&mut store, "bob");
        let list = store.list_tokens().unwrap();
        let s = sign_in(&mut store, &list, &bob, now).unwrap().unwrap();
        assert!(session_of(&store, &list, &s.id, now).unwrap().is_some());
        assert!(sign_out(&mut store, &s.id).unwrap());
        assert!(session_of(&store, &list, &s.id, now).unwrap().is_none());
        assert!(
            session_of(&store, &list, "not-a-session", now)
                .unwrap()
                .is_none()
        );
    }
}
