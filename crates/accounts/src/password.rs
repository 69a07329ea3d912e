//! Password hashing: Argon2id with OWASP's first recommended parameter set (19 MiB of memory,
//! 2 passes, 1 lane), stored as a PHC string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`) so
//! the parameters travel with each hash and can be raised later without locking anyone out.

use argon2::{Algorithm, Argon2, Params, PasswordHasher, PasswordVerifier, Version};

use crate::error::AccountError;

/// Memory per hash, in KiB.
pub const MEMORY_KIB: u32 = 19_456;
/// Passes over the memory.
pub const PASSES: u32 = 2;
/// Lanes.
pub const LANES: u32 = 1;

/// Fewest characters a password may have.
pub const MIN_CHARS: usize = 8;
/// Most characters (hashing a megabyte would be a free denial of service).
pub const MAX_CHARS: usize = 1024;

fn hasher() -> Result<Argon2<'static>, AccountError> {
    let params = Params::new(MEMORY_KIB, PASSES, LANES, None)
        .map_err(|e| AccountError::Hash(e.to_string()))?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

/// Checks a new password's length.
pub fn check(password: &str) -> Result<(), AccountError> {
    let n = password.chars().count();
    if (MIN_CHARS..=MAX_CHARS).contains(&n) {
        Ok(())
    } else {
        Err(AccountError::BadPassword)
    }
}

/// The PHC string of a new password (a fresh random salt each time).
pub fn hash(password: &str) -> Result<String, AccountError> {
    check(password)?;
    hasher()?
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| AccountError::Hash(e.to_string()))
}

/// Whether `password` matches the stored PHC string. A malformed stored hash matches nothing.
pub fn verify(password: &str, phc: &str) -> bool {
    if password.chars().count() > MAX_CHARS {
        return false;
    }
    hasher()
        .map(|h| h.verify_password(password.as_bytes(), phc).is_ok())
        .unwrap_or(false)
}

/// A hash of a password nobody has, verified when a login names no user, so that a wrong name
/// costs the same time as a wrong password (the timing does not tell which names exist).
pub fn decoy() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash("decoy password that nobody has").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_argon2id_with_the_documented_parameters_and_verifies() {
        let h = hash("correct horse").unwrap_or_default();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        assert!(verify("correct horse", &h));
        assert!(!verify("correct horsE", &h));
        assert_ne!(h, hash("correct horse").unwrap_or_default(), "salted");
        assert!(!verify("x", "not a hash"));
        assert!(matches!(hash("short"), Err(AccountError::BadPassword)));
    }
}
