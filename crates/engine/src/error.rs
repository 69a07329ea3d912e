//! Why a reply could not start.

use tavo_llm::connection::ConnectionError;
use tavo_prompt::loader::LoadError;
use tavo_store::StoreError;

/// A reply that cannot start (failures after the start end the reply with status `failed` and
/// an `error` event instead).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("chat {0} not found (see `tavo list chats`)")]
    ChatNotFound(i64),
    #[error(
        "chat {0} already has a reply running ({1}); wait for it, answer it, or cancel it first"
    )]
    Busy(i64, String),
    #[error("there is no reply with id {0}")]
    NoSuchReply(String),
    #[error("{0}: the chat's last message must be a character's message")]
    NothingToContinue(&'static str),
    #[error("a normal reply needs the user's message; pass the text to send")]
    NoMessage,
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Prompt(#[from] LoadError),
    #[error("the tool registry could not be built: {0}")]
    Registry(String),
    #[error("{0}")]
    Internal(String),
}
