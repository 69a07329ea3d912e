//! Session tokens: 256 random bits given to the browser once (in an HttpOnly cookie); the
//! database keeps only their SHA-256, so a copy of `accounts.sqlite` opens no session.
//!
//! A session ends after [`IDLE_EXPIRY`] without a request, and [`ABSOLUTE_EXPIRY`] after its
//! login whatever happens; a new login always makes a new token (an attacker who planted a
//! cookie before the login gains nothing: fixation), and a password change or "log out
//! everywhere" ends every session of the user.

use std::time::Duration;

use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// A session ends after this long without a request.
pub const IDLE_EXPIRY: Duration = Duration::from_secs(7 * 24 * 3600);
/// A session ends this long after its login, used or not.
pub const ABSOLUTE_EXPIRY: Duration = Duration::from_secs(30 * 24 * 3600);
/// `last_seen` is written at most this often (each request would otherwise be a write).
pub(crate) const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// A session token as the browser holds it.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionToken(String);

impl std::fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionToken(<hidden>)")
    }
}

impl SessionToken {
    /// A fresh random token.
    pub fn new() -> Self {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        SessionToken(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    /// A token as a cookie carried it (any text: a forged one simply matches nothing).
    pub fn from_cookie(value: &str) -> Self {
        SessionToken(value.to_owned())
    }

    /// The value for the cookie.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// What the database keeps.
    pub(crate) fn digest(&self) -> String {
        hex::encode(Sha256::digest(self.0.as_bytes()))
    }
}

impl Default for SessionToken {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_url_safe_and_stored_as_digests() {
        let a = SessionToken::new();
        let b = SessionToken::new();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 43);
        assert!(
            a.as_str()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_eq!(a.digest().len(), 64);
        assert!(!a.digest().contains(a.as_str()));
        assert_eq!(format!("{a:?}"), "SessionToken(<hidden>)");
    }
}
