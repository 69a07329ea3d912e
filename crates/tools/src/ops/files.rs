//! The five file tools (seed 000, "使用已存文件"): `tavo_file_save|load|delete|exists|list`.
//!
//! Chat scope is the default and is bound to the reply's own chat (never the "current" chat of
//! the UI); global scope is shared. Saves and deletes run without confirmation. `name` is a
//! single file name. Results never contain physical paths, only virtual ones (`files/chat/x`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tavo_model::ChatId;
use tavo_store::files::{FileScope, validate_name, virtual_path};

use crate::budget::ToolResult;
use crate::context::{OpContext, store_error};
use crate::error::{ErrorCode, ToolError};
use crate::operation::{OpSpec, Outcome, Safety};
use crate::registry::Registry;
use crate::validate::SchemaError;

/// The largest file `tavo_file_save` stores, in bytes: what the web fetch lets a download
/// grow to (its decompressed limit), so a file saved from content and one saved from a URL
/// meet the same cap. The operation door's body limit leaves room for it as a data URL.
pub const MAX_FILE_BYTES: usize = 40 * 1024 * 1024;

// The store refuses files over its own cap; this one must not be larger, or a file this
// operation accepts would fail in the store with a less helpful message.
const _: () = assert!(MAX_FILE_BYTES as u64 <= tavo_store::MAX_FILE_BYTES);

/// `chat` (default) or `global`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ScopeArg {
    /// The chat that started this reply.
    #[default]
    Chat,
    /// Shared across chats; only when the user clearly wants it everywhere.
    Global,
}

/// `utf8` (default), `base64` or `dataUrl`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum EncodingArg {
    /// Plain text.
    #[default]
    #[serde(rename = "utf8")]
    Utf8,
    /// Bare base64 (no `data:` prefix).
    #[serde(rename = "base64")]
    Base64,
    /// `data:<mime>;base64,<data>`.
    #[serde(rename = "dataUrl")]
    DataUrl,
    /// Saving only: detect it from the content, as TavoJS's `tavo.file.save` does without an
    /// encoding (seed 002) — a `data:` URL is decoded, an `http(s)://` URL downloaded, anything
    /// else stored as text.
    #[serde(rename = "auto")]
    Auto,
}

impl EncodingArg {
    fn as_str(self) -> &'static str {
        match self {
            EncodingArg::Utf8 => "utf8",
            EncodingArg::Base64 => "base64",
            EncodingArg::DataUrl => "dataUrl",
            EncodingArg::Auto => "auto",
        }
    }
}

/// `options` of save and load.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IoOptions {
    /// Storage scope (default `chat`).
    #[serde(default)]
    pub scope: Option<ScopeArg>,
    /// Content encoding: `utf8` by default (seed 000: a bare URL or a `data:` string is stored
    /// as the text it is), `base64`, `dataUrl`, or — saving only — `auto` (a `data:` URL is
    /// decoded, an `http://` or `https://` URL downloaded, anything else text; TavoJS's
    /// `file.save` without an encoding). Loading: `utf8` by default.
    #[serde(default)]
    pub encoding: Option<EncodingArg>,
}

/// `options` of delete and exists.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopeOptions {
    /// Storage scope (default `chat`).
    #[serde(default)]
    pub scope: Option<ScopeArg>,
}

/// `options` of list.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListOptions {
    /// Storage scope (default `chat`).
    #[serde(default)]
    pub scope: Option<ScopeArg>,
    /// Page size, 1-200 (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page, in the same scope.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Arguments of `tavo_file_save`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveArgs {
    /// A single file name with extension, without `/`, `\`, `:` or `..`. Saving replaces a file
    /// of the same name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// The content, encoded as `options.encoding` says (text by default); with `auto`, a `data:`
    /// URL is decoded and an `http(s)://` URL is downloaded (the web fetch's address and size
    /// rules).
    pub content: String,
    /// Scope and encoding.
    #[serde(default)]
    pub options: Option<IoOptions>,
}

/// Arguments of `tavo_file_load`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadArgs {
    /// The file name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Scope and the encoding to return the content in.
    #[serde(default)]
    pub options: Option<IoOptions>,
}

/// Arguments of `tavo_file_delete` and `tavo_file_exists`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NameArgs {
    /// The file name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Scope.
    #[serde(default)]
    pub options: Option<ScopeOptions>,
}

/// Arguments of `tavo_file_list`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Scope, page size and cursor.
    #[serde(default)]
    pub options: Option<ListOptions>,
}

/// Resolves the scope against the reply's chat.
pub fn resolve_scope(ctx: &OpContext, scope: Option<ScopeArg>) -> Result<FileScope, ToolError> {
    match scope.unwrap_or_default() {
        ScopeArg::Global => Ok(FileScope::Global),
        ScopeArg::Chat => ctx.chat_id().map(|c| FileScope::Chat(c.get())),
    }
}

/// `resource_not_found` when a chat scope names a chat that does not exist.
fn ensure_scope(store: &tavo_store::Store, scope: FileScope) -> Result<(), ToolError> {
    match scope {
        FileScope::Chat(id) => crate::ops::require_chat(store, Some(ChatId(id))),
        FileScope::Global => Ok(()),
    }
}

/// Checks a file name with the store's rules, reporting the argument path.
pub fn check_name(path: &str, name: &str) -> Result<(), ToolError> {
    validate_name(name).map_err(|e| {
        let reason = match &e {
            tavo_store::StoreError::InvalidFileName { reason, .. } => (*reason).to_owned(),
            other => other.to_string(),
        };
        ToolError::new(ErrorCode::InvalidArguments, format!("{path}: {reason}; use a plain file name such as notes.txt"))
            .with_details(json!({"path": path, "expected": "a single file name without / \\ : or ..", "actualType": "string"}))
    })
}

/// Splits a data URL into MIME type and bytes.
pub fn decode_data_url(url: &str) -> Result<(String, Vec<u8>), String> {
    let rest = url
        .strip_prefix("data:")
        .ok_or("a data URL starts with data:")?;
    let (header, data) = rest
        .split_once(',')
        .ok_or("a data URL has a ',' before its data")?;
    let (mime, is_base64) = match header.strip_suffix(";base64") {
        Some(m) => (m, true),
        None => (header, false),
    };
    let mime = if mime.is_empty() {
        "text/plain"
    } else {
        mime.split(';').next().unwrap_or(mime)
    };
    let bytes = if is_base64 {
        STANDARD
            .decode(data.trim())
            .map_err(|e| format!("its base64 data is invalid ({e})"))?
    } else {
        percent_decode(data)
    };
    Ok((mime.to_owned(), bytes))
}

fn percent_decode(s: &str) -> Vec<u8> {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// What a save's content is, once the encoding is known or detected.
enum SaveContent {
    Bytes(Vec<u8>),
    Download(String),
}

fn save_content(content: String, encoding: Option<EncodingArg>) -> Result<SaveContent, ToolError> {
    let encoding = match encoding.unwrap_or_default() {
        EncodingArg::Auto if is_http_url(&content) => return Ok(SaveContent::Download(content)),
        EncodingArg::Auto
            if content
                .get(..5)
                .is_some_and(|p| p.eq_ignore_ascii_case("data:")) =>
        {
            EncodingArg::DataUrl
        }
        EncodingArg::Auto => EncodingArg::Utf8,
        e => e,
    };
    Ok(SaveContent::Bytes(match encoding {
        EncodingArg::Utf8 => content.into_bytes(),
        EncodingArg::Base64 => STANDARD.decode(content.trim()).map_err(|e| {
            ToolError::invalid_at("content", format!("valid base64 ({e})"), "string")
        })?,
        EncodingArg::DataUrl | EncodingArg::Auto => {
            decode_data_url(&content)
                .map_err(|e| {
                    ToolError::invalid_at("content", format!("a data URL: {e}"), "string")
                })?
                .1
        }
    }))
}

/// `http://…` or `https://…`, with no whitespace (a sentence that starts with a URL is text).
fn is_http_url(content: &str) -> bool {
    let lower = content
        .get(..8)
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    (lower.starts_with("http://") || lower.starts_with("https://"))
        && !content.trim_end().contains(char::is_whitespace)
}

/// Downloads `url` under the library's web fetch policy (public addresses only unless the user
/// allowed all, the size and redirect limits); a non-2xx answer saves nothing.
async fn download(ctx: &OpContext, url: &str) -> Result<Vec<u8>, ToolError> {
    let policy = ctx
        .blocking("reading the web fetch policy", |store| {
            Ok(crate::web::load_fetch_policy(store))
        })
        .await?;
    let fetcher = tavo_web::WebFetcher::new(policy).map_err(crate::web::fetch_error)?;
    let file = fetcher
        .download_file(url.trim())
        .await
        .map_err(crate::web::fetch_error)?;
    if !(200..300).contains(&file.status) {
        return Err(ToolError::new(
            ErrorCode::Unavailable,
            format!(
                "{} answered HTTP {}; nothing was saved",
                file.final_url, file.status
            ),
        )
        .with_details(json!({"reason": "http_status", "status": file.status})));
    }
    Ok(file.bytes)
}

async fn save(args: SaveArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_name("name", &args.name)?;
    let opts = args.options.unwrap_or_default();
    let scope = resolve_scope(&ctx, opts.scope)?;
    let bytes = match save_content(args.content, opts.encoding)? {
        SaveContent::Bytes(b) => b,
        SaveContent::Download(url) => download(&ctx, &url).await?,
    };
    if bytes.len() > MAX_FILE_BYTES {
        return Err(ToolError::new(
            ErrorCode::LimitExceeded,
            format!(
                "content: the file is {} bytes; a saved file holds at most {MAX_FILE_BYTES} (40 MiB); nothing was saved",
                bytes.len()
            ),
        ));
    }
    let name = args.name;
    ctx.blocking("saving the file", move |store| {
        ensure_scope(store, scope)?;
        let files = store.files();
        files
            .save(scope, &name, &bytes)
            .map_err(|e| store_error("saving the file", e))?;
        let entry = files
            .stat(scope, &name)
            .map_err(|e| store_error("saving the file", e))?
            .ok_or_else(|| ToolError::internal("saving the file"))?;
        Outcome::value(json!({
            "path": entry.path, "name": entry.name, "scope": scope.as_str(), "size": entry.size,
            "mimeType": entry.mime_type, "modifiedAt": entry.modified_at,
        }))
    })
    .await
}

fn not_found(scope: FileScope, name: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ResourceNotFound,
        format!(
            "no file named {name:?} in the {} scope; call tavo_file_list to see the stored files",
            scope.as_str()
        ),
    )
}

async fn load(args: LoadArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_name("name", &args.name)?;
    let opts = args.options.unwrap_or_default();
    let scope = resolve_scope(&ctx, opts.scope)?;
    let encoding = opts.encoding.unwrap_or_default();
    if encoding == EncodingArg::Auto {
        return Err(ToolError::invalid_at(
            "options.encoding",
            "utf8, base64 or dataUrl (auto applies to saving only)",
            "string",
        ));
    }
    let name = args.name;
    ctx.blocking("reading the file", move |store| {
        ensure_scope(store, scope)?;
        let files = store.files();
        let entry = files
            .stat(scope, &name)
            .map_err(|e| store_error("reading the file", e))?;
        let bytes = files
            .load(scope, &name)
            .map_err(|e| store_error("reading the file", e))?;
        let (Some(entry), Some(bytes)) = (entry, bytes) else {
            return Err(not_found(scope, &name));
        };
        let text = match encoding {
            EncodingArg::Utf8 => String::from_utf8(bytes).map_err(|_| {
                ToolError::invalid_at(
                    "options.encoding",
                    format!(
                        "base64 or dataUrl: {name} ({}) is not UTF-8 text",
                        entry.mime_type
                    ),
                    "string",
                )
            })?,
            EncodingArg::Base64 => STANDARD.encode(&bytes),
            EncodingArg::DataUrl | EncodingArg::Auto => format!(
                "data:{};base64,{}",
                entry.mime_type,
                STANDARD.encode(&bytes)
            ),
        };
        let mut meta = Map::new();
        meta.insert("path".into(), Value::String(entry.path));
        meta.insert("name".into(), Value::String(entry.name));
        meta.insert("scope".into(), Value::String(scope.as_str().into()));
        meta.insert("size".into(), json!(entry.size));
        meta.insert("mimeType".into(), Value::String(entry.mime_type));
        meta.insert("encoding".into(), Value::String(encoding.as_str().into()));
        Ok(Outcome::Done {
            result: ToolResult::Text {
                meta,
                field: "content",
                text,
            },
            expose: Vec::new(),
        })
    })
    .await
}

async fn delete(args: NameArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_name("name", &args.name)?;
    let scope = resolve_scope(&ctx, args.options.and_then(|o| o.scope))?;
    let name = args.name;
    ctx.blocking("deleting the file", move |store| {
        ensure_scope(store, scope)?;
        let existed = store
            .files()
            .delete(scope, &name)
            .map_err(|e| store_error("deleting the file", e))?;
        if !existed {
            return Err(not_found(scope, &name));
        }
        Outcome::value(json!({"deleted": true, "path": virtual_path(scope, &name)}))
    })
    .await
}

async fn exists(args: NameArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    check_name("name", &args.name)?;
    let scope = resolve_scope(&ctx, args.options.and_then(|o| o.scope))?;
    let name = args.name;
    ctx.blocking("checking the file", move |store| {
        ensure_scope(store, scope)?;
        let found = store
            .files()
            .exists(scope, &name)
            .map_err(|e| store_error("checking the file", e))?;
        Outcome::value(json!({"exists": found, "path": virtual_path(scope, &name)}))
    })
    .await
}

async fn list(args: ListArgs, ctx: OpContext) -> Result<Outcome, ToolError> {
    let opts = args.options.unwrap_or_default();
    let scope = resolve_scope(&ctx, opts.scope)?;
    let limit = opts.limit.unwrap_or(100) as usize;
    let cursor = opts.cursor;
    ctx.blocking("listing files", move |store| {
        ensure_scope(store, scope)?;
        let page = store
            .files()
            .list(scope, limit, cursor.as_deref())
            .map_err(|e| match e {
                tavo_store::StoreError::InvalidArgument(_) => ToolError::invalid_at(
                    "options.cursor",
                    format!(
                        "a nextCursor returned by an earlier tavo_file_list call in the {} scope",
                        scope.as_str()
                    ),
                    "string",
                ),
                other => store_error("listing files", other),
            })?;
        Outcome::value(page)
    })
    .await
}

/// Registers the five file tools.
pub fn register(r: &mut Registry) -> Result<(), SchemaError> {
    const KW: &[&str] = &[
        "file",
        "files",
        "storage",
        "document",
        "attachment",
        "disk",
        "文件",
    ];
    r.add(
        OpSpec::new(
            "file.save",
            Safety::Write,
            "Save text or binary content as a file in the chat's file storage (or global storage with \
             options.scope \"global\"). Overwrites a file of the same name. Returns the virtual path (for \
             example files/chat/notes.txt) that can be stored in variables or used as an image source. Use \
             files, not variables, for large content such as images. options.encoding: utf8 (default: the \
             content is stored as the text it is, also a URL or a data: string), base64, dataUrl, or auto \
             (a data: URL decoded, an http(s) URL downloaded, anything else text).",
        )
        .keywords(KW),
        save,
    )?;
    r.add(
        OpSpec::new(
            "file.load",
            Safety::Read,
            "Read a stored file. options.encoding utf8 (default, text), base64 or dataUrl (binary). Check \
             size and mimeType with tavo_file_list first for large or binary files; text over 64 KiB is cut \
             and marked truncated.",
        )
        .keywords(KW),
        load,
    )?;
    r.add(
        OpSpec::new(
            "file.delete",
            Safety::Write,
            "Delete a stored file. Fails with resource_not_found when it does not exist.",
        )
        .keywords(KW),
        delete,
    )?;
    r.add(
        OpSpec::new(
            "file.exists",
            Safety::Read,
            "Check whether a stored file exists.",
        )
        .keywords(KW),
        exists,
    )?;
    r.add(
        OpSpec::new(
            "file.list",
            Safety::Read,
            "List stored files of the chat (or global) scope, sorted by name (case-sensitive), with path, name, \
             size in bytes, mimeType and UTC modifiedAt. options.limit 1-200 (default 100); pass nextCursor \
             back as options.cursor for the next page (same scope only).",
        )
        .keywords(KW),
        list,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_decode() {
        assert_eq!(
            decode_data_url("data:text/plain;base64,aGk="),
            Ok(("text/plain".into(), b"hi".to_vec()))
        );
        assert_eq!(
            decode_data_url("data:,a%20b"),
            Ok(("text/plain".into(), b"a b".to_vec()))
        );
        assert!(decode_data_url("hello").is_err());
        assert!(decode_data_url("data:image/png;base64,@@@").is_err());
    }

    #[test]
    fn bad_names_name_the_argument() {
        let e = check_name("name", "../x").err().and_then(|e| e.details);
        assert_eq!(e.map(|d| d["path"].clone()), Some(json!("name")));
        assert!(check_name("name", "ok.txt").is_ok());
    }
}
