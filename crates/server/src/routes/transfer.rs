//! `POST /api/import` (multipart, any number of files, one result per file) and
//! `GET /api/export/{kind}/{id}?format=` (the file as a download).

use axum::Json;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tavo_model::AssetKind;
use tavo_tools::library::{
    ChatFilesAt, GivenFile, export_asset, export_format_for, import_file_all, pair_group_chats,
};

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::library::{failed_json, imported_json};
use crate::routes::assets::parse_kind;
use crate::routes::bytes_response;
use crate::state::AppState;
use crate::upload::{Part, spool};

/// The per-file results of an import.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ImportResults {
    /// One entry per file part, in upload order: `{file, ok: true, kind, name, characterId…,
    /// warnings}` or `{file, ok: false, error: {code, message}}`.
    #[schema(value_type = Vec<Object>)]
    pub results: Vec<Value>,
    /// How many files were imported.
    pub imported: usize,
    /// How many failed.
    pub failed: usize,
}

/// Imports character cards (PNG, JSON, charx), personas, presets, lorebooks, regex scripts and
/// chats (JSONL). Send `multipart/form-data` with one or more file parts; an optional text
/// field `kind` forces the kind. Each file is stored in its own transaction: a file that fails
/// changes nothing and the others still land. A SillyTavern `settings.json` gives one result
/// per persona; a SillyTavern group definition (`groups/<id>.json`) takes the file parts named
/// after its chats (`<chat>.jsonl`) as its group chats — one result per chat, and those parts
/// give no result of their own — or, with none of them, creates one empty group chat.
#[utoipa::path(post, path = "/api/import", tag = "library",
    request_body(content_type = "multipart/form-data", content = Object,
                 description = "file parts (any field name) and an optional `kind` field"),
    responses((status = 200, description = "One result per file", body = ImportResults),
              (status = 400, description = "Not multipart, or an unknown kind", body = ErrorBody),
              (status = 413, description = "Over the per-request upload limit", body = ErrorBody)))]
pub async fn import(
    State(state): State<AppState>,
    multipart: Multipart,
) -> ApiResult<Json<ImportResults>> {
    let limits = &state.config.limits;
    let parts = spool(
        multipart,
        &state.upload_dir,
        limits.upload_file,
        limits.upload_total,
    )
    .await?;
    let mut kind: Option<AssetKind> = None;
    for part in &parts {
        if let Part::Field { name, value } = part
            && name == "kind"
            && !value.trim().is_empty()
        {
            kind = Some(value.parse().map_err(|e: tavo_model::UnknownKind| {
                ApiError::bad_request(format!("kind: {e}"))
            })?);
        }
    }
    let mut results = Vec::new();
    let (mut imported, mut failed) = (0, 0);
    // Parsing a large file frees a lot at once: hand it back once the import is done.
    let _trim = TrimOnDrop(&state.trimmer);
    // The group definitions' chat files, paired as every door pairs them; an upload's names
    // are no places on a disk, so only the parts are looked among.
    let given: Vec<(usize, GivenFile)> = parts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match p {
            Part::File(f) => Some((
                i,
                GivenFile {
                    name: f.name.clone(),
                    path: f.path.clone(),
                    size: f.size,
                },
            )),
            _ => None,
        })
        .collect();
    let files: Vec<GivenFile> = given.iter().map(|(_, f)| f.clone()).collect();
    let paired = pair_group_chats(&files, ChatFilesAt::Given);
    let part_of = |file: &usize| given[*file].0;
    let claimed: std::collections::HashSet<usize> = paired.claimed.iter().map(part_of).collect();
    let mut groups: std::collections::HashMap<usize, Vec<(String, std::path::PathBuf)>> = paired
        .chats
        .into_iter()
        .map(|(file, chats)| (part_of(&file), chats))
        .collect();
    for (index, part) in parts.into_iter().enumerate() {
        if claimed.contains(&index) {
            imported += 1;
            continue;
        }
        let companions = groups.remove(&index).unwrap_or_default();
        match part {
            Part::Field { .. } => {}
            Part::TooLarge { name, limit } => {
                failed += 1;
                results.push(json!({
                    "file": name, "ok": false,
                    "error": { "code": "payload_too_large", "message": format!("{name} is larger than {limit} bytes") },
                }));
            }
            Part::File(spooled) => {
                let name = spooled.name.clone();
                let outcome = state
                    .blocking_api(move |store| {
                        let bytes = std::fs::read(&spooled.path)
                            .map_err(|e| ApiError::internal("reading an upload spool file", e))?;
                        let mut chats = Vec::new();
                        for (name, path) in companions {
                            let b = std::fs::read(&path).map_err(|e| {
                                ApiError::internal("reading an upload spool file", e)
                            })?;
                            chats.push((name, b));
                        }
                        Ok(import_file_all(store, &bytes, &spooled.name, kind, &chats)
                            .map_err(|e| e.into_tool_error()))
                    })
                    .await;
                match outcome {
                    Ok(Ok(all)) => {
                        imported += 1;
                        for created in all {
                            if let Some(id) = created.main_id() {
                                state
                                    .hub
                                    .library(created.kind.as_str(), "imported", Some(id));
                            }
                            results.push(imported_json(&name, &created));
                        }
                    }
                    Ok(Err(e)) => {
                        failed += 1;
                        results.push(failed_json(&name, &e));
                    }
                    Err(e) => {
                        failed += 1;
                        results
                            .push(json!({ "file": name, "ok": false, "error": e.body()["error"] }));
                    }
                }
            }
        }
    }
    if results.is_empty() {
        return Err(ApiError::bad_request(
            "the upload has no file parts; send multipart/form-data with at least one file",
        ));
    }
    Ok(Json(ImportResults {
        results,
        imported,
        failed,
    }))
}

/// Export options.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// character: png (default), ccv3-json, ccv2-json, charx, tavo; lorebook: st (default),
    /// ccv3, tavo; preset, regex: st (default), tavo; persona: tavo; chat: jsonl (default), tavo.
    pub format: Option<String>,
}

/// Downloads one asset as a file.
#[utoipa::path(get, path = "/api/export/{kind}/{id}", tag = "library",
    params(("kind" = String, Path), ("id" = i64, Path), ExportQuery),
    responses((status = 200, description = "The file, with its MIME type and a download name"),
              (status = 400, description = "A format this kind cannot be exported to", body = ErrorBody),
              (status = 404, description = "No such asset", body = ErrorBody)))]
pub async fn export(
    State(state): State<AppState>,
    Path((kind, id)): Path<(String, i64)>,
    Query(q): Query<ExportQuery>,
) -> ApiResult<Response> {
    let kind = parse_kind(&kind)?;
    let format = export_format_for(kind, q.format.as_deref())?;
    let exported = state
        .blocking_api(move |s| Ok(export_asset(s, kind, id, Some(format))?))
        .await?;
    let file = download_name(&exported.name, exported.format.extension());
    let mut response = bytes_response(exported.mime_type(), exported.bytes);
    if let Ok(v) = HeaderValue::from_str(&file) {
        response
            .headers_mut()
            .insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

/// `attachment; filename="ascii.ext"; filename*=UTF-8''percent-encoded.ext`.
fn download_name(name: &str, ext: &str) -> String {
    let base: String = name
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, '/' | '\\'))
        .collect();
    let base = if base.trim().is_empty() {
        "export".to_owned()
    } else {
        base.trim().to_owned()
    };
    let ascii: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || " -_.()".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for b in format!("{base}.{ext}").bytes() {
        if b.is_ascii_alphanumeric() || b"-_.".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{ascii}.{ext}\"; filename*=UTF-8''{encoded}")
}

/// Schedules a memory trim when dropped (however the import ends).
struct TrimOnDrop<'a>(&'a crate::memory::Trimmer);

impl Drop for TrimOnDrop<'_> {
    fn drop(&mut self) {
        self.0.schedule();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_are_safe_header_values() {
        let d = download_name("Ëlsa \"the\" /cat", "png");
        assert!(
            d.starts_with("attachment; filename=\"_lsa _the_ cat.png\""),
            "{d}"
        );
        assert!(
            d.contains("filename*=UTF-8''%C3%8Blsa%20%22the%22%20cat.png"),
            "{d}"
        );
        assert!(HeaderValue::from_str(&d).is_ok());
        assert!(download_name("", "json").contains("export.json"));
    }
}
