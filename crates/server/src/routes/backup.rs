//! Backup and restore over HTTP: `GET /api/backup` (the library as one download, no keys),
//! `POST /api/backup` (`{passphrase}`: with the API keys, encrypted) and `POST /api/restore`
//! (multipart: the backup file, optional `passphrase` and `yes` fields). The same functions as
//! `tavo backup` / `tavo restore` (`tavo_tools::backup`).
//!
//! A backup is taken while the server runs: the database snapshot comes from a second,
//! read-only connection, so replies and requests go on meanwhile. A restore is refused while
//! a reply is running, and it replaces the rows through the server's own connection, so every
//! request after it sees the restored library.

use axum::Json;
use axum::body::Body;
use axum::extract::{Multipart, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;
use tavo_tools::backup::{
    BackupError, BackupOptions, EXTENSION, RestoreOptions, create_backup, restore_backup,
};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use crate::upload::{Part, spool};

/// Largest backup file `POST /api/restore` accepts.
pub const RESTORE_LIMIT: u64 = 16 * 1024 * 1024 * 1024;

fn backup_error(e: BackupError) -> ApiError {
    let status = match &e {
        BackupError::Corrupt(_) | BackupError::Newer { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        BackupError::Passphrase(_) => StatusCode::FORBIDDEN,
        BackupError::NeedsConfirmation(_) => StatusCode::CONFLICT,
        BackupError::Store(_) | BackupError::Io(_) | BackupError::Internal(_) => {
            return ApiError::internal("the backup", &e);
        }
    };
    ApiError::new(status, e.code(), e.to_string())
}

async fn download(state: AppState, passphrase: Option<String>) -> ApiResult<Response> {
    let name = format!(
        "tavo-{}.{EXTENSION}",
        chrono_like_stamp(std::time::SystemTime::now())
    );
    let (file, size) = state
        .blocking_api(move |store| {
            let path = store.data_dir().join("tmp").join(format!(
                "download-{}.{EXTENSION}",
                uuid::Uuid::new_v4().simple()
            ));
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| ApiError::internal("creating the backup folder", e))?;
            }
            let summary =
                create_backup(store, &path, &BackupOptions { passphrase }).map_err(backup_error)?;
            let file = std::fs::File::open(&path)
                .map_err(|e| ApiError::internal("opening the backup", e))?;
            // The open file keeps its bytes; the name goes at once, so nothing is left behind
            // however the download ends.
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!(error = %e, "cannot remove the backup spool file");
            }
            Ok((file, summary.bytes))
        })
        .await?;
    let stream = tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(file));
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

/// `YYYYMMDD-HHMMSS` (UTC) without a date library.
fn chrono_like_stamp(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The whole library as one backup file (database snapshot and files), without API keys.
#[utoipa::path(get, path = "/api/backup", tag = "library",
    responses((status = 200, description = "The backup file (`application/zip`, `.tavobackup`)",
               content_type = "application/zip", body = Vec<u8>)))]
pub async fn get_backup(State(state): State<AppState>) -> ApiResult<Response> {
    download(state, None).await
}

/// Options of a backup with keys.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupRequest {
    /// Include the API keys, encrypted with this passphrase.
    pub passphrase: String,
}

/// The whole library as one backup file, with the API keys encrypted with `passphrase`.
#[utoipa::path(post, path = "/api/backup", tag = "library",
    request_body = BackupRequest,
    responses((status = 200, description = "The backup file", content_type = "application/zip", body = Vec<u8>),
              (status = 400, description = "An empty passphrase", body = ErrorBody)))]
pub async fn post_backup(
    State(state): State<AppState>,
    Json(body): Json<BackupRequest>,
) -> ApiResult<Response> {
    if body.passphrase.is_empty() {
        return Err(ApiError::bad_request("passphrase: must not be empty"));
    }
    download(state, Some(body.passphrase)).await
}

/// Replaces the library with a backup. Send `multipart/form-data` with the backup as a file
/// part and optional text fields `passphrase` (restores the API keys of a backup made with
/// them) and `yes` (`true`: replace a library that is not empty). Refused while a reply runs,
/// for a backup of a newer tavo (422), a damaged or cut-short file (422) and a wrong
/// passphrase (403); a refused restore changes nothing. Answers `{manifest, tables, files,
/// keys, warnings}`.
#[utoipa::path(post, path = "/api/restore", tag = "library",
    request_body(content_type = "multipart/form-data", content = Object,
                 description = "a file part (the backup) and optional `passphrase`, `yes` fields"),
    responses((status = 200, description = "What was restored", body = Object),
              (status = 400, description = "No file part", body = ErrorBody),
              (status = 403, description = "Wrong passphrase", body = ErrorBody),
              (status = 409, description = "The library is not empty (send yes=true), or a reply is running", body = ErrorBody),
              (status = 422, description = "Not a usable backup, or one of a newer tavo", body = ErrorBody)))]
pub async fn restore(
    State(state): State<AppState>,
    multipart: Multipart,
) -> ApiResult<Json<Value>> {
    let parts = spool(multipart, &state.upload_dir, RESTORE_LIMIT, RESTORE_LIMIT).await?;
    let mut options = RestoreOptions::default();
    let mut file = None;
    for part in parts {
        match part {
            Part::Field { name, value } if name == "passphrase" && !value.is_empty() => {
                options.passphrase = Some(value);
            }
            Part::Field { name, value } if name == "yes" => {
                options.yes = matches!(value.trim(), "true" | "1" | "yes");
            }
            Part::Field { .. } => {}
            Part::TooLarge { name, limit } => {
                return Err(ApiError::too_large(format!(
                    "{name} is larger than {limit} bytes"
                )));
            }
            Part::File(spooled) => file = Some(spooled),
        }
    }
    let Some(file) = file else {
        return Err(ApiError::bad_request(
            "send the backup as a file part of multipart/form-data",
        ));
    };
    let summary = state
        .blocking_api(move |store| {
            // Replies of this server or of another `tavo` on the same library.
            if let Some(live) = tavo_engine::status::live_replies(store)?.first() {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    "busy",
                    format!(
                        "a reply is running in chat {} ({}); wait for it or cancel it before restoring",
                        live.chat_id, live.id
                    ),
                ));
            }
            let r = restore_backup(store, &file.path, &options).map_err(backup_error);
            drop(file);
            r
        })
        .await?;
    // Replies the backup caught running are interrupted ones now: cancelled, never replayed.
    if let Err(e) = state.replies.engine().recover() {
        tracing::warn!(error = %e, "cannot mark the restored library's interrupted replies");
    }
    state.hub.library("library", "restored", None);
    let value = serde_json::to_value(&summary).map_err(|e| ApiError::internal("the restore", e))?;
    Ok(Json(value))
}

#[cfg(test)]
mod tests {
    #[test]
    fn stamps_are_civil_dates() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_764_648_000);
        assert_eq!(super::chrono_like_stamp(t), "20251202-040000");
    }
}
