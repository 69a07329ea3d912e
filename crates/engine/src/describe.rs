//! Image sending (`shared/reference/tavo-docs.md` §14.4): an image on a user's message reaches
//! a model that cannot see it as a description. A multimodal *image-description connection*
//! (any chat connection whose model takes images: GPT-4o, Claude, Gemini …) describes it once
//! with the *description prompt*; the *injection prompt* turns the description into the text
//! the conversation carries (`{{description}}` filled in), appended to that message's text in
//! every later prompt. The stored message text never changes.
//!
//! The image is the one SillyTavern keeps on a message (`extra.image`: a chat file
//! `files/chat/NAME`, a global file `files/global/NAME`, or a `data:image/…;base64,` URL). The
//! description is stored on the message under `imageDescription` (`{text, injected,
//! connection, at}`), so it is asked for once: by `tavo image describe`, `POST
//! /api/messages/{id}/describe-image`, or — with `imageSending.enabled` — by the next reply,
//! which describes the chat's undescribed images among its last [`RECENT_MESSAGES`] messages
//! before it builds its prompt (a failure is a warning; the reply goes on without it).

use base64::Engine as _;
use serde::Serialize;
use serde_json::{Value, json};
use tavo_llm::connection::SETTINGS_KEY;
use tavo_llm::{
    ChatRequest, ConnectionBook, Endpoint, ImageSource, Message as LlmMessage, Part,
    Role as LlmRole,
};
use tavo_model::{ChatId, Message, MessageId, Role};
use tavo_store::{FileScope, Store, StoreError};

use crate::settings::text_setting;

/// Whether replies describe the images users send (default false).
pub const ENABLED_SETTING: &str = "imageSending.enabled";
/// The image-description connection (unset: the default connection).
pub const CONNECTION_SETTING: &str = "imageSending.connection";
/// The description prompt.
pub const DESCRIBE_PROMPT_SETTING: &str = "imageSending.describePrompt";
/// The injection prompt; keeps `{{description}}`.
pub const INJECT_PROMPT_SETTING: &str = "imageSending.injectPrompt";
/// The built-in description prompt.
pub const DEFAULT_DESCRIBE_PROMPT: &str = "Describe this image in detail for someone who cannot \
see it: the people and their appearance, expressions and clothes, the objects, the setting, any \
text in it, the style and the mood. Answer with the description only.";
/// The built-in injection prompt (in the style of Tavo's `[生成了一张图片：{{prompt}}]`).
pub const DEFAULT_INJECT_PROMPT: &str = "[发送了一张图片：{{description}}]";
/// How far back a reply looks for undescribed images.
pub const RECENT_MESSAGES: u64 = 20;
/// Most images a reply describes before it starts (older ones wait for the explicit doors).
pub const MAX_PER_REPLY: usize = 4;
/// The largest image sent to be described (providers take 5–20 MB; base64 adds a third).
pub const MAX_IMAGE_BYTES: usize = 10 * 1024 * 1024;

/// Why a description did not happen. Nothing is stored in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum DescribeError {
    /// No such message.
    #[error("message {0} does not exist")]
    NotFound(MessageId),
    /// The message carries no image this engine can read.
    #[error("message {0} has no image to describe ({1})")]
    NoImage(MessageId, String),
    /// The image is too large to send.
    #[error("the image of message {0} is {1} bytes; at most {MAX_IMAGE_BYTES} are sent")]
    TooLarge(MessageId, usize),
    /// The injection prompt lost its placeholder.
    #[error("the image injection prompt (imageSending.injectPrompt) must keep {{{{description}}}}")]
    Template,
    /// No usable connection.
    #[error(transparent)]
    Connection(#[from] tavo_llm::connection::ConnectionError),
    /// The provider refused or failed.
    #[error("the image description request failed: {0}")]
    Provider(String),
    /// The model answered nothing.
    #[error("the model answered an empty description")]
    NoAnswer,
    /// The library.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A task of the engine failed.
    #[error("{0}")]
    Internal(String),
}

impl DescribeError {
    /// A stable code for every door.
    pub fn code(&self) -> &'static str {
        match self {
            DescribeError::NotFound(_) => "resource_not_found",
            DescribeError::NoImage(..)
            | DescribeError::TooLarge(..)
            | DescribeError::Template
            | DescribeError::Connection(_) => "invalid_arguments",
            DescribeError::Provider(_) | DescribeError::NoAnswer => "unavailable",
            DescribeError::Store(_) | DescribeError::Internal(_) => "internal_error",
        }
    }
}

/// A stored description.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageDescription {
    /// The message whose image was described.
    pub message_id: MessageId,
    /// What the model saw.
    pub text: String,
    /// The text later prompts carry after the message's own (the injection prompt filled in).
    pub injected: String,
    /// The connection used.
    pub connection: String,
}

/// The image reference a message carries (`extra.image`), if any.
pub fn image_ref(m: &Message) -> Option<&str> {
    m.extra
        .get("extra")
        .and_then(|e| e.get("image"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Whether the message's image was described already.
pub fn is_described(m: &Message) -> bool {
    m.extra
        .get("imageDescription")
        .and_then(|d| d.get("text"))
        .and_then(Value::as_str)
        .is_some_and(|t| !t.trim().is_empty())
}

/// The injection prompt with the description filled in; the description goes in last, so
/// `{{…}}` in it stays as written.
pub fn render_injection(template: &str, description: &str) -> Result<String, DescribeError> {
    if !template.contains("{{description}}") {
        return Err(DescribeError::Template);
    }
    Ok(template.replace("{{description}}", description))
}

/// Refuses, before anything is stored, an image a user's message would carry that a later
/// description could not read: not a file of this library (`files/chat/NAME`,
/// `files/global/NAME`), missing, not an image, or over [`MAX_IMAGE_BYTES`]. The refusal names
/// the field (`image`).
pub fn check_attachment(
    store: &Store,
    chat: ChatId,
    reference: &str,
) -> Result<(), tavo_tools::ToolError> {
    use tavo_tools::{ErrorCode, ToolError};
    if reference.starts_with("data:") {
        return Err(ToolError::invalid_at(
            "image",
            "a file of this library (files/chat/NAME or files/global/NAME; save the image first)",
            "data URL",
        ));
    }
    let invalid = |why: String| {
        ToolError::new(ErrorCode::InvalidArguments, format!("image: {why}"))
            .with_details(json!({ "path": "image" }))
    };
    // No message yet: the id only labels errors, which this match re-maps.
    match image_bytes(store, chat, MessageId(0), reference) {
        Ok(_) => Ok(()),
        Err(DescribeError::NoImage(_, why)) if why.ends_with("does not exist") => {
            Err(ToolError::not_found("image file", reference))
        }
        Err(DescribeError::NoImage(_, why)) => Err(invalid(why)),
        Err(DescribeError::TooLarge(_, n)) => Err(invalid(format!(
            "the file is {n} bytes; at most {MAX_IMAGE_BYTES} are sent"
        ))),
        Err(e) => {
            tracing::warn!(%chat, "reading an attached image failed: {e}");
            Err(ToolError::internal("reading the image"))
        }
    }
}

/// The image of `m` (in chat `chat`) as the request sends it: bytes read from file storage or
/// a data URL, with its media type.
fn image_source(
    store: &Store,
    chat: ChatId,
    id: MessageId,
    reference: &str,
) -> Result<ImageSource, DescribeError> {
    let (media_type, bytes) = image_bytes(store, chat, id, reference)?;
    Ok(ImageSource::Base64 {
        media_type,
        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
    })
}

/// The bytes and media type of the image `reference` names, checked as a description needs
/// them: an image of a kind the providers take, at most [`MAX_IMAGE_BYTES`].
fn image_bytes(
    store: &Store,
    chat: ChatId,
    id: MessageId,
    reference: &str,
) -> Result<(String, Vec<u8>), DescribeError> {
    let no = |why: &str| DescribeError::NoImage(id, why.to_owned());
    let (media_type, bytes) = if let Some(rest) = reference.strip_prefix("data:") {
        let (head, data) = rest
            .split_once(',')
            .ok_or_else(|| no("a data URL without data"))?;
        let media_type = head
            .strip_suffix(";base64")
            .ok_or_else(|| no("a data URL that is not base64"))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|_| no("a data URL whose base64 does not decode"))?;
        (media_type.to_owned(), bytes)
    } else {
        let (scope, name) = if let Some(name) = reference.strip_prefix("files/chat/") {
            (FileScope::Chat(chat.get()), name)
        } else if let Some(name) = reference.strip_prefix("files/global/") {
            (FileScope::Global, name)
        } else {
            return Err(no(&format!("{reference} is not a file of this library")));
        };
        let bytes = store
            .files()
            .load(scope, name)?
            .ok_or_else(|| no(&format!("{reference} does not exist")))?;
        // What every protocol takes; anything else would be sent under a wrong media type.
        let kind = tavo_model::ImageType::sniff(&bytes).ok_or_else(|| {
            no(&format!(
                "{reference} is not a PNG, JPEG, WebP or GIF image (what the providers take)"
            ))
        })?;
        (kind.mime_type().to_owned(), bytes)
    };
    if !media_type.starts_with("image/") {
        return Err(no(&format!("{media_type} is not an image")));
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(DescribeError::TooLarge(id, bytes.len()));
    }
    Ok((media_type, bytes))
}

struct Prepared {
    request: ChatRequest,
    endpoint: Endpoint,
    connection: String,
    template: String,
}

fn prepare(
    store: &Store,
    message: MessageId,
    connection: Option<String>,
) -> Result<Prepared, DescribeError> {
    let m = store
        .message_get(message)?
        .ok_or(DescribeError::NotFound(message))?;
    let chat = store
        .message_chat(message)?
        .ok_or(DescribeError::NotFound(message))?;
    let reference = image_ref(&m)
        .ok_or_else(|| DescribeError::NoImage(message, "the message carries none".into()))?;
    let source = image_source(store, chat, message, reference)?;
    let template = text_setting(store, INJECT_PROMPT_SETTING)?
        .unwrap_or_else(|| DEFAULT_INJECT_PROMPT.to_owned());
    // Checked before the request is paid for.
    render_injection(&template, "")?;
    let prompt = text_setting(store, DESCRIBE_PROMPT_SETTING)?
        .unwrap_or_else(|| DEFAULT_DESCRIBE_PROMPT.to_owned());
    let wanted = match connection {
        Some(c) => Some(c),
        None => text_setting(store, CONNECTION_SETTING)?,
    };
    let book = ConnectionBook::from_setting(store.setting_get(SETTINGS_KEY)?)?;
    let conn = book.pick(wanted.as_deref())?.clone();
    let parameters = book.effective_parameters(&conn);
    let endpoint = conn.endpoint()?;
    let mut ask = LlmMessage::text(LlmRole::User, prompt);
    ask.parts.push(Part::Image { source });
    let mut request = ChatRequest::new(conn.model.clone(), vec![ask]);
    parameters.apply(&mut request);
    Ok(Prepared {
        request,
        endpoint,
        connection: conn.name.clone(),
        template,
    })
}

/// Describes the image of message `message` on `connection` (else `imageSending.connection`,
/// else the default connection) and stores the description on the message.
pub(crate) async fn describe(
    store: &Store,
    client: &tavo_llm::Client,
    gate: &tavo_tools::Gate,
    message: MessageId,
    connection: Option<String>,
) -> Result<ImageDescription, DescribeError> {
    let prepared = blocking(store, gate, move |s| prepare(s, message, connection)).await?;
    let response = client
        .complete(&prepared.endpoint, &prepared.request)
        .await
        .map_err(|e| DescribeError::Provider(e.message))?;
    if let Some((_, why)) = &response.error {
        return Err(DescribeError::Provider(why.clone()));
    }
    let text = response.text().trim().to_owned();
    if text.is_empty() {
        return Err(DescribeError::NoAnswer);
    }
    let done = ImageDescription {
        message_id: message,
        injected: render_injection(&prepared.template, &text)?,
        text,
        connection: prepared.connection,
    };
    let stored = done.clone();
    blocking(store, gate, move |s| {
        s.write(|tx| {
            let mut m = tx.message_get(message)?.ok_or_else(|| StoreError::NotFound {
                kind: "message",
                id: message.to_string(),
            })?;
            m.extra.insert(
                "imageDescription".into(),
                json!({"text": stored.text, "injected": stored.injected, "connection": stored.connection,
                       "at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)}),
            );
            tx.message_update(&m, None)
        })
        .map_err(DescribeError::from)
    })
    .await?;
    Ok(done)
}

/// The user messages of `chat` a reply should describe first: with `imageSending.enabled`,
/// those among the last [`RECENT_MESSAGES`] that carry an image and no description yet (at
/// most [`MAX_PER_REPLY`], oldest first). Empty when the setting is off — one settings read.
pub(crate) fn pending(store: &Store, chat: ChatId) -> Result<Vec<MessageId>, StoreError> {
    let on = store
        .setting_get(ENABLED_SETTING)?
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if !on {
        return Ok(Vec::new());
    }
    let total = store.message_count(chat)?;
    if total == 0 {
        return Ok(Vec::new());
    }
    let start = total.saturating_sub(RECENT_MESSAGES);
    let recent = store.messages_range(chat, start, Some(total - 1))?;
    let mut out: Vec<MessageId> = recent
        .iter()
        .filter(|m| m.role == Role::User && !m.hidden && image_ref(m).is_some() && !is_described(m))
        .filter_map(|m| m.id)
        .collect();
    if out.len() > MAX_PER_REPLY {
        out.drain(..out.len() - MAX_PER_REPLY);
    }
    Ok(out)
}

async fn blocking<T: Send + 'static>(
    store: &Store,
    gate: &tavo_tools::Gate,
    f: impl FnOnce(&Store) -> Result<T, DescribeError> + Send + 'static,
) -> Result<T, DescribeError> {
    crate::offload::gated(store, gate, DescribeError::Internal, f).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_injection_keeps_its_placeholder_and_the_description_goes_in_last() {
        let out = render_injection(DEFAULT_INJECT_PROMPT, "a cat {{description}} {{user}}");
        assert_eq!(
            out.ok().as_deref(),
            Some("[发送了一张图片：a cat {{description}} {{user}}]")
        );
        assert!(matches!(
            render_injection("[image]", "x"),
            Err(DescribeError::Template)
        ));
    }
}
