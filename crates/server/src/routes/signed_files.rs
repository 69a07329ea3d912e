//! Signed file URLs (`tavo.file.url` in a bubble, seed 002 "文件"): a bubble's frame has an
//! opaque origin and no credentials, so on a server with an access token its `<img src>` /
//! `<audio src>` of a stored file cannot authenticate. The app (which is logged in) asks
//! `POST /api/chats/{id}/files/sign` for short-lived URLs, each HMAC-SHA256-signed by this
//! server over its chat, scope, file name and expiry; `GET /api/signed/chats/{id}/files/{scope}/{name}?e=&s=`
//! serves that one file without a token (the guard lets `/api/signed/` through; the handler
//! checks the signature) and refuses a changed chat, scope, name or expiry, a wrong signature
//! and an expired one with 403.
//!
//! The key is random per server process (a restart invalidates every URL, which live at most
//! [`MAX_TTL`]), never leaves the process, and is never logged. Signing reveals nothing the app
//! could not read itself; a signed URL gives exactly one file of one scope until it expires.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::routes::media;
use crate::state::AppState;

/// How long a URL lives when the request names no `ttl`, in seconds.
pub const DEFAULT_TTL: u64 = 600;
/// The longest a signed URL lives, in seconds.
pub const MAX_TTL: u64 = 3600;
/// The most files one request signs.
pub const MAX_FILES: usize = 200;
/// Where signed URLs live (the guard lets GET requests under it through).
pub const PREFIX: &str = "/api/signed/";

/// This process's signing key.
fn key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut h = Sha256::new();
        h.update(uuid::Uuid::new_v4().as_bytes());
        h.update(uuid::Uuid::new_v4().as_bytes());
        h.update(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
                .to_le_bytes(),
        );
        h.finalize().into()
    })
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key` (a 32-byte key fits one block).
fn hmac(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let mut ipad = [0x36u8; 64];
    let mut opad = [0x5cu8; 64];
    for (i, k) in key.iter().enumerate() {
        ipad[i] ^= k;
        opad[i] ^= k;
    }
    let inner = Sha256::new()
        .chain_update(ipad)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(opad)
        .chain_update(inner)
        .finalize()
        .into()
}

/// The signed text: version, chat, scope, name and expiry, one per line (a name holds no
/// line break: the file-name rules and [`check_name`] refuse control characters).
/// `library` is the library's URL prefix (empty on a single-user server, `/u/<id>` for a user
/// of a server with accounts), so a URL of one user's file is no URL of another's.
fn signature(library: &str, chat: i64, scope: &str, name: &str, expires: u64) -> String {
    let text = format!("tavo-file-url/v1\n{library}\n{chat}\n{scope}\n{name}\n{expires}");
    hex::encode(hmac(key(), text.as_bytes()))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// The seed's file-name rules (no `/ \ :`, no `..`), plus no control characters.
fn check_name(name: &str) -> Result<(), ApiError> {
    if name.is_empty()
        || name.len() > 255
        || name.contains(['/', '\\', ':'])
        || name.contains("..")
        || name.chars().any(char::is_control)
    {
        return Err(ApiError::bad_request(format!(
            "{name:?} is not a file name (no / \\ : or .., at most 255 bytes)"
        )));
    }
    Ok(())
}

fn check_scope(scope: &str) -> Result<(), ApiError> {
    if scope == "chat" || scope == "global" {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "scope must be \"chat\" or \"global\", not {scope:?}"
        )))
    }
}

/// Percent-encodes a path segment (everything but unreserved characters).
fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The signed URL of one file (a path on this server, under the library's prefix).
pub fn signed_url(library: &str, chat: i64, scope: &str, name: &str, expires: u64) -> String {
    format!(
        "{library}{PREFIX}chats/{chat}/files/{scope}/{}?e={expires}&s={}",
        segment(name),
        signature(library, chat, scope, name, expires)
    )
}

/// One file to sign.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FileRef {
    /// The file name (as given to `tavo.file.save`).
    pub name: String,
    /// `chat` (default) or `global`.
    #[serde(default)]
    pub scope: Option<String>,
}

/// What to sign.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignBody {
    /// The files (at most [`MAX_FILES`]).
    pub files: Vec<FileRef>,
    /// Lifetime in seconds (default 600, at most 3600).
    #[serde(default)]
    pub ttl: Option<u64>,
}

/// One signed URL.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SignedFile {
    /// The file name.
    pub name: String,
    /// Its scope.
    pub scope: String,
    /// The URL (a path on this server) that serves it without a token until `expires`.
    pub url: String,
}

/// The signed URLs and when they expire.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Signed {
    /// Unix time (seconds) after which the URLs are refused.
    pub expires: u64,
    /// One per file asked, in order.
    pub urls: Vec<SignedFile>,
}

/// Signs short-lived URLs for files of a chat's and the global storage (the app asks, for the
/// bubbles of this chat; nothing is read, a missing file's URL answers 404).
#[utoipa::path(post, path = "/api/chats/{id}/files/sign", tag = "media",
    params(("id" = i64, Path)),
    request_body = SignBody,
    responses((status = 200, description = "`{expires, urls: [{name, scope, url}]}`", body = Signed),
              (status = 400, description = "A bad name, scope or ttl, or too many files", body = ErrorBody),
              (status = 404, description = "No such chat", body = ErrorBody)))]
pub async fn sign(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    Json(body): Json<SignBody>,
) -> ApiResult<Json<Signed>> {
    if body.files.len() > MAX_FILES {
        return Err(ApiError::bad_request(format!(
            "at most {MAX_FILES} files per request"
        )));
    }
    let ttl = body.ttl.unwrap_or(DEFAULT_TTL);
    if ttl == 0 || ttl > MAX_TTL {
        return Err(ApiError::bad_request(format!(
            "ttl must be 1..={MAX_TTL} seconds"
        )));
    }
    let exists = state
        .blocking_api(move |s| Ok(tavo_tools::reads::chat(s, tavo_model::ChatId(id))?.is_some()))
        .await?;
    if !exists {
        return Err(ApiError::not_found(format!("chat {id} does not exist")));
    }
    let expires = now() + ttl;
    let mut urls = Vec::with_capacity(body.files.len());
    for f in body.files {
        let scope = f.scope.unwrap_or_else(|| "chat".to_owned());
        check_scope(&scope)?;
        check_name(&f.name)?;
        urls.push(SignedFile {
            url: signed_url(&state.url_prefix, id, &scope, &f.name, expires),
            name: f.name,
            scope,
        });
    }
    Ok(Json(Signed { expires, urls }))
}

/// The signature and expiry of a signed URL.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SignedQuery {
    /// Expiry (unix seconds).
    pub e: Option<u64>,
    /// The signature (hex).
    pub s: Option<String>,
}

fn refused(code: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, code, message)
}

/// One stored file by a signed URL, without a token.
#[utoipa::path(get, path = "/api/signed/chats/{id}/files/{scope}/{name}", tag = "media",
    params(("id" = i64, Path), ("scope" = String, Path), ("name" = String, Path), SignedQuery),
    responses((status = 200, description = "The file with its MIME type"),
              (status = 403, description = "A missing, wrong or expired signature (`signature_invalid`, `signature_expired`)", body = ErrorBody),
              (status = 404, description = "No such file", body = ErrorBody)))]
pub async fn serve(
    state: State<AppState>,
    Path((id, scope, name)): Path<(i64, String, String)>,
    Query(q): Query<SignedQuery>,
) -> ApiResult<Response> {
    let (Some(expires), Some(sig)) = (q.e, q.s) else {
        return Err(refused(
            "signature_invalid",
            "a signed file URL carries e= and s=",
        ));
    };
    if check_scope(&scope).is_err() || check_name(&name).is_err() {
        return Err(refused("signature_invalid", "the signature does not match"));
    }
    let expected = signature(&state.url_prefix, id, &scope, &name, expires);
    if !crate::security::constant_time_eq(expected.as_bytes(), sig.as_bytes()) {
        return Err(refused("signature_invalid", "the signature does not match"));
    }
    if expires < now() {
        return Err(refused(
            "signature_expired",
            "this signed URL has expired; ask for a new one",
        ));
    }
    if scope == "global" {
        media::global_file(state, Path(name)).await
    } else {
        media::chat_file(state, Path((id, name))).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_and_the_signature_binds_every_field() {
        // RFC 4231 test case 1: a 20-byte key of 0x0b (zero-padded, as HMAC pads it).
        let mut k = [0u8; 32];
        k[..20].fill(0x0b);
        assert_eq!(
            hex::encode(hmac(&k, b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        let base = signature("", 1, "chat", "a.png", 100);
        for other in [
            signature("/u/2", 1, "chat", "a.png", 100),
            signature("", 2, "chat", "a.png", 100),
            signature("", 1, "global", "a.png", 100),
            signature("", 1, "chat", "b.png", 100),
            signature("", 1, "chat", "a.png", 101),
        ] {
            assert_ne!(base, other);
        }
        assert_eq!(base.len(), 64);
    }

    #[test]
    fn names_follow_the_seed_rules() {
        for bad in ["", "../x", "a/b", "a\\b", "c:d", "a\nb"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name("hero image.png").is_ok());
        assert_eq!(segment("a b/é"), "a%20b%2F%C3%A9");
    }
}
