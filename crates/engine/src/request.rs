//! What a reply is asked to generate: one variant per kind, each with exactly what that kind
//! takes, so a request the engine would have to refuse or silently ignore (a speaker for a
//! swipe, a message for a continue, a message with neither text nor image) cannot be built.
//! Doors parse their own input (the HTTP body's wire JSON, the CLI's flags) into it, with
//! their own field names in the refusals.

use tavo_model::{CharacterId, ChatId};
use tavo_tools::{GenerationKind, ToolError};

use crate::limits::Limits;

/// The user's new message a normal reply answers: text, an image, or both — never neither.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserMessage {
    text: String,
    image: Option<String>,
}

impl UserMessage {
    /// `text` (trimmed) with `image`, a file of the library (`files/chat/NAME` or
    /// `files/global/NAME`, kept where SillyTavern keeps it, `extra.image`, and described for
    /// the model when `imageSending.enabled`, §14.4). Refused with
    /// [`tavo_tools::ops::input::nothing_to_send`] when the text is empty and there is no image.
    /// Whether the image exists is the library's to say, when the reply starts.
    pub fn new(text: &str, image: Option<String>) -> Result<Self, ToolError> {
        let text = text.trim().to_owned();
        let image = image.map(|i| i.trim().to_owned()).filter(|i| !i.is_empty());
        if text.is_empty() && image.is_none() {
            return Err(tavo_tools::ops::input::nothing_to_send());
        }
        Ok(Self { text, image })
    }

    /// The text, trimmed (empty when the message is only an image).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The image's library reference, if the message carries one.
    pub fn image(&self) -> Option<&str> {
        self.image.as_deref()
    }
}

/// The kind of reply, with what each kind takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyKind {
    /// A normal reply: to `message`, stored first, or — without one — to the chat as it stands
    /// (refused in a chat with no messages: there is nothing to answer).
    Normal {
        /// The user's new message.
        message: Option<UserMessage>,
        /// Group chats: the one member who answers, muted or not, instead of the reply mode.
        speaker: Option<CharacterId>,
    },
    /// The last answer removed and written anew.
    Regenerate {
        /// Group chats: who answers instead of the speaker of the answer replaced.
        speaker: Option<CharacterId>,
    },
    /// Another answer to the last turn, kept as a swipe of the last character message.
    Swipe,
    /// The last character message continued.
    Continue,
    /// The user's next message written into the input draft.
    Impersonate,
    /// A background generation that writes no message.
    Quiet,
}

impl ReplyKind {
    /// The generation kind (what the prompt, the tools and the hooks go by).
    pub fn generation(&self) -> GenerationKind {
        match self {
            ReplyKind::Normal { .. } => GenerationKind::Normal,
            ReplyKind::Regenerate { .. } => GenerationKind::Regenerate,
            ReplyKind::Swipe => GenerationKind::Swipe,
            ReplyKind::Continue => GenerationKind::Continue,
            ReplyKind::Impersonate => GenerationKind::Impersonate,
            ReplyKind::Quiet => GenerationKind::Quiet,
        }
    }

    /// The chosen speaker, for the kinds that take one.
    pub fn speaker(&self) -> Option<CharacterId> {
        match self {
            ReplyKind::Normal { speaker, .. } | ReplyKind::Regenerate { speaker } => *speaker,
            _ => None,
        }
    }

    /// The kind of `generation` with nothing chosen: no message, no speaker. A door maps its
    /// own kind names through [`GenerationKind`] with it, then adds what the kind takes.
    pub fn plain(generation: GenerationKind) -> Self {
        match generation {
            GenerationKind::Normal => ReplyKind::Normal {
                message: None,
                speaker: None,
            },
            GenerationKind::Regenerate => ReplyKind::Regenerate { speaker: None },
            GenerationKind::Swipe => ReplyKind::Swipe,
            GenerationKind::Continue => ReplyKind::Continue,
            GenerationKind::Impersonate => ReplyKind::Impersonate,
            GenerationKind::Quiet => ReplyKind::Quiet,
        }
    }

    /// This kind with `speaker` answering; refused — naming `field`, the door's name for it —
    /// for a kind that takes no speaker (a swipe or continue keeps the speaker of the message it
    /// works on; impersonate and quiet have none).
    pub fn with_speaker(self, speaker: CharacterId, field: &str) -> Result<Self, ToolError> {
        match self {
            ReplyKind::Normal { message, .. } => Ok(ReplyKind::Normal {
                message,
                speaker: Some(speaker),
            }),
            ReplyKind::Regenerate { .. } => Ok(ReplyKind::Regenerate {
                speaker: Some(speaker),
            }),
            other => Err(ToolError::invalid_at(
                field,
                format!(
                    "no speaker for a {} reply (only normal and regenerate replies take one)",
                    kind_name(other.generation())
                ),
                "integer",
            )),
        }
    }
}

/// A generation kind's wire name (`normal`, `regenerate`, …).
fn kind_name(kind: GenerationKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyRequest {
    /// The chat the reply belongs to, for its whole life.
    pub chat: ChatId,
    /// What kind of reply, with what that kind takes.
    pub kind: ReplyKind,
    /// Connection name; the default connection when `None`.
    pub connection: Option<String>,
    /// Limits instead of the `tools.*` settings (tests, per-request overrides).
    pub limits: Option<Limits>,
}

impl ReplyRequest {
    /// A reply of `kind` in `chat` over the default connection.
    pub fn new(chat: ChatId, kind: ReplyKind) -> Self {
        Self {
            chat,
            kind,
            connection: None,
            limits: None,
        }
    }

    /// A normal reply to the text `message` in `chat` over the default connection; an empty
    /// text answers the chat as it stands.
    pub fn normal(chat: ChatId, message: &str) -> Self {
        Self::new(
            chat,
            ReplyKind::Normal {
                message: UserMessage::new(message, None).ok(),
                speaker: None,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_has_text_or_an_image_and_only_two_kinds_take_a_speaker() {
        assert!(UserMessage::new("  ", None).is_err());
        assert!(UserMessage::new(" ", Some("  ".into())).is_err());
        let image = UserMessage::new("", Some("files/chat/a.png".into())).ok();
        assert_eq!(image.as_ref().map(UserMessage::text), Some(""));
        let normal = ReplyKind::plain(GenerationKind::Normal).with_speaker(CharacterId(2), "s");
        assert_eq!(normal.ok().and_then(|k| k.speaker()), Some(CharacterId(2)));
        let swipe = ReplyKind::plain(GenerationKind::Swipe).with_speaker(CharacterId(2), "speaker");
        let e = swipe.err().map(|e| e.message).unwrap_or_default();
        assert!(
            e.starts_with("speaker: expected no speaker for a swipe reply"),
            "{e}"
        );
    }
}
