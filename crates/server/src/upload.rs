//! Multipart uploads streamed to disk under limits.
//!
//! Each file part is written chunk by chunk to a spool file under `<data>/tmp/uploads` with a
//! random name (the client's file name is only ever shown, never used as a path), counting
//! bytes as they arrive: a part over the per-file limit stops being written and is reported as
//! too large; the request as a whole is cut off at the per-request limit. Memory use is one
//! chunk, whatever the client sends. Spool files are removed when their [`Spooled`] drops.

use std::path::{Path, PathBuf};

use axum::extract::Multipart;
use tokio::io::AsyncWriteExt;

use crate::error::{ApiError, ApiResult};

/// One uploaded part.
#[derive(Debug)]
pub enum Part {
    /// A file, spooled to disk.
    File(Spooled),
    /// A file over the per-file limit (its bytes were discarded).
    TooLarge {
        /// The client's file name.
        name: String,
        /// The limit it broke.
        limit: u64,
    },
    /// A plain form field (`kind`).
    Field {
        /// Field name.
        name: String,
        /// Its text (at most 1 KiB is kept).
        value: String,
    },
}

/// A spool file; deleted on drop.
#[derive(Debug)]
pub struct Spooled {
    /// The client's file name (for messages and format hints only).
    pub name: String,
    /// Where the bytes are.
    pub path: PathBuf,
    /// How many.
    pub size: u64,
}

impl Drop for Spooled {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(error = %e, "cannot remove an upload spool file");
        }
    }
}

/// Streams every part of `multipart` to `dir`.
pub async fn spool(
    mut multipart: Multipart,
    dir: &Path,
    file_limit: u64,
    total_limit: u64,
) -> ApiResult<Vec<Part>> {
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|e| ApiError::internal("creating the upload folder", e))?;
    let mut parts = Vec::new();
    let mut total: u64 = 0;
    while let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? {
        let field_name = field.name().unwrap_or_default().to_owned();
        let Some(file_name) = field.file_name().map(display_name) else {
            let mut value = Vec::new();
            while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                total += chunk.len() as u64;
                if total > total_limit {
                    return Err(total_error(total_limit));
                }
                let room = 1024usize.saturating_sub(value.len());
                value.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            parts.push(Part::Field {
                name: field_name,
                value: String::from_utf8_lossy(&value).into_owned(),
            });
            continue;
        };
        let spooled = Spooled {
            name: file_name,
            path: dir.join(format!("{}.part", uuid::Uuid::new_v4())),
            size: 0,
        };
        let mut file = tokio::fs::File::create(&spooled.path)
            .await
            .map_err(|e| ApiError::internal("creating an upload spool file", e))?;
        let mut spooled = spooled;
        let mut too_large = false;
        while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
            total += chunk.len() as u64;
            if total > total_limit {
                return Err(total_error(total_limit));
            }
            if too_large {
                continue;
            }
            spooled.size += chunk.len() as u64;
            if spooled.size > file_limit {
                too_large = true;
                continue;
            }
            file.write_all(&chunk)
                .await
                .map_err(|e| ApiError::internal("writing an upload spool file", e))?;
        }
        file.flush()
            .await
            .map_err(|e| ApiError::internal("writing an upload spool file", e))?;
        drop(file);
        if too_large {
            parts.push(Part::TooLarge {
                name: spooled.name.clone(),
                limit: file_limit,
            });
        } else {
            parts.push(Part::File(spooled));
        }
    }
    Ok(parts)
}

/// The last path component of a client-supplied name, without control characters.
fn display_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let clean: String = last.chars().filter(|c| !c.is_control()).take(255).collect();
    if clean.is_empty() {
        "upload".to_owned()
    } else {
        clean
    }
}

fn multipart_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    let status = e.status();
    if status == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::too_large(e.body_text());
    }
    ApiError::bad_request(format!(
        "the upload is not valid multipart/form-data: {}",
        e.body_text()
    ))
}

fn total_error(limit: u64) -> ApiError {
    ApiError::too_large(format!(
        "the upload is larger than {limit} bytes in total; send fewer files per request \
         (or raise limits.upload_total in config.toml)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_names_never_become_paths() {
        assert_eq!(display_name("../../etc/passwd"), "passwd");
        assert_eq!(display_name("C:\\x\\card.png"), "card.png");
        assert_eq!(display_name("a\u{0}b.json"), "ab.json");
        assert_eq!(display_name("dir/"), "upload");
    }

    #[test]
    fn spool_files_are_removed_on_drop() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("x.part");
        std::fs::write(&path, b"x").expect("write");
        drop(Spooled {
            name: "x".into(),
            path: path.clone(),
            size: 1,
        });
        assert!(!path.exists());
    }
}
