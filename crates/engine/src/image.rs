//! Image generation for every door (Tavo §14.3): the image service behind
//! `tavo_image_generate`, `tavo.image.generate`, `POST /api/images/generate` and `tavo image
//! generate`, and `/imagine <prompt>` from the composer.
//!
//! - The connection: the caller's (`--connection`), else the chat's binding
//!   (`chat.image.connection`, a field of the chat), else the default of the image connection
//!   book (`image.connections`, [`tavo_llm::media::image::ImageBook`]).
//! - Failures: no book, no default or an unknown name → `resource_not_found`; a refused key,
//!   a forbidden model or a refused prompt (401/403, safety blocks) → `permission_denied`;
//!   a provider 404 → `resource_not_found`; everything else (429, 5xx, time-outs, an answer
//!   without an image) → `internal_error` with `details.reason` (`rate_limit`, `server`, …).
//!   The provider's body never reaches a message.
//! - `/imagine <prompt>`: the image is stored as a chat file and a message of the chat's
//!   character is written with the injection template (`image.injectionTemplate`, default
//!   `[生成了一张图片：{{prompt}}]`, macros applied) as its text, so the model sees it in
//!   history, and the image in SillyTavern's place: `extra.image` (the file's virtual path),
//!   `extra.title` (the prompt), `extra.inline_image: false`.

use serde_json::{Map, Value, json};
use tavo_llm::media::image::{
    DEFAULT_INJECTION_TEMPLATE, INJECTION_TEMPLATE_KEY, ImageBook, ImageConnection, ImageData,
    ImagePlatform, ImageRequest, SETTINGS_KEY,
};
use tavo_llm::media::{MediaBookError, MediaFailure, Platform as _};
use tavo_model::{Chat, ChatId, MessageId, Role};
use tavo_store::Store;
use tavo_tools::operation::BoxFuture;
use tavo_tools::ops::image::{GeneratedImage, ImageArgs, ImageOptions, Storage};
use tavo_tools::{ErrorCode, ImageGenerator, ImageJob, OpContext, ToolError};

use crate::offload::gated;

/// The composer command that generates an image instead of sending a message.
pub const IMAGINE: &str = "/imagine";

/// The prompt of an `/imagine <prompt>` message (`Some("")` for a bare `/imagine`), `None`
/// for any other text.
pub fn imagine_prompt(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix(IMAGINE)?;
    if rest.is_empty() {
        return Some("");
    }
    rest.starts_with(char::is_whitespace).then(|| rest.trim())
}

/// The image connection a chat is bound to (`chat.image.connection`), if any.
pub fn chat_binding(chat: &Chat) -> Option<String> {
    chat.extra
        .get("image")
        .and_then(|v| v.get("connection"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The injection template in effect (the setting, else Tavo's default).
pub fn injection_template(store: &Store) -> Result<String, ToolError> {
    let v = store
        .setting_get(INJECTION_TEMPLATE_KEY)
        .map_err(|e| tavo_tools::context::store_error("reading the settings", e))?;
    Ok(v.as_ref()
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .unwrap_or(DEFAULT_INJECTION_TEMPLATE)
        .to_owned())
}

/// Reads the image connection book.
pub fn load_book(store: &Store) -> Result<ImageBook, ToolError> {
    let v = store
        .setting_get(SETTINGS_KEY)
        .map_err(|e| tavo_tools::context::store_error("reading the settings", e))?;
    ImageBook::from_setting(v).map_err(|e| ToolError::new(ErrorCode::InternalError, e.to_string()))
}

/// The connection for `job`: the caller's, else the chat's binding, else the default.
fn pick(
    store: &Store,
    job_chat: Option<ChatId>,
    named: Option<String>,
) -> Result<ImageConnection, ToolError> {
    let bound = match (named.is_none(), job_chat) {
        (true, Some(id)) => store
            .chat_get(id)
            .map_err(|e| tavo_tools::context::store_error("reading the chat", e))?
            .as_ref()
            .and_then(chat_binding),
        _ => None,
    };
    let wanted = named.or(bound);
    let book = load_book(store)?;
    book.pick(wanted.as_deref()).cloned().map_err(|e| {
        let why = if e.is_not_found() && book.connections.is_empty() {
            "no image generation endpoint is configured; add one with `tavo image connection add` (or Settings → Image generation)".to_owned()
        } else {
            e.to_string()
        };
        ToolError::new(ErrorCode::ResourceNotFound, why)
    })
}

/// An image provider's failure as an envelope error (never with the provider's body).
pub fn provider_error(e: tavo_llm::LlmError) -> ToolError {
    let code = match MediaFailure::of(&e) {
        MediaFailure::Refused => ErrorCode::PermissionDenied,
        MediaFailure::NotFound => ErrorCode::ResourceNotFound,
        MediaFailure::Failed => ErrorCode::InternalError,
    };
    let mut details = Map::new();
    details.insert("reason".into(), json!(e.kind.as_str()));
    if let Some(s) = e.status {
        details.insert("status".into(), json!(s));
    }
    ToolError::new(code, e.message).with_details(Value::Object(details))
}

/// The engine's image service over the image connection book.
pub(crate) struct ImageService {
    pub(crate) store: Store,
    pub(crate) client: tavo_llm::Client,
    pub(crate) gate: tavo_tools::Gate,
}

fn internal(why: String) -> ToolError {
    tracing::warn!("image generation: {why}");
    ToolError::internal("image generation")
}

impl ImageGenerator for ImageService {
    fn generate(&self, job: ImageJob) -> BoxFuture<Result<(Vec<u8>, String), ToolError>> {
        let store = self.store.clone();
        let client = self.client.clone();
        let gate = self.gate.clone();
        Box::pin(async move {
            let (chat, named) = (job.chat, job.connection.clone());
            let conn = gated(&store, &gate, internal, move |s| pick(s, chat, named)).await?;
            let req = ImageRequest {
                prompt: job.prompt,
                size: job.size,
                aspect_ratio: job.aspect_ratio,
                negative_prompt: job.negative_prompt,
                reference_images: job
                    .reference_images
                    .into_iter()
                    .map(|(bytes, mime)| ImageData { bytes, mime })
                    .collect(),
                extra_body: job.extra_body,
            };
            let img = tavo_llm::media::image::generate(&client, &conn, &req)
                .await
                .map_err(provider_error)?;
            Ok((img.bytes, img.mime))
        })
    }
}

/// A book error as an envelope error: the field path in `details.path`.
pub fn book_error(e: MediaBookError) -> ToolError {
    let code = match &e {
        MediaBookError::NotFound { .. } | MediaBookError::NoDefault { .. } => {
            ErrorCode::ResourceNotFound
        }
        MediaBookError::Exists(_) => ErrorCode::Conflict,
        MediaBookError::Invalid { .. } | MediaBookError::MissingEnv { .. } => {
            ErrorCode::InvalidArguments
        }
    };
    let err = ToolError::new(code, e.to_string());
    match e.field() {
        Some(path) => err.with_details(json!({"path": path})),
        None => err,
    }
}

/// The image connections and settings as every door shows them: `{connections, default,
/// injectionTemplate, platforms}`, keys masked.
pub fn masked_view(book: &ImageBook, template: &str) -> Value {
    let mut v = book.masked();
    v["injectionTemplate"] = json!(template);
    v["defaultInjectionTemplate"] = json!(DEFAULT_INJECTION_TEMPLATE);
    v["platforms"] = json!(
        ImagePlatform::all()
            .iter()
            .map(|p| json!({"id": p.id(), "baseUrl": p.default_base_url()}))
            .collect::<Vec<_>>()
    );
    v
}

/// What `/imagine` wrote.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Imagined {
    /// The message holding the image.
    pub message_id: MessageId,
    /// The stored image's virtual path (`files/chat/image-….png`).
    pub path: String,
    /// The image's MIME type (`image/png`, `image/jpeg`, ...); it also chose the stored file's
    /// extension.
    pub mime_type: String,
    /// The stored image's size in bytes.
    pub size: usize,
    /// The message text (the injection template, rendered).
    pub content: String,
    /// The prompt the image was made from, trimmed; it is also kept as the image's title.
    pub prompt: String,
}

/// Renders the injection template: `{{prompt}}` is the prompt (its own text is not expanded),
/// the chat's other macros (`{{char}}`, `{{user}}`, …) are, without variable writes.
pub fn render_injection(
    store: &Store,
    chat: ChatId,
    template: &str,
    prompt: &str,
) -> Result<String, ToolError> {
    const HOLE: &str = "\u{E000}tavo-image-prompt\u{E000}";
    let ctx = crate::display::DisplayContext::load(store, chat)
        .map_err(|e| tavo_tools::context::store_error("reading the chat", e))?;
    let with_hole = template.replace("{{prompt}}", HOLE);
    Ok(ctx.expand_macros(&with_hole, 0).replace(HOLE, prompt))
}

fn imagine_extra(path: &str, prompt: &str) -> Value {
    json!({"image": path, "title": prompt, "inline_image": false, "generationType": "imagine"})
}

impl crate::Engine {
    /// The image connection book and the injection template, keys masked
    /// ([`masked_view`]).
    pub async fn image_connections(&self) -> Result<Value, ToolError> {
        gated(self.store(), &self.gate(), internal, |s| {
            Ok(masked_view(&load_book(s)?, &injection_template(s)?))
        })
        .await
    }

    /// Changes the image connection book in one read-modify-write transaction (two doors
    /// adding at once both land); an error from `f` writes nothing. Answers the masked view.
    pub async fn change_image_connections<F>(&self, f: F) -> Result<Value, ToolError>
    where
        F: FnOnce(&mut ImageBook) -> Result<(), MediaBookError> + Send + 'static,
    {
        gated(self.store(), &self.gate(), internal, move |s| {
            let book = s
                .write(|tx| {
                    let mut book = match ImageBook::from_setting(tx.setting_get(SETTINGS_KEY)?) {
                        Ok(b) => b,
                        Err(e) => return Ok(Err(book_error(e))),
                    };
                    if let Err(e) = f(&mut book) {
                        return Ok(Err(book_error(e)));
                    }
                    tx.setting_set(SETTINGS_KEY, &book.to_setting())?;
                    Ok(Ok(book))
                })
                .map_err(|e| {
                    tavo_tools::context::store_error("saving the image connections", e)
                })??;
            Ok(masked_view(&book, &injection_template(s)?))
        })
        .await
    }

    /// A call context for a direct (non-reply) image call in `chat`.
    fn image_context(&self, chat: Option<ChatId>) -> OpContext {
        let mut ctx = OpContext::new(self.store().clone(), self.registry(), chat);
        ctx.services = self.services();
        ctx.gate = self.gate();
        ctx
    }

    /// Generates an image as `tavo_image_generate` does for the HTTP door and the CLI:
    /// `storage` says whether it is stored without `saveAs`.
    pub async fn generate_image(
        &self,
        chat: Option<ChatId>,
        prompt: String,
        options: Option<ImageOptions>,
        connection: Option<String>,
        storage: Storage,
    ) -> Result<GeneratedImage, ToolError> {
        let ctx = self.image_context(chat);
        tavo_tools::ops::image::generate_image(
            &ctx,
            ImageArgs { prompt, options },
            connection,
            storage,
        )
        .await
    }

    /// `/imagine <prompt>` in `chat`: generates over the chat's image connection, stores the
    /// image as a chat file and writes a message of the chat's (first) character with the
    /// injection template and the image (`extra.image`, `extra.title`).
    pub async fn imagine(
        &self,
        chat: ChatId,
        prompt: &str,
        connection: Option<String>,
    ) -> Result<Imagined, ToolError> {
        let prompt = prompt.trim().to_owned();
        if prompt.is_empty() {
            return Err(ToolError::invalid_at(
                "prompt",
                "a prompt after /imagine (/imagine a cat on a windowsill)",
                "empty string",
            ));
        }
        let image = self
            .generate_image(
                Some(chat),
                prompt.clone(),
                None,
                connection,
                Storage::Always,
            )
            .await?;
        let path = image.path.clone().unwrap_or_default();
        let store = self.store().clone();
        let (p, pr) = (path.clone(), prompt.clone());
        let written = gated(&store, &self.gate(), internal, move |s| {
            let template = injection_template(s)?;
            let content = render_injection(s, chat, &template, &pr)?;
            let chat_obj = s
                .chat_get(chat)
                .map_err(|e| tavo_tools::context::store_error("reading the chat", e))?
                .ok_or_else(|| ToolError::not_found("chat", chat))?;
            let mut draft = tavo_tools::messages::MessageDraft::new(Role::Assistant, content);
            draft.character_id = chat_obj.characters.first().map(|c| c.id);
            draft.extra.insert("extra".into(), imagine_extra(&p, &pr));
            tavo_tools::messages::append_message(s, chat, draft)
        })
        .await?;
        Ok(Imagined {
            message_id: written
                .message
                .id
                .ok_or_else(|| ToolError::internal("the image message was saved without an id"))?,
            path,
            mime_type: image.mime,
            size: image.size,
            content: written.message.content,
            prompt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tavo_llm::ErrorKind;

    #[test]
    fn the_provider_layer_reads_image_signatures_as_the_library_does() {
        use tavo_llm::media::image::ImageData;
        use tavo_model::ImageType;
        let samples: &[&[u8]] = &[
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
            b"\xFF\xD8\xFF\xE0\0\x10JFIF",
            b"GIF87a..",
            b"GIF89a..",
            b"RIFF\x10\0\0\0WEBPVP8 ",
        ];
        for bytes in samples {
            let library = ImageType::sniff(bytes).map(ImageType::mime_type);
            assert!(library.is_some(), "{bytes:?}");
            let provider = ImageData::sniffed(bytes.to_vec());
            assert_eq!(Some(provider.mime.as_str()), library, "{bytes:?}");
            assert_eq!(
                provider.extension(),
                ImageType::sniff(bytes).map_or("", ImageType::extension)
            );
        }
    }

    #[test]
    fn imagine_is_a_command_only_at_the_start_and_followed_by_space() {
        assert_eq!(imagine_prompt("/imagine a cat"), Some("a cat"));
        assert_eq!(imagine_prompt("  /imagine   a cat  "), Some("a cat"));
        assert_eq!(imagine_prompt("/imagine"), Some(""));
        assert_eq!(imagine_prompt("/imagined a cat"), None);
        assert_eq!(imagine_prompt("please /imagine a cat"), None);
    }

    #[test]
    fn provider_errors_map_to_the_seed_codes() {
        let e = |kind| provider_error(tavo_llm::LlmError::new(kind, "m"));
        assert_eq!(
            e(ErrorKind::Authentication).code,
            ErrorCode::PermissionDenied
        );
        assert_eq!(e(ErrorKind::Permission).code, ErrorCode::PermissionDenied);
        assert_eq!(
            e(ErrorKind::ContentFiltered).code,
            ErrorCode::PermissionDenied
        );
        assert_eq!(e(ErrorKind::NotFound).code, ErrorCode::ResourceNotFound);
        let rl = e(ErrorKind::RateLimit);
        assert_eq!(rl.code, ErrorCode::InternalError);
        assert_eq!(
            rl.details.as_ref().map(|d| d["reason"].clone()),
            Some(json!("rate_limit"))
        );
        assert_eq!(e(ErrorKind::Server).code, ErrorCode::InternalError);
    }
}
