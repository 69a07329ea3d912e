//! Sending the user's message: the one operation behind every composer — `tavo chat`, `tavo
//! reply --message/--image`, `POST /api/chats/{id}/messages` and `tavo_input_send` (over
//! `/mcp`, when no page has the chat open).
//!
//! It owns what a send means, so no door decides it on its own:
//! - the text is the one given, else the chat's saved draft (cleared once sent);
//! - `/imagine <prompt>` (without an image) makes an image into the chat instead of a reply
//!   ([`crate::image`]);
//! - a send with no text and no image is refused ([`tavo_tools::ops::input::nothing_to_send`]);
//! - an image is a file of the library, or a picture's bytes, saved into the chat's files first
//!   (as the app's "Attach image" does), refused unless it is a picture the providers take;
//! - a chat with a live reply refuses a send (`busy`) before anything is written.

use serde_json::Value;
use tavo_model::{CharacterId, ChatId, MessageId};
use tavo_store::files::FileScope;
use tavo_tools::ops::input::{outgoing_text, read_draft, write_draft};
use tavo_tools::{ErrorCode, ToolError};

use crate::describe::MAX_IMAGE_BYTES;
use crate::error::EngineError;
use crate::image::{Imagined, imagine_prompt};
use crate::offload::on_blocking_pool;
use crate::{Engine, ReplyHandle, ReplyKind, ReplyRequest, UserMessage};

/// The image a sent message carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attachment {
    /// A file of this library: `files/chat/NAME` or `files/global/NAME`.
    Stored(String),
    /// A picture not in the library yet (a file on the user's disk): saved into the chat's
    /// files as `upload-<seconds>-<stem>.<ext>` before the message refers to it.
    Picture {
        /// The picture's own file name (its stem names the stored file).
        name: String,
        /// Its bytes: PNG, JPEG, WebP or GIF, at most [`MAX_IMAGE_BYTES`].
        bytes: Vec<u8>,
    },
}

/// One press of Send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The chat.
    pub chat: ChatId,
    /// The text; `None` sends the chat's saved draft (`input.draft`) and clears it.
    pub text: Option<String>,
    /// An image the message carries; with one the text may be empty.
    pub image: Option<Attachment>,
    /// Connection name of the reply; the default connection when `None`.
    pub connection: Option<String>,
    /// Group chats: the member (character id) who answers, instead of the reply mode.
    pub speaker: Option<i64>,
}

impl Outgoing {
    /// `text` sent in `chat`, with no image, over the default connection.
    pub fn text(chat: ChatId, text: impl Into<String>) -> Self {
        Self {
            chat,
            text: Some(text.into()),
            image: None,
            connection: None,
            speaker: None,
        }
    }
}

/// What a send did.
#[derive(Debug)]
pub enum Sent {
    /// The user's message was stored and a reply to it started.
    Reply {
        /// The reply (its `user_message_id` is the stored message).
        handle: ReplyHandle,
        /// The text was the chat's draft (now cleared).
        from_draft: bool,
    },
    /// `/imagine <prompt>`: the image message, and no reply.
    Imagined(Imagined),
}

impl Sent {
    /// The id of the message the send wrote: the user's, or the image message.
    pub fn message_id(&self) -> Option<MessageId> {
        match self {
            Sent::Reply { handle, .. } => handle.user_message_id(),
            Sent::Imagined(i) => Some(i.message_id),
        }
    }
}

impl Engine {
    /// Sends the user's message in `out.chat` as every composer does (see [`crate::send`]):
    /// the draft when no text is given, `/imagine`, the empty-send refusal, the attachment.
    /// Errors mean nothing was sent (an image already saved stays among the chat's files).
    pub async fn send(&self, out: Outgoing) -> Result<Sent, EngineError> {
        let chat = out.chat;
        if let Some(h) = self.reply_for_chat(chat)
            && h.status().is_live()
        {
            return Err(EngineError::Busy(chat, h.id().to_owned()));
        }
        let has_image = out.image.is_some();
        let given = out.text;
        let (text, from_draft) = on_blocking_pool(self.store(), move |s| {
            tavo_tools::reads::chat(s, chat)?.ok_or(EngineError::ChatNotFound(chat))?;
            Ok::<_, EngineError>(outgoing_text(given, has_image, || read_draft(s, chat))?)
        })
        .await?;
        if !has_image && let Some(prompt) = imagine_prompt(&text) {
            let done = self.imagine(chat, prompt, None).await?;
            if from_draft {
                self.clear_draft(chat).await;
            }
            return Ok(Sent::Imagined(done));
        }
        let image = match out.image {
            None => None,
            Some(Attachment::Stored(reference)) => Some(reference),
            Some(Attachment::Picture { name, bytes }) => {
                Some(self.save_picture(chat, &name, bytes).await?)
            }
        };
        let request = ReplyRequest {
            connection: out.connection,
            ..ReplyRequest::new(
                chat,
                ReplyKind::Normal {
                    message: Some(UserMessage::new(&text, image)?),
                    speaker: out.speaker.map(CharacterId),
                },
            )
        };
        let engine = self.clone();
        let handle = on_blocking_pool(self.store(), move |_| engine.start(request)).await?;
        if from_draft {
            self.clear_draft(chat).await;
        }
        Ok(Sent::Reply { handle, from_draft })
    }

    /// Empties the chat's draft after it was sent; a failure only leaves the draft in place.
    async fn clear_draft(&self, chat: ChatId) {
        let cleared = on_blocking_pool(self.store(), move |s| {
            write_draft(s, chat, "").map_err(EngineError::Operation)
        })
        .await;
        if let Err(e) = cleared {
            tracing::warn!(%chat, error = %e, "the sent draft could not be cleared");
        }
    }

    /// Saves a picture into the chat's files and answers its library reference.
    async fn save_picture(
        &self,
        chat: ChatId,
        name: &str,
        bytes: Vec<u8>,
    ) -> Result<String, EngineError> {
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "image: {name}: {} bytes; at most {MAX_IMAGE_BYTES} are attached",
                    bytes.len()
                ),
            )
            .with_details(serde_json::json!({"path": "image"}))
            .into());
        }
        // Known by its bytes, as the description reads it.
        let Some(kind) = tavo_model::ImageType::sniff(&bytes) else {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!("image: {name}: not a picture the providers take (png, jpeg, webp or gif)"),
            )
            .with_details(serde_json::json!({"path": "image"}))
            .into());
        };
        let file = upload_name(name, kind.extension(), chat_seconds());
        let stored = file.clone();
        on_blocking_pool(self.store(), move |s| {
            s.files()
                .save(FileScope::Chat(chat.get()), &stored, &bytes)
                .map_err(EngineError::Store)
        })
        .await?;
        Ok(format!("files/chat/{file}"))
    }
}

fn chat_seconds() -> i64 {
    chrono::Utc::now().timestamp()
}

/// `upload-<seconds>-<stem>.<ext>`: the stem of `name` with every character but letters,
/// digits, `-` and `_` made `-`, at most 60 of them; the extension from the MIME type.
fn upload_name(name: &str, extension: &str, seconds: i64) -> String {
    let stem: String = std::path::Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("image")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    format!("upload-{seconds}-{stem}.{extension}")
}

/// The answer `tavo_input_send` gives for a send made by the engine (`via` names the door).
pub fn input_answer(sent: &Sent, via: &str) -> Value {
    match sent {
        Sent::Reply { handle, .. } => serde_json::json!({
            "ok": true, "messageId": handle.user_message_id(), "replyId": handle.id(), "via": via,
        }),
        Sent::Imagined(done) => serde_json::json!({
            "ok": true, "messageId": done.message_id, "image": done, "via": via,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uploaded_picture_is_named_by_its_stem_and_its_type() {
        assert_eq!(
            upload_name("/tmp/My cat (1).PNG", "png", 7),
            "upload-7-My-cat--1-.png"
        );
        assert_eq!(upload_name("", "jpg", 7), "upload-7-image.jpg");
    }
}
