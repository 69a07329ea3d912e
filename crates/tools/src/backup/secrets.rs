//! API keys and other secrets in settings: taken out of a backup's database, and — with
//! `--with-keys` — put beside it encrypted with a passphrase.
//!
//! A secret is any JSON field whose name says so (`apiKey`, `token`, `secret`, `password`,
//! `authorization`, in any case, also inside `env` and `headers` maps of outside MCP servers)
//! and the whole value of a secret setting (`mcp.token`). Each is removed from its settings
//! row and remembered as `(settings key, JSON pointer, value)`.
//!
//! Encryption: a 256-bit key from the passphrase with Argon2id (19 MiB, 2 passes — the
//! crate's defaults, OWASP's minimum), then XChaCha20-Poly1305 with a random 192-bit nonce and
//! the format name as associated data. A wrong passphrase or a changed byte fails the tag check.

use argon2::{Algorithm, Argon2, Params, Version};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::BackupError;

/// Settings whose whole value is a secret.
const SECRET_SETTINGS: [&str; 1] = ["mcp.token"];

/// Field names (lower case, `_` and `-` removed) that hold secrets.
fn is_secret_name(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    n == "apikey"
        || n == "authorization"
        || n == "password"
        || n.ends_with("token")
        || n.ends_with("secret")
        || n.ends_with("apikey")
}

/// One secret taken out of a setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Secret {
    /// The settings key.
    pub setting: String,
    /// RFC 6901 pointer into the setting's value (`""` = the whole value).
    pub pointer: String,
    /// The secret value.
    pub value: Value,
}

/// Removes the secrets of one setting's value; returns them.
pub fn strip(setting: &str, value: &mut Value) -> Vec<Secret> {
    if SECRET_SETTINGS.contains(&setting) {
        let v = std::mem::replace(value, Value::Null);
        return vec![Secret {
            setting: setting.to_owned(),
            pointer: String::new(),
            value: v,
        }];
    }
    let mut out = Vec::new();
    walk(setting, value, String::new(), false, &mut out);
    out
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn walk(setting: &str, value: &mut Value, at: String, in_map: bool, out: &mut Vec<Secret>) {
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let path = format!("{at}/{}", escape(&k));
                // `env` and `headers` of an outside MCP server: their entries are named by the
                // user (`OPENAI_API_KEY`, `Authorization`).
                let secret = is_secret_name(&k)
                    || (in_map
                        && ["key", "token", "secret", "password", "auth"]
                            .iter()
                            .any(|w| k.to_lowercase().contains(w)));
                if secret && map.get(&k).is_some_and(|v| !v.is_null()) {
                    if let Some(v) = map.remove(&k) {
                        out.push(Secret {
                            setting: setting.to_owned(),
                            pointer: path,
                            value: v,
                        });
                    }
                    continue;
                }
                let child_is_map = k == "env" || k == "headers";
                if let Some(child) = map.get_mut(&k) {
                    walk(setting, child, path, child_is_map, out);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                walk(setting, item, format!("{at}/{i}"), false, out);
            }
        }
        _ => {}
    }
}

/// Puts a secret back into a setting's value (creating the object fields on the way).
pub fn put_back(value: &mut Value, secret: &Secret) {
    if secret.pointer.is_empty() {
        *value = secret.value.clone();
        return;
    }
    let parts: Vec<String> = secret
        .pointer
        .split('/')
        .skip(1)
        .map(|p| p.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some((last, parents)) = parts.split_last() else {
        return;
    };
    let mut at = value;
    for p in parents {
        at = match at {
            Value::Array(items) => match p.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                Some(next) => next,
                None => return,
            },
            Value::Object(map) => map
                .entry(p.clone())
                .or_insert_with(|| Value::Object(Default::default())),
            _ => return,
        };
    }
    if let Value::Object(map) = at {
        map.insert(last.clone(), secret.value.clone());
    }
}

/// How the secrets file was sealed (kept in the manifest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sealing {
    /// `argon2id`.
    pub kdf: String,
    /// Argon2 memory cost in KiB.
    pub memory_kib: u32,
    /// Argon2 passes over the memory (time cost).
    pub passes: u32,
    /// Argon2 lanes (parallelism).
    pub lanes: u32,
    /// The Argon2 salt, 16 random bytes, base64.
    pub salt: String,
    /// The cipher's nonce, 24 random bytes, base64.
    pub nonce: String,
    /// `xchacha20poly1305`.
    pub cipher: String,
}

const AAD: &[u8] = b"tavo-backup secrets v1";

fn derive(passphrase: &str, salt: &[u8], s: &Sealing) -> Result<XChaCha20Poly1305, BackupError> {
    let params = Params::new(s.memory_kib, s.passes, s.lanes, Some(32))
        .map_err(|e| BackupError::Corrupt(format!("the key parameters are invalid: {e}")))?;
    let mut key = [0u8; 32];
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(passphrase.as_bytes(), salt, &mut key)
        .map_err(|e| BackupError::Corrupt(format!("cannot derive the key: {e}")))?;
    XChaCha20Poly1305::new_from_slice(&key)
        .map_err(|_| BackupError::Corrupt("cannot derive the key".into()))
}

/// Encrypts `secrets` with `passphrase`.
pub fn seal(secrets: &[Secret], passphrase: &str) -> Result<(Sealing, Vec<u8>), BackupError> {
    if passphrase.is_empty() {
        return Err(BackupError::Passphrase(
            "the passphrase is empty; put it in the passphrase file".into(),
        ));
    }
    let salt = chacha20poly1305::Key::generate();
    let salt = &salt[..16];
    let nonce = XNonce::generate();
    let sealing = Sealing {
        kdf: "argon2id".into(),
        memory_kib: Params::DEFAULT_M_COST,
        passes: Params::DEFAULT_T_COST,
        lanes: Params::DEFAULT_P_COST,
        salt: STANDARD.encode(salt),
        nonce: STANDARD.encode(nonce.as_slice()),
        cipher: "xchacha20poly1305".into(),
    };
    let cipher = derive(passphrase, salt, &sealing)?;
    let plain = serde_json::to_vec(secrets).map_err(|e| BackupError::Internal(e.to_string()))?;
    let sealed = cipher
        .encrypt(
            &nonce,
            Payload {
                msg: &plain,
                aad: AAD,
            },
        )
        .map_err(|_| BackupError::Internal("encryption failed".into()))?;
    Ok((sealing, sealed))
}

/// Decrypts the secrets; a wrong passphrase is [`BackupError::Passphrase`].
pub fn open(
    sealing: &Sealing,
    sealed: &[u8],
    passphrase: &str,
) -> Result<Vec<Secret>, BackupError> {
    if sealing.kdf != "argon2id" || sealing.cipher != "xchacha20poly1305" {
        return Err(BackupError::Corrupt(format!(
            "unknown key sealing {} / {}",
            sealing.kdf, sealing.cipher
        )));
    }
    let bad = |what: &str| BackupError::Corrupt(format!("the key sealing's {what} is invalid"));
    let salt = STANDARD.decode(&sealing.salt).map_err(|_| bad("salt"))?;
    let nonce = STANDARD.decode(&sealing.nonce).map_err(|_| bad("nonce"))?;
    let nonce = XNonce::try_from(nonce.as_slice()).map_err(|_| bad("nonce"))?;
    let cipher = derive(passphrase, &salt, sealing)?;
    let plain = cipher
        .decrypt(
            &nonce,
            Payload {
                msg: sealed,
                aad: AAD,
            },
        )
        .map_err(|_| {
            BackupError::Passphrase(
                "wrong passphrase (or the backup's keys were changed); nothing was restored".into(),
            )
        })?;
    serde_json::from_slice(&plain).map_err(|e| BackupError::Corrupt(format!("the keys: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_come_out_and_go_back() {
        let original = json!({
            "default": "main",
            "connections": [
                {"name": "main", "apiKey": "sk-1", "model": "m", "apiKeyEnv": null},
                {"name": "b", "api_key": "sk-2"}
            ],
            "servers": [{"env": {"OPENAI_API_KEY": "sk-3", "PATH": "/bin"},
                         "headers": {"Authorization": "Bearer x", "Accept": "*/*"}}]
        });
        let mut v = original.clone();
        let taken = strip("llm.connections", &mut v);
        assert_eq!(taken.len(), 4, "{taken:?}");
        let text = v.to_string();
        for s in ["sk-1", "sk-2", "sk-3", "Bearer x"] {
            assert!(!text.contains(s), "{s} left in {text}");
        }
        assert!(text.contains("/bin") && text.contains("*/*"));
        for s in &taken {
            put_back(&mut v, s);
        }
        assert_eq!(v, original);
        let mut token = json!("tavo_abc");
        assert_eq!(strip("mcp.token", &mut token).len(), 1);
        assert_eq!(token, Value::Null);
    }

    #[test]
    fn sealing_needs_the_passphrase() {
        let secrets = vec![Secret {
            setting: "llm.connections".into(),
            pointer: "/connections/0/apiKey".into(),
            value: json!("sk-secret"),
        }];
        let (sealing, sealed) = seal(&secrets, "correct horse").unwrap();
        assert!(!String::from_utf8_lossy(&sealed).contains("sk-secret"));
        assert_eq!(open(&sealing, &sealed, "correct horse").unwrap(), secrets);
        assert!(matches!(
            open(&sealing, &sealed, "wrong"),
            Err(BackupError::Passphrase(_))
        ));
        let mut flipped = sealed.clone();
        flipped[0] ^= 1;
        assert!(open(&sealing, &flipped, "correct horse").is_err());
    }
}
